"""The Functions adapter: binding metadata as the host sees it, and bad input handled without retry loops."""

from __future__ import annotations

import json
import logging

import azure.functions as func
import pytest

from tests.functions_host import index_app, record_batches


@pytest.fixture(scope="module")
def app_env(tmp_path_factory, azurite):
    """function_app with local services (offline embedder, local index in a temp folder, memory payloads) and
    the documents container on Azurite (the blob trigger hands over a ``BlobClient``)."""
    from azure.storage.blob import BlobServiceClient

    import function_app
    from chunking.app import functions as handlers
    from chunking.storage.claim_check import MemoryPayloadStore

    mp = pytest.MonkeyPatch()
    mp.setenv("CHUNKING_STATE_DIR", str(tmp_path_factory.mktemp("state")))
    mp.setenv("AzureWebJobsStorage", azurite.connection_string)
    mp.setenv("DOCUMENTS_CONTAINER", "fadocuments")
    function_app.documents = BlobServiceClient.from_connection_string(azurite.connection_string).get_container_client(
        "fadocuments")
    if not function_app.documents.exists():
        function_app.documents.create_container()
    mp.setattr("chunking.services.make_payload_store", lambda *a: MemoryPayloadStore())
    function_app.queues = record_batches(mp, forward=False)
    handlers.services.cache_clear()

    yield function_app
    del function_app.queues, function_app.documents
    handlers.services.cache_clear()
    mp.undo()


@pytest.fixture(scope="module")
def registered(app_env):
    # get_functions() is not idempotent (python-worker #1867): call it once per app object.
    return {f.get_function_name(): f for f in app_env.app.get_functions()}


def test_bindings_with_no_app_settings_use_the_documented_defaults():
    # An app with no settings at all: every name is resolved when the app is indexed, none is left to the host.
    bindings = index_app({})
    assert set(bindings) == {"ingest_document", "run_stage_one_job", "index_chunk_batch", "remove_deleted_blob",
                             "reconcile_index", "repair_due", "record_blob_poison", "record_stage_one_poison",
                             "record_batch_poison", "status_summary", "status_documents", "status_document"}
    assert bindings["ingest_document"] == [
        {"type": "blobTrigger", "direction": "IN", "name": "client", "path": "documents/{name}",
         "connection": "AzureWebJobsStorage", "source": "EventGrid"}]
    assert bindings["run_stage_one_job"] == [{"type": "queueTrigger", "direction": "IN", "name": "msg",
                                              "queueName": "stage1-jobs", "connection": "AzureWebJobsStorage"}]
    assert bindings["record_stage_one_poison"][0]["queueName"] == "stage1-jobs-poison"
    assert bindings["index_chunk_batch"] == [{"type": "queueTrigger", "direction": "IN", "name": "msg",
                                              "queueName": "chunk-batches", "connection": "AzureWebJobsStorage"}]
    queues = {name: bindings[name][0]["queueName"]
              for name in ("remove_deleted_blob", "record_blob_poison", "record_batch_poison")}
    assert queues == {"remove_deleted_blob": "blob-events", "record_blob_poison": "webjobs-blobtrigger-poison",
                      "record_batch_poison": "chunk-batches-poison"}
    timer = bindings["reconcile_index"][0]
    assert (timer["type"], timer["schedule"], timer["runOnStartup"]) == ("timerTrigger", "0 30 3 * * *", False)
    repair = bindings["repair_due"][0]
    assert (repair["type"], repair["schedule"], repair["runOnStartup"]) == ("timerTrigger", "0 */5 * * * *", False)
    assert "%" not in json.dumps(bindings)


