"""Stage 1: one source → pages → chunks → chunk-batch messages, in memory bounded by the page and time bounded
by the page range (docs/architecture.md#long-documents).

Pages are read one at a time (a PDF from a local file, by PDFium), chunked as they come, packed into batches,
and each batch is sent as soon as it is full once more than ``HOLD_BATCHES`` are waiting: what stage 1 holds is
one page's text and chunks plus the batches not yet sent. A short document is sent whole at its end, its
messages carrying the version's batch and chunk counts as before. A long one's batches go out with counts of 0
and the ledger gets the totals at the end (``Ledger.mark_sent``), followed by a completion-check message, so
stage 2 completes the version whether its last batch is indexed before or after the totals are known.

A PDF of more than ``STAGE1_PAGES_PER_JOB`` pages is cut into page ranges. Each range is split on its own (a
range boundary is a chunk boundary; running headers are recognised per range), continuing the offsets, chunk
ordinals and batch numbers of the ranges before it, so the chunks are the same whether the ranges run in one
call (the CLI) or as a chain of queue jobs, one per invocation (the Functions app: ``enqueue_next``).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping, Sequence

from azure.core.exceptions import AzureError

from chunking import telemetry
from chunking.documents.records import build_records
from chunking.documents.splitter import DocumentSplitter, splitter_for
from chunking.documents.version_fields import HEAD_PAGES, version_fields
from chunking.errors import classify
from chunking.formats import HEADING_EXTENSIONS, PAGINATED_EXTENSIONS, extension_of, format_of
from chunking.ids import doc_id as make_doc_id
from chunking.ids import document_version
from chunking.ledger import Ledger
from chunking.messages.jobs import RangeState
from chunking.model import Chunk, ChunkRecord, DocumentFields, Page, SourceProperties
from chunking.parsers import ParseError, ReadContext, no_text_error
from chunking.parsers.furniture import FurnitureKeys
from chunking.parsers.limits import Deadline, Limits
from chunking.parsers.pdf import PageLoads
from chunking.parsers.sandbox import read_first_range_bounded, read_pages_bounded
from chunking.pipeline.backfill import stage_one_settings
from chunking.pipeline.batches import HOLD_BATCHES, Batches
from chunking.pipeline.fields import fields_message_if_changed
from chunking.pipeline.members import member_field_updates, stage_members
from chunking.pipeline.namespaces import deployment_namespace
from chunking.redact import redact
from chunking.parsers.selection import reads_pictures, stores_pictures
from chunking.pipeline.figures import FigureSpan, FiguresThrottled, attach_images, figure_pages
from chunking.services import document_readers, figure_describer, make_figure_store
from chunking.settings import Settings
from chunking.splitters.markdown import HeadingOutline
from chunking.storage import BlobFile
from chunking.storage.claim_check import PayloadStore
from chunking.storage.figures import FigureStore
from chunking.strategies.notes import fallback_note

__all__ = ["HOLD_BATCHES", "StageOneResult", "document_records", "run_stage_one", "source_version"]

log = logging.getLogger("chunking.pipeline.stage_one")

@dataclass
class StageOneResult:
    """What stage 1 did with one source (or, for a page-range job, with one range of it).

    ``outcome``: ``added`` (new document), ``updated`` (new version of a known one), ``skipped`` (this version is
    already indexed: nothing parsed, nothing sent; or a duplicated page-range job), ``superseded`` (a page-range
    job of a version that is no longer current), ``failed`` (rejected: ``error`` says why), ``deferred`` (the
    figure describer was throttled before anything was sent: nothing recorded, to run again). ``messages`` are
    what was sent (or, without ``send``, what the caller is to send); ``continues`` is the next page range's
    state when a job for it was enqueued.
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
    members: list["StageOneResult"] = field(default_factory=list)  # a container's (chunking.pipeline.members)
    error: str | None = None
    seconds: float = 0.0
    ranges: int = 1
    continues: RangeState | None = None
    #: what the parser noted about the document (as the ledger keeps them): local OCR's pages and pictures
    #: (``chunking.parsers.pictures.pixel_counts`` reads their counts back).
    notes: list[str] = field(default_factory=list)
    #: outcome ``deferred``: the vision model throttled before anything was sent, and stage 1 is to run again
    #: after this many seconds (None: the service said nothing).
    retry_after_s: float | None = None


def source_version(data: bytes, splitter: DocumentSplitter, namespace: str = "") -> str:
    """The version of a source: the hash of its bytes, of the splitter's fingerprint and of the deployment's
    *namespace* (``chunking.ids.document_version``)."""
    return document_version(hashlib.sha256(data).hexdigest(), splitter.fingerprint, namespace)


