"""The two stages of the ingestion pipeline as plain functions over interfaces (no Azure Functions types).

Stage 1 (``run_stage_one``): source bytes → pages → chunks → chunk-batch queue messages. It does no network
calls except writing claim-check payloads. Stage 2 (``run_stage_two``): one message → embeddings (reusing the
vectors of unchanged chunk text) → merge-or-upload into the index → the batch recorded in the ledger; when the
ledger holds every batch of the message's version, the document's chunks of other versions are deleted by key. Both stages are idempotent: every trigger is
at-least-once. See docs/architecture.md#the-two-stages.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from chunking.claim_check import PayloadMissingError, PayloadStore
from chunking.document_fields import DocumentFields, SourceProperties, configured_fields
from chunking.field_updates import apply_fields_body, fields_message_if_changed, is_fields_message
from chunking.failures import classify, reason_of
from chunking.embeddings import Embedder, embed_all
from chunking.format_splitters import DocumentSplitter, splitter_for
from chunking.formats import HEADING_EXTENSIONS, PAGINATED_EXTENSIONS, extension_of
from chunking.ids import doc_id as make_doc_id
from chunking.ids import document_version
from chunking.index.protocol import SearchIndex
from chunking.index_records import HeadingOutline, build_records
from chunking.ledger import Ledger
from chunking.model import Chunk, ChunkRecord, Page
from chunking.namespaces import deployment_namespace
from chunking.parse_sandbox import parse_bounded
from chunking.parsers import ParseError, ReadContext
from chunking.parsers.selection import document_readers
from chunking.parsers.limits import Deadline, Limits
from chunking.queue_messages import decode_message, encode_batches, load_records
from chunking.redact import redact
from chunking.service_errors import ServiceFailure, describe_failure
from chunking.settings import Settings
from chunking.strategies.notes import fallback_note
from chunking.tokens import token_counter
from chunking.vector_reuse import reusable_vectors, vector_keys
from chunking.versions import remove_other_versions, retire_version

__all__ = ["StageOneResult", "StageTwoResult", "document_records", "run_stage_one", "run_stage_two", "source_version"]

log = logging.getLogger("chunking.pipeline")


@dataclass
class StageOneResult:
    """What stage 1 did with one source.

    ``outcome``: ``added`` (new document), ``updated`` (new version of a known one), ``skipped`` (this version is
    already indexed: nothing parsed, nothing sent), ``failed`` (rejected: ``error`` says why, no messages).
    """

    source: str
    doc_id: str
    outcome: str = "added"
    version: str = ""
    size_bytes: int = 0
    pages: int = 0
    chunks: int = 0
    tokens: int = 0
    max_chunk_tokens: int = 0
    messages: list[str] = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0


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


def run_stage_one(
    data: bytes,
    *,
    source: str,
    container: str,
    settings: Settings,
    payloads: PayloadStore,
    ledger: Ledger,
    force: bool = False,
    keep_old_versions: bool = False,
    send: Callable[[list[str]], None] | None = None,
    properties: SourceProperties | None = None,
) -> StageOneResult:
    """Parse and split one source into chunk-batch messages (each ≤ ``settings.max_message_bytes`` bytes) and
    record the new version in the ledger.

    Args:
        data: the source's bytes.
        source: its path inside *container* (e.g. ``"manuals/a.pdf"``); the extension picks parser and splitter.
        container: the container (or another namespace) the path belongs to; part of the document id.
        force: process even if the ledger says this version is indexed (reconcile uses it when the index lost it).
        keep_old_versions: tell stage 2 not to delete older versions' chunks (``--cleanup none``).
        send: puts the messages on the chunk-batch queue. With it the ledger says ``sending`` while they are
            sent and ``queued`` only once every one was; if it raises, the error propagates and the version stays
            ``sending`` (the trigger's retry, or reconcile, sends it again). Without it the caller runs the
            returned messages itself and the version is ``queued`` at once.
        properties: what storage says about the source (URL, type, time, metadata, tags, access lists) for the
            document fields of its records (``chunking.document_fields``). For a version already indexed whose
            metadata or access lists changed, the one message sent is a field update (``chunking.field_updates``).

    A version already indexed is skipped without parsing. Bad input (unsupported type, empty, corrupt,
    undecodable, too large, not what the configured splitter reads) does not raise: the result and the ledger carry the reason, one log line names the
    file, and the previously indexed version stays searchable.
    """
    started = time.perf_counter()
    result = StageOneResult(source=source, doc_id=make_doc_id(container, source), size_bytes=len(data))
    splitter = splitter_for(source, settings)
    result.version = source_version(data, splitter)
    entry = ledger.get(result.doc_id)
    if entry is not None and entry.status != "deleted":
        result.outcome = "updated"
        if not force and entry.status == "indexed" and entry.indexed_version == result.version:
            result.outcome = "skipped"
            result.chunks = entry.chunk_count
            update = fields_message_if_changed(entry, properties, source=source, settings=settings,
                                               payloads=payloads)
            if update is not None:  # same bytes, other metadata or access lists: fields only, nothing embedded
                result.messages = [update]
                if send is not None:
                    send(result.messages)
            result.seconds = time.perf_counter() - started
            log.info("unchanged %s: version %s already indexed", source, result.version[:8])
            return result
    limits = Limits.from_settings(settings)
    context = ReadContext(limits=limits, deadline=Deadline(limits.stage1_max_seconds))
    try:
        # In a child process, unless a service (Document Intelligence) reads this format.
        pages = parse_bounded(data, source=source, settings=settings, context=context,
                              readers=document_readers(settings))
        chunks = _split_in_time(splitter, pages, source, context)
    except ValueError as exc:  # ParseError, or a text the configured splitter cannot take (json on Markdown)
        reason = exc.reason if isinstance(exc, ParseError) else str(exc)
        result.outcome, result.error = "failed", reason
        ledger.mark_failed(result.doc_id, source, result.version, reason, container=container)
        result.seconds = time.perf_counter() - started
        log.error("rejected %s: %s", source, reason)
        return result
    fields = configured_fields(settings, data, source, pages, properties, declared_title=context.title)
    records = document_records(pages, chunks, doc_id=result.doc_id, version=result.version, source=source,
                               namespace=deployment_namespace(settings, container), fields=fields)
    result.pages = len(pages)
    result.chunks = len(records)
    result.tokens = sum(r.token_count for r in records)
    result.max_chunk_tokens = max((r.token_count for r in records), default=0)
    result.messages = encode_batches(records, max_message_bytes=settings.max_message_bytes, payloads=payloads,
                                     max_records=settings.batch_max_chunks, keep_old_versions=keep_old_versions)
    note = "; ".join(filter(None, [*context.notes, fallback_note(chunks)]))
    ledger.begin_version(result.doc_id, source, result.version, len(records), len(result.messages), container,
                         note=note, status="queued" if send is None else "sending", fields_hash=fields.source_hash)
    if send is not None:
        send(result.messages)
        ledger.mark_sent(result.doc_id, source, result.version)
    result.seconds = time.perf_counter() - started
    log.info(
        "split %s: %d pages, %d chunks, %d tokens, %d messages in %.2fs",
        source, result.pages, result.chunks, result.tokens, len(result.messages), result.seconds,
    )
    return result


def source_version(data: bytes, splitter: DocumentSplitter) -> str:
    """The version of a source: the hash of its bytes and of the splitter's fingerprint."""
    return document_version(hashlib.sha256(data).hexdigest(), splitter.fingerprint)


def document_records(pages: Sequence[Page], chunks: Sequence[Chunk], *, doc_id: str, version: str,
                     source: str, namespace: str = "",
                     fields: DocumentFields | None = None) -> list[ChunkRecord]:
    """The index records stage 1 makes of one document version's chunks: citations per page for paginated
    formats, heading paths from the outline for formats with headings, the deployment's *namespace*, the
    document *fields* on each.
    ``chunking split`` prints the same."""
    return build_records(
        chunks,
        doc_id=doc_id,
        version=version,
        source=source,
        paginated=extension_of(source) in PAGINATED_EXTENSIONS,
        outline=HeadingOutline(pages) if extension_of(source) in HEADING_EXTENSIONS else None,
        namespace=namespace,
        fields=fields,
    )


def _split_in_time(splitter, pages, source: str, context: ReadContext) -> list:
    """The splitter's chunks, within the stage-1 deadline (checked between chunks) and without a traceback for
    input the parser let through but the splitter cannot take."""
    chunks = []
    try:
        for chunk in splitter.split(pages):
            chunks.append(chunk)
            context.check_time(source)
    except RecursionError:
        raise ParseError(source, f"nested too deeply to split: lower MAX_NESTING_DEPTH (now "
                                 f"{context.limits.max_nesting_depth})") from None
    except MemoryError:
        raise ParseError(source, "out of memory while splitting: lower MAX_DOCUMENT_CHARS") from None
    except (ValueError, OSError):  # ParseError, or a text the configured splitter cannot take: a reason above
        raise
    except Exception as exc:  # the same bytes fail the same way on every retry: a reason, not a retry
        log.exception("splitter failed on %s", source)
        raise ParseError(source, f"could not split: {_crash(exc)}") from None
    return chunks


def _crash(exc: BaseException) -> str:
    """``TypeError: message`` on one line, at most 300 characters, without secrets."""
    text = " ".join(redact(str(exc)).split())
    return f"{type(exc).__name__}: {text[:300]}" if text else type(exc).__name__


def _next_attempt(failure: ServiceFailure | None) -> str:
    """When a retryable failure should be tried again, for the ledger: ``; next attempt after 12:30:05 UTC``."""
    if failure is None or failure.kind not in ("throttled", "server", "unreachable"):
        return ""
    delay = failure.retry_after_s if failure.retry_after_s else 60.0
    at = dt.datetime.now(dt.timezone.utc) + dt.timedelta(seconds=delay)
    return f"; next attempt after {at:%H:%M:%S} UTC (the queue retries the batch)"


def run_stage_two(
    body: str | bytes,
    *,
    settings: Settings,
    embedder: Embedder,
    index: SearchIndex,
    payloads: PayloadStore,
    ledger: Ledger,
) -> StageTwoResult:
    """Embed and upsert one chunk-batch message, record the batch in the ledger, and complete the version when
    the ledger holds every one of its batch numbers.

    Completion never queries the index (its queries lag its writes): the ledger's batch records say which
    batches are in and which keys they wrote. A batch whose version is no longer the ledger's current one
    (superseded, deleted, or already complete) is dropped, and what its version wrote is deleted by key; a batch
    whose version stops being current while it is embedded removes its own keys after writing them. Vectors
    this document's recorded batches already hold for a text (same hash, same embedder) are reused, not
    recomputed, found through the ledger and lookups by key (``chunking.vector_reuse``). Upserts are
    merge-or-upload on deterministic keys, so a duplicated or retried message changes nothing. When the version
    is complete the ledger says ``indexed`` and the document's other versions are deleted by their recorded keys.

    Raises:
        MessageError: the message is not a chunk-batch message (it cannot succeed on retry).
        PayloadMissingError: its claim-checked payload is gone and the version is not complete.
        Errors of the embedder or index propagate (after being noted in the ledger), so the queue retries the
        message and finally poisons it.
    """
    started = time.perf_counter()
    if is_fields_message(body):  # metadata or access lists changed, not the bytes: fields only, no embedding
        update, updated, dropped = apply_fields_body(body, index=index, ledger=ledger, payloads=payloads)
        return StageTwoResult(update.doc_id, update.version, update.source, 0, 1, records=updated, dropped=dropped,
                              seconds=time.perf_counter() - started)
    message = decode_message(body)
    result = StageTwoResult(message.doc_id, message.version, message.source, message.batch_no, message.batch_count)
    entry = ledger.get(message.doc_id)
    if entry is None or entry.version != message.version or entry.status == "deleted":
        result.dropped = "superseded"
        if not message.keep_old_versions and (entry is None or entry.status == "deleted"
                                              or entry.indexed_version != message.version):
            # A late or retried batch of a version that will never complete: whatever it (or its siblings)
            # wrote before being superseded goes, by key.
            result.removed = retire_version(message.doc_id, message.version, index=index, ledger=ledger,
                                            payloads=payloads, extra_keys=_message_keys(message, payloads))
    elif entry.status == "indexed":
        result.dropped = "already indexed"
        # A duplicate of a completed version: finish the clean-up a crash may have cut short (ledger reads and
        # deletes by key only).
        if not message.keep_old_versions:
            result.removed = remove_other_versions(message.doc_id, message.version, index=index, ledger=ledger,
                                                   payloads=payloads)
    if result.dropped:
        log.info("dropped batch %d of %s version %s: %s", message.batch_no, message.source, message.version[:8],
                 result.dropped)
        return result
    try:
        keys, hashes = _embed_and_upsert(message, result, settings, embedder, index, payloads, ledger)
    except PayloadMissingError as exc:
        # Payloads are deleted once their version is complete; a late duplicate of a recorded batch is done.
        if message.batch_no not in ledger.batches_done(message.doc_id, message.version):
            _record_error(ledger, message, exc)
            raise
        keys, hashes = None, []
    except Exception as exc:
        where = f"batch {message.batch_no + 1} of {message.batch_count}"
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
    if not message.keep_old_versions and not _still_wanted(ledger, message.doc_id, message.version):
        result.removed = retire_version(message.doc_id, message.version, index=index, ledger=ledger,
                                        payloads=payloads, extra_keys=keys or ())
        result.dropped = "superseded while embedding"
        log.info("batch %d of %s version %s was superseded while embedding: %d keys removed", message.batch_no,
                 message.source, message.version[:8], result.removed)
        return result
    if len(ledger.batches_done(message.doc_id, message.version)) >= message.batch_count:
        _complete(message, result, index, ledger, payloads)
    result.seconds = time.perf_counter() - started
    log.info(
        "indexed %s batch %d/%d: %d records (%d embedded, %d reused)%s",
        message.source, message.batch_no + 1, message.batch_count, result.records, result.embedded,
        result.reused, ", version complete" if result.completed else "",
    )
    return result


def _record_error(ledger: Ledger, message, exc: Exception) -> None:
    ledger.record_error(message.doc_id, message.source, message.version,
                        f"{reason_of(exc)} (batch {message.batch_no + 1} of {message.batch_count})",
                        kind=classify(exc).kind)


def _still_wanted(ledger: Ledger, doc_id: str, version: str) -> bool:
    """Is *version* the current version of a live document, or the indexed one (a late duplicate)?"""
    entry = ledger.get(doc_id)
    return entry is not None and entry.status != "deleted" and version in (entry.version, entry.indexed_version)


def _message_keys(message, payloads: PayloadStore) -> list[str]:
    try:
        return [r.id for r in load_records(message, payloads)]
    except PayloadMissingError:
        return []


def _embed_and_upsert(message, result: StageTwoResult, settings: Settings, embedder: Embedder, index: SearchIndex,
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


def _complete(message, result: StageTwoResult, index: SearchIndex, ledger: Ledger, payloads: PayloadStore) -> None:
    """Every batch of the message's version is recorded in the ledger: mark it ``indexed``, then delete the other
    versions by their recorded keys. Marked first, so a writer of an older version that records a batch after
    the listing sees it is no longer wanted and removes its own keys."""
    # The embedder of the version's vectors: this batch's, or (a completion reached without embedding) the one
    # its batch records name.
    embedder = result.embedder or next((b.embedder for b in ledger.batch_records(message.doc_id, message.version)
                                        if b.embedder), "")
    if not ledger.mark_indexed(message.doc_id, message.source, message.version, embedder):
        if not _still_wanted(ledger, message.doc_id, message.version):
            result.removed = retire_version(message.doc_id, message.version, index=index, ledger=ledger,
                                            payloads=payloads)
        return
    result.completed = True
    if not message.keep_old_versions:
        result.removed = remove_other_versions(message.doc_id, message.version, index=index, ledger=ledger,
                                               payloads=payloads)
    # Only this version's payloads: another version may be in flight with payloads of its own.
    payloads.delete_prefix(f"{message.doc_id}/{message.version}/")
