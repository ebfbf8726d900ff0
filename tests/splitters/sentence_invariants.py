"""Checks of the sentence splitter's invariants (docs/splitters.md#sentence-splitter-invariants), shared by the
property and corpus tests.

Each check is written against the pages alone (the document slice ``S(a, b)``, the page of an offset), never
against the splitter's internals, so a splitter bug cannot hide in a shared helper.
"""

from __future__ import annotations

import re
from typing import Sequence

from chunking.model import Chunk, Page
from chunking.splitters import SentenceSplitterConfig, SentenceTextSplitter
from chunking.splitters.sentence.figures import figure_budget
from chunking.tokens import get_encoding

_WS = re.compile(r"\s+")
_FIG_TAG = re.compile(r"<(/?)figure(?=[\s>/])", re.IGNORECASE)
_FIG_CLOSE = re.compile(r"</figure\s*>", re.IGNORECASE)
_ENCODE = get_encoding().encode_ordinary


def tokens(text: str) -> int:
    return len(_ENCODE(text))


def no_ws(text: str) -> str:
    return _WS.sub("", text)


def document_slice(pages: Sequence[Page], a: int, b: int) -> str:
    """``S(a, b)``: the page characters whose document offset is in ``[a, b)``."""
    out = []
    for p in pages:
        text = p.text or ""
        lo, hi = max(a, p.offset), min(b, p.offset + len(text))
        if lo < hi:
            out.append(text[lo - p.offset:hi - p.offset])
    return "".join(out)


def page_of(pages: Sequence[Page], pos: int) -> int:
    for p in pages:
        if p.offset <= pos < p.offset + len(p.text or ""):
            return p.page_num
    raise AssertionError(f"offset {pos} is in no page")


def figure_blocks(text: str) -> list[str]:
    """Outermost balanced figure blocks (an independent re-implementation of docs/splitters.md#figure-block)."""
    stack, pairs = [], []
    for m in re.finditer(r"<(?:(/)figure\s*>|figure(?=[\s>/]))", text, re.IGNORECASE):
        if m.group(1) is None:
            stack.append(m.start())
        elif stack:
            pairs.append((stack.pop(), m.end()))
    out, last_end = [], -1
    for s, e in sorted(pairs):
        if s >= last_end:
            out.append(text[s:e])
            last_end = e
    return out


def figure_blocks_at(text: str) -> list[tuple[str, int]]:
    """Outermost figure blocks with their start index."""
    out = []
    pos = 0
    for block in figure_blocks(text):
        start = text.index(block, pos)
        out.append((block, start))
        pos = start + len(block)
    return out


def balanced(text: str) -> bool:
    depth = 0
    for m in re.finditer(r"<(?:(/)figure\s*>|figure(?=[\s>/]))", text, re.IGNORECASE):
        depth += -1 if m.group(1) else 1
        if depth < 0:
            return False
    return depth == 0