def document_records(pages: Sequence[Page], chunks: Sequence[Chunk], *, doc_id: str, version: str,
                     source: str, namespace: str = "", first_ordinal: int = 0,
                     fields: DocumentFields | None = None) -> list[ChunkRecord]:
    """The index records stage 1 makes of one document version's chunks: citations per page for paginated
    formats, heading paths from the outline for formats with headings, the deployment's *namespace*, the
    document *fields* on each; ordinals from *first_ordinal* (a page range continues the ranges before it).
    ``chunking split`` prints the same."""
    return build_records(
        chunks,
        doc_id=doc_id,
        version=version,
        source=source,
        paginated=extension_of(source) in PAGINATED_EXTENSIONS,
        outline=HeadingOutline(pages) if extension_of(source) in HEADING_EXTENSIONS else None,
        namespace=namespace,
        first_ordinal=first_ordinal,
        fields=fields,
    )


def _observed(run: Callable[..., StageOneResult]) -> Callable[..., StageOneResult]:
    """*run* (stage 1 of one source) inside the span ``chunking.stage_one``, with its metrics
    (docs/operations.md#telemetry); the wrapper takes one keyword more, ``trace``: the context the span continues."""

    @functools.wraps(run)
    def observed(data: bytes | BlobFile, *, trace: Mapping[str, str] | None = None, **options) -> StageOneResult:
        container, source, resume = options["container"], options["source"], options.get("resume")
        with telemetry.span("chunking.stage_one", parent=trace, join=True, container=container, path=source,
                            doc_id=make_doc_id(container, source),
                            page_range=resume.range_no + 1 if resume is not None else None) as current:
            try:
                result = run(data, **options)
            except Exception as exc:
                telemetry.record("chunking.failures", 1, stage="stage_one", failure_kind=classify(exc).kind)
                raise
            telemetry.set_attributes(current, version=result.version, pages=result.pages, chunks=result.chunks,
                                     outcome=result.outcome, reason=result.error, size_bytes=result.size_bytes)
            telemetry.record("chunking.stage.duration", result.seconds, stage="stage_one")
            telemetry.record("chunking.pages", result.pages)
            telemetry.record("chunking.chunks", result.chunks)
            if result.outcome == "skipped":  # the ledger counts indexed, failed and deleted at their transitions
                telemetry.record("chunking.documents", 1, outcome="skipped")
            elif result.error:
                telemetry.record("chunking.failures", 1, stage="stage_one", failure_kind="permanent")
            return result

    return observed


