"""What the Azure Functions run, minus the bindings: one call per trigger, with the process's services
(``chunking.services.services()``) built once from the environment (lazily, so importing ``function_app`` never
touches the network: see docs/architecture.md#platform-facts-and-their-sources)."""

from __future__ import annotations

import functools
import json
import logging
import tempfile
from pathlib import Path

from chunking import telemetry
from chunking.errors import StorageError, classify, describe_failure, reason_of
from chunking.ids import doc_id as make_doc_id
from chunking.ledger import document_view, list_documents, status_counts, summary
from chunking.messages.batches import decode_message
from chunking.messages.envelope import DOCUMENT_FIELDS, MessageError, read_envelope, type_of
from chunking.messages.fields import is_fields_message
from chunking.messages.jobs import RangeState, StageOneJob, decode_job, encode_job, enqueue_stage_one
from chunking.pipeline.backfill import expected_settings
from chunking.pipeline.field_sweep import refresh_fields
from chunking.pipeline.namespaces import deployment_namespace
from chunking.pipeline.reconcile import (FIGURES_GRACE_S, ReconcileReport, delete_document, parse_blob_events,
                                         reconcile, repair_due)
from chunking.pipeline.reprocess import ReprocessReport, reprocess, select
from chunking.pipeline.stage_two import StageOneResult, StageTwoResult, run_stage_one, run_stage_two
from chunking.redact import redact_exception
from chunking.services import Services, services
from chunking.settings import Settings
from chunking.storage import (BlobChangedError, blob_service, create_container, download_to_file, queue_depth,
                              storage_error)
from chunking.storage.properties import read_properties

__all__ = [
    "Answer", "BLOB_POISON_QUEUE", "enqueue_stage_one_jobs", "handle_batch", "handle_batch_poison", "handle_blob",
    "handle_blob_event", "handle_blob_poison", "handle_reconcile", "handle_repair", "handle_reprocess",
    "handle_stage_one_job", "handle_stage_one_poison", "handle_status_document", "handle_status_documents",
    "handle_status_summary",
]

log = logging.getLogger("chunking.app.functions")


def _to_host(handler):
    """*handler* with what it raises made safe for the Functions host, which logs the exception of a failed
    invocation (type, message, chain) outside our logging: every message in it is redacted
    (``chunking.redact.redact_exception``), e.g. a service's error text that echoes a key header or a URL's
    user-info. The type stays, so the host's retries and poison queues work as before."""

    @functools.wraps(handler)
    def run(*args, **kwargs):
        try:
            return handler(*args, **kwargs)
        except Exception as exc:
            clean = redact_exception(exc)
            if clean is exc:
                raise
            raise clean from None

    return run


@_to_host
def enqueue_stage_one_jobs(paths: list[str], *, force: bool = False, reason: str = "",
                           keep_old_versions: bool = False) -> int:
    """Put one whole-document stage-1 job per blob path of the documents container on the stage-1 job queue
    (``chunking.messages.jobs.enqueue_stage_one``): the queue-triggered stage 1 (``handle_stage_one_job``) reads
    and parses each blob. Returns the number of jobs sent.

    Raises:
        StorageError: the queue cannot be written.
    """
    s = services()
    return enqueue_stage_one(s.jobs.send, s.settings.documents_container, paths, force=force, reason=reason,
                             keep_old_versions=keep_old_versions)


@_to_host
def handle_blob(blob, *, force: bool = False) -> StageOneResult | None:
    """Stage 1 for a blob-trigger invocation. *blob* is the storage SDK's ``BlobClient`` of the uploaded blob (the
    trigger's SDK-type binding: no bytes travel through the host); it is read in ranges to a local file, and a
    PDF is parsed from that file page by page.

    Sends the chunk-batch messages to the queue and returns the result; the ledger says ``queued`` only once all
    were sent. A PDF of more than ``STAGE1_PAGES_PER_JOB`` pages is done one page range here and the rest as
    stage-1 jobs (``handle_stage_one_job``). A rejected file has ``error`` set (logged and recorded in the
    ledger, not raised, so the trigger does not retry a file that can never succeed). An unchanged file (same
    version already indexed) sends nothing. ``None``: the blob was overwritten or deleted before it could be
    read (the new upload's own trigger, or the delete event, takes over).

    Raises:
        StorageError: the blob could not be read or the messages could not be sent (recorded in the ledger; the
            host retries the blob).
    """
    return _stage_one(services(), blob, StageOneJob(blob.container_name, blob.blob_name, force=force))


