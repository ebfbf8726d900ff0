"""Long PDFs through the registered functions on Azurite, with the Search fake's visibility lag on: the blob
trigger does the first page range and each range enqueues the next on the stage-1 job queue. A multi-range
document ends exactly current; range jobs delivered twice, and chunk batches delivered twice and out of order,
leave no duplicate; a re-upload while ranges are still queued supersedes the old version cleanly; a
whole-document job (what reconcile and reprocess enqueue) indexes a blob that never went through the trigger."""

from __future__ import annotations

import hashlib
import random

import pytest

from chunking.ids import doc_id
from chunking.messages.batches import decode_message
from tests.functions_host import queue_message
from tests.integration.test_incremental_azurite import Harness
from tests.long_documents import long_pdf

pytestmark = pytest.mark.integration

PAGES_PER_JOB = 6


@pytest.fixture
def h(azurite, tmp_path, monkeypatch, request):
    name = "ld" + hashlib.sha256(request.node.name.encode()).hexdigest()[:12]
    harness = Harness(azurite, name, tmp_path, monkeypatch)
    monkeypatch.setenv("STAGE1_PAGES_PER_JOB", str(PAGES_PER_JOB))
    harness.handlers.services.cache_clear()
    yield harness
    harness.handlers.services.cache_clear()


def _jobs(h) -> list:
    """Every stage-1 job waiting on the queue, received (invisible for a minute)."""
    h.jobs.create_queue() if not h._jobs_exist() else None
    return list(h.jobs.receive_messages(messages_per_page=32, visibility_timeout=60))


def _records(h, did: str) -> list:
    h.settle()
    return list(h.s.index.records_of(did))


def test_a_multi_range_document_ends_exactly_current(h):
    h.upload("keep.txt", b"A short note that stays as it is. It has two sentences.")
    first = h.upload("manual.pdf", long_pdf(23))
    assert first and all(decode_message(m).batch_count == 0 for m in first)  # the first range streamed
    assert len(_jobs(h)) == 1  # the next range is a job; it reappears for the drain below
    h.jobs.clear_messages()
    h.upload("manual.pdf", long_pdf(23))  # the same bytes again: the trigger fires twice for one upload
    h.drain()
    entry = h.s.ledger.get(doc_id(h.cname, "manual.pdf"))
    assert (entry.status, entry.indexed_version) == ("indexed", entry.version)
    assert h.s.ledger.ranges_done(entry.doc_id, entry.version) == {0, 1, 2, 3}  # 4 ranges of 6 pages
    records = _records(h, entry.doc_id)
    assert len(records) == entry.chunk_count and {r.page_start for r in records} == set(range(23))
    h.assert_index_is_exactly_current()


def test_duplicated_range_jobs_and_batches_leave_no_duplicate(h):
    rng = random.Random(7)
    h.upload("manual.pdf", long_pdf(20, seed=3))
    while jobs := _jobs(h):
        for m in jobs:
            for _ in range(2):  # every range job delivered twice
                h.app.run_stage_one_job(queue_message(m.content, m.dequeue_count))
            h.jobs.delete_message(m)
    # Every chunk batch delivered twice, the copies in random order.
    batch = list(h.queue.receive_messages(messages_per_page=32, visibility_timeout=60))
    bodies = []
    while batch:
        for m in batch:
            bodies.append(m.content)
            h.queue.delete_message(m)
        batch = list(h.queue.receive_messages(messages_per_page=32, visibility_timeout=60))
    deliveries = bodies * 2
    rng.shuffle(deliveries)
    for body in deliveries:
        h.app.index_chunk_batch(queue_message(body))
    entry = h.s.ledger.get(doc_id(h.cname, "manual.pdf"))
    assert entry.status == "indexed"
    batch_numbers = [decode_message(b).batch_no for b in bodies if not decode_message(b).check]
    assert sorted(batch_numbers) == sorted(set(batch_numbers)) == list(range(entry.batch_count))
    assert len({r.id for r in _records(h, entry.doc_id)}) == len(_records(h, entry.doc_id)) == entry.chunk_count
    h.assert_index_is_exactly_current()


def test_a_reupload_while_ranges_are_queued_supersedes_the_old_version(h):
    h.upload("manual.pdf", long_pdf(25, seed=1))
    old = h.s.ledger.get(doc_id(h.cname, "manual.pdf")).version
    [job] = _jobs(h)
    h.app.run_stage_one_job(queue_message(job.content, job.dequeue_count))  # range 2 of 5 done
    h.jobs.delete_message(job)
    h.upload("manual.pdf", long_pdf(14, seed=2))  # overwritten: range 3 of the old version is still queued
    stale = [m for m in _jobs(h) if '"range":{"range_no":2' in m.content]
    assert stale
    for m in stale:  # the old blob's ETag no longer matches: not read, nothing sent
        sent = len(h.queues[-1].sent)
        assert h.handlers.handle_stage_one_job(m.content) is None
        assert len(h.queues[-1].sent) == sent
        h.jobs.delete_message(m)
    h.drain()
    entry = h.s.ledger.get(doc_id(h.cname, "manual.pdf"))
    assert (entry.status, entry.indexed_version) == ("indexed", entry.version) and entry.version != old
    assert {b.version for b in h.s.ledger.batch_records(entry.doc_id)} == {entry.version}
    assert {r.version for r in _records(h, entry.doc_id)} == {entry.version}
    h.assert_index_is_exactly_current()


def test_a_whole_document_job_indexes_a_blob_the_trigger_never_saw(h):
    h.container.upload_blob("later.pdf", long_pdf(9, seed=4), overwrite=True)
    assert h.handlers.enqueue_stage_one_jobs(["later.pdf"], force=True, reason="reprocess") == 1
    h.drain()
    entry = h.s.ledger.get(doc_id(h.cname, "later.pdf"))
    assert (entry.status, entry.indexed_version) == ("indexed", entry.version)
    h.assert_index_is_exactly_current()
