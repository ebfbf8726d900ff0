"""ParentDocumentRetriever (docs/splitters.md#small-to-big-and-sentence-window; auto-merging:
docs/splitters.md#hierarchical) over a real LocalIndex: parents of child hits, order and deduplication, limits, a
missing parent, auto-merging, the sentence window."""

from __future__ import annotations

import logging

import pytest

from chunking.documents.records import build_records
from chunking.embeddings import OfflineLexicalEmbedder
from chunking.index.local import LocalIndex
from chunking.retrieval.small_to_big import ParentDocumentRetriever
from chunking.strategies.hierarchical import HierarchicalChunker, Level

DOC = ("# Tea\nGreen tea leaves are steamed. Black tea leaves are oxidised. Tea grows on misty hills.\n"
       "# Coffee\nCoffee beans are roasted. Espresso is pressed coffee. Coffee grows in the tropics.\n"
       "# Water\nWater boils at one hundred degrees. Rain fills the rivers.\n")
EMBEDDER = OfflineLexicalEmbedder(64)


def make_index(tmp_path, levels, embed_levels=(1,)) -> LocalIndex:
    chunks = HierarchicalChunker(levels, embed_levels=embed_levels, headings=True).split_text(DOC)
    records = build_records(chunks, doc_id="dabc", version="0123456789", source="a.md", paginated=False)
    index = LocalIndex(tmp_path / "i.sqlite3", 64)
    index.upsert([r.with_embedding(EMBEDDER.embed([r.content])[0]) if r.has_vector else r for r in records])
    return index


@pytest.fixture
def index(tmp_path) -> LocalIndex:
    return make_index(tmp_path, [Level(200, "sections"), Level(10)])


def test_children_found_parents_returned_once_best_first(index):
    results = ParentDocumentRetriever(index, EMBEDDER, child_k=6).retrieve("tea leaves steamed")
    assert [r.record.id for r in results][0] == "dabc-01234567-0-0"
    assert len({r.record.id for r in results}) == len(results)
    tea = results[0]
    assert tea.text == tea.record.content and tea.text.startswith("# Tea\nGreen tea leaves are steamed.")
    child_ids = {c.id for c in tea.children}
    assert {"dabc-01234567-1-0_0", "dabc-01234567-1-0_1"} <= child_ids
    assert [c.score for c in tea.children] == sorted((c.score for c in tea.children), reverse=True)
    assert tea.score == tea.children[0].score
    first = next(c for c in tea.children if c.id == "dabc-01234567-1-0_0")
    assert DOC[first.char_start : first.char_end] == "# Tea\nGreen tea leaves are steamed."
    assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)


def test_max_parents_and_token_budget(index):
    assert len(ParentDocumentRetriever(index, EMBEDDER, max_parents=1).retrieve("tea coffee water")) == 1
    everything = ParentDocumentRetriever(index, EMBEDDER).retrieve("tea coffee water")
    assert len(everything) == 3
    budget = everything[0].record.token_count + everything[1].record.token_count
    limited = ParentDocumentRetriever(index, EMBEDDER, parent_token_budget=budget).retrieve("tea coffee water")
    assert [r.record.id for r in limited] == [r.record.id for r in everything[:2]]
    tiny = ParentDocumentRetriever(index, EMBEDDER, parent_token_budget=1).retrieve("tea coffee water")
    assert [r.record.id for r in tiny] == [everything[0].record.id]  # the first is always returned


def test_a_child_whose_parent_is_missing_is_returned_as_itself(index, caplog):
    index.delete(["dabc-01234567-0-1"])
    with caplog.at_level(logging.WARNING, logger="chunking.strategies"):
        results = ParentDocumentRetriever(index, EMBEDDER, child_k=3).retrieve("espresso pressed coffee")
    assert results[0].record.id == "dabc-01234567-1-1_1" and results[0].text == "Espresso is pressed coffee."
    assert "parent dabc-01234567-0-1 of dabc-01234567-1-1_1 is missing" in caplog.text


def test_level_filter(index):
    results = ParentDocumentRetriever(index, None, child_levels=[0]).retrieve("coffee")
    assert [r.record.id for r in results] == ["dabc-01234567-0-1"]
    assert [c.id for c in results[0].children] == ["dabc-01234567-0-1"]  # a top-level hit is its own parent


def test_auto_merge_returns_the_parent_only_when_enough_children_match(tmp_path):
    index = make_index(tmp_path, [Level(200, "sections"), Level(10)], embed_levels=(0, 1))
    hits_for = "green tea leaves steamed black oxidised"
    strict = ParentDocumentRetriever(index, None, child_k=2, child_levels=[1], auto_merge_ratio=1.0).retrieve(hits_for)
    assert {r.record.id for r in strict} == {"dabc-01234567-1-0_0", "dabc-01234567-1-0_1"}  # 2 of 3 < 100 %
    loose = ParentDocumentRetriever(index, None, child_k=2, child_levels=[1], auto_merge_ratio=0.5).retrieve(hits_for)
    assert [r.record.id for r in loose] == ["dabc-01234567-0-0"]
    assert {c.id for c in loose[0].children} == {"dabc-01234567-1-0_0", "dabc-01234567-1-0_1"}


def test_sentence_window(tmp_path):
    index = make_index(tmp_path, [Level(200, "sections"), Level(50, "sentences")])
    (result, *_) = ParentDocumentRetriever(index, None, child_k=1, window=1).retrieve("espresso")
    assert result.record.content == "Espresso is pressed coffee."
    # The heading line belongs to the first sentence of its section (no sentence end between them).
    assert result.text == "# Coffee\nCoffee beans are roasted. Espresso is pressed coffee. Coffee grows in the tropics."
    (edge, *_) = ParentDocumentRetriever(index, None, child_k=1, window=1).retrieve("rivers")
    assert edge.text == "# Water\nWater boils at one hundred degrees. Rain fills the rivers."


def test_invalid_arguments(index):
    with pytest.raises(ValueError):
        ParentDocumentRetriever(index, auto_merge_ratio=1.5)
    with pytest.raises(ValueError):
        ParentDocumentRetriever(index, child_k=0)


def test_sentence_window_leaves_a_top_level_hit_as_it_is(tmp_path):
    index = make_index(tmp_path, [Level(200, "sections")], embed_levels=(0,))  # no parents: nothing to window
    (result, *_) = ParentDocumentRetriever(index, None, child_k=1, window=1).retrieve("espresso")
    assert result.text == result.record.content == "# Coffee\nCoffee beans are roasted. Espresso is pressed coffee. Coffee grows in the tropics."
    assert [(c.char_start, c.char_end) for c in result.children] == [(result.record.char_start, result.record.char_end)]