@_to_host
def handle_stage_one_job(body: bytes | str) -> StageOneResult | None:
    """Stage 1 for a stage-1 job from the queue (``chunking.messages.jobs``): a whole document (reconcile,
    ``chunking reprocess``) or the next page range of a long one. The blob is read under the job's ETag: a blob
    overwritten since the job was made is not read and the job is dropped (``None``), as is a malformed
    message, a range of a version that is no longer current, or a range that already ran (a duplicate).

    Raises:
        StorageError: the blob could not be read or messages could not be sent (the queue retries the job).
    """
    s = services()
    try:
        job = decode_job(body)
    except MessageError as exc:
        log.error("dropped a malformed stage-1 job: %s", exc)
        return None
    blob = blob_service(s.settings).get_blob_client(job.container, job.path)
    return _stage_one(s, blob, job)


def _stage_one(s: Services, blob, job: StageOneJob) -> StageOneResult | None:
    # The stage-1 span opens here so that it holds the blob's download too; run_stage_one joins it.
    with telemetry.span("chunking.stage_one", parent=job.trace or None, container=job.container, path=job.path,
                        doc_id=make_doc_id(job.container, job.path), job_reason=job.reason):
        return _traced_stage_one(s, blob, job)


def _traced_stage_one(s: Services, blob, job: StageOneJob) -> StageOneResult | None:
    container, path = job.container, job.path

    def enqueue_next(version: str, state: RangeState) -> None:
        s.jobs.send([encode_job(StageOneJob(container, path, keep_old_versions=job.keep_old_versions,
                                            reason="next page range", version=version, etag=local.etag,
                                            range=state, trace=telemetry.carrier()))])

    try:
        with tempfile.TemporaryDirectory(prefix="stage1-") as tmp:
            local = download_to_file(blob, Path(tmp) / "blob", etag=job.etag,
                                     max_bytes=s.settings.max_document_bytes)
            # URL, type, time, metadata, tags, access lists: the document fields of its records (1-2 calls).
            properties = read_properties(s.settings, blob_service(s.settings).get_container_client(container), path)
            result = run_stage_one(local, source=path, container=container, settings=s.settings,
                                   payloads=s.payloads, ledger=s.ledger, force=job.force,
                                   keep_old_versions=job.keep_old_versions, send=s.batches.send,
                                   enqueue_next=enqueue_next, resume=job.range, resume_version=job.version,
                                   properties=properties,
                                   defer_throttled_figures=job.deferrals < MAX_FIGURE_DEFERRALS, figures=s.figures)
    except BlobChangedError as exc:
        log.info("not read: %s (a newer upload or its delete takes over)", exc)
        return None
    except Exception as exc:
        # The host retries and finally poisons the blob or job; the poison handler reports this reason.
        s.ledger.record_error(make_doc_id(container, path), path, job.version or None,
                              f"stage 1: {reason_of(exc)}", container=container, kind=classify(exc).kind)
        raise
    if result.outcome == "skipped" and job.range is None:
        s.ledger.touch(result.doc_id, path)  # this upload was handled (`chunking status --watch` waits for it)
    if result.outcome == "deferred":  # the describer was throttled: the whole document again, after the wait
        wait_s = result.retry_after_s if result.retry_after_s is not None else DEFER_BACKOFF_S * 2 ** job.deferrals
        wait_s = max(1, min(DEFER_MAX_S, int(wait_s + 0.999)))
        again = StageOneJob(container, path, force=job.force, keep_old_versions=job.keep_old_versions,
                            reason="figure descriptions throttled", trace=telemetry.carrier(),
                            deferrals=job.deferrals + 1)
        s.jobs.send([encode_job(again)], visibility_timeout=wait_s)
        telemetry.record("chunking.throttling.deferrals", 1)
        telemetry.record("chunking.throttling.delay", wait_s)
        log.warning("figure descriptions of %s throttled: stage 1 deferred %d s (deferral %d of %d)", path, wait_s,
                    job.deferrals + 1, MAX_FIGURE_DEFERRALS)
    return result


