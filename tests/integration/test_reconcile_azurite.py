"""Reconcile, poison handlers and ``status``: drift between container, ledger and index is repaired, and what
failed on every attempt is recorded with its reason."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json

import pytest

from chunking.errors import StorageError
from chunking.ids import doc_id
from tests.azurite_harness import Harness, _paragraphs
from tests.functions_host import queue_message

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
    h.settle()
    h.s.index.delete(list(h.s.index.keys_of(doc_id(h.cname, "lost.txt"))))

    # Reconcile compares with what the index's queries show: it is a periodic repair, off the hot path, and
    # runs long after the writes it checks (here: once the index has caught up).
    h.settle()
    report = h.handlers.handle_reconcile()
    assert (sorted(report.missing), report.stuck, report.orphaned) == (["lost.txt", "missed.txt"], ["stuck.txt"],
                                                                       ["orphan.txt"])
    assert report.checked == 4
    h.drain()
    assert {e.source: e.status for e in ledger.entries()} == {
        "ok.txt": "indexed", "missed.txt": "indexed", "stuck.txt": "indexed", "orphan.txt": "deleted",
        "lost.txt": "indexed"}
    h.assert_index_is_exactly_current()
    h.settle()
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
    assert entry.error == f"batch 1 of {len(messages)} failed on every attempt; last error: batch 1 of 2: RateLimitError: 429"
    assert (entry.failure, entry.failures) == ("transient", 1) and entry.retry_at > entry.updated_at
    # A second poisoned batch of the same version keeps the first reason: no reason nested in another.
    h.app.record_batch_poison(queue_message(messages[1]))
    assert h.s.ledger.get(entry.doc_id).error == entry.error
    # the previous good version is still what the index holds
    h.settle()
    assert set(h.s.index.keys_of(entry.doc_id).values()) == {entry.indexed_version}

    # Stage 1 crashing (a bug, a storage outage) is retried by the host; the reason is kept for the poison handler.
    def crash(*args, **kwargs):
        raise RuntimeError("storage unavailable (simulated)")

    with monkeypatch.context() as patch:
        patch.setattr("chunking.app.functions.run_stage_one", crash)
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
    # Reconcile parsed nothing: a forced stage-1 job is on its queue, and the version is still sending.
    assert (h.s.ledger.get(entry.doc_id).status, h._jobs_left()) == ("sending", 1)
    assert h.handlers.handle_reconcile().stuck == []  # enqueued once, not again while its job waits
    h.drain()
    assert h.s.ledger.get(entry.doc_id).status == "indexed"
    h.assert_index_is_exactly_current()


def test_a_failed_enqueue_is_reported_and_the_others_go_on(h, monkeypatch):
    h.container.upload_blob("a.txt", _paragraphs(3, "a"))
    h.container.upload_blob("b.txt", _paragraphs(3, "b"))
    sender = h.s.jobs  # reconcile puts stage-1 jobs on their queue
    real = sender.send
    calls = []

    def first_fails(messages, **kwargs):
        calls.append(len(messages))
        if len(calls) == 1:
            raise StorageError("queue 'x' refused (simulated)")
        real(messages, **kwargs)

    monkeypatch.setattr(sender, "send", first_fails)
    report = h.handlers.handle_reconcile()
    assert (report.missing, report.failed) == (["b.txt"], ["a.txt: queue 'x' refused (simulated)"])
    assert h.s.ledger.get(doc_id(h.cname, "a.txt")) is None and h._jobs_left() == 1  # only b.txt's job
    h.drain()
    h.settle()
    again = h.handlers.handle_reconcile()
    assert (again.missing, again.failed) == (["a.txt"], [])  # tried again by the next run
    h.drain()
    assert {e.source: e.status for e in h.s.ledger.entries()} == {"a.txt": "indexed", "b.txt": "indexed"}


def test_reconcile_on_empty_storage_creates_what_it_needs(azurite, tmp_path, monkeypatch):
    from azure.data.tables import TableServiceClient
    from azure.storage.blob import BlobServiceClient

    from chunking.app import functions as handlers

    env = {"AzureWebJobsStorage": azurite.connection_string, "DOCUMENTS_CONTAINER": "fresh-docs",
           "CHUNK_BATCH_QUEUE": "fresh-batches", "STAGE1_JOB_QUEUE": "fresh-jobs", "PAYLOAD_CONTAINER": "fresh-payloads",
           "LEDGER_TABLE": "freshledger", "FIGURES_CONTAINER": "fresh-figures",
           "CHUNKING_STATE_DIR": str(tmp_path)}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    handlers.services.cache_clear()
    try:
        assert handlers.handle_reconcile().to_dict() == {"checked": 0, "missing": [], "stuck": [], "retried": [],
                                                         "orphaned": [], "swept": [], "backfilled": [],
                                                         "backfill_left": 0, "failed": [], "figures_swept": []}
        blobs = BlobServiceClient.from_connection_string(azurite.connection_string)
        assert blobs.get_container_client("fresh-docs").exists()
        tables = TableServiceClient.from_connection_string(azurite.connection_string)
        assert "freshledger" in {t.name for t in tables.list_tables()}
        blobs.get_container_client("fresh-docs").upload_blob("one.txt", _paragraphs(3, "one"))
        assert handlers.handle_reconcile().missing == ["one.txt"]  # the job queue is created on the first send
        assert handlers.services().jobs.queue.get_queue_properties().approximate_message_count == 1
        entry = handlers.services().ledger.get(doc_id("fresh-docs", "one.txt"))  # enqueued, not parsed
        assert (entry.status, entry.version, entry.container) == ("queued", "", "fresh-docs") and entry.requeued_at
        assert handlers.handle_reconcile().missing == []  # its job waits: not enqueued twice
        assert handlers.services().jobs.queue.get_queue_properties().approximate_message_count == 1
    finally:
        handlers.services.cache_clear()


def _make_due(ledger, did: str) -> None:
    """Move the entry's retry time into the past (the back-off is over)."""
    entry, tag = ledger.store.read(did)
    past = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(seconds=1)).isoformat(timespec="seconds")
    assert ledger.store.write(dataclasses.replace(entry, retry_at=past), tag)