@_observed
def run_stage_one(
    data: bytes | BlobFile,
    *,
    source: str,
    container: str,
    settings: Settings,
    payloads: PayloadStore,
    ledger: Ledger,
    force: bool = False,
    keep_old_versions: bool = False,
    send: Callable[[list[str]], None] | None = None,
    enqueue_next: Callable[[str, RangeState], None] | None = None,
    resume: RangeState | None = None,
    resume_version: str = "",
    properties: SourceProperties | None = None,
    defer_throttled_figures: bool = False,
    figures: FigureStore | None = None,
    on_member: Callable[[str], None] | None = None,
) -> StageOneResult:
    """Parse and split one source into chunk-batch messages (each ≤ ``settings.max_message_bytes`` bytes) and
    record the new version in the ledger.

    Args:
        data: the source's bytes, or a ``BlobFile`` (the bytes in a local file, with their hash): a PDF is then
            read from the file page by page.
        source: its path inside *container* (e.g. ``"manuals/a.pdf"``); the extension picks parser and splitter.
        container: the container (or another namespace) the path belongs to; part of the document id.
        force: process even if the ledger says this version is indexed (reconcile uses it when the index lost it).
        keep_old_versions: tell stage 2 not to delete older versions' chunks (``--cleanup none``).
        send: puts the messages on the chunk-batch queue. With it the ledger says ``sending`` while they are
            sent and ``queued`` only once every one was; if it raises, the error propagates and the version stays
            ``sending`` (the trigger's retry, or reconcile, sends it again). Without it the caller runs the
            returned messages itself and the version is ``queued`` at once.
        enqueue_next: with *send*, a document of more than ``settings.stage_one.pages_per_job`` pages is done one
            page range per call: ``enqueue_next(version, state)`` must put the job of the next range on the
            stage-1 job queue (``chunking.messages.jobs``). Without it every range runs in this call.
        resume, resume_version: run the page range *resume* of version *resume_version* (a page-range job).
        properties: what storage says about the source (URL, type, time, metadata, tags, access lists) for the
            document fields of its records (``chunking.documents.version_fields``). For a version already indexed whose
            metadata or access lists changed, the one message sent is a field update (``chunking.pipeline.fields``).
        defer_throttled_figures: when the figure describer is throttled before any message was sent, stop with
            the outcome ``deferred`` (nothing sent or recorded; ``retry_after_s`` the service's wait) for the
            caller to run stage 1 again later, instead of indexing the figures undescribed.
        figures: where this source's figure images go (the Functions pass their ``Services.figures``, built once
            per process); default ``make_figure_store(settings)``. Used only for a source that stores pictures.
        on_member: called with each member's source as a container (a mail, an archive, and those inside them)
            reads it, before its stage 1: the CLI shows it as the progress within one file.
        trace: (taken by ``_observed``) the W3C trace context this run continues (a page-range job's ``StageOneJob.trace``); without it
            the run starts the version's trace. The run is the span ``chunking.stage_one`` (document, path,
            version, pages, chunks, outcome), or joins the one its caller opened to include the blob's download;
            its messages carry its context (docs/operations.md#telemetry).

    A version already indexed is skipped without parsing. Bad input (unsupported type, empty, corrupt,
    undecodable, too large, not what the configured splitter reads) does not raise: the result and the ledger
    carry the reason, one log line names the file, and the previously indexed version stays searchable.
    """
    started = time.perf_counter()
    result = StageOneResult(source=source, doc_id=make_doc_id(container, source))
    splitter = splitter_for(source, settings)
    if isinstance(data, BlobFile):
        local: bytes | Path = data.path
        result.size_bytes, digest = data.size_bytes, data.sha256
    else:
        local, result.size_bytes, digest = data, len(data), hashlib.sha256(data).hexdigest()
    namespace = deployment_namespace(settings, container)
    result.version = document_version(digest, splitter.fingerprint, namespace)
    entry = ledger.get(result.doc_id)
    if resume is not None:
        why = _stale_range(ledger, entry, result.doc_id, result.version, resume_version, resume)
        if why:
            result.outcome, result.seconds = why, time.perf_counter() - started
            log.info("%s page range %d of %s version %s", why, resume.range_no + 1, source, resume_version[:8])
            return result
        result.outcome = "updated" if entry is not None and entry.indexed_version else "added"
    elif entry is not None and not entry.is_deleted:
        result.outcome = "updated"
        # A version indexed before the document fields existed (no fields hash in the ledger) is read again once:
        # its title, language and size come from the bytes, which a field update cannot give it.
        if not force and entry.is_indexed and entry.indexed_version == result.version and entry.fields_hash:
            result.outcome = "skipped"
            result.chunks = entry.chunk_count
            update = fields_message_if_changed(entry, properties, source=source, settings=settings,
                                               payloads=payloads)
            if update is not None:  # same bytes, other metadata or access lists: fields only, nothing embedded
                result.messages = [update]
            if (fmt := format_of(source)) is not None and fmt.members:  # a container's members carry its fields
                result.messages += member_field_updates(result.doc_id, entry.indexed_version, container=container,
                                                        ledger=ledger, properties=properties, settings=settings,
                                                        payloads=payloads)
            if result.messages and send is not None:
                send(result.messages)
            result.seconds = time.perf_counter() - started
            log.info("unchanged %s: version %s already indexed", source, result.version[:8])
            return result
    fmt = format_of(source)
    if fmt is not None and fmt.members and resume is None:  # its members first (docs/architecture.md#containers)
        try:
            result.members = stage_members(local, source=source, doc_id=result.doc_id, version=result.version,
                                           container=container, settings=settings, ledger=ledger, run=run_stage_one,
                                           result=StageOneResult, payloads=payloads, force=force,
                                           keep_old_versions=keep_old_versions, send=send, properties=properties,
                                           on_member=on_member)
        except ParseError:
            pass  # the container's own parse below fails with the same reason, and records it
    # What made this version, for backfill after a settings change (chunking.pipeline.backfill).
    made_with = stage_one_settings(splitter.fingerprint, namespace)
    out = Batches(result, settings, payloads, ledger, container, send, keep_old_versions,
                  streamed=resume is not None, first_batch_no=resume.batch_no if resume else 0, made_with=made_with,
                  uploaded_at=properties.last_modified if properties is not None else None)
    out.readers, out.properties = document_readers(settings), properties
    # A vision describer for the pictures the parser keeps (docs/parsers.md#figure-descriptions).
    out.describer = figure_describer(settings) if reads_pictures(source, settings) else None
    # Its figure images, stored as PNG for its chunks to point to (docs/parsers.md#figure-images).
    if stores_pictures(source, settings):
        out.figures = figures if figures is not None else make_figure_store(settings)
    out.defer_figures = defer_throttled_figures and resume is None
    try:
        start = _Start(resume) if resume is not None else _first_range(local, source, result.size_bytes, settings,
                                                                       out)
        state, last = start.state, False
        while not last:
            context = start.context or ReadContext(limits=_limits(settings, out),
                                                   deadline=Deadline(settings.stage1_max_seconds))
            done, (state, last) = state, _run_range(local, state, splitter, out, result, settings, context,
                                                    read=start.pages if start.stream is None else start.stream,
                                                    page_loads=start.loads, learnt=start.learnt)
            start = _Start(state)
            if not last and enqueue_next is not None and send is not None:
                out.flush(final=False)
                enqueue_next(result.version, state)
                ledger.record_range(result.doc_id, result.version, done.range_no)
                result.continues = state
                break
    except FiguresThrottled as exc:  # nothing was sent: the whole document runs again after the service's wait
        result.outcome, result.retry_after_s, result.messages = "deferred", exc.retry_after_s, _member_messages(
            result, send)
        result.seconds = time.perf_counter() - started
        log.info("deferred %s: figure descriptions throttled (retry after %s s)", source, exc.retry_after_s)
        return result
    except ValueError as exc:  # ParseError, or a text the configured splitter cannot take (json on Markdown)
        reason = exc.reason if isinstance(exc, ParseError) else str(exc)
        result.outcome, result.error, result.messages = "failed", reason, _member_messages(result, send)
        ledger.mark_failed(result.doc_id, source, result.version, reason, container=container, made_with=made_with)
        result.seconds = time.perf_counter() - started
        log.error("rejected %s: %s", source, reason)
        return result
    if result.continues is None:
        out.flush(final=True)
        if resume is not None:  # the last range's job: a duplicate of it is dropped too
            ledger.record_range(result.doc_id, result.version, done.range_no)
    result.messages[:0] = _member_messages(result, send)
    result.seconds = time.perf_counter() - started
    log.info("split %s%s: %d pages, %d chunks, %d tokens, %d messages in %.2fs", source,
             f" (page range {done.range_no + 1} of {result.ranges})" if result.ranges > 1 else "", result.pages,
             result.chunks, result.tokens, out.sent, result.seconds)
    return result