@_to_host
def handle_stage_one_poison(body: bytes | str) -> None:
    """A stage-1 job that failed on every attempt: the ledger says ``failed`` for its version (or the current
    one, for a whole-document job), with the last error; the previous indexed version stays searchable."""
    s = services()
    try:
        job = decode_job(body)
    except MessageError as exc:
        log.error("unreadable stage-1 job poison message: %s", exc)
        return
    telemetry.record("chunking.poison", 1, queue=f"{s.settings.stage_one.job_queue}-poison")
    did = make_doc_id(job.container, job.path)
    entry = s.ledger.get(did)
    if entry is None or (job.version and entry.version != job.version):
        return  # superseded since: nothing to record
    last = f" (last error: {entry.error})" if entry.error else ""
    where = f"page range {job.range.range_no + 1}" if job.range else "stage 1"
    s.ledger.mark_failed(did, job.path, entry.version, f"{where} failed on every attempt{last}",
                         container=job.container, kind=entry.failure or "transient")
    log.error("poisoned stage-1 job for %s/%s: %s failed on every attempt%s", job.container, job.path, where, last)


# Back-pressure: a batch throttled after the clients' own retries goes back on its queue, invisible for the
# service's Retry-After (else DEFER_BACKOFF_S · 2^n, at most DEFER_MAX_S), at most MAX_DEFERRALS times; these
# re-sends are new messages, so they never count towards the 5 deliveries that poison a message.
MAX_DEFERRALS = 20
DEFER_BACKOFF_S = 15
DEFER_MAX_S = 900
#: Times one document's stage 1 is deferred because the figure describer was throttled before anything was sent
#: (docs/parsers.md#figure-descriptions); the run after the last indexes its figures undescribed, with a note.
MAX_FIGURE_DEFERRALS = 5


@_to_host
def handle_batch(body: bytes | str) -> StageTwoResult | None:
    """Stage 2 for a queue-trigger invocation. A malformed message is logged and dropped (``None``): no retry
    can fix it. A batch throttled by the embedding or search service (429, 503 after the clients' retries) is
    put back on the queue with the service's Retry-After as its visibility delay, and the ledger says
    ``throttled`` with the next attempt time (``None`` is returned); after ``MAX_DEFERRALS`` deferrals of one
    message it fails like any error. Other errors propagate, so the queue retries and finally moves the
    message to ``-poison``."""
    s = services()
    try:
        return run_stage_two(body, settings=s.settings, embedder=s.embedder, index=s.index, payloads=s.payloads,
                             ledger=s.ledger, figures=s.figures)
    except MessageError as exc:
        log.error("dropped a malformed chunk-batch message: %s", exc)
        return None
    except Exception as exc:
        failure = classify(exc)
        if not failure.throttled or not _defer(s, body, failure.retry_after_s, exc):
            raise
        return None


def _defer(s: Services, body: bytes | str, retry_after_s: float | None, exc: Exception) -> bool:
    """Re-send *body* with one more deferral, invisible for the wait; False if its budget is spent (or *body* is
    a field update: the queue's own retries suffice, and the reconcile sweep sends it again)."""
    data = read_envelope(body)
    if type_of(data) == DOCUMENT_FIELDS:
        return False
    message = decode_message(data)
    deferrals = data.get("deferrals", 0)
    if not isinstance(deferrals, int) or isinstance(deferrals, bool) or deferrals < 0:
        deferrals = MAX_DEFERRALS  # a count we did not write: no more deferrals, the queue's retries decide
    if deferrals >= MAX_DEFERRALS:
        s.ledger.record_error(message.doc_id, message.source, message.version,
                              f"{reason_of(exc)} ({message.where}, throttled "
                              f"{deferrals} times)", kind="transient")
        return False
    wait_s = retry_after_s if retry_after_s is not None else DEFER_BACKOFF_S * 2 ** deferrals
    wait_s = max(1, min(DEFER_MAX_S, int(wait_s + 0.999)))
    data["deferrals"] = deferrals + 1
    s.batches.send([json.dumps(data, ensure_ascii=False, separators=(",", ":"))], visibility_timeout=wait_s)
    s.ledger.mark_throttled(message.doc_id, message.source, message.version, wait_s)
    telemetry.record("chunking.throttling.deferrals", 1)
    telemetry.record("chunking.throttling.delay", wait_s)
    log.warning("throttled %s of %s: deferred %d s (deferral %d of %d): %s", message.where, message.source,
                wait_s, deferrals + 1, MAX_DEFERRALS, exc)
    return True


