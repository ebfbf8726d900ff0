"""SemanticChunker (docs/splitters.md#semantic): exact small cases with a topic embedder whose distances are known, the
threshold types, the size repair, fallbacks, the cache, and properties over generated text."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunking.chat.cache import MemoryModelCache
from chunking.embeddings import OfflineLexicalEmbedder
from chunking.model import Page
from chunking.splitters import SentenceTextSplitter
from chunking.strategies.repair import repair_sizes
from chunking.strategies.semantic import SemanticChunker, breakpoint_threshold, window_distances
from chunking.strategies.units import DocumentText, sentence_units
from chunking.tokens import token_counter

from .helpers import TopicEmbedder, assert_covers, assert_ordered, assert_verbatim

COUNT = token_counter()
TEXT = "Cats purr softly. Cats nap daily. Cats love naps. Rust compiles code. Rust code runs fast."


@pytest.mark.parametrize("buffer_size", [0, 1])
def test_cut_where_the_topic_changes(buffer_size):
    chunker = SemanticChunker(TopicEmbedder(["cats", "rust"]), buffer_size=buffer_size, min_chunk_tokens=1,
                              max_chunk_tokens=100)
    chunks = chunker.split_text(TEXT)
    assert [(c.text, c.char_start, c.char_end, c.token_count) for c in chunks] == [
        ("Cats purr softly. Cats nap daily. Cats love naps.", 0, 49, 15),
        ("Rust compiles code. Rust code runs fast.", 50, 90, 11),
    ]
    assert [c.metadata["breakpoint_distance"] for c in chunks][0] is None
    assert chunks[1].metadata["breakpoint_distance"] == pytest.approx(1.0 if buffer_size == 0 else 0.2)


def test_window_distances_by_hand():
    units = sentence_units([Page(0, 0, TEXT)], max_unit_tokens=100)
    d = window_distances(units, DocumentText([Page(0, 0, TEXT)]), TopicEmbedder(["cats", "rust"]), 1, COUNT,
                         16_000, 256)
    near = 1 - 2 / math.sqrt(5)  # (cats, cats, rust) against (cats, cats) or (cats, rust, rust)
    assert d == pytest.approx([0.0, near, 0.2, near])


@pytest.mark.parametrize(
    "kind, amount, threshold",
    [
        ("percentile", 50, 0.2),
        ("standard_deviation", 1, 0.4 + math.sqrt((0.09 + 0.04 + 0.25) / 3)),
        ("interquartile", 1.5, 0.55 + 1.5 * 0.4),
        ("gradient", 50, 0.4),
        ("absolute", 0.35, 0.35),
    ],
)
def test_thresholds(kind, amount, threshold):
    values, got = breakpoint_threshold([0.1, 0.2, 0.9], kind, amount)
    assert got == pytest.approx(threshold)
    expected = [0.1, 0.4, 0.7] if kind == "gradient" else [0.1, 0.2, 0.9]
    assert list(values) == pytest.approx(expected)


def test_unknown_threshold_type_is_refused():
    with pytest.raises(ValueError, match="unknown breakpoint_threshold_type 'median'"):
        SemanticChunker(TopicEmbedder(["a"]), breakpoint_threshold_type="median")


def _sizes(tokens):
    return lambda i, j: sum(tokens[i:j])


@pytest.mark.parametrize(
    "tokens, distances, groups, lo, hi, expected",
    [
        # Over the cap: cut at the largest distance.
        ([50, 50, 50, 50], [0.1, 0.5, 0.2], [(0, 4)], 0, 120, [(0, 2), (2, 4)]),
        # Equal distances: the earliest cut, recursively.
        ([50, 50, 50, 50], [0.3, 0.3, 0.3], [(0, 4)], 0, 120, [(0, 1), (1, 2), (2, 4)]),
        # Under the minimum: merge across the smaller distance (here the right one).
        ([50, 50, 30, 50, 50], [0.1, 0.4, 0.2, 0.1], [(0, 2), (2, 3), (3, 5)], 60, 150, [(0, 2), (2, 5)]),
        # Equal distances: the left neighbour.
        ([50, 50, 30, 50, 50], [0.1, 0.3, 0.3, 0.1], [(0, 2), (2, 3), (3, 5)], 60, 150, [(0, 3), (3, 5)]),
        # The nearer neighbour would break the cap: the other one.
        ([50, 50, 30, 100, 10], [0.1, 0.4, 0.2, 0.1], [(0, 2), (2, 3), (3, 5)], 60, 135, [(0, 3), (3, 5)]),
        # Neither fits: stays small.
        ([100, 30, 100], [0.5, 0.5], [(0, 1), (1, 2), (2, 3)], 60, 120, [(0, 1), (1, 2), (2, 3)]),
        # A single unit over the cap stays whole.
        ([300], [], [(0, 1)], 0, 100, [(0, 1)]),
    ],
)
def test_size_repair(tokens, distances, groups, lo, hi, expected):
    assert repair_sizes(groups, distances, _sizes(tokens), min_tokens=lo, max_tokens=hi) == expected


def test_size_repair_handles_thousands_of_equal_distances():
    n = 5000
    out = repair_sizes([(0, n)], [1.0] * (n - 1), _sizes([1] * n), min_tokens=0, max_tokens=10)
    assert out[0] == (0, 1) and out[-1] == (n - 10, n) and len(out) == n - 9


def test_embedder_failure_falls_back_to_the_sentence_splitter():
    chunker = SemanticChunker(TopicEmbedder(["cats"], fail=RuntimeError("503 from the service")),
                              min_chunk_tokens=1, max_chunk_tokens=12)
    chunks = chunker.split_text(TEXT)
    expected = SentenceTextSplitter(max_tokens=12, max_chars=24).split_text(TEXT)
    assert [c.text for c in chunks] == [c.text for c in expected]
    assert all(c.metadata == {"semantic_fallback": True,
                              "fallback_reason": "embedding failed: RuntimeError: 503 from the service"}
               for c in chunks)


def test_a_document_of_two_sentences_falls_back():
    embedder = TopicEmbedder(["cats"])
    chunks = SemanticChunker(embedder).split_text("Cats purr. Cats nap.")
    assert [c.text for c in chunks] == ["Cats purr. Cats nap."]
    assert chunks[0].metadata["fallback_reason"] == "document too short (2 sentences)"
    assert embedder.requests == 0


def test_cached_windows_cost_no_second_call():
    embedder, cache = TopicEmbedder(["cats", "rust"]), MemoryModelCache()
    first = SemanticChunker(embedder, cache=cache, min_chunk_tokens=1).split_text(TEXT)
    calls = embedder.requests
    assert calls == 1 and len(cache.entries) == 5
    second = SemanticChunker(embedder, cache=cache, min_chunk_tokens=1).split_text(TEXT)
    assert second == first and embedder.requests == calls


def test_figures_are_atomic_and_huge_ones_split_below_the_embedding_limit():
    row = "<tr><td>cell value number {i}</td><td>{i}</td></tr>"
    huge = "<figure><table>" + "".join(row.format(i=i) for i in range(900)) + "</table></figure>"
    small = "<figure><img src='cat.png' alt='A cat'></figure>"
    text = f"Cats purr. Cats nap. {small} Cats sleep. Rust runs. {huge} Rust compiles. Rust is fast."
    assert COUNT(huge) > 8191
    chunks = SemanticChunker(TopicEmbedder(["cats", "rust"]), min_chunk_tokens=1, max_chunk_tokens=40).split_text(text)
    assert sum(small in c.text for c in chunks) == 1
    parts = [c for c in chunks if c.kind == "figure_part"]
    assert len(parts) >= 2 and all(c.token_count <= 8191 for c in parts)
    assert all(c.text.startswith("<figure>") and c.text.endswith("</figure>") for c in parts)
    assert_covers(chunks, [Page(0, 0, text)])


_WORDS = ["cats", "dogs", "rust", "python", "tea", "coffee", "rain", "snow", "紅茶", "コーヒー"]
_sentence = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=12).map(lambda ws: " ".join(ws).capitalize())
_pages = st.lists(st.lists(_sentence, min_size=0, max_size=8).map(
    lambda ss: ("\n\n" if len(ss) % 2 else " ").join(s + "." for s in ss)), min_size=1, max_size=4)


@settings(max_examples=40, deadline=None)
@given(_pages, st.integers(0, 2), st.sampled_from(["percentile", "standard_deviation", "interquartile", "gradient"]),
       st.integers(8, 60), st.integers(0, 30))
def test_properties(texts, buffer_size, kind, max_tokens, min_tokens):
    pages, offset = [], 0
    for n, t in enumerate(texts):
        pages.append(Page(n, offset, t + "\n"))
        offset += len(t) + 1
    chunker = SemanticChunker(OfflineLexicalEmbedder(32), buffer_size=buffer_size, breakpoint_threshold_type=kind,
                              min_chunk_tokens=min(min_tokens, max_tokens), max_chunk_tokens=max_tokens)
    chunks = chunker.split_pages(pages)
    assert_covers(chunks, pages)
    assert_verbatim(chunks, pages)
    assert_ordered(chunks)
    assert all(c.text and c.text == c.text.strip() and c.token_count == COUNT(c.text) for c in chunks)
    # A chunk over the cap is a single unit that could not be cut (never here: units are cut to the cap).
    assert all(c.token_count <= max_tokens for c in chunks)
    assert all(c.page_start <= c.page_end for c in chunks)
    assert chunker.split_pages(pages) == chunks  # deterministic