def check_invariants(pages: Sequence[Page], chunks: Sequence[Chunk], config: SentenceSplitterConfig) -> None:
    """Assert invariants 1–10, 12 and 13 of docs/splitters.md#sentence-splitter-invariants for ``chunks`` split from
    ``pages`` with ``config``."""
    hard_chars = config.hard_chars
    target = config.overlap_target_chars
    frac = config.split_overlap_percent / 100
    total_len = sum(len(p.text or "") for p in pages)
    nonblank = any((p.text or "").strip() for p in pages)
    # 12. nothing lost
    assert bool(chunks) == nonblank, "a document with text yields chunks, a blank one none"
    own_total = 0
    spans = []
    for i, c in enumerate(chunks):
        where = f"chunk {i} {c.text[:60]!r}"
        # 1. token caps
        assert c.token_count == tokens(c.text), where
        assert c.token_count <= config.embedding_max_tokens, where
        if c.kind == "text":
            assert c.token_count <= config.max_tokens, where
            # 2. character cap
            assert len(c.text) <= hard_chars, where
        if c.kind == "figure_part":
            assert c.token_count <= max(config.max_figure_tokens, config.table_tokens), where
            assert c.part_index is not None and c.part_count is not None and 0 <= c.part_index < c.part_count
        else:
            assert c.part_index is None and c.part_count is None, where
        # 3. no empty chunks
        assert c.text and c.text == c.text.strip(), where
        assert 0 <= c.overlap_chars < len(c.text), where
        # 4. balanced figures (a stray tag of the input is text and may stay unbalanced)
        if c.kind == "figure_part" or balanced(document_slice(pages, c.char_start, c.char_end)):
            assert balanced(c.text), where
        if c.kind == "text":
            assert not figure_blocks(c.text), where
        elif c.kind == "figure":
            assert figure_blocks(c.own_text), where
            # Over the cap only as one figure alone (no prose glued to it), and flagged.
            over = c.token_count > config.max_tokens
            assert not over or figure_blocks(c.text) == [c.text], where
            assert c.metadata == ({"over_max_tokens": True} if over else {}), where
        own = c.own_text
        # 5. own text is source text
        if c.kind in ("text", "figure"):
            assert no_ws(own) == no_ws(document_slice(pages, c.char_start, c.char_end)), where
            own_total += len(own)
        else:
            own_total += c.char_end - c.char_start
        # 8. pages
        assert c.char_start < c.char_end, where
        assert c.page_start <= c.page_end, where
        assert c.page_start == page_of(pages, c.char_start), where
        assert c.page_end == page_of(pages, c.char_end - 1), where
        assert c.page_num == c.page_start, where
        # 9. look-ahead copies what follows, within 2T + 1 characters
        if c.overlap_chars:
            assert c.kind == "text", where
            assert c.overlap_chars <= 2 * target + 1, where
            after = no_ws(document_slice(pages, c.char_end, c.char_end + 4 * hard_chars + 1000))
            assert after.startswith(no_ws(c.text[len(own):])), where
        spans.append((c.char_start, c.char_end))
    # 6. order
    for i, (prev, nxt) in enumerate(zip(chunks, chunks[1:])):
        assert nxt.char_start > prev.char_start, f"chunk {i + 1} does not start after chunk {i}"
        assert nxt.page_start >= prev.page_start
        if nxt.char_start < prev.char_end:
            # Only a hard pair overlaps, by at most 2 × o, and it carries no look-ahead. Both are pieces of one
            # span (kind text), but a cross-page merge (step 6) may since have joined the first piece to a held
            # chunk that holds a figure, or the last piece to a next page's first chunk that does: then that
            # chunk is of kind figure (the kind says what a chunk holds). Never a figure part.
            assert prev.kind in ("text", "figure") and nxt.kind in ("text", "figure"), f"chunks {i}/{i + 1} overlap"
            assert prev.overlap_chars == 0, f"chunks {i}/{i + 1} overlap, and chunk {i} has a look-ahead"
            # o ≤ int(2p × min(len(A), len(B))) for the leaves of step 4, which fit the character cap (later
            # repairs may shorten the chunks that carry them, so their current lengths bound nothing).
            o = int(2 * frac * hard_chars)
            assert prev.char_end - nxt.char_start <= 2 * o, f"chunks {i}/{i + 1} overlap too much"
    # 13. no chunk is only what the previous chunk's look-ahead already holds: the look-ahead is shorter
    for i, (prev, nxt) in enumerate(zip(chunks, chunks[1:])):
        if prev.overlap_chars and nxt.kind == "text":
            assert prev.text[len(prev.own_text):].strip() != nxt.own_text, f"chunk {i + 1} repeats a look-ahead"
            assert len(no_ws(prev.text[len(prev.own_text):])) < len(no_ws(nxt.own_text)), \
                f"chunk {i + 1} is no longer than the look-ahead before it"
    # 7. coverage
    covered = _merge(spans)
    for p in pages:
        for m in re.finditer(r"\S", p.text or ""):
            pos = p.offset + m.start()
            assert _inside(covered, pos), f"character {pos} ({m.group()!r}) of page {p.page_num} is in no chunk"
    # 4. every figure block within its budget (max_table_tokens for a table, else max_figure_tokens) is intact in
    # exactly one chunk; no own span cuts one
    for p in pages:
        for block, start in figure_blocks_at(p.text or ""):
            lo, hi = p.offset + start, p.offset + start + len(block)
            holders = [c for c in chunks if c.kind != "figure_part" and c.char_start <= lo and hi <= c.char_end]
            cutting = [c for c in chunks if c.kind != "figure_part" and c.char_start < hi and lo < c.char_end
                       and not (c.char_start <= lo and hi <= c.char_end)]
            assert not cutting, f"figure {block[:60]!r} torn"
            budget = figure_budget(block, table_tokens=config.table_tokens, figure_tokens=config.max_figure_tokens)
            if tokens(block) <= budget:
                assert len(holders) == 1 and block in holders[0].text, f"figure {block[:60]!r} not intact once"
            else:
                parts = [c for c in chunks if c.kind == "figure_part" and c.char_start < hi and lo < c.char_end]
                assert parts and parts[-1].char_end == hi
                # The first part starts at the figure, or at the one line before it that travels with it (a caption).
                caption = (p.text or "")[parts[0].char_start - p.offset: start].strip()
                assert parts[0].char_start == lo or (parts[0].char_start < lo and "\n" not in caption
                                                     and "<figure" not in caption.lower())
                assert [c.part_index for c in parts] == list(range(len(parts)))
                assert all(a.char_end == b.char_start for a, b in zip(parts, parts[1:]))
    # 10. bounded duplication
    assert own_total <= 1.2 * total_len + len(pages), "own texts duplicate more than 20%"


