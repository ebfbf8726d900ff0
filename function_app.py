"""Azure Functions (Python v2 programming model): bindings only; the work is in ``chunking.handlers``.

- ``ingest_document``: blob trigger on ``%DOCUMENTS_CONTAINER%/{name}`` → chunk-batch messages on
  ``%CHUNK_BATCH_QUEUE%`` (stage 1: parse + split).
- ``index_chunk_batch``: queue trigger on ``%CHUNK_BATCH_QUEUE%`` → embeddings → search index (stage 2).

The blob trigger's source is ``EventGrid`` (the only one on Flex Consumption, and low latency) unless the app
setting ``BLOB_TRIGGER_SOURCE`` says ``LogsAndContainerScan`` (polling), which local runs with Azurite need
because Azurite emits no Event Grid events.
"""

import os
import typing

import azure.functions as func

from chunking import handlers

app = func.FunctionApp()

_BLOB_SOURCE = os.environ.get("BLOB_TRIGGER_SOURCE", "EventGrid")


@app.function_name("ingest_document")
@app.blob_trigger(
    arg_name="blob", path="%DOCUMENTS_CONTAINER%/{name}", connection="AzureWebJobsStorage", source=_BLOB_SOURCE
)
@app.queue_output(arg_name="batches", queue_name="%CHUNK_BATCH_QUEUE%", connection="AzureWebJobsStorage")
def ingest_document(blob: func.InputStream, batches: func.Out[typing.List[str]]) -> None:  # noqa: UP006
    """Stage 1: parse and split the uploaded blob; one queue message per chunk batch (≤ 48 KiB raw JSON)."""
    result = handlers.handle_blob(blob.read(), blob.name)
    if result.messages:  # a rejected file was logged (with its reason) and yields no messages
        batches.set(result.messages)


@app.function_name("index_chunk_batch")
@app.queue_trigger(arg_name="msg", queue_name="%CHUNK_BATCH_QUEUE%", connection="AzureWebJobsStorage")
def index_chunk_batch(msg: func.QueueMessage) -> None:
    """Stage 2: embed one chunk batch and upsert it into the search index."""
    handlers.handle_batch(msg.get_body())