def _poison_all(h, messages) -> None:
    for m in messages:
        h.app.record_batch_poison(queue_message(m, 5))


def test_an_index_outage_long_enough_to_poison_heals_by_reconcile(h, monkeypatch):
    h.upload("out.txt", _paragraphs(4, "before"))
    h.drain()
    down = h.index_outage(monkeypatch)
    messages = h.upload("out.txt", _paragraphs(12, "after"))
    h.queue.clear_messages()
    for m in messages:  # five deliveries each, every one failing (an outage, not back-pressure), then poison
        for attempt in range(1, 6):
            with pytest.raises(Exception):
                h.app.index_chunk_batch(queue_message(m, attempt))
    _poison_all(h, messages)
    entry = h.s.ledger.get(doc_id(h.cname, "out.txt"))
    assert (entry.status, entry.failure) == ("failed", "transient")
    assert "IndexError_: mergeOrUpload of 4 documents failed: HTTP 500: internal error" in entry.error
    assert entry.error.count("failed on every attempt") == 1
    # Not due yet: reconcile leaves it alone.
    h.settle()
    assert h.handlers.handle_reconcile().retried == []
    down["on"] = False
    _make_due(h.s.ledger, entry.doc_id)
    h.settle()
    assert h.handlers.handle_reconcile().retried == ["out.txt"]
    h.drain()
    healed = h.s.ledger.get(entry.doc_id)
    assert (healed.status, healed.indexed_version, healed.failure, healed.retry_at) == (
        "indexed", healed.version, "", "")
    h.assert_index_is_exactly_current()


