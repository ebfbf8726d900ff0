"""Races on Azurite with a lagging index: a delete or a re-upload landing while a batch is being embedded, and
the completion rule of the old design (count the version's chunks with an index query) failing under lag."""

from __future__ import annotations

import json

import pytest

from chunking.ids import doc_id
from tests.azurite_harness import _paragraphs, harness_fixture
from tests.functions_host import queue_message

pytestmark = pytest.mark.integration


h = harness_fixture("ra")


def _during_embedding(h, monkeypatch, action, after_calls: int = 1) -> list[int]:
    """Run *action* once, inside the embedder's call number *after_calls* (the batch is being embedded)."""
    embedder = h.s.embedder
    real = embedder.embed
    calls: list[int] = []

    def embed(texts):
        calls.append(len(texts))
        if len(calls) == after_calls:
            action()
        return real(texts)

    monkeypatch.setattr(embedder, "embed", embed)
    return calls


def _delete_event(h, path: str) -> None:
    blob = h.container.get_blob_client(path)
    url = blob.url
    blob.delete_blob()
    event = {"eventType": "Microsoft.Storage.BlobDeleted", "subject": "x", "data": {"url": url}}
    h.app.remove_deleted_blob(queue_message(json.dumps([event])))


def test_delete_while_a_batch_is_embedded_leaves_nothing(h, monkeypatch):
    h.upload("keep.txt", _paragraphs(4, "keep"))
    h.upload("race.txt", _paragraphs(16, "race"))
    calls = _during_embedding(h, monkeypatch, lambda: _delete_event(h, "race.txt"), after_calls=3)
    h.drain()
    assert len(calls) >= 3
    assert h.s.ledger.get(doc_id(h.cname, "race.txt")).status == "deleted"
    assert h.s.ledger.batch_records(doc_id(h.cname, "race.txt")) == []
    h.assert_index_is_exactly_current()
    assert {hit.record.source for hit in h.s.index.search("paragraph race", None, k=50)} <= {"keep.txt"}


def test_reupload_while_a_batch_is_embedded_leaves_only_the_new_version(h, monkeypatch):
    h.upload("doc.txt", _paragraphs(16, "one"))
    _during_embedding(h, monkeypatch, lambda: h.upload("doc.txt", _paragraphs(6, "two")), after_calls=2)
    h.drain()
    entry = h.s.ledger.get(doc_id(h.cname, "doc.txt"))
    assert (entry.status, entry.indexed_version) == ("indexed", entry.version)
    assert {b.version for b in h.s.ledger.batch_records(entry.doc_id)} == {entry.version}
    h.assert_index_is_exactly_current()


def test_reupload_of_an_indexed_document_while_its_successor_embeds(h, monkeypatch):
    h.upload("doc.txt", _paragraphs(8, "first"))
    h.drain()
    h.upload("doc.txt", _paragraphs(12, "second"))
    _during_embedding(h, monkeypatch, lambda: h.upload("doc.txt", _paragraphs(5, "third")), after_calls=1)
    h.drain()
    entry = h.s.ledger.get(doc_id(h.cname, "doc.txt"))
    assert (entry.status, entry.indexed_version) == ("indexed", entry.version)
    h.assert_index_is_exactly_current()


def _old_completion_rule(h, monkeypatch) -> None:
    """Stage 2 as it was: a version is complete when an index query counts all of its chunks."""
    ledger = h.s.ledger
    index = h.s.index

    def batches_done(did, version):
        entry = ledger.get(did)
        visible = sum(1 for v in index.keys_of(did).values() if v == version)
        return set(range(entry.batch_count)) if entry and visible >= entry.chunk_count else set()

    monkeypatch.setattr(ledger, "batches_done", batches_done)


@pytest.mark.parametrize("lag", [0, 6])
def test_the_old_completion_rule_fails_under_visibility_lag(h, monkeypatch, lag):
    h.search.lag_requests = lag
    _old_completion_rule(h, monkeypatch)
    h.upload("old.txt", _paragraphs(12, "before"))
    h.drain()
    h.upload("old.txt", _paragraphs(10, "after"))
    h.drain()
    entry = h.s.ledger.get(doc_id(h.cname, "old.txt"))
    h.settle()
    versions = set(h.s.index.keys_of(entry.doc_id).values())
    if lag == 0:  # a strongly consistent index hides the defect
        assert entry.status == "indexed" and versions == {entry.version}
        h.assert_index_is_exactly_current()
    else:  # the last batch's own chunks were not visible yet: never complete, the old chunks stay searchable
        assert entry.status == "queued" and len(versions) == 2


def test_the_ledger_rule_completes_under_the_same_lag_without_index_queries(h):
    h.upload("new.txt", _paragraphs(12, "before"))
    h.drain()
    h.upload("new.txt", _paragraphs(10, "after"))
    queries = h.search.queries
    batches = h.drain()
    entry = h.s.ledger.get(doc_id(h.cname, "new.txt"))
    assert entry.status == "indexed"
    # No query at all: not to decide completion, not to find old keys, not for vectors to reuse (read by key).
    assert batches >= 1 and h.search.queries - queries == 0
    h.assert_index_is_exactly_current()