def _member_messages(result: StageOneResult, send: Callable[[list[str]], None] | None) -> list[str]:
    """The messages of a container's members that the caller is to run (without *send*; with it they went out),
    before the container's own: its completion then finds every member's version queued."""
    return [message for member in result.members for message in member.messages] if send is None else []


def _stale_range(ledger: Ledger, entry, doc_id: str, version: str, wanted: str, state: RangeState) -> str:
    """Why a page-range job is not to run ('' if it is): its version is no longer current (or the settings
    changed its version), or it ran before (a duplicated job, or the version is already complete)."""
    if version != wanted or entry is None or entry.version != wanted or entry.is_deleted or entry.is_failed:
        return "superseded"
    if entry.is_indexed or state.range_no in ledger.ranges_done(doc_id, wanted):
        return "skipped"
    return ""


@dataclass
class _Start:
    """The first page range's state, the context of what was read to find it (the range is read within the
    same deadline, and its notes and pictures join those), and its pages when that read already gave all of
    them or is reading them (``_first_range``); a later range has only its state."""

    state: RangeState
    context: ReadContext | None = None  # the head's read: its deadline, notes and pictures go on with the range
    pages: list[Page] | None = None
    loads: PageLoads = field(default_factory=dict)  # the head's PDF page loads, for the first range's read
    stream: Iterator[Page] | None = None  # the range's pages, from the child that read the head
    learnt: list[FurnitureKeys] | None = None  # where *stream*'s furniture keys arrive


