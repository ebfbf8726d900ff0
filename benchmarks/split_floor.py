"""Lower bounds for ``split_bench.py``: what any sentence splitter with exact counts pays before its own rules.

Two runners over each page's text, both with the bpe-openai backend and our splitter's own helpers:

- :func:`token_offsets`: encode the page and turn its tokens into character offsets
  (``TokenMeasure.token_char_starts``), the tokenizer-bound part of our splitter's work on each text block;
- :func:`skeleton`: that, plus the least a chunk needs: the cap's position read off the offsets, one search
  for the last sentence end before it (``Boundaries.last_cut``), the chunk's own token count (head and tail
  re-counted, interior reused) and one ``Chunk``. No paragraph preference, no runts, no oversize cuts, no
  figures, no cross-page repair, no look-ahead;
- :func:`counted_spans`: no encoding of the page at all: the page's sentence spans (``Boundaries.sentence_cuts``)
  each counted with the backend's counter, packed greedily while the sum of their counts fits, one ``Chunk`` per
  pack with that sum as its count. This is how a peer that counts pieces (chonkie's ``RecursiveChunker``) sizes;
  it bounds from below a sentence splitter redesigned to count spans instead of encoding blocks. Spans over the
  cap are kept whole, and the sums are exact only where every cut is a pre-token boundary.

Their chunks are not our splitter's (the skeleton keeps none of the rules of docs/splitters.md#the-steps); they
only bound from below what a splitter built this way can cost.
"""

from __future__ import annotations

import os
from bisect import bisect_left
from typing import Callable

from corpus_pages import Document

from chunking.model import Chunk
from chunking.splitters import SentenceTextSplitter
from chunking.tokens import BACKEND_ENV

__all__ = ["counted_spans", "skeleton", "splitter_with", "token_offsets"]

Runner = Callable[[list[Document]], int]
_HEAD_TAIL_CHARS = 12  # characters re-counted at each end of a chunk (our splitter re-counts up to a safe boundary)


def splitter_with(backend: str, max_tokens: int, **settings) -> SentenceTextSplitter:
    """Our splitter at *max_tokens* (and any other *settings*) with the named token backend
    (``CHUNKING_TOKENIZER`` set while it is made)."""
    previous = os.environ.get(BACKEND_ENV)
    os.environ[BACKEND_ENV] = backend
    try:
        return SentenceTextSplitter(max_tokens=max_tokens, **settings)
    finally:
        if previous is None:
            os.environ.pop(BACKEND_ENV, None)
        else:
            os.environ[BACKEND_ENV] = previous


def token_offsets(max_tokens: int) -> Runner:
    """Encode every page and compute where its tokens start; returns the number of pages."""
    starts = splitter_with("bpe-openai", max_tokens)._measure.token_char_starts
    return lambda docs: sum(starts(p.text, 0) is not None for d in docs for p in d.pages)


def skeleton(max_tokens: int, max_chars: int = 1000) -> Runner:
    """The skeleton splitter described in the module docstring; returns the number of chunks."""
    splitter = splitter_with("bpe-openai", max_tokens)
    starts_of, last_cut, count = splitter._measure.token_char_starts, splitter._boundaries.last_cut, \
        splitter._measure.count
    k = _HEAD_TAIL_CHARS

    def run(docs: list[Document]) -> int:
        chunks = 0
        for doc in docs:
            for page in doc.pages:
                text, hi = page.text, len(page.text)
                known = starts_of(text, 0)
                if known is None:
                    continue
                starts = known[0]
                a, ta = 0, 0
                while a < hi:
                    cap = ta + max_tokens
                    limit = min(a + max_chars, starts[cap] if cap < len(starts) else hi)
                    c = hi if limit >= hi else last_cut(text, 0, hi, a, limit)
                    c = limit if c <= a else c
                    tc = bisect_left(starts, c)
                    s = a
                    while s < c and text[s].isspace():
                        s += 1
                    if s < c:
                        tokens = count(text[s:s + k]) + (tc - ta) + count(text[c - k:c])
                        Chunk(text[s:c], s, c, page.page_num, page.page_num, tokens, 0, "text", None, None)
                        chunks += 1
                    a, ta = c, tc
        return chunks

    return run


def counted_spans(max_tokens: int) -> Runner:
    """The count-based packer described in the module docstring; returns the number of chunks."""
    splitter = splitter_with("bpe-openai", max_tokens)
    cuts_of, count = splitter._boundaries.sentence_cuts, splitter._measure._count

    def run(docs: list[Document]) -> int:
        chunks = 0
        for doc in docs:
            for page in doc.pages:
                text, page_num = page.text, page.page_num
                start = end = total = 0
                for cut in cuts_of(text) + [len(text)]:
                    if cut <= end:
                        continue
                    tokens = count(text[end:cut])
                    if total and total + tokens > max_tokens:
                        Chunk(text[start:end], start, end, page_num, page_num, total, 0, "text", None, None)
                        chunks += 1
                        start, total = end, 0
                    total += tokens
                    end = cut
                if total:
                    Chunk(text[start:end], start, end, page_num, page_num, total, 0, "text", None, None)
                    chunks += 1
        return chunks

    return run
