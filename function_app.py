"""Azure Functions (Python v2 programming model): bindings only; the work is in ``chunking.app.functions``.

- ``ingest_document``: blob trigger on the ``DOCUMENTS_CONTAINER`` → chunk-batch messages sent to the
  ``CHUNK_BATCH_QUEUE`` (stage 1: parse + split). The blob arrives as a storage SDK ``BlobClient`` (SDK-type
  binding, ``azurefunctions-extensions-bindings-blob``), not as bytes: stage 1 reads it in ranges.
- ``run_stage_one_job``: queue trigger on the ``STAGE1_JOB_QUEUE`` → stage 1 for the next page range of a long
  PDF, or for a whole document that reconcile or ``chunking reprocess`` enqueued.
- ``index_chunk_batch``: queue trigger on the ``CHUNK_BATCH_QUEUE`` → embeddings → search index (stage 2).
- ``remove_deleted_blob``: Event Grid ``BlobDeleted`` events delivered to the ``BLOB_EVENTS_QUEUE`` → chunks removed.
- ``reconcile_index``: timer (``RECONCILE_SCHEDULE``) → container vs ledger vs index, every drift repaired.
- ``repair_due``: timer (``REPAIR_SCHEDULE``, every 5 minutes) → the ledger's rows due now sent to stage 1 again,
  superseded versions' recorded chunks deleted.
- ``record_blob_poison`` / ``record_batch_poison`` / ``record_stage_one_poison``: what failed on every attempt
  is recorded in the ledger.
- ``status_summary`` / ``status_documents`` / ``status_document``: HTTP GET ``/api/status``,
  ``/api/status/documents`` and ``/api/status/document``: the ledger as ``chunking status`` shows it.

Container, queue and schedule names are read from the app settings here, when the host indexes the app, with the
defaults of ``chunking.settings.BINDING_DEFAULTS``: a ``%NAME%`` binding expression would make the host refuse to
load the function when the setting is absent, since the host knows no defaults.

The blob trigger's source is ``EventGrid`` (the only one on Flex Consumption, and low latency) unless the app
setting ``BLOB_TRIGGER_SOURCE`` says ``LogsAndContainerScan`` (polling), which local runs with Azurite need
because Azurite emits no Event Grid events.
"""

import azure.functions as func
import azurefunctions.extensions.bindings.blob as blob_types

from chunking.app import functions as handlers
from chunking.settings import binding_setting

app = func.FunctionApp()

_BLOB_SOURCE = binding_setting("BLOB_TRIGGER_SOURCE")
_DOCUMENTS = binding_setting("DOCUMENTS_CONTAINER")
_BATCHES = binding_setting("CHUNK_BATCH_QUEUE")
_EVENTS = binding_setting("BLOB_EVENTS_QUEUE")
_JOBS = binding_setting("STAGE1_JOB_QUEUE")
_SCHEDULE = binding_setting("RECONCILE_SCHEDULE")
_REPAIR_SCHEDULE = binding_setting("REPAIR_SCHEDULE")
_STORAGE = "AzureWebJobsStorage"


@app.function_name("ingest_document")
@app.blob_trigger(arg_name="client", path=f"{_DOCUMENTS}/{{name}}", connection=_STORAGE, source=_BLOB_SOURCE)
def ingest_document(client: blob_types.BlobClient) -> None:
    """Stage 1: read the uploaded blob in ranges, parse and split it page by page; chunk batches (≤ 48 KiB raw
    JSON each) are sent to the chunk-batch queue as they fill (an output binding would send them only after
    the function returned, when the ledger can no longer learn whether they were sent). A long PDF continues as
    page-range jobs on the stage-1 job queue."""
    handlers.handle_blob(client)


@app.function_name("run_stage_one_job")
@app.queue_trigger(arg_name="msg", queue_name=_JOBS, connection=_STORAGE)
def run_stage_one_job(msg: func.QueueMessage) -> None:
    """Stage 1 from the stage-1 job queue: a page range of a long PDF, or a whole document (reconcile,
    ``chunking reprocess``); the blob is read with the storage SDK, never as one ``bytes``."""
    handlers.handle_stage_one_job(msg.get_body())


