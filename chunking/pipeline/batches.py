"""The chunk batches of one document version on their way out of stage 1 (docs/architecture.md#long-documents):
packed as records come, held while few, then sent as they fill; the ledger learns the version before its first
batch is sent and the totals after its last."""

from __future__ import annotations

from typing import Sequence

from chunking import telemetry
from chunking.ledger import QUEUED, SENDING, Ledger
from chunking.messages.batches import BatchPacker, Group
from chunking.model import ChunkRecord
from chunking.settings import Settings
from chunking.storage.claim_check import PayloadStore

__all__ = ["Batches", "HOLD_BATCHES"]

#: Batches held before stage 1 starts sending a document's batches as they fill (≈ 16 × 48 KiB of JSON).
HOLD_BATCHES = 16


class Batches:
    """The chunk batches of one version on their way out: packed as records come, held while few, then sent as
    they fill; the ledger learns the version before its first batch is sent and the totals after its last."""

    def __init__(self, result, settings: Settings, payloads: PayloadStore, ledger: Ledger,
                 container: str, send, keep_old_versions: bool, *, streamed: bool, first_batch_no: int,
                 made_with: str = "", uploaded_at: str | None = None) -> None:
        self.result, self.payloads, self.ledger, self.container, self.send = (result, payloads, ledger, container,
                                                                               send)
        # Each message carries the current trace context (stage 1's span), so stage 2 continues the trace.
        self.packer = BatchPacker(result.doc_id, result.version, result.source,
                                  max_message_bytes=settings.max_message_bytes, max_records=settings.batch_max_chunks,
                                  keep_old_versions=keep_old_versions, trace=telemetry.carrier(),
                                  uploaded_at=uploaded_at)
        self.held: list[Group] = []
        self.made_with = made_with  # the stage-1 settings of the version (chunking.pipeline.backfill), for the ledger
        self.streamed = streamed  # the version was begun and batches went out before the totals were known
        self.next_batch_no = first_batch_no
        self.sent = 0
        self.notes: list[str] = []
        self.total_chunks = 0  # of the version, this range and the ranges before it
        self.readers: dict = {}
        self.describer = None  # chunking.chat.vision.FigureDescriber of the source's pictures, when one is set
        self.figures = None  # chunking.storage.figures.FigureStore of the source's figure images, when they are kept
        self.defer_figures = False  # a throttled describer defers the document while nothing was sent
        self.properties = None  # chunking.documents.fields.SourceProperties of the source, if known
        self.fields = None  # its DocumentFields, once stage 1 has read enough to know them

    def add(self, records: Sequence[ChunkRecord]) -> None:
        for record in records:
            self.result.chunks += 1
            self.result.tokens += record.token_count
            self.result.max_chunk_tokens = max(self.result.max_chunk_tokens, record.token_count)
            self._take(self.packer.add(record))

    def _take(self, groups: list[Group]) -> None:
        for group in groups:
            self.held.append(group)
            self.next_batch_no += 1
        if self.send is not None and len(self.held) > HOLD_BATCHES:
            self._send_held()

    def _send_held(self) -> None:
        if not self.streamed:
            self._begin(0, 0)
            self.streamed = True
        first = self.next_batch_no - len(self.held)
        messages = [self.packer.encode(g, first + i, 0, 0, self.payloads) for i, g in enumerate(self.held)]
        self.held = []
        self.send(messages)
        self.sent += len(messages)

    def _begin(self, chunk_count: int, batch_count: int) -> None:
        note = "; ".join(self.notes)
        self.ledger.begin_version(self.result.doc_id, self.result.source, self.result.version, chunk_count,
                                  batch_count, self.container, note=note,
                                  status=QUEUED if self.send is None else SENDING, made_with=self.made_with,
                                  fields_hash=self.fields.source_hash if self.fields is not None else "")

    def end_range(self) -> None:
        self._take(self.packer.finish())

    def flush(self, *, final: bool) -> None:
        """Send what is held: at the end of a range (*final* False: more ranges follow) or of the document."""
        if not final:
            if self.held or not self.streamed:
                self._send_held()
            return
        total = self.next_batch_no
        if not self.streamed:  # a short document: every message carries the totals, as before
            messages = [self.packer.encode(g, i, total, self.result.chunks, self.payloads)
                        for i, g in enumerate(self.held)]
            self.held = []
            self._begin(self.result.chunks, total)
            if self.send is None:
                self.result.messages = messages
                return
            self.send(messages)
            self.sent += len(messages)
            self.result.messages = messages
            self.ledger.mark_sent(self.result.doc_id, self.result.source, self.result.version)
            return
        if self.held:
            self._send_held()
        self.ledger.mark_sent(self.result.doc_id, self.result.source, self.result.version,
                              chunk_count=self.total_chunks, batch_count=total)
        self.send([self.packer.check_message()])
