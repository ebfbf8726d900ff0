"""``chunking.retrieval.search`` with the offline embedder: a vector-only hit must hold a query word, because
hashed vectors of texts sharing nothing still reach cosines above the floor (docs/search.md#no-hits)."""

from __future__ import annotations

import pytest

from chunking.documents.records import build_records
from chunking.embeddings import OfflineLexicalEmbedder
from chunking.index.local import LocalIndex
from chunking.retrieval import keyword_text, query_vector, search
from chunking.strategies.hierarchical import HierarchicalChunker, Level

DOC = ("# Tea\nGreen tea leaves are steamed. Black tea leaves are oxidised. Tea grows on misty hills.\n"
       "# Coffee\nCoffee beans are roasted. Espresso is pressed coffee. Coffee grows in the tropics.\n"
       "# Water\nWater boils at one hundred degrees. Rain fills the rivers.\n")
EMBEDDER = OfflineLexicalEmbedder(256)
TEA, COFFEE, WATER = (f"dabc-01234567-0-{n}" for n in range(3))


@pytest.fixture
def index(tmp_path) -> LocalIndex:
    chunks = HierarchicalChunker([Level(200, "sections")], embed_levels=(0,), headings=True).split_text(DOC)
    records = build_records(chunks, doc_id="dabc", version="0123456789", source="a.md", paginated=False)
    index = LocalIndex(tmp_path / "i.sqlite3", 256)
    index.upsert([r.with_embedding(EMBEDDER.embed([r.text_to_embed])[0]) for r in records])
    return index


def test_shares_word_uses_the_embedders_words():
    assert EMBEDDER.shares_word("Espresso beans", "Coffee beans are roasted.")
    assert not EMBEDDER.shares_word("the espresso", "The beans are roasted.")  # "the" is a stop word
    assert EMBEDDER.shares_word("東京", "京都と東京")  # CJK bigrams
    assert not EMBEDDER.shares_word("roast", "Coffee beans are roasted.")  # words, not stems or trigrams


@pytest.mark.parametrize("query, chunk, cosine", [("rxlgb", COFFEE, 0.2467), ("hdqlz", WATER, 0.2876)])
def test_a_query_sharing_no_word_gets_no_hits(index, query, chunk, cosine):
    # The index alone finds the chunk by a collision cosine above the 0.15 floor ...
    raw = index.search(query, query_vector(EMBEDDER, index, query), k=3)
    assert [(h.record.id, h.lexical, round(h.vector, 4)) for h in raw] == [(chunk, None, cosine)]
    # ... which the search drops, in every ranking.
    for ranking in ("hybrid", "vector", "bm25"):
        assert search(query, index=index, embedder=EMBEDDER, ranking=ranking) == []


def test_vector_hits_holding_a_query_word_stay(index):
    hits = search("espresso roasted", index=index, embedder=EMBEDDER, ranking="vector")
    assert [h.record.id for h in hits] == [COFFEE]
    assert hits[0].lexical is None and round(hits[0].vector, 4) == round(hits[0].score, 4) > 0.15
    assert [h.record.id for h in search("misty rxlgb", index=index, embedder=EMBEDDER)] == [TEA]


def test_keyword_text_is_empty_for_stop_words_only():
    assert keyword_text("the and of") == ""
    assert keyword_text("The AND of, it's") == ""  # any case, punctuation, inner apostrophes
    assert keyword_text("el de la") == ""  # the list spans languages
    assert keyword_text("?!") == ""
    assert keyword_text("the tea") == "the tea"  # one other word: the query as it is
    assert keyword_text("東京") == "東京"


def test_a_query_of_stop_words_only_gets_no_hits(index):
    # BM25 alone finds every chunk by "the" and "are" ...
    raw = index.search("the are", None, k=3)
    assert sorted(h.record.id for h in raw) == [TEA, COFFEE, WATER]
    # ... which the search does not ask: no keyword ranking, and a vector without words.
    for ranking in ("hybrid", "vector", "bm25"):
        assert search("the are", index=index, embedder=EMBEDDER, ranking=ranking) == []
    # A query with another word keeps its stop words: "the" still finds the water chunk, below coffee.
    assert [h.record.id for h in search("the coffee", index=index, embedder=EMBEDDER)] == [COFFEE, WATER]


class _ModelLike:
    """An embedder without ``shares_word`` (as a model is): every text's vector is that of a tea sentence."""

    def embed(self, texts):
        return [EMBEDDER.embed(["Green tea leaves grow on misty hills."])[0] for _ in texts]


def test_with_a_model_a_stop_word_query_gets_its_vector_hits_only(index):
    hits = search("the are", index=index, embedder=_ModelLike())
    # The vector ranking alone (the other chunks are under the floor); no keyword part for any hit.
    assert [(h.record.id, h.lexical, round(h.vector, 4)) for h in hits] == [(TEA, None, 0.7204)]