@_to_host
def handle_blob_poison(body: bytes | str) -> None:
    """A blob that failed stage 1 on every attempt (the host's ``webjobs-blobtrigger-poison`` message:
    ``{FunctionId, BlobType, ContainerName, BlobName, ETag}``): the ledger says ``failed``, with the last error."""
    s = services()
    try:
        info = json.loads(body)
        container, path = info["ContainerName"], info["BlobName"]
    except (ValueError, KeyError, TypeError) as exc:
        log.error("unreadable blob poison message (%s): %r", exc, body[:200])
        return
    telemetry.record("chunking.poison", 1, queue=BLOB_POISON_QUEUE)
    did = make_doc_id(container, path)
    entry = s.ledger.get(did)
    last = f" (last error: {entry.error})" if entry and entry.error else ""
    s.ledger.mark_failed(did, path, entry.version if entry else "", f"stage 1 failed on every attempt{last}",
                         container=container, kind=(entry.failure if entry else "") or "transient")
    log.error("poisoned blob %s/%s: stage 1 failed on every attempt%s", container, path, last)


@_to_host
def handle_batch_poison(body: bytes | str) -> None:
    """A chunk batch that failed stage 2 on every attempt: its version is marked ``failed`` with the last error
    (unless another version has become current since). The previous indexed version stays searchable."""
    s = services()
    telemetry.record("chunking.poison", 1, queue=f"{s.settings.batch_queue}-poison")
    if is_fields_message(body):
        # The ledger keeps the old fields hash, so the next reconcile sweep sends the update again.
        log.error("poisoned field update (metadata or access lists) %s: the index keeps the old fields until the "
                  "next reconcile", body[:300])
        return
    try:
        message = decode_message(body)
    except MessageError as exc:
        log.error("unreadable chunk-batch poison message: %s", exc)
        return
    entry = s.ledger.get(message.doc_id)
    if entry is not None and entry.version == message.version and entry.is_failed:
        # Another batch of this version was poisoned first: its reason stays (reasons are never nested).
        log.error("poisoned batch %d of %s (version already failed: %s)", message.batch_no + 1, message.source,
                  entry.error)
        return
    last = f"; last error: {entry.error}" if entry and entry.error else ""
    reason = f"{message.where} failed on every attempt{last}"
    kind = (entry.failure if entry else "") or "transient"
    s.ledger.mark_failed(message.doc_id, message.source, message.version, reason, only_if_current=True, kind=kind)
    log.error("poisoned batch of %s: %s", message.source, reason)


@_to_host
def handle_blob_event(body: bytes | str) -> int:
    """Event Grid storage events from the events queue: a ``BlobDeleted`` for a blob of the documents container
    that is really gone removes the document's chunks. Returns the number of documents deleted."""
    s = services()
    try:
        events = parse_blob_events(body)
    except ValueError as exc:
        log.error("dropped a malformed blob event: %s", exc)
        return 0
    deleted = 0
    failed: list[Exception] = []
    for event in events:
        if not event.event_type.endswith("BlobDeleted") or event.container != s.settings.documents_container:
            continue
        try:  # one event's failure must not keep the others of the message from being applied
            # Events are unordered: the blob may have been uploaded again after this delete.
            if _container(s.settings).get_blob_client(event.path).exists():
                log.info("ignored a delete event for %s: the blob exists again", event.path)
                continue
            delete_document(make_doc_id(event.container, event.path), event.path, index=s.index, ledger=s.ledger,
                            payloads=s.payloads, namespace=deployment_namespace(s.settings, event.container),
                            figures=s.figures)
            deleted += 1
        except Exception as exc:
            failure = describe_failure(exc, s.settings)
            log.error("delete of %s failed: %s", event.path, failure.line if failure else f"{type(exc).__name__}: "
                      f"{exc}")
            failed.append(exc)
    if failed:
        raise failed[0]  # the queue retries the message; deletes already applied are idempotent
    return deleted