def _first_range(local: bytes | Path, source: str, size_bytes: int, settings: Settings, out: Batches) -> _Start:
    """The first range: the whole document, or its first ``STAGE1_PAGES_PER_JOB`` pages. An empty or oversized
    file is left to ``read_pages`` to reject, with its reason. The page count, the declared title and the head
    pages of a PDF are read in one go (``read_first_range_bounded``), and its fields are set on *out* from them.
    A PDF of at most ``HEAD_PAGES`` pages is read whole by that: the head read is the range's read (the same
    call of ``read_pages``, pages 0 to the count, furniture learnt from all of them), so its pages are returned
    to be split as they are instead of being read a second time. A longer one's range is read by the same child
    under ``PARSE_ISOLATION=process``, its pages returned as they come (``_Start.stream``); in-line, the head
    hands what loading its pages gave to the range's read (``_Start.loads``), which does not load them again.
    Either way the range is read within the deadline the head's read started (``_Start.context``)."""
    if not size_bytes or size_bytes > settings.max_document_bytes:
        return _Start(RangeState(0, 0, 0, 0))
    context = ReadContext(limits=_limits(settings, out), deadline=Deadline(settings.stage1_max_seconds))
    ranged = _range_reads(size_bytes, FurnitureKeys(frozenset(), frozenset()))
    first = read_first_range_bounded(local, source=source, settings=settings, context=context, readers=out.readers,
                                     pages=HEAD_PAGES, range_pages=settings.stage_one.pages_per_job, **ranged)
    count = first.count
    if count:  # read in page ranges: the fields come from the head (version_fields), read here with the count
        out.fields = version_fields(local, source=source, size_bytes=size_bytes, settings=settings, context=context,
                                    properties=out.properties, pages=None, readers=out.readers,
                                    head=(first.title, first.head))
    per_job = settings.stage_one.pages_per_job
    state = RangeState(0, 0, per_job if count and count > per_job else count or 0, count or 0)
    if first.pages is not None:  # the child that read the head reads the range
        return _Start(state, context, stream=first.pages, learnt=first.learnt)
    whole = first.head if count and count <= HEAD_PAGES and len(first.head) == count else None
    if whole is None:
        context.images.clear()  # the range's read keeps the pictures of its pages again
    return _Start(state, context, whole, first.loads if whole is None else {})


def _range_reads(size_bytes: int, furniture: FurnitureKeys, offset: int = 0, chars_before: int = 0,
                 check_streams: bool = False) -> dict:
    """The ``read_pages`` arguments of a page range (``read_pages_bounded``) besides the range itself."""
    return {"size_bytes": size_bytes, "offset": offset, "chars_before": chars_before,
            "check_streams": check_streams, "furniture": furniture}


def _limits(settings: Settings, out: "Batches") -> Limits:
    """The parse limits of *settings*; pictures kept for *out*'s describer or figure store when it has one."""
    limits = Limits.from_settings(settings)
    keep = out.describer is not None or out.figures is not None
    return dataclasses.replace(limits, keep_pictures=True) if keep else limits


