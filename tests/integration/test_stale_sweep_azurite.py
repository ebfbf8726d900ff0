"""Stale chunks never stay: a version that is neither the indexed one nor the one in progress loses its chunks to
reconcile, whatever state the document is in (docs/architecture.md#deletes-and-reconcile). Driven through the
handlers on Azurite, with the real Azure AI Search client over the lagging fake."""

from __future__ import annotations

import dataclasses

import pytest

from chunking.ids import doc_id
from tests.azurite_harness import _paragraphs, harness_fixture
from tests.functions_host import queue_message

pytestmark = pytest.mark.integration

h = harness_fixture("ss")


def _versions_in_index(h, did: str) -> set[str]:
    h.settle()
    return set(h.s.index.keys_of(did).values())


def _half_write_then_reject(h, path: str, *, record_batch: bool = True) -> tuple[str, str, str]:
    """v0 indexed; v1 half written (its first batch in the index, the others lost); v2 rejected (empty bytes).
    Returns (doc id, v0, v1). With *record_batch* False the ledger does not know v1's keys (a writer that died
    between its upsert and its batch record)."""
    h.upload(path, _paragraphs(4, "v0"))
    h.drain()
    did = doc_id(h.cname, path)
    v0 = h.s.ledger.get(did).indexed_version
    messages = h.upload(path, _paragraphs(12, "v1"))
    assert len(messages) >= 2
    h.queue.clear_messages()  # the other batches are lost
    v1 = h.s.ledger.get(did).version
    if record_batch:
        h.app.index_chunk_batch(queue_message(messages[0]))
    else:
        from chunking.messages.batches import decode_message, load_records

        records = load_records(decode_message(messages[0]), h.s.payloads)
        h.s.index.upsert([r.with_embedding(tuple([0.0] * 255 + [1.0])) for r in records])
    assert _versions_in_index(h, did) == {v0, v1}
    h.upload(path, b"")  # v2: rejected (empty), v1 is neither current nor indexed now
    entry = h.s.ledger.get(did)
    assert (entry.status, entry.failure, entry.indexed_version) == ("failed", "permanent", v0)
    assert entry.version not in (v0, v1)
    return did, v0, v1


def test_reconcile_removes_a_half_written_version_after_a_rejected_upload(h):
    did, v0, v1 = _half_write_then_reject(h, "half.txt")
    report = h.handlers.handle_reconcile()
    assert report.swept == ["half.txt: 4"]
    assert _versions_in_index(h, did) == {v0}
    assert h.s.ledger.batch_records(did, v1) == []  # deleted by key, its batch records forgotten
    again = h.handlers.handle_reconcile()
    assert again.swept == []


def test_reconcile_removes_unrecorded_chunks_of_a_failed_document(h):
    did, v0, _ = _half_write_then_reject(h, "norecord.txt", record_batch=False)
    report = h.handlers.handle_reconcile()
    assert report.swept == ["norecord.txt: 4"]
    assert _versions_in_index(h, did) == {v0}


def test_reconcile_sweeps_a_deleted_entry_and_a_throttled_one(h):
    # deleted in the ledger, blob uploaded again but its trigger has not run: chunks a writer raced in go
    h.upload("del.txt", _paragraphs(4, "del"))
    h.drain()
    did = doc_id(h.cname, "del.txt")
    h.settle()
    records = h.s.index.records_of(did)
    h.handlers.delete_document(did, "del.txt", index=h.s.index, ledger=h.s.ledger)
    h.s.index.upsert([r.with_embedding(tuple([0.0] * 255 + [1.0])) for r in records])
    # throttled: v1 in progress beside v0; a stray of an older version x goes, v0 and v1 stay
    h.upload("thr.txt", _paragraphs(4, "thr"))
    h.drain()
    tid = doc_id(h.cname, "thr.txt")
    h.settle()
    old = h.s.index.records_of(tid)[0]
    messages = h.upload("thr.txt", _paragraphs(12, "thr1"))
    assert len(messages) >= 2
    h.queue.clear_messages()
    entry = h.s.ledger.get(tid)
    h.app.index_chunk_batch(queue_message(messages[0]))
    h.s.ledger.mark_throttled(tid, "thr.txt", entry.version, 60)
    h.s.index.upsert([dataclasses.replace(old, id=old.id.replace(old.version[:8], "0bsolete"), version="0bsolete" * 3,
                                          embedding=tuple([0.0] * 255 + [1.0]))])
    h.settle()
    report = h.handlers.handle_reconcile()
    assert sorted(report.swept) == ["del.txt: 2", "thr.txt: 1"]
    assert report.missing == ["del.txt"]  # the blob is there, the ledger says deleted: enqueued again
    assert _versions_in_index(h, tid) == {entry.indexed_version, entry.version}
    h.queue.send_message(messages[1])  # the deferred batch comes back
    h.drain()
    assert h.s.ledger.get(tid).status == "indexed"
    h.assert_index_is_exactly_current()


def test_the_frequent_repair_removes_the_half_written_version_by_key(h):
    did, v0, _ = _half_write_then_reject(h, "quick.txt")
    report = h.handlers.handle_repair()
    assert report.swept == ["quick.txt: 4"]
    assert _versions_in_index(h, did) == {v0}
