"""The strategies end to end on the registered functions with Azurite (blob container, base64 queue, ledger
table), one per family: model-free (hierarchical), embedding-based (semantic, with the model cache in a blob
container), chat-based (propositions). Each ends with the index holding exactly the current versions."""

from __future__ import annotations

import pytest
from azure.storage.blob import BlobServiceClient

from chunking.ids import doc_id
from chunking.retrieval.small_to_big import ParentDocumentRetriever
from chunking.services import reset_strategy_clients, strategy_clients
from tests.azurite_harness import Harness, _paragraphs

pytestmark = pytest.mark.integration


@pytest.fixture
def harness(azurite, tmp_path, monkeypatch, request):
    def make(**env: str) -> Harness:
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        reset_strategy_clients()
        return Harness(azurite, request.node.name.replace("_", "")[4:20].lower(), tmp_path, monkeypatch)

    yield make
    reset_strategy_clients()


def test_hierarchical(harness):
    h = harness(SPLITTERS=".txt=hierarchical", HIERARCHY_LEVELS="200,60,20")
    h.upload("guide.txt", _paragraphs(12, "tree"))
    h.drain()
    entry = h.s.ledger.get(doc_id(h.cname, "guide.txt"))
    assert entry.status == "indexed" and entry.note == ""
    h.settle()  # the index's queries lag its writes (tests/search_fake.py)
    records = h.s.index.records_of(entry.doc_id)
    by_id = {r.id: r for r in records}
    assert {r.level for r in records} == {0, 1, 2}
    for r in records:
        assert (r.parent_id is None) == (r.level == 0)
        if r.parent_id:
            parent = by_id[r.parent_id]
            assert parent.level == r.level - 1 and parent.char_start <= r.char_start and r.char_end <= parent.char_end
    results = ParentDocumentRetriever(h.s.index, h.s.embedder, child_levels=[2]).retrieve("step number 7")
    assert results and all(r.record.level == 1 for r in results)
    assert any("step number 7" in r.text for r in results)
    h.upload("guide.txt", _paragraphs(5, "shorter"))  # a new version replaces every level
    h.drain()
    h.assert_index_is_exactly_current()


def test_semantic_with_the_model_cache_in_a_blob_container(harness, azurite):
    h = harness(SPLITTERS=".txt=semantic", SEMANTIC_MIN_TOKENS="20", MODEL_CACHE_CONTAINER="modelcachesemantic")
    data = _paragraphs(16, "meaning")
    h.upload("notes.txt", data)
    h.drain()
    clients = strategy_clients(h.s.settings)
    calls = clients.model_calls
    assert calls > 0 and clients.embedder.requests == calls
    cached = BlobServiceClient.from_connection_string(azurite.connection_string).get_container_client(
        "modelcachesemantic")
    assert len(list(cached.list_blobs())) == clients.embedder.misses
    h.upload("copy/notes.txt", data)  # unchanged text under another name: every window comes from the cache
    h.drain()
    assert clients.model_calls == calls
    h.settle()  # the index's queries lag its writes (tests/search_fake.py)
    records = h.s.index.records_of(doc_id(h.cname, "copy/notes.txt"))
    assert records and all(0 < r.token_count <= 60 for r in records)
    h.assert_index_is_exactly_current()


def test_propositions(harness):
    h = harness(SPLITTERS=".txt=propositions", PROPOSITION_PASSAGE_TOKENS="80")
    data = _paragraphs(10, "facts")
    h.upload("facts.txt", data)
    h.drain()
    chat = strategy_clients(h.s.settings).chat
    calls = chat.requests
    h.settle()  # the index's queries lag its writes (tests/search_fake.py)
    records = h.s.index.records_of(doc_id(h.cname, "facts.txt"))
    passages = [r for r in records if r.level == 0]
    propositions = [r for r in records if r.kind == "proposition"]
    assert calls == len(passages) > 1
    assert all(not p.has_vector for p in passages) and all(p.has_vector for p in propositions)
    assert {p.parent_id for p in propositions} == {p.id for p in passages}
    results = ParentDocumentRetriever(h.s.index, h.s.embedder).retrieve("detail 21")
    assert results[0].record.level == 0 and "detail 21" in results[0].text
    h.upload("again/facts.txt", data)
    h.drain()
    assert chat.requests == calls  # the cache answered every passage
    h.assert_index_is_exactly_current()