def _run_range(local: bytes | Path, state: RangeState, splitter: DocumentSplitter, out: "Batches",
               result: StageOneResult, settings: Settings, context: ReadContext,
               read: Iterable[Page] | None = None, page_loads: PageLoads | None = None,
               learnt: list[FurnitureKeys] | None = None) -> tuple[RangeState, bool]:
    """Read, split and pack one page range (the whole document when it has no pages); returns the next range's
    state and whether this range was the last. *read*: the range's pages, when ``_first_range`` has read them
    all already or its child is reading them (then *learnt* receives the furniture keys of that read);
    *page_loads*: what loading its first pages gave when ``_first_range`` read them as the head."""
    paged = state.page_count > 0
    last = not paged or state.page_end >= state.page_count
    result.ranges = max(1, -(-state.page_count // settings.stage_one.pages_per_job)) if paged else 1
    seen = _Seen(state)
    out.notes = context.notes  # the parser's notes go to the ledger with the version
    result.notes = context.notes
    learnt = [] if learnt is None else learnt
    if paged and out.fields is None:  # a PDF read in ranges: title and language from its first pages
        out.fields = version_fields(local, source=result.source, size_bytes=result.size_bytes, settings=settings,
                                    context=context, properties=out.properties, pages=None, readers=out.readers)
    # In a child process (PARSE_ISOLATION), its pages passed back one at a time; in-line for a service reader.
    if read is None:
        ranged = _range_reads(result.size_bytes, FurnitureKeys(frozenset(state.header_keys),
                                                               frozenset(state.footer_keys)),
                              offset=state.offset, chars_before=state.chars, check_streams=not paged)
        read = read_pages_bounded(local, source=result.source, settings=settings, context=context,
                                  readers=out.readers, start=state.page_start, end=state.page_end if paged else None,
                                  learnt=learnt.append, page_loads=page_loads or None, **ranged)
    spans: list[FigureSpan] = []  # the stored figure images' places, for the records that hold them
    if out.describer is not None or out.figures is not None:  # kept pictures described and stored, before splitting
        read = figure_pages(read, context=context, describer=out.describer, store=out.figures,
                            doc_id=result.doc_id, version=result.version, spans=spans,
                            defer=(lambda: out.sent == 0 and not out.streamed) if out.defer_figures else None)
    pages = seen.track(read)
    chunks = _split_in_time(splitter, pages, result.source, context)
    ordinal = state.ordinal
    namespace = deployment_namespace(settings, out.container)
    if splitter.stream is not None and paged and extension_of(result.source) not in HEADING_EXTENSIONS:
        for chunk in chunks:
            out.add(attach_images(document_records((), [chunk], doc_id=result.doc_id, version=result.version,
                                                   source=result.source, namespace=namespace,
                                                   first_ordinal=ordinal, fields=out.fields), spans))
            ordinal += 1
    else:
        seen.keep = True  # the heading outline needs every page
        chunks = list(chunks)
        if fallback_note(chunks):
            context.note(fallback_note(chunks))
        if out.fields is None:  # read whole: the fields of every page
            out.fields = version_fields(local, source=result.source, size_bytes=result.size_bytes,
                                        settings=settings, context=context, properties=out.properties,
                                        pages=seen.pages, readers=out.readers)
        out.add(attach_images(document_records(seen.pages, chunks, doc_id=result.doc_id, version=result.version,
                                               source=result.source, namespace=namespace, first_ordinal=ordinal,
                                               fields=out.fields), spans))
        ordinal += len(chunks)
    if last and not seen.text_seen:
        raise no_text_error(result.source)
    out.total_chunks = ordinal
    out.end_range()  # a range boundary is a batch boundary, so the next range's first batch number is known
    result.pages += seen.count
    step = state.page_end - state.page_start
    keys = learnt[0] if learnt else FurnitureKeys()
    following = RangeState(state.range_no + 1, state.page_end, min(state.page_end + step, state.page_count),
                           state.page_count, seen.offset, ordinal, out.next_batch_no, seen.chars, seen.text_seen,
                           tuple(sorted(keys.top)), tuple(sorted(keys.bottom)))
    return following, last


class _Seen:
    """Counts what a range's pages held as they go by (offsets, characters, text) without keeping them, unless
    the splitter needs them all (``pages``)."""

    def __init__(self, state: RangeState) -> None:
        self.offset, self.chars, self.text_seen, self.count = state.offset, state.chars, state.text_seen, 0
        self.pages: list[Page] = []
        self.keep = False

    def track(self, pages: Iterable[Page]) -> Iterator[Page]:
        for page in pages:
            self.count += 1
            self.chars += len(page.text)
            self.offset = page.offset + len(page.text) + len(page.footer)
            self.text_seen = self.text_seen or bool(page.text.strip())
            self.pages.append(page) if self.keep else None
            yield page


def _split_in_time(splitter: DocumentSplitter, pages: Iterator[Page], source: str,
                   context: ReadContext) -> Iterator[Chunk]:
    """The splitter's chunks as they come (``stream``) or, for a splitter that needs every page, at once; within
    the stage-1 deadline (checked between chunks) and without a traceback for input the parser let through but
    the splitter cannot take."""
    try:
        chunks = splitter.stream(pages) if splitter.stream is not None else iter(splitter.split(list(pages)))
        for chunk in chunks:
            yield chunk
            context.check_time(source)
    except RecursionError:
        raise ParseError(source, f"nested too deeply to split: lower MAX_NESTING_DEPTH (now "
                                 f"{context.limits.max_nesting_depth})") from None
    except MemoryError:
        raise ParseError(source, "out of memory while splitting: lower MAX_DOCUMENT_CHARS") from None
    except (ValueError, OSError, AzureError, FiguresThrottled):  # ParseError, a text the splitter cannot take, a
        raise  # service parser's failure (transient: the document is worth another try), a deferral
    except Exception as exc:  # the same bytes fail the same way on every retry: a reason, not a retry
        log.exception("splitter failed on %s", source)
        raise ParseError(source, f"could not split: {_crash(exc)}") from None


def _crash(exc: BaseException) -> str:
    """``TypeError: message`` on one line, at most 300 characters, without secrets."""
    text = " ".join(redact(str(exc)).split())
    return f"{type(exc).__name__}: {text[:300]}" if text else type(exc).__name__