def test_a_missing_payload_is_recorded_as_such_and_retried(h, monkeypatch):
    for key, value in {"MAX_MESSAGE_BYTES": "1024", "SPLIT_MAX_TOKENS": "400", "SPLIT_MAX_CHARS": "3000"}.items():
        monkeypatch.setenv(key, value)  # chunks of ~1.5 KB: each goes by claim check
    h.handlers.services.cache_clear()
    long = " ".join(f"Sentence {i} of a long paragraph about tides and harbours." for i in range(25))
    h.upload("big.txt", long.encode())
    h.drain()
    messages = h.upload("big.txt", (long + " " + long.replace("tides", "winds")).encode())
    assert messages and any('"payload"' in m for m in messages), messages[:1]
    h.queue.clear_messages()
    h.s.payloads.delete_prefix("")  # the payload blobs are gone (a lifecycle rule, a person)
    claim = next(m for m in messages if '"payload"' in m)
    with pytest.raises(Exception):
        h.app.index_chunk_batch(queue_message(claim))
    entry = h.s.ledger.get(doc_id(h.cname, "big.txt"))
    assert entry.error.startswith("PayloadMissingError: ") and entry.failure == "transient"
    _poison_all(h, [claim])
    entry = h.s.ledger.get(entry.doc_id)
    assert entry.status == "failed" and "PayloadMissingError" in entry.error
    _make_due(h.s.ledger, entry.doc_id)
    h.settle()
    assert h.handlers.handle_reconcile().retried == ["big.txt"]  # stage 1 writes the payloads again
    h.drain()
    assert h.s.ledger.get(entry.doc_id).status == "indexed"
    h.assert_index_is_exactly_current()


def test_a_permanent_failure_stays_failed(h, monkeypatch):
    h.upload("dim.txt", _paragraphs(4, "dim"))
    index = h.s.index
    from chunking.errors import IndexError_

    def refuse(records):
        raise IndexError_("mergeOrUpload failed: HTTP 400: vector has 8 dimensions, the field 256", status=400)

    monkeypatch.setattr(index, "upsert", refuse)
    messages = list(h.sent)
    h.queue.clear_messages()
    for m in messages:
        with pytest.raises(IndexError_):
            h.app.index_chunk_batch(queue_message(m))
    _poison_all(h, messages)
    entry = h.s.ledger.get(doc_id(h.cname, "dim.txt"))
    assert (entry.status, entry.failure, entry.retry_at) == ("failed", "permanent", "")
    h.settle()
    assert h.handlers.handle_reconcile().retried == []


def test_reconcile_deletes_chunks_of_a_deleted_document_and_sweeps_strays(h):
    h.upload("gone.txt", _paragraphs(4, "gone"))
    h.upload("kept.txt", _paragraphs(4, "kept"))
    h.drain()
    gone, kept = doc_id(h.cname, "gone.txt"), doc_id(h.cname, "kept.txt")
    stray = h.s.index.records_of(gone)  # written by a writer that raced the delete, after it
    h.settle()
    stray = h.s.index.records_of(gone)
    h.container.delete_blob("gone.txt")
    h.handlers.delete_document(gone, "gone.txt", index=h.s.index, ledger=h.s.ledger)
    h.s.index.upsert([r.with_embedding(tuple([0.0] * 255 + [1.0])) for r in stray])
    # A stray of another version of kept.txt (a writer that died between its upsert and its batch record).
    old = h.s.index.records_of(kept)[0]
    import dataclasses as dc

    h.s.index.upsert([dc.replace(old, id=old.id.replace(old.version[:8], "0bsolete"), version="0bsolete" * 3,
                                 embedding=tuple([0.0] * 255 + [1.0]))])
    _age(h.s.ledger, kept, 10)
    h.settle()
    report = h.handlers.handle_reconcile()
    assert (report.orphaned, report.swept) == (["gone.txt"], ["kept.txt: 1"])
    h.assert_index_is_exactly_current()
