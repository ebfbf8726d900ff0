"""LocalIndex: schema, idempotent upsert, delete, lookups, BM25 + vector search fused by RRF, CJK, persistence."""

from __future__ import annotations

import dataclasses
import hashlib
import sqlite3
import threading
from pathlib import Path

import pytest

from chunking.embeddings import OfflineLexicalEmbedder
from chunking.errors import IndexError_
from chunking.index.fusion import FusionOptions
from chunking.index.local import LocalIndex, fts_query
from chunking.index.protocol import IndexSearcher, IndexWriter, SearchIndex
from chunking.model import ChunkRecord


def record(
    doc: str, ordinal: int, content: str, vector: tuple[float, ...], *, version: str = "v1", headings=()
) -> ChunkRecord:
    return ChunkRecord(
        id=f"{doc}-{ordinal:06d}",
        doc_id=doc,
        version=version,
        source=f"folder/{doc}.txt",
        sourcepage=f"folder/{doc}.txt",
        ordinal=ordinal,
        page_start=0,
        page_end=0,
        char_start=ordinal * 100,
        char_end=ordinal * 100 + len(content),
        content=content,
        content_hash=hashlib.sha256(content.encode()).hexdigest(),
        token_count=len(content.split()),
        headings=tuple(headings),
        embedding=vector,
    )


E1, E2, E3, E4 = ((1.0, 0.0, 0.0, 0.0), (0.0, 1.0, 0.0, 0.0), (0.0, 0.0, 1.0, 0.0), (0.0, 0.0, 0.0, 1.0))

PARAGRAPHS = {
    "install": "To install pyenv on Linux, clone the repository into your home directory and add it to PATH.",
    "weather": "The weather in Lisbon is mild in winter, with rain from November to February.",
    "zh": "本章介绍如何在系统中配置网络接口，以及防火墙的基本设置方法。",
    "ja": "このコマンドはパッケージの依存関係を自動的に解決してインストールします。",
    "pdf": "Auto Multiple Choice produces multiple choice questionnaires with LaTeX and grades them.",
}


@pytest.fixture
def embedder() -> OfflineLexicalEmbedder:
    return OfflineLexicalEmbedder(64)


@pytest.fixture
def corpus_index(tmp_path: Path, embedder: OfflineLexicalEmbedder) -> LocalIndex:
    index = LocalIndex(tmp_path / "state" / "index.sqlite3", 64)
    index.ensure()
    texts = list(PARAGRAPHS.values())
    vectors = embedder.embed(texts)
    index.upsert([record(name, 0, text, tuple(v)) for (name, text), v in zip(PARAGRAPHS.items(), vectors)])
    return index


def small_index(tmp_path: Path) -> LocalIndex:
    # No cosine floor: these orthogonal test vectors all take part in vector rankings.
    index = LocalIndex(tmp_path / "small.sqlite3", 4, FusionOptions(min_vector_score=-1.0))
    index.upsert(
        [
            record("a", 0, "apple banana", E1),
            record("b", 0, "apple", E2),
            record("c", 0, "cherry", E3),
        ]
    )
    return index