@_to_host
def handle_reconcile() -> ReconcileReport:
    """The reconcile timer (also ``python -m chunking reconcile``): documents container vs ledger vs index.
    What needs stage 1 again goes on the stage-1 job queue as a forced job: reconcile never parses."""
    s = services()
    container = _container(s.settings)
    create_container(container)

    def enqueue(path: str) -> None:
        enqueue_stage_one_jobs([path], force=True, reason="reconcile")

    report = reconcile(
        container=s.settings.documents_container,
        blob_paths=_blob_names(container),
        index=s.index,
        ledger=s.ledger,
        enqueue=enqueue,
        stuck_after_seconds=s.settings.stuck_after_seconds,
        payloads=s.payloads,
        namespace=deployment_namespace(s.settings, s.settings.documents_container),
        made_with=expected_settings(s.settings, s.settings.documents_container),
        embedder=s.embedder.name,
        backfill_limit=s.settings.reconcile.backfill_max_per_run,
        queues_idle=_queues_idle(s.settings),
        figures=s.figures,
        figures_grace_seconds=max(FIGURES_GRACE_S, s.settings.stage1_max_seconds + 300),
    )
    log.info("reconcile: %s", report.to_dict())
    # Metadata-only changes raise no storage event: the sweep sends their field updates.
    refresh_fields(container, settings=s.settings, ledger=s.ledger, payloads=s.payloads, send=s.batches.send)
    published = s.ledger.publish_pending()  # completion events whose publishing failed before
    if published:
        log.info("reconcile: %d pending completion events published", published)
    for found, value in report.to_dict().items():
        telemetry.record("chunking.reconcile", len(value) if isinstance(value, list) else value, found=found)
    try:
        _record_state(s)
    except Exception as exc:  # a gauge is not worth failing the repair for
        log.warning("reconcile: queue depths and ledger counts not recorded: %s", reason_of(exc))
    return report


@_to_host
def handle_repair() -> ReconcileReport:
    """The frequent repair timer (``REPAIR_SCHEDULE``, every 5 minutes by default; ``chunking reconcile --due``
    runs it once): only the ledger's rows that need something now (``chunking.pipeline.reconcile.repair_due``):
    stage 1 again for a dead sender, lost messages or a transient failure whose back-off is over, and the
    recorded keys of superseded versions deleted. No container listing, no index query: the full comparison
    stays with the daily ``handle_reconcile``."""
    s = services()
    container = _container(s.settings)

    def enqueue(path: str) -> None:
        enqueue_stage_one_jobs([path], force=True, reason="repair")

    def blob_exists(path: str) -> bool:
        from azure.core.exceptions import AzureError

        try:
            return container.get_blob_client(path).exists()
        except AzureError as exc:
            raise storage_error(exc, container, f"container '{container.container_name}'") from None

    report = repair_due(
        container=s.settings.documents_container,
        index=s.index,
        ledger=s.ledger,
        enqueue=enqueue,
        blob_exists=blob_exists,
        stuck_after_seconds=s.settings.stuck_after_seconds,
        queues_idle=_queues_idle(s.settings),
        payloads=s.payloads,
        namespace=deployment_namespace(s.settings, s.settings.documents_container),
        figures=s.figures,
    )
    if report.stuck or report.retried or report.orphaned or report.swept or report.failed:
        log.info("repair: %s", report.to_dict())
    return report


def _queues_idle(settings: Settings) -> bool:
    """No message at all (visible or invisible) on the chunk-batch and stage-1 job queues: nothing in flight can
    still complete a ``queued`` version. False when a queue cannot be asked."""
    try:
        return all(queue_depth(settings, name) == 0 for name in (settings.batch_queue, settings.stage_one.job_queue))
    except StorageError:
        return False


#: The queue the Functions host moves a blob to after poisonBlobThreshold failed attempts.
BLOB_POISON_QUEUE = "webjobs-blobtrigger-poison"


