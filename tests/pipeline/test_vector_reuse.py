"""Vector reuse without a search query: the ledger's batch records name the keys holding each text's vector and
the embedder that made it; vectors are read by key, which a lagging index answers at once (its queries do not)."""

from __future__ import annotations

import hashlib

from chunking.index.local import LocalIndex
from chunking.ledger import Ledger, LocalLedgerStore
from chunking.model import ChunkRecord
from chunking.pipeline.vector_reuse import reusable_vectors, vector_keys
from tests.index.test_search_fake import make
from tests.search_fake import SearchServiceFake


def record(i: int, version: str, text: str | None = None, has_vector: bool = True) -> ChunkRecord:
    text = text or f"paragraph {i} about lighthouses"
    return ChunkRecord(id=f"d-{version}-{i:06d}", doc_id="d", version=version, source="a.txt", sourcepage="a.txt",
                       ordinal=i, page_start=0, page_end=0, char_start=0, char_end=len(text), content=text,
                       content_hash=hashlib.sha256(text.encode()).hexdigest(), token_count=5,
                       embedding=(1.0, 0.0, 0.0, float(i)) if has_vector else None, has_vector=has_vector)


def test_a_lagging_index_gives_the_vectors_by_key_with_no_query(tmp_path):
    fake = SearchServiceFake(lag_requests=50)  # queries see nothing of these writes for a long while
    index = make(fake)
    ledger = Ledger(LocalLedgerStore(tmp_path / "ledger.sqlite3"))
    old = [record(0, "v1"), record(1, "v1"), record(2, "v1", has_vector=False)]
    index.upsert(old)
    ledger.record_batch("d", "v1", 0, [r.id for r in old], vector_keys(old), "emb/4")
    assert vector_keys(old) == [old[0].content_hash, old[1].content_hash, ""]
    new = [record(0, "v2"), record(1, "v2", text="a changed paragraph"), record(2, "v2")]
    queries = fake.queries
    found = reusable_vectors(new, doc_id="d", embedder="emb/4", ledger=ledger, index=index)
    assert found == {old[0].content_hash: (1.0, 0.0, 0.0, 0.0)}  # the unchanged text only
    assert fake.queries == queries  # lookups by key, not queries
    assert index.keys_of("d") == {}  # a query still sees nothing


def test_vectors_of_another_embedder_are_never_reused(tmp_path):
    index = LocalIndex(tmp_path / "index.sqlite3", 4)
    ledger = Ledger(LocalLedgerStore(tmp_path / "ledger.sqlite3"))
    old = [record(0, "v1"), record(1, "v1")]
    index.upsert(old)
    ledger.record_batch("d", "v1", 0, [r.id for r in old], vector_keys(old), "model-a/4")
    new = [record(0, "v2"), record(1, "v2")]
    assert reusable_vectors(new, doc_id="d", embedder="model-b/4", ledger=ledger, index=index) == {}
    both = reusable_vectors(new, doc_id="d", embedder="model-a/4", ledger=ledger, index=index)
    assert both == {old[0].content_hash: (1.0, 0.0, 0.0, 0.0), old[1].content_hash: (1.0, 0.0, 0.0, 1.0)}
    # A batch recorded before hashes were (no hashes, no embedder) offers nothing; a deleted key neither.
    ledger.record_batch("d", "v0", 0, ["d-v0-000000"])
    index.delete([old[0].id])
    assert set(reusable_vectors(new, doc_id="d", embedder="model-a/4", ledger=ledger, index=index)) == {
        old[1].content_hash}
    assert index.vectors_by_key(["d-v1-000001", "missing"]) == {"d-v1-000001": (1.0, 0.0, 0.0, 1.0)}


def test_if_lookups_lagged_like_queries_reuse_would_only_embed_again(tmp_path):
    # Whether a lookup by key reads its own write at once is reported, not documented (docs/architecture.md,
    # "What the service fakes model"): with lookups lagging, nothing wrong is reused, the texts are embedded again.
    fake = SearchServiceFake(lag_requests=50, lookup_lag=True)
    index = make(fake)
    ledger = Ledger(LocalLedgerStore(tmp_path / "ledger.sqlite3"))
    old = [record(0, "v1"), record(1, "v1")]
    index.upsert(old)
    ledger.record_batch("d", "v1", 0, [r.id for r in old], vector_keys(old), "emb/4")
    new = [record(0, "v2"), record(1, "v2")]

    assert reusable_vectors(new, doc_id="d", embedder="emb/4", ledger=ledger, index=index) == {}
    fake.settle()
    assert set(reusable_vectors(new, doc_id="d", embedder="emb/4", ledger=ledger, index=index)) == {
        old[0].content_hash, old[1].content_hash}