def test_bindings_follow_the_app_settings():
    bindings = index_app({"DOCUMENTS_CONTAINER": "manuals", "CHUNK_BATCH_QUEUE": "manual-batches",
                          "STAGE1_JOB_QUEUE": "manual-jobs",
                          "BLOB_EVENTS_QUEUE": "manual-events", "RECONCILE_SCHEDULE": "0 */5 * * * *",
                          "REPAIR_SCHEDULE": "0 */10 * * * *", "BLOB_TRIGGER_SOURCE": "LogsAndContainerScan"})
    [trigger] = bindings["ingest_document"]
    assert (trigger["path"], trigger["source"]) == ("manuals/{name}", "LogsAndContainerScan")
    assert bindings["index_chunk_batch"][0]["queueName"] == "manual-batches"
    assert bindings["record_batch_poison"][0]["queueName"] == "manual-batches-poison"
    assert bindings["remove_deleted_blob"][0]["queueName"] == "manual-events"
    assert bindings["reconcile_index"][0]["schedule"] == "0 */5 * * * *"
    assert bindings["repair_due"][0]["schedule"] == "0 */10 * * * *"
    assert bindings["run_stage_one_job"][0]["queueName"] == "manual-jobs"
    assert bindings["record_stage_one_poison"][0]["queueName"] == "manual-jobs-poison"


def test_the_blob_trigger_is_an_sdk_type_binding(registered):
    # What the Python worker asks the blob extension when it indexes the app: a BlobClient parameter makes the
    # host pass a reference to the blob (SupportsDeferredBinding), never its bytes.
    import inspect

    import azurefunctions.extensions.bindings.blob as blob_types
    from azurefunctions.extensions.base import meta

    annotation = inspect.signature(registered["ingest_document"].get_user_function()).parameters["client"].annotation
    assert annotation is blob_types.BlobClient
    assert "blobTrigger" in meta._ConverterMeta._bindings and meta._ConverterMeta.check_supported_type(annotation)


def test_binding_defaults_are_the_settings_defaults_and_the_samples():
    from pathlib import Path

    from chunking.settings import BINDING_DEFAULTS, Settings

    s = Settings.from_env({})
    assert (s.documents_container, s.batch_queue, s.blob_events_queue) == (
        "documents", "chunk-batches", "blob-events")
    assert BINDING_DEFAULTS["RECONCILE_SCHEDULE"] == "0 30 3 * * *"
    sample = json.loads((Path(__file__).resolve().parents[1] / "local.settings.sample.json").read_text())["Values"]
    # Locally the trigger polls (Azurite emits no Event Grid events); every other name is the default.
    assert {k: sample[k] for k in BINDING_DEFAULTS} == {**BINDING_DEFAULTS, "BLOB_TRIGGER_SOURCE":
                                                        "LogsAndContainerScan"}


@pytest.mark.parametrize(
    "name, data, reason",
    [
        ("documents/notes.xyz", b"hello", "unsupported file type .xyz"),
        ("documents/empty.txt", b"", "file is empty"),
        ("documents/broken.pdf", b"%PDF-1.7\nthis is not really a pdf", "not a valid PDF"),
    ],
)
def test_bad_input_logs_one_line_and_enqueues_nothing(app_env, registered, caplog, name, data, reason):
    blob = app_env.documents.upload_blob(name.split("/", 1)[1], data, overwrite=True)
    sent = len(app_env.queues[-1].sent) if app_env.queues else 0
    with caplog.at_level(logging.ERROR, logger="chunking"):
        registered["ingest_document"].get_user_function()(blob)
    assert len(app_env.queues[-1].sent) == sent
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(lines) == 1
    assert name.split("/", 1)[1] in lines[0] and reason in lines[0]


def test_good_blob_then_batch_roundtrip(app_env, registered):
    text = b"Alpha beta gamma. " * 400
    blob = app_env.documents.upload_blob("sub/alpha.txt", text, overwrite=True)
    registered["ingest_document"].get_user_function()(blob)
    messages = app_env.queues[-1].sent
    assert messages and all(len(m.encode()) <= 49_152 for m in messages)
    for m in messages:
        registered["index_chunk_batch"].get_user_function()(func.QueueMessage(body=m.encode()))
    from chunking.app import functions as handlers

    sources = {h.record.source for h in handlers.services().index.search("alpha beta gamma", None, k=3)}
    assert sources == {"sub/alpha.txt"}


def test_malformed_queue_message_is_dropped_not_retried(registered, caplog):
    with caplog.at_level(logging.ERROR, logger="chunking"):
        registered["index_chunk_batch"].get_user_function()(func.QueueMessage(body=b"{oops"))
    assert any("malformed chunk-batch message" in r.getMessage() for r in caplog.records)