def _record_state(s: Services) -> None:
    """The gauges reconcile sets (docs/operations.md#metrics): ledger entries by status, and the approximate
    depth of each queue of the pipeline and of its poison queues (0 for a queue not created yet)."""
    for status, count in status_counts(s.ledger.entries()).items():
        telemetry.record("chunking.ledger.documents", count, status=status)
    names = (s.settings.batch_queue, s.settings.stage_one.job_queue, s.settings.blob_events_queue)
    for name in (*names, *(f"{n}-poison" for n in names), BLOB_POISON_QUEUE):
        telemetry.record("chunking.queue.depth", queue_depth(s.settings, name), queue=name)


# -- the status API (HTTP-triggered functions; docs/operations.md#the-status-api) ----------------------------------

#: What a status handler answers: the HTTP status code and the JSON body.
Answer = tuple[int, dict]


@_to_host
def handle_status_summary() -> Answer:
    """``GET /api/status``: the counts by status, the failed documents with their reasons and the notes
    (``chunking.ledger.summary``: what ``chunking status --json`` prints)."""
    return 200, summary(services().ledger.entries())


@_to_host
def handle_status_documents(params: dict[str, str]) -> Answer:
    """``GET /api/status/documents?status=failed&limit=100&cursor=…``: one page of documents in path order
    (``chunking.ledger.list_documents``); 400 with ``{"error": …}`` for an unknown status, a bad limit or cursor."""
    raw = params.get("limit") or "100"
    if not raw.isdigit():
        return 400, {"error": f"limit must be a whole number, got {raw!r}"}
    try:
        limit = int(raw)
        page = list_documents(services().ledger.entries(), status=params.get("status") or None, limit=limit,
                              cursor=params.get("cursor") or None)
    except ValueError as exc:
        return 400, {"error": str(exc)}
    return 200, page


@_to_host
def handle_status_document(params: dict[str, str]) -> Answer:
    """``GET /api/status/document?path=manuals/a.pdf[&container=…]``: one document
    (``chunking.ledger.document_view``) of the documents container (or *container*); 400 without a path, 404
    with ``{"error": …}`` when the ledger does not know it."""
    s = services()
    path = params.get("path") or ""
    if not path:
        return 400, {"error": "give the document's path: ?path=folder/name"}
    container = params.get("container") or s.settings.documents_container
    entry = s.ledger.get(make_doc_id(container, path))
    if entry is None:
        return 404, {"error": f"no document {container}/{path} in the ledger"}
    return 200, document_view(entry)


@_to_host
def handle_reprocess(*, every: bool = False, prefix: str | None = None, dry_run: bool = False,
                     progress=lambda n: None, total=lambda n: None) -> ReprocessReport:
    """``chunking reprocess``: forced stage-1 jobs for the stale documents of the documents container (all of
    them, no per-run limit), or *every* one, or those under *prefix* (``chunking.pipeline.reprocess``). *total(n)* is
    called once the selection is known, *progress(n)* after each group of jobs sent."""
    s = services()
    container = _container(s.settings)
    create_container(container)
    paths = _blob_names(container)
    chosen = select(paths, {e.doc_id: e for e in s.ledger.entries()}, container=s.settings.documents_container,
                    every=every, prefix=prefix, made_with=expected_settings(s.settings, s.settings.documents_container),
                    embedder=s.embedder.name)
    total(len(chosen))
    report = reprocess(chosen, container=s.settings.documents_container, ledger=s.ledger, checked=len(paths),
                       send=lambda batch: enqueue_stage_one_jobs(batch, force=True, reason="reprocess"),
                       dry_run=dry_run, progress=progress)
    log.info("reprocess: %d selected, %d enqueued, %d failed", len(report.selected), len(report.enqueued),
             len(report.failed))
    return report


def _container(settings: Settings):
    return blob_service(settings).get_container_client(settings.documents_container)


def _blob_names(container) -> list[str]:
    from azure.core.exceptions import AzureError

    try:
        return [b.name for b in container.list_blobs()]
    except AzureError as exc:
        raise storage_error(exc, container, f"container '{container.container_name}'") from None
