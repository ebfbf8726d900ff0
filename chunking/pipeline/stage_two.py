"""The two stages of the ingestion pipeline as plain functions over interfaces (no Azure Functions types).

Stage 1 (``run_stage_one``, in ``chunking.pipeline.stage_one``): source bytes → pages → chunks → chunk-batch queue
messages, page by page. It does no network calls except writing claim-check payloads and sending. Stage 2 (``run_stage_two``): one message → embeddings (reusing the
vectors of unchanged chunk text) → merge-or-upload into the index → the batch recorded in the ledger; when the
ledger holds every batch of the message's version, the document's chunks of other versions are deleted by key. Both stages are idempotent: every trigger is
at-least-once. See docs/architecture.md#the-two-stages.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from dataclasses import dataclass

from chunking import telemetry
from chunking.embeddings import Embedder, embed_all
from chunking.errors import ServiceFailure, classify, describe_failure, reason_of
from chunking.index.protocol import IndexWriter
from chunking.ledger import BatchFate, Completion, Ledger, LedgerEntry, batch_fate, complete_if_done, is_wanted
from chunking.messages.batches import decode_message, load_records
from chunking.messages.envelope import DOCUMENT_FIELDS, MessageError, read_envelope, type_of
from chunking.pipeline.fields import apply_fields_body
from chunking.pipeline.stage_one import StageOneResult, _crash, document_records, run_stage_one, source_version
from chunking.pipeline.vector_reuse import reusable_vectors, vector_keys
from chunking.pipeline.versions import remove_other_versions, retire_version
from chunking.services import make_figure_store
from chunking.settings import Settings
from chunking.storage.claim_check import PayloadMissingError, PayloadStore
from chunking.storage.figures import FigureStore
from chunking.tokens import token_counter

__all__ = ["StageOneResult", "StageTwoResult", "document_records", "run_stage_one", "run_stage_two", "source_version"]

log = logging.getLogger("chunking.pipeline.stage_two")


@dataclass
class StageTwoResult:
    """What stage 2 did with one chunk-batch message."""

    doc_id: str
    version: str
    source: str
    batch_no: int
    batch_count: int
    records: int = 0
    embedded: int = 0
    reused: int = 0
    embedding_tokens: int = 0
    embedding_requests: int = 0
    dropped: str = ""  # why the batch was dropped unprocessed ('' if processed)
    completed: bool = False
    removed: int = 0
    embedder: str = ""  # the Embedder.name of this batch's vectors ('' if it embedded nothing)
    seconds: float = 0.0


def _next_attempt(failure: ServiceFailure | None) -> str:
    """When a retryable failure should be tried again, for the ledger: ``; next attempt after 12:30:05 UTC``."""
    if failure is None or failure.kind not in ("throttled", "server", "unreachable"):
        return ""
    delay = failure.retry_after_s if failure.retry_after_s else 60.0
    at = dt.datetime.now(dt.timezone.utc) + dt.timedelta(seconds=delay)
    return f"; next attempt after {at:%H:%M:%S} UTC (the queue retries the batch)"


def run_stage_two(
    body: str | bytes | dict,
    *,
    settings: Settings,
    embedder: Embedder,
    index: IndexWriter,
    payloads: PayloadStore,
    ledger: Ledger,
    figures: FigureStore | None = None,
) -> StageTwoResult:
    """Embed and upsert one chunk-batch message, record the batch in the ledger, and complete the version when
    the ledger holds every one of its batch numbers.

    Completion never queries the index (its queries lag its writes): the ledger's batch records say which
    batches are in and which keys they wrote. A batch whose version is no longer the ledger's current one
    (superseded, deleted, or already complete) is dropped, and what its version wrote is deleted by key; a batch
    whose version stops being current while it is embedded removes its own keys after writing them. Vectors
    this document's recorded batches already hold for a text (same hash, same embedder) are reused, not
    recomputed, found through the ledger and lookups by key (``chunking.pipeline.vector_reuse``). Upserts are
    merge-or-upload on deterministic keys, so a duplicated or retried message changes nothing. When the version
    is complete the ledger says ``indexed`` and the document's other versions are deleted by their recorded keys,
    with their figure images (*figures*; default: ``make_figure_store(settings)``).

    The batch is the span ``chunking.stage_two``, a child of the stage-1 span whose context the message carries
    (``"trace"``; a message without one starts a trace of its own), with the completion inside it as the span
    ``chunking.complete`` (docs/operations.md#telemetry).

    Every part of the message is checked before anything is read or written (``decode_message``; a claim-checked
    payload when it is read): a message that cannot be decoded into records of its version changes neither the
    ledger nor the index.

    Raises:
        MessageError: the message (or its claim-checked payload) is not a valid chunk-batch or field-update
            message, whatever part is malformed (it cannot succeed on retry: the caller drops it).
        PayloadMissingError: its claim-checked payload is gone and the version is not complete.
        Errors of the embedder or index propagate (after being noted in the ledger), so the queue retries the
        message and finally poisons it.
    """
    data = body if isinstance(body, dict) else read_envelope(body)  # *body* may be the envelope already read
    trace = data.get("trace") if isinstance(data, dict) else None
    with telemetry.span("chunking.stage_two", parent=trace if isinstance(trace, dict) else None,
                        doc_id=data.get("doc_id") if isinstance(data, dict) else None,
                        path=data.get("source") if isinstance(data, dict) else None) as current:
        try:
            store = figures if figures is not None else make_figure_store(settings)
            result = _run_stage_two(data, settings=settings, embedder=embedder, index=index, payloads=payloads,
                                    ledger=ledger, figures=store)
        except Exception as exc:
            telemetry.record("chunking.failures", 1, stage="stage_two", failure_kind=classify(exc).kind)
            raise
        telemetry.set_attributes(current, version=result.version, batch_no=result.batch_no,
                                 batch_count=result.batch_count, records=result.records, embedded=result.embedded,
                                 reused=result.reused, embedding_tokens=result.embedding_tokens,
                                 outcome=result.dropped or ("completed" if result.completed else "written"))
        telemetry.record("chunking.stage.duration", result.seconds, stage="stage_two")
        telemetry.record("chunking.embedding.tokens", result.embedding_tokens)
        telemetry.record("chunking.embedding.requests", result.embedding_requests)
        return result


def _run_stage_two(data, *, settings: Settings, embedder: Embedder, index: IndexWriter, payloads: PayloadStore,
                   ledger: Ledger, figures: FigureStore | None = None) -> StageTwoResult:
    """``run_stage_two`` on the envelope as read, without its span and metrics."""
    started = time.perf_counter()
    if type_of(data) == DOCUMENT_FIELDS:  # metadata or access lists changed, not the bytes: no embedding
        update, updated, dropped = apply_fields_body(data, index=index, ledger=ledger, payloads=payloads)
        return StageTwoResult(update.doc_id, update.version, update.source, 0, 1, records=updated, dropped=dropped,
                              seconds=time.perf_counter() - started)
    message = decode_message(data)
    result = StageTwoResult(message.doc_id, message.version, message.source, message.batch_no, message.batch_count)
    entry = ledger.get(message.doc_id)
    fate = batch_fate(entry, message.version)
    if fate in (BatchFate.SUPERSEDED, BatchFate.SUPERSEDED_INDEXED):
        result.dropped = "superseded"
        if not message.keep_old_versions and fate is BatchFate.SUPERSEDED:
            # A late or retried batch of a version that will never complete: whatever it (or its siblings)
            # wrote before being superseded goes, by key.
            result.removed = retire_version(message.doc_id, message.version, index=index, ledger=ledger,
                                            payloads=payloads, figures=figures,
                                            extra_keys=_message_keys(message, payloads))
    elif fate is BatchFate.ABANDONED:
        # Stage 1 gave up on this version after sending some of its batches (a page past a limit): it can never
        # complete, and nothing of it may stay searchable beside the indexed version.
        result.dropped = "stage 1 failed"
        result.removed = retire_version(message.doc_id, message.version, index=index, ledger=ledger,
                                        payloads=payloads, figures=figures,
                                        extra_keys=_message_keys(message, payloads))
    elif fate is BatchFate.COMPLETE:
        result.dropped = "already indexed"
        # A duplicate of a completed version: finish the clean-up a crash may have cut short (ledger reads and
        # deletes by key only).
        if not message.keep_old_versions:
            result.removed = remove_other_versions(message.doc_id, message.version, index=index, ledger=ledger,
                                                   payloads=payloads, figures=figures)
    if result.dropped:
        log.info("dropped %s of %s version %s: %s", message.where, message.source, message.version[:8],
                 result.dropped)
        return result
    if message.check:  # stage 1 has recorded the totals: complete now if every batch was already indexed
        _complete(message, result, index, ledger, payloads, entry, figures)
        result.seconds = time.perf_counter() - started
        return result
    try:
        keys, hashes = _embed_and_upsert(message, result, settings, embedder, index, payloads, ledger)
    except PayloadMissingError as exc:
        # Payloads are deleted once their version is complete; a late duplicate of a recorded batch is done.
        if message.batch_no not in ledger.batches_done(message.doc_id, message.version):
            _record_error(ledger, message, exc)
            raise
        keys, hashes = None, []
    except MessageError:
        raise  # a claim-checked payload that is not records: dropped by the caller, never the document's failure
    except Exception as exc:
        where = message.where
        failure = describe_failure(exc, settings)
        if failure is not None and failure.kind == "auth":
            # No retry can succeed until a key or a role changes: failed now, with what to check. The message
            # still goes back to the queue, so a retry after the fix completes the version.
            ledger.mark_failed(message.doc_id, message.source, message.version, f"{where}: {failure.line}",
                               only_if_current=True)
        else:
            ledger.record_error(message.doc_id, message.source, message.version,
                                f"{where}: {failure.line if failure else _crash(exc)}{_next_attempt(failure)}",
                                kind=classify(exc).kind)
        raise
    if keys is not None:
        ledger.record_batch(message.doc_id, message.version, message.batch_no, keys, hashes, embedder.name)
    # Recorded first, checked second: a delete or a newer version that the check misses lists this record
    # (it changed the ledger before listing records) and removes these keys itself.
    if not message.keep_old_versions and not is_wanted(ledger, message.doc_id, message.version):
        result.removed = retire_version(message.doc_id, message.version, index=index, ledger=ledger,
                                        payloads=payloads, figures=figures, extra_keys=keys or ())
        result.dropped = "superseded while embedding"
        log.info("batch %d of %s version %s was superseded while embedding: %d keys removed", message.batch_no,
                 message.source, message.version[:8], result.removed)
        return result
    _complete(message, result, index, ledger, payloads, figures=figures)
    result.seconds = time.perf_counter() - started
    log.info(
        "indexed %s batch %d/%d: %d records (%d embedded, %d reused)%s",
        message.source, message.batch_no + 1, message.batch_count, result.records, result.embedded,
        result.reused, ", version complete" if result.completed else "",
    )
    return result


def _record_error(ledger: Ledger, message, exc: Exception) -> None:
    ledger.record_error(message.doc_id, message.source, message.version,
                        f"{reason_of(exc)} ({message.where})",
                        kind=classify(exc).kind)


def _message_keys(message, payloads: PayloadStore) -> list[str]:
    try:
        return [r.id for r in load_records(message, payloads)]
    except PayloadMissingError:
        return []


def _embed_and_upsert(message, result: StageTwoResult, settings: Settings, embedder: Embedder, index: IndexWriter,
                      payloads: PayloadStore, ledger: Ledger) -> tuple[list[str], list[str]]:
    """Embed what has no reusable vector, upsert; returns the keys written and their vector hashes."""
    records = load_records(message, payloads)
    result.records = len(records)
    result.embedder = embedder.name
    # A vector is reused by the hash of the text it was computed from (the enrichment's embedding text when
    # there is one), never by the content alone, and only from the same embedder; records stored without a
    # vector are not embedded. Found through the ledger and lookups by key: no search query on this path.
    known = reusable_vectors(records, doc_id=message.doc_id, embedder=embedder.name, ledger=ledger, index=index)
    # One input per distinct text: a hierarchy level often repeats its parent's text exactly.
    todo: list[int] = []
    queued: set[str] = set()
    for i, r in enumerate(records):
        if r.has_vector and r.vector_key not in known and r.vector_key not in queued:
            queued.add(r.vector_key)
            todo.append(i)
    count = token_counter(settings.encoding) if any(records[i].embedding_text for i in todo) else None
    tokens = [count(records[i].embedding_text) if records[i].embedding_text else records[i].token_count
              for i in todo]
    requests_before = embedder.requests
    vectors = embed_all(
        embedder,
        [records[i].text_to_embed for i in todo],
        tokens,
        max_batch_tokens=settings.embedding_batch_max_tokens,
        max_inputs=settings.embedding_batch_max_inputs,
    )
    result.embedding_requests = embedder.requests - requests_before
    # What an embedding service bills: the encoding's tokens of every input sent (the offline embedder's own
    # counter measures something else).
    result.embedding_tokens = sum(tokens)
    known.update((records[i].vector_key, tuple(v)) for i, v in zip(todo, vectors))
    result.embedded = len(todo)
    result.reused = sum(1 for r in records if r.has_vector) - len(todo)
    index.upsert([r.with_embedding(known[r.vector_key]) if r.has_vector else r for r in records])
    return [r.id for r in records], vector_keys(records)


def _complete(message, result: StageTwoResult, index: IndexWriter, ledger: Ledger, payloads: PayloadStore,
              entry: LedgerEntry | None = None, figures: FigureStore | None = None) -> None:
    """Complete the message's version if the ledger says every batch of it is in (``complete_if_done``, with
    *entry* as read before, if any), then act on the index and payloads: once complete, delete the other versions
    by their recorded keys and this version's payloads; if no longer wanted, delete what it wrote."""
    done = complete_if_done(ledger, message.doc_id, message.source, message.version, message.batch_count,
                            embedder=result.embedder, entry=entry)
    if done is Completion.UNWANTED:
        result.removed = retire_version(message.doc_id, message.version, index=index, ledger=ledger,
                                        payloads=payloads, figures=figures)
    if done is not Completion.COMPLETED:
        return
    result.completed = True
    with telemetry.span("chunking.complete", doc_id=message.doc_id, path=message.source, version=message.version,
                        batch_count=message.batch_count or None) as current:
        if not message.keep_old_versions:
            result.removed = remove_other_versions(message.doc_id, message.version, index=index, ledger=ledger,
                                                   payloads=payloads, figures=figures)
        # Only this version's payloads: another version may be in flight with payloads of its own.
        payloads.delete_prefix(f"{message.doc_id}/{message.version}/")
        telemetry.set_attributes(current, removed=result.removed, outcome="indexed")
        latency_s = _since(message.uploaded_at)
        if latency_s is not None:
            telemetry.set_attributes(current, upload_to_indexed_s=round(latency_s, 3))
            telemetry.record("chunking.upload_to_indexed", latency_s)


def _since(at: str) -> float | None:
    """Seconds from the ISO 8601 time *at* until now; ``None`` if *at* is empty or not a time."""
    try:
        then = dt.datetime.fromisoformat(at.replace("Z", "+00:00")) if at else None
    except ValueError:
        return None
    if then is None:
        return None
    then = then if then.tzinfo else then.replace(tzinfo=dt.timezone.utc)
    return max(0.0, (dt.datetime.now(dt.timezone.utc) - then).total_seconds())