def check_determinism(splitter: SentenceTextSplitter, pages: Sequence[Page]) -> list[Chunk]:
    """11. the same input gives the same chunks, consumed lazily or as a list; returns them."""
    first = list(splitter.split_pages(iter(list(pages))))
    lazy = []
    for chunk in splitter.split_pages(p for p in pages):
        lazy.append(chunk)
    assert first == lazy
    again = SentenceTextSplitter(token_counter=None, **_settings(splitter.config))
    assert list(again.split_pages(list(pages))) == first
    return first


def _settings(config: SentenceSplitterConfig) -> dict:
    return {k: v for k, v in config.to_dict().items()}


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def _inside(spans: list[tuple[int, int]], pos: int) -> bool:
    lo, hi = 0, len(spans)
    while lo < hi:
        mid = (lo + hi) // 2
        if spans[mid][1] <= pos:
            lo = mid + 1
        else:
            hi = mid
    return lo < len(spans) and spans[lo][0] <= pos < spans[lo][1]


def pages_from_texts(texts: Sequence[str], gaps: Sequence[int] | None = None) -> list[Page]:
    """Pages with cumulative offsets (plus an optional gap before each page)."""
    pages, offset = [], 0
    for i, text in enumerate(texts):
        offset += gaps[i] if gaps else 0
        pages.append(Page(i, offset, text))
        offset += len(text)
    return pages


def pages(*texts: str) -> list[Page]:
    """``pages_from_texts`` for literal texts written inline."""
    return pages_from_texts(texts)


def rows(chunks: Sequence[Chunk]) -> list[tuple]:
    """The fields exact-output tests compare, one tuple per chunk."""
    return [(c.text, c.char_start, c.char_end, c.page_start, c.page_end, c.token_count, c.overlap_chars, c.kind)
            for c in chunks]


__all__ = ["check_determinism", "check_invariants", "document_slice", "pages", "pages_from_texts", "rows", "tokens"]