@app.function_name("index_chunk_batch")
@app.queue_trigger(arg_name="msg", queue_name=_BATCHES, connection=_STORAGE)
def index_chunk_batch(msg: func.QueueMessage) -> None:
    """Stage 2: embed one chunk batch and upsert it into the search index."""
    handlers.handle_batch(msg.get_body())


@app.function_name("remove_deleted_blob")
@app.queue_trigger(arg_name="msg", queue_name=_EVENTS, connection=_STORAGE)
def remove_deleted_blob(msg: func.QueueMessage) -> None:
    """Event Grid ``Microsoft.Storage.BlobDeleted`` → the document's chunks are removed from the index."""
    handlers.handle_blob_event(msg.get_body())


@app.function_name("reconcile_index")
@app.timer_trigger(arg_name="timer", schedule=_SCHEDULE, run_on_startup=False)
def reconcile_index(timer: func.TimerRequest) -> None:
    """Safety net: compare container, ledger and index; enqueue what is missing or stuck, delete orphans."""
    handlers.handle_reconcile()


@app.function_name("repair_due")
@app.timer_trigger(arg_name="timer", schedule=_REPAIR_SCHEDULE, run_on_startup=False)
def repair_due(timer: func.TimerRequest) -> None:
    """Healing in minutes: stage 1 again for the ledger's rows due now (a dead sender, lost messages, a transient
    failure past its back-off); the recorded keys of superseded versions deleted."""
    handlers.handle_repair()


@app.function_name("record_blob_poison")
@app.queue_trigger(arg_name="msg", queue_name="webjobs-blobtrigger-poison", connection=_STORAGE)
def record_blob_poison(msg: func.QueueMessage) -> None:
    """A blob that failed stage 1 on every attempt: ledger → failed, with the reason."""
    handlers.handle_blob_poison(msg.get_body())


@app.function_name("record_stage_one_poison")
@app.queue_trigger(arg_name="msg", queue_name=f"{_JOBS}-poison", connection=_STORAGE)
def record_stage_one_poison(msg: func.QueueMessage) -> None:
    """A stage-1 job that failed on every attempt: ledger → failed, with the reason."""
    handlers.handle_stage_one_poison(msg.get_body())


@app.function_name("record_batch_poison")
@app.queue_trigger(arg_name="msg", queue_name=f"{_BATCHES}-poison", connection=_STORAGE)
def record_batch_poison(msg: func.QueueMessage) -> None:
    """A chunk batch that failed stage 2 on every attempt: ledger → failed, with the reason."""
    handlers.handle_batch_poison(msg.get_body())


# -- the status API: HTTP-triggered, reading the ledger only (docs/operations.md#the-status-api) -------------------
# Function keys (auth level FUNCTION) by default; with App Service authentication (Entra ID) in front, a caller also
# needs a token of the app registration. The same answers as `chunking status` (chunking.ledger.views).


def _json(answer: tuple[int, dict]) -> func.HttpResponse:
    import json

    status, body = answer
    return func.HttpResponse(json.dumps(body, ensure_ascii=False), status_code=status, mimetype="application/json")


@app.function_name("status_summary")
@app.route(route="status", methods=["GET"], auth_level=func.AuthLevel.FUNCTION)
def status_summary(req: func.HttpRequest) -> func.HttpResponse:
    """Counts by status, failed documents with their reasons, notes."""
    return _json(handlers.handle_status_summary())


@app.function_name("status_documents")
@app.route(route="status/documents", methods=["GET"], auth_level=func.AuthLevel.FUNCTION)
def status_documents(req: func.HttpRequest) -> func.HttpResponse:
    """Documents in path order, a page at a time: ``?status=failed&limit=100&cursor=…``."""
    return _json(handlers.handle_status_documents(dict(req.params)))


@app.function_name("status_document")
@app.route(route="status/document", methods=["GET"], auth_level=func.AuthLevel.FUNCTION)
def status_document(req: func.HttpRequest) -> func.HttpResponse:
    """One document by path: ``?path=folder/name.pdf``."""
    return _json(handlers.handle_status_document(dict(req.params)))