def fts_rows(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT count(*) FROM records_fts").fetchone()[0]


def test_implements_every_protocol_method_and_creates_parent_folders(corpus_index: LocalIndex):
    writer = {n for n in vars(IndexWriter) if not n.startswith("_")}
    searcher = {n for n in vars(IndexSearcher) if not n.startswith("_")}
    assert writer >= {"upsert", "keys_of", "vectors_by_key"} and searcher >= {"search", "records_of"}
    assert not writer & searcher and {IndexWriter, IndexSearcher} <= set(SearchIndex.__mro__)
    protocol_methods = writer | searcher
    assert all(callable(getattr(corpus_index, n, None)) for n in protocol_methods)
    assert corpus_index.path.is_file()
    assert corpus_index.count() == len(PARAGRAPHS)


def test_hybrid_search_finds_a_phrase(corpus_index: LocalIndex, embedder: OfflineLexicalEmbedder):
    query = "clone the repository into your home directory"
    hits = corpus_index.search(query, embedder.embed([query])[0], k=3)
    assert hits[0].record.doc_id == "install"
    # Relevance: 0.6 × the lexical part + 0.4 × the cosine, each in [0, 1].
    assert 0 < hits[0].lexical <= 1 and 0 < hits[0].vector <= 1
    assert hits[0].score == pytest.approx(0.6 * hits[0].lexical + 0.4 * hits[0].vector)
    assert hits[0].record.embedding is None
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


@pytest.mark.parametrize(
    ("query", "doc"),
    [
        ("配置网络接口", "zh"),  # Chinese phrase in the middle of an unspaced run
        ("防火墙", "zh"),
        ("依存関係を自動的に解決", "ja"),  # Japanese phrase mixing kanji and kana
        ("インストール", "ja"),
    ],
)
def test_cjk_phrases_are_found_by_keyword_search(corpus_index: LocalIndex, query: str, doc: str):
    hits = corpus_index.search(query, None, k=5)
    assert hits and hits[0].record.doc_id == doc
    assert {h.record.doc_id for h in hits} <= {"zh", "ja"}  # no Latin-script document matches a CJK query


@pytest.mark.parametrize(
    "query",
    ['"foo" AND (', "NEAR(a b", "*", "content:linux", "'", "-x OR", '""', "^install", "a:b:c )) ((", "\x00", ""],
)
def test_query_syntax_in_user_text_is_never_an_error(corpus_index: LocalIndex, query: str):
    corpus_index.search(query, None, k=3)


def test_operator_words_are_plain_terms(corpus_index: LocalIndex):
    hits = corpus_index.search('"Lisbon" AND (', None, k=5)
    # "AND" is the word "and" OR-ed with "Lisbon", not an operator: the two texts with "and" match too.
    assert hits[0].record.doc_id == "weather"
    assert {h.record.doc_id for h in hits} == {"weather", "install", "pdf"}


def test_fts_query_quotes_terms_and_splits_cjk_runs_into_bigrams():
    assert fts_query('"foo" AND (東京タワー') == '"foo" OR "AND" OR "東 京" OR "京 タ" OR "タ ワ" OR "ワ ー"'
    assert fts_query("x_y 北 333メートル") == '"x" OR "y" OR "北" OR "333" OR "メ ー" OR "ー ト" OR "ト ル"'
    assert fts_query('(( "" ***') == ""


def test_vector_only_ranking_is_cosine(tmp_path: Path):
    index = small_index(tmp_path)
    # (1, 0.5, 0, 0): cosine 0.894 with a, 0.447 with b, 0 with c.
    hits = LocalIndex(index.path, 4, FusionOptions(min_vector_score=-1.0)).search("", (1.0, 0.5, 0.0, 0.0), k=3)
    assert [h.record.doc_id for h in hits] == ["a", "b", "c"]
    assert [h.score for h in hits] == pytest.approx([2 / 5**0.5, 1 / 5**0.5, 0.0], abs=1e-6)
    assert [h.lexical for h in hits] == [None, None, None]
    # Under the default floor (0.15) c takes no part.
    default = LocalIndex(index.path, 4)
    assert [h.record.doc_id for h in default.search("", (1.0, 0.5, 0.0, 0.0), k=3)] == ["a", "b"]


def test_hybrid_rrf_option_is_reciprocal_rank_fusion(tmp_path: Path):
    index = LocalIndex(small_index(tmp_path).path, 4, FusionOptions("rrf", 0.5, 60, -1.0))
    # BM25 for "apple": b (shorter) then a; c does not match. Cosine with e3: c, then a and b tied at 0 (by id).
    hits = index.search("apple", E3, k=3)
    assert [h.record.doc_id for h in hits] == ["b", "a", "c"]
    # 0.5 / (60 + rank) per ranking, divided by the best possible 1 / 61.
    assert [h.score for h in hits] == pytest.approx([61 * (0.5 / 61 + 0.5 / 63), 61 / 62, 0.5])
    assert [h.record.doc_id for h in index.search("apple", E3, k=1)] == ["b"]
    assert index.search("apple", E3, k=0) == []


def test_upsert_is_idempotent(tmp_path: Path):
    index = small_index(tmp_path)
    before = [(h.record, h.score) for h in index.search("apple", E1, k=3)]
    for _ in range(2):
        index.upsert([record("a", 0, "apple banana", E1), record("b", 0, "apple", E2)])
    assert index.count() == 3
    assert fts_rows(index.path) == 3
    assert [(h.record, h.score) for h in index.search("apple", E1, k=3)] == before


def test_upsert_with_a_repeated_id_keeps_the_last(tmp_path: Path):
    index = small_index(tmp_path)
    index.upsert([record("d", 0, "first draft", E1), record("d", 0, "final text", E4)])
    assert index.count() == 4 and fts_rows(index.path) == 4
    assert index.records_of("d")[0].content == "final text"
    assert index.search("draft", None, k=3) == []


def test_upsert_replaces_content_and_its_keyword_entry(tmp_path: Path):
    index = small_index(tmp_path)
    index.upsert([record("a", 0, "durian", E4, version="v2")])
    assert index.count() == 3 and fts_rows(index.path) == 3
    assert [h.record.doc_id for h in index.search("banana", None, k=3)] == []
    assert [h.record.doc_id for h in index.search("durian", None, k=3)] == ["a"]
    assert index.keys_of("a") == {"a-000000": "v2"}
    assert index.search("", E4, k=1)[0].record.doc_id == "a"


def test_upsert_refuses_records_without_a_vector_of_the_right_length(tmp_path: Path):
    index = small_index(tmp_path)
    bad = [record("d", 0, "x", (1.0, 2.0)), record("e", 0, "y", E1)]
    with pytest.raises(IndexError_, match="d-000000"):
        index.upsert(bad)
    with pytest.raises(IndexError_, match="f-000000"):
        index.upsert([record("f", 0, "z", E1).with_embedding(())])
    assert index.count() == 3  # all or nothing: "e" was not written either


def test_delete_removes_records_and_keyword_entries(tmp_path: Path):
    index = small_index(tmp_path)
    index.delete(["a-000000", "missing-000001", "a-000000"])
    assert index.count() == 2 and fts_rows(index.path) == 2
    assert [h.record.doc_id for h in index.search("apple", None, k=5)] == ["b"]
    assert [h.record.doc_id for h in index.search("", E1, k=5)] == ["b", "c"]  # a is gone from the vector scan
    index.delete([])
    assert index.count() == 2


def test_keys_records_and_doc_ids(tmp_path: Path):
    index = LocalIndex(tmp_path / "i.sqlite3", 4)
    index.upsert([record("d1", i, f"text {i}", E1, headings=("Install", "Linux")) for i in range(3)])
    index.upsert([record("d2", 0, "other", E2, version="v9")])
    assert index.keys_of("d1") == {"d1-000000": "v1", "d1-000001": "v1", "d1-000002": "v1"}
    assert index.keys_of("d2") == {"d2-000000": "v9"}
    assert index.keys_of("nope") == {}
    assert index.doc_ids() == {"d1", "d2"}
    records = index.records_of("d1")
    assert [r.ordinal for r in records] == [0, 1, 2]
    assert records[1] == dataclasses.replace(
        record("d1", 1, "text 1", E1, headings=("Install", "Linux")), embedding=None
    )
    assert index.records_of("nope") == []


def test_vectors_by_key(tmp_path: Path):
    index = LocalIndex(tmp_path / "i.sqlite3", 4)
    # 0.1 is not exact in float32: stored vectors come back rounded to float32.
    index.upsert([record("a", 0, "same", (0.5, -0.25, 0.1, 2.0)), record("b", 0, "same", (0.5, -0.25, 0.1, 2.0))])
    index.upsert([record("c", 0, "other", E3)])
    found = index.vectors_by_key(["a-000000", "c-000000", "missing", "a-000000"])
    assert set(found) == {"a-000000", "c-000000"}
    assert found["c-000000"] == E3
    assert found["a-000000"][:2] == (0.5, -0.25) and found["a-000000"][3] == 2.0
    assert found["a-000000"][2] == pytest.approx(0.1, abs=1e-7) and found["a-000000"][2] != 0.1
    assert index.vectors_by_key([]) == {}
    many = [f"x-{i:06d}" for i in range(1200)] + ["b-000000"]  # more than one IN group
    assert set(index.vectors_by_key(many)) == {"b-000000"}


def test_persists_across_reopen(tmp_path: Path, embedder: OfflineLexicalEmbedder):
    path = tmp_path / "p.sqlite3"
    with LocalIndex(path, 4) as index:
        index.upsert([record("a", 0, "persistent apple", E1)])
    reopened = LocalIndex(path, 4)
    assert reopened.count() == 1
    assert reopened.keys_of("a") == {"a-000000": "v1"}
    assert reopened.search("persistent", E1, k=1)[0].record.content == "persistent apple"
    reopened.close()


def test_dimension_mismatch_and_foreign_files_are_refused(tmp_path: Path):
    path = tmp_path / "d.sqlite3"
    index = LocalIndex(path, 4)
    index.upsert([record("a", 0, "alpha", E1)])
    index.close()
    message = (f"{path} holds 1 record with 4-dimensional vectors, but the embedder makes 8: go back to the "
               f"embedder settings that made them, or delete {path} and ingest again (the documents are then "
               f"written anew), or use another index file (another CHUNKING_STATE_DIR)")
    with pytest.raises(IndexError_) as refused:
        LocalIndex(path, 8).ensure()
    assert str(refused.value) == message
    with pytest.raises(IndexError_, match="4-dimensional"):
        LocalIndex(path, 8).count()  # any first use checks too
    assert LocalIndex(path, 4).count() == 1  # refused, not changed
    junk = tmp_path / "junk.sqlite3"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(IndexError_, match="not a usable local index"):
        LocalIndex(junk, 4).ensure()


def test_an_empty_index_of_another_dimension_takes_the_new_one(tmp_path: Path):
    # A run whose embedder failed leaves the file with its vector length and no record: the next run's
    # embedder (another length) may use it without deleting anything.
    path = tmp_path / "d.sqlite3"
    LocalIndex(path, 1536).ensure()
    index = LocalIndex(path, 4)
    index.upsert([record("a", 0, "alpha", E1)])
    assert index.count() == 1
    index.close()
    with pytest.raises(IndexError_, match="holds 1 record with 4-dimensional vectors"):
        LocalIndex(path, 1536).ensure()


def test_two_objects_on_one_file_see_each_other(tmp_path: Path):
    path = tmp_path / "shared.sqlite3"
    unfloored = FusionOptions(min_vector_score=-1.0)
    first, second = LocalIndex(path, 4, unfloored), LocalIndex(path, 4, unfloored)
    first.upsert([record("a", 0, "alpha", E1)])
    assert [h.record.doc_id for h in second.search("", E2, k=5)] == ["a"]  # builds second's vector cache
    first.upsert([record("b", 0, "beta", E2)])
    # second's cache is stale; PRAGMA data_version tells it another connection wrote.
    assert [h.record.doc_id for h in second.search("", E2, k=5)] == ["b", "a"]
    second.delete(["a-000000"])
    assert first.count() == 1 and first.doc_ids() == {"b"}
    second.upsert([record("b", 0, "beta", E2)])
    first.upsert([record("b", 0, "beta", E2)])
    assert first.count() == second.count() == 1 and fts_rows(path) == 1


def test_cosine_ignores_vector_length(tmp_path: Path):
    index = LocalIndex(tmp_path / "n.sqlite3", 4)
    index.upsert([record("long", 0, "x", (10.0, 10.0, 0.0, 0.0)), record("short", 0, "y", (0.1, 0.0, 0.0, 0.0))])
    hits = index.search("", (1.0, 0.9, 0.0, 0.0), k=2)
    assert [h.record.doc_id for h in hits] == ["long", "short"]
    assert index.search("", (0.0, 0.0, 0.0, 0.0), k=2) == []
    with pytest.raises(ValueError, match="3 dimensions"):
        index.search("", (1.0, 0.0, 0.0), k=2)
    # Vector-only relevance is the cosine.
    assert [h.score for h in hits] == pytest.approx([19 / (200**0.5 * 1.81**0.5), 1 / 1.81**0.5], abs=1e-6)


def test_concurrent_writers_on_one_file_lose_nothing(tmp_path: Path):
    path = tmp_path / "threads.sqlite3"
    LocalIndex(path, 4).ensure()
    errors: list[BaseException] = []

    def writer(doc: str) -> None:
        index = LocalIndex(path, 4)
        try:
            for i in range(40):
                index.upsert([record(doc, i, f"{doc} text {i}", E1)])
                index.upsert([record(doc, i, f"{doc} text {i}", E1)])  # idempotent rewrite
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            index.close()

    threads = [threading.Thread(target=writer, args=(doc,)) for doc in ("x", "y", "z")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    index = LocalIndex(path, 4)
    assert index.count() == 120 and fts_rows(path) == 120
    assert {doc: len(index.keys_of(doc)) for doc in "xyz"} == {"x": 40, "y": 40, "z": 40}
    index.upsert([])
    assert index.count() == 120
