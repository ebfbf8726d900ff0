"""Reconcile, poison handlers and ``status``: drift between container, ledger and index is repaired, and what
failed on every attempt is recorded with its reason."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json

import pytest

from chunking.ids import doc_id
from chunking.storage import StorageError
from tests.functions_host import queue_message
from tests.test_incremental_azurite import Harness, _paragraphs

pytestmark = pytest.mark.integration


@pytest.fixture
def h(azurite, tmp_path, monkeypatch, request):
    harness = Harness(azurite, "rc" + request.node.name.replace("_", "")[4:18].lower(), tmp_path, monkeypatch)
    yield harness
    harness.handlers.services.cache_clear()


def test_reconcile_repairs_every_drift(h):
    # indexed normally
    h.upload("ok.txt", _paragraphs(4, "ok"))
    h.drain()
    # in the container, but the trigger never ran (no ledger entry, nothing indexed)
    h.container.upload_blob("missed.txt", _paragraphs(4, "missed"))
    # stuck: stage 1 ran, its messages were lost
    h.upload("stuck.txt", _paragraphs(4, "stuck"))
    h.queue.clear_messages()
    h.drain()
    ledger = h.s.ledger
    entry, tag = ledger.store.read(doc_id(h.cname, "stuck.txt"))
    old = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=5)).isoformat(timespec="seconds")
    assert ledger.store.write(dataclasses.replace(entry, updated_at=old), tag)
    # orphaned: indexed, then the blob was deleted and the event lost
    h.upload("orphan.txt", _paragraphs(4, "orphan"))
    h.drain()
    h.container.delete_blob("orphan.txt")
    # the index lost a document the ledger says is indexed
    h.upload("lost.txt", _paragraphs(4, "lost"))
    h.drain()
    h.s.index.delete(list(h.s.index.keys_of(doc_id(h.cname, "lost.txt"))))

    report = h.handlers.handle_reconcile()
    assert (sorted(report.missing), report.stuck, report.orphaned) == (["lost.txt", "missed.txt"], ["stuck.txt"],
                                                                       ["orphan.txt"])
    assert report.checked == 4
    h.drain()
    assert {e.source: e.status for e in ledger.entries()} == {
        "ok.txt": "indexed", "missed.txt": "indexed", "stuck.txt": "indexed", "orphan.txt": "deleted",
        "lost.txt": "indexed"}
    h.assert_index_is_exactly_current()
    again = h.handlers.handle_reconcile()
    assert (again.missing, again.stuck, again.orphaned) == ([], [], [])


def test_poison_handlers_record_the_reason(h, monkeypatch):
    h.upload("good.txt", _paragraphs(4, "good"))
    h.drain()
    # A new version whose batches keep failing in stage 2 until they are poisoned.
    messages = h.upload("good.txt", _paragraphs(12, "newer"))
    h.queue.clear_messages()
    entry = h.s.ledger.get(doc_id(h.cname, "good.txt"))
    h.s.ledger.record_error(entry.doc_id, "good.txt", entry.version, "batch 1 of 2: RateLimitError: 429")
    h.app.record_batch_poison(queue_message(messages[0]))
    entry = h.s.ledger.get(doc_id(h.cname, "good.txt"))
    assert entry.status == "failed"
    assert len(messages) >= 2
    assert entry.error == f"batch 1 of {len(messages)} failed on every attempt: batch 1 of 2: RateLimitError: 429"
    # the previous good version is still what the index holds
    assert set(h.s.index.keys_of(entry.doc_id).values()) == {entry.indexed_version}

    # Stage 1 crashing (a bug, a storage outage) is retried by the host; the reason is kept for the poison handler.
    def crash(*args, **kwargs):
        raise RuntimeError("storage unavailable (simulated)")

    with monkeypatch.context() as patch:
        patch.setattr("chunking.handlers.run_stage_one", crash)
        with pytest.raises(RuntimeError):
            h.upload("bad/blob.pdf", b"%PDF-1.4 whatever")
    poison = {"FunctionId": "Host.Functions.ingest_document", "BlobType": "BlockBlob",
              "ContainerName": h.cname, "BlobName": "bad/blob.pdf", "ETag": "\"0x1\""}
    h.app.record_blob_poison(queue_message(json.dumps(poison)))
    bad = h.s.ledger.get(doc_id(h.cname, "bad/blob.pdf"))
    assert (bad.status, bad.source, bad.error) == (
        "failed", "bad/blob.pdf",
        "stage 1 failed on every attempt (last error: stage 1: RuntimeError: storage unavailable (simulated))")


def test_delete_event_for_a_blob_that_exists_again_is_ignored(h):
    h.upload("back.txt", _paragraphs(3, "back"))
    h.drain()
    url = h.container.get_blob_client("back.txt").url
    event = {"type": "Microsoft.Storage.BlobDeleted", "data": {"url": url}}  # CloudEvents schema
    h.app.remove_deleted_blob(queue_message(json.dumps(event)))
    assert h.s.ledger.get(doc_id(h.cname, "back.txt")).status == "indexed"
    h.assert_index_is_exactly_current()


def _age(ledger, did: str, minutes: int) -> None:
    """Make the entry *did* look *minutes* older than it is."""
    entry, tag = ledger.store.read(did)
    old = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(minutes=minutes)).isoformat(timespec="seconds")
    assert ledger.store.write(dataclasses.replace(entry, updated_at=old), tag)


def test_queued_only_after_every_batch_was_sent(h, monkeypatch):
    sender = h.s.batches.inner
    real = sender.send
    seen = []

    def down(messages):  # the queue service fails while stage 1 sends
        seen.append(h.s.ledger.get(doc_id(h.cname, "late.txt")).status)
        raise StorageError("storage not reachable: queue (simulated)")

    monkeypatch.setattr(sender, "send", down)
    with pytest.raises(StorageError):
        h.upload("late.txt", _paragraphs(12, "late"))
    entry = h.s.ledger.get(doc_id(h.cname, "late.txt"))
    assert seen == ["sending"]
    assert (entry.status, entry.attempts) == ("sending", 1)
    assert entry.error == "stage 1: StorageError: storage not reachable: queue (simulated)"
    assert h.queue.get_queue_properties().approximate_message_count == 0
    # A reconcile while the version may still be in flight leaves it alone; once it is old, it is sent again.
    monkeypatch.setattr(sender, "send", real)
    assert h.handlers.handle_reconcile().stuck == []
    _age(h.s.ledger, entry.doc_id, 10)
    assert h.handlers.handle_reconcile().stuck == ["late.txt"]
    assert h.s.ledger.get(entry.doc_id).status == "queued"
    h.drain()
    assert h.s.ledger.get(entry.doc_id).status == "indexed"
    h.assert_index_is_exactly_current()


def test_a_failed_enqueue_is_reported_and_the_others_go_on(h, monkeypatch):
    h.container.upload_blob("a.txt", _paragraphs(3, "a"))
    h.container.upload_blob("b.txt", _paragraphs(3, "b"))
    sender = h.s.batches.inner
    real = sender.send
    calls = []

    def first_fails(messages):
        calls.append(len(messages))
        if len(calls) == 1:
            raise StorageError("queue 'x' refused (simulated)")
        real(messages)

    monkeypatch.setattr(sender, "send", first_fails)
    report = h.handlers.handle_reconcile()
    assert (report.missing, report.failed) == (["b.txt"], ["a.txt: queue 'x' refused (simulated)"])
    assert h.s.ledger.get(doc_id(h.cname, "a.txt")).status == "sending"  # never "queued": nothing was sent
    _age(h.s.ledger, doc_id(h.cname, "a.txt"), 10)
    again = h.handlers.handle_reconcile()
    assert (again.stuck, again.failed) == (["a.txt"], [])
    h.drain()
    assert {e.source: e.status for e in h.s.ledger.entries()} == {"a.txt": "indexed", "b.txt": "indexed"}


def test_reconcile_on_empty_storage_creates_what_it_needs(azurite, tmp_path, monkeypatch):
    from azure.data.tables import TableServiceClient
    from azure.storage.blob import BlobServiceClient

    from chunking import handlers

    env = {"AzureWebJobsStorage": azurite.connection_string, "DOCUMENTS_CONTAINER": "fresh-docs",
           "CHUNK_BATCH_QUEUE": "fresh-batches", "PAYLOAD_CONTAINER": "fresh-payloads", "LEDGER_TABLE": "freshledger",
           "CHUNKING_STATE_DIR": str(tmp_path)}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    handlers.services.cache_clear()
    try:
        assert handlers.handle_reconcile().to_dict() == {"checked": 0, "missing": [], "stuck": [], "orphaned": [],
                                                         "failed": []}
        blobs = BlobServiceClient.from_connection_string(azurite.connection_string)
        assert blobs.get_container_client("fresh-docs").exists()
        tables = TableServiceClient.from_connection_string(azurite.connection_string)
        assert "freshledger" in {t.name for t in tables.list_tables()}
        blobs.get_container_client("fresh-docs").upload_blob("one.txt", _paragraphs(3, "one"))
        assert handlers.handle_reconcile().missing == ["one.txt"]  # the queue is created on the first send
        assert handlers.services().batches.queue.get_queue_properties().approximate_message_count >= 1
        assert handlers.services().ledger.get(doc_id("fresh-docs", "one.txt")).status == "queued"
    finally:
        handlers.services.cache_clear()
