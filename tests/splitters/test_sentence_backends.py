"""The sentence splitter gives identical chunks (text, offsets, exact token counts) with either token backend, on
every corpus document; and the cap searches that now stop counting early decide exactly as full counts do."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunking.parsers import SUPPORTED_EXTENSIONS, parse_document
from chunking.splitters import SentenceTextSplitter
from chunking.splitters.sentence.boundaries import Boundaries
from chunking.splitters.sentence.config import SentenceSplitterConfig
from chunking.splitters.sentence.measure import TokenMeasure
from chunking.splitters.sentence.oversize import _nearest, cut_oversize
from chunking.tokens import BACKEND_ENV, get_backend, get_encoding

_ENCODE = get_encoding().encode_ordinary


def splitter(monkeypatch, backend: str, **kw) -> SentenceTextSplitter:
    monkeypatch.setenv(BACKEND_ENV, backend)
    made = SentenceTextSplitter(**kw)
    monkeypatch.delenv(BACKEND_ENV)
    assert made._measure.count_till_limit is get_backend(prefer=backend).count_till_limit
    return made


def _documents(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.suffix.lower() in SUPPORTED_EXTENSIONS)


@pytest.mark.parametrize("max_tokens", [100, 500])
def test_corpus_chunks_are_identical_with_either_backend(corpus, monkeypatch, max_tokens):
    fast, slow = splitter(monkeypatch, "bpe-openai", max_tokens=max_tokens), \
        splitter(monkeypatch, "tiktoken", max_tokens=max_tokens)
    documents = _documents(corpus)
    assert len(documents) >= 8
    total = 0
    for path in documents:
        pages = parse_document(path.read_bytes(), source=path.name)
        chunks = list(fast.split_pages(pages))
        assert chunks == list(slow.split_pages(pages)), path.name
        for chunk in chunks:
            assert chunk.token_count == len(_ENCODE(chunk.text)), (path.name, chunk.char_start)
        total += len(chunks)
    assert total > 300


@functools.cache
def _boundaries() -> Boundaries:
    return Boundaries(SentenceSplitterConfig())


WORDS = st.lists(st.sampled_from(["word", "a", "東京", " ", "  ", "\n", ",", ";", "-", "x" * 30, "3.5", "é"]),
                 max_size=60).map("".join)


@settings(max_examples=300, deadline=None)
@given(WORDS, st.data())
def test_nearest_word_break_is_the_closest_of_all_breaks(text, data):
    bounds = _boundaries()
    lo = data.draw(st.integers(0, len(text)))
    hi = data.draw(st.integers(lo, len(text)))
    mid = data.draw(st.integers(lo, hi))
    # The rule it replaces: every break listed, the nearest kept (the left one on a tie).
    reach = max(mid - lo, hi - mid) + 1
    expected = _nearest(bounds.word_break_positions(text, lo, hi), mid, reach)
    assert bounds.nearest_word_break(text, lo, mid, hi) == expected


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["Lorem", "ipsum", "東京は雨です", "12345", " ", ",", "\n", "x" * 80, "(a)"]),
                min_size=1, max_size=400).map("".join), st.sampled_from([8, 40, 200]))
def test_oversize_cut_with_early_stop_matches_full_counts(text, max_tokens):
    kw = dict(max_tokens=max_tokens, hard_chars=4 * max_tokens, overlap_fraction=0.1, boundaries=_boundaries(),
              count=lambda s: len(_ENCODE(s)))
    full = cut_oversize(text, 0, len(text), **kw)
    for backend in ("bpe-openai", "tiktoken"):
        till = get_backend(prefer=backend).count_till_limit
        assert cut_oversize(text, 0, len(text), count_range=lambda lo, hi, limit: till(text[lo:hi], limit),
                            **kw) == full
    # The splitter's range counter over a block whose tokens are known (interior reused, head and tail encoded).
    measure = TokenMeasure("cl100k_base")
    block = measure.block(text, 0, len(text))
    assert cut_oversize(text, 0, len(text), count_range=measure.range_counter(block), **kw) == full
    assert all(p.tokens == len(_ENCODE(text[p.start:p.end])) for p in full)
