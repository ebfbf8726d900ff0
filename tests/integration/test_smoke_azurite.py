"""``chunking smoke`` against Azurite and the local backends, with the Functions app running beside it as the host
would run it (a thread that hands new blobs to the blob function, chunk batches to the queue function and
BlobDeleted events to the delete function)."""

from __future__ import annotations

import argparse
import contextlib
import json
import threading
import time

import pytest
from azure.storage.blob import BlobServiceClient

from chunking.settings import Settings
from tests.functions_host import queue_message


class _Host(threading.Thread):
    """The Functions host in miniature: polls the documents container and the chunk-batch queue."""

    def __init__(self, connection: str, env: dict[str, str], deliver_deletes: bool = True) -> None:
        super().__init__(daemon=True)
        import function_app
        from chunking.storage import create_container, queue_client

        self.app = function_app
        self.container = BlobServiceClient.from_connection_string(connection).get_container_client(
            env["DOCUMENTS_CONTAINER"])
        self.batches = queue_client(Settings.from_env(), env["CHUNK_BATCH_QUEUE"])
        create_container(self.container)
        self.deliver_deletes = deliver_deletes
        self.stop = threading.Event()
        self.errors: list[BaseException] = []
        self.seen: dict[str, str] = {}

    def run(self) -> None:
        try:
            while not self.stop.is_set():
                self._step()
                time.sleep(0.1)
        except BaseException as exc:  # reported by the test, not lost in the thread
            self.errors.append(exc)

    def _step(self) -> None:
        blobs = {b.name: b.etag for b in self.container.list_blobs()}
        for name, etag in blobs.items():
            if self.seen.get(name) != etag:
                self.seen[name] = etag
                self.app.ingest_document(self.container.get_blob_client(name))
        for name in set(self.seen) - set(blobs):
            del self.seen[name]
            if self.deliver_deletes:
                url = f"{self.container.url}/{name}"
                event = {"eventType": "Microsoft.Storage.BlobDeleted", "subject": name, "data": {"url": url}}
                self.app.remove_deleted_blob(queue_message(json.dumps(event)))
        self.batches.create_queue() if not _exists(self.batches) else None
        for message in self.batches.receive_messages(messages_per_page=16, visibility_timeout=60):
            self.app.index_chunk_batch(queue_message(message.content, message.dequeue_count))
            self.batches.delete_message(message)


def _exists(queue) -> bool:
    from azure.core.exceptions import ResourceNotFoundError

    try:
        queue.get_queue_properties()
    except ResourceNotFoundError:
        return False
    return True


@pytest.fixture
def deployment(azurite, tmp_path, monkeypatch):
    from chunking.app import functions as handlers

    env = {
        "AzureWebJobsStorage": azurite.connection_string,
        "DOCUMENTS_CONTAINER": "smokedocs",
        "CHUNK_BATCH_QUEUE": "smokebatches",
        "STAGE1_JOB_QUEUE": "smokejobs",
        "PAYLOAD_CONTAINER": "smokepayloads",
        "LEDGER_TABLE": "smokeledger",
        "CHUNKING_STATE_DIR": str(tmp_path),
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    handlers.services.cache_clear()
    yield env
    handlers.services.cache_clear()


@contextlib.contextmanager
def _running(azurite, env: dict[str, str], **options):
    """The host running beside the test until the block ends; its errors are the test's."""
    host = _Host(azurite.connection_string, env, **options)
    host.start()
    try:
        yield host
    finally:
        host.stop.set()
        host.join(10)
    assert host.errors == []


def _smoke(**overrides) -> tuple[int, list[str]]:
    from chunking.app.cli import smoke

    lines: list[str] = []
    args = argparse.Namespace(prefix="smoke-test", timeout=60, interval=0.2, prog="chunking smoke", json=False)
    vars(args).update(overrides)
    status = smoke.run(args, Settings.from_env(), out=lines.append)
    return status, lines


def _checks(lines: list[str]) -> list[str]:
    return [line.split(":")[0] for line in lines if line.startswith(("PASS", "FAIL"))]


def test_the_smoke_test_passes_on_a_running_deployment_and_leaves_nothing(deployment, azurite):
    with _running(azurite, deployment):
        status, lines = _smoke()
    assert _checks(lines) == ["PASS  upload to the documents container", "PASS  indexed (ledger)",
                              "PASS  found by search (first hit)", "PASS  deleted from the ledger and the index"]
    assert lines[-1] == "smoke test passed: 4 of 4 checks" and status == 0
    container = BlobServiceClient.from_connection_string(azurite.connection_string).get_container_client("smokedocs")
    assert list(container.list_blobs()) == []
    # Safe to run again: a new blob, the same four checks.
    with _running(azurite, deployment):
        again, more = _smoke()
    assert again == 0 and more[0] != lines[0]


def test_without_a_running_host_the_smoke_test_fails_and_cleans_up(deployment, azurite):
    status, lines = _smoke(timeout=1)
    assert status == 1
    assert _checks(lines) == ["PASS  upload to the documents container", "FAIL  indexed (ledger)",
                              "PASS  deleted from the ledger and the index"]
    assert "waiting for the blob trigger" in "\n".join(lines)
    assert lines[-1] == "smoke test FAILED: 2 of 4 checks"
    container = BlobServiceClient.from_connection_string(azurite.connection_string).get_container_client("smokedocs")
    assert list(container.list_blobs()) == []


def test_a_delete_the_pipeline_never_applies_fails_the_last_check(deployment, azurite):
    with _running(azurite, deployment, deliver_deletes=False):
        status, lines = _smoke(timeout=2)
    assert _checks(lines)[-1] == "FAIL  deleted from the ledger and the index"
    assert "search still finds it" in lines[-2] and status == 1
