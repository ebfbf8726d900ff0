"""Step 3 of the sentence splitter: where a chunk of a text block ends (docs/splitters.md#step-3-accumulate).

A chunk starting at ``a`` may end anywhere up to ``limit`` (the last position within ``max_chars`` and
``max_tokens``). Among the places a chunk may end, in order of preference, each taken only if it keeps the chunk
at least half as long as ``limit`` allows (so preferences never make small chunks):

1. a paragraph break (the end of a paragraph, heading, list or code block: a blank line follows);
2. a sentence end at the end of a line;
3. any sentence end (at any length);
4. a paragraph break (at any length), for text that has blank lines but no sentence ends.

*No runts* (docs/splitters.md#step-3-accumulate): when what would be left of the block after the chunk is a runt
(under a quarter of ``max_tokens`` and of ``max_chars``) the chunk absorbs it if both fit the hard caps together
(``hard_chars``, ``max_tokens``); otherwise the last two chunks are balanced: the cut moves to the preferred place
nearest the middle of the two, as long as each side fits the caps and holds at least a quarter of them.
"""

from __future__ import annotations

import re

from .boundaries import Boundaries
from .measure import BlockTokens

__all__ = ["balanced_cut", "chunk_end", "ends_line", "is_runt", "paragraph_cuts"]

# A blank line: a line break, then a line holding only spaces, then a line break.
_BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*\n")
_SPACE = " \t\r\f\v\n"
_NOT_SPACE = re.compile(r"[^ \t\r\f\v\n]")


def paragraph_cuts(text: str, cmin: int, cmax: int, hi: int | None = None) -> list[int]:
    """Positions ``p`` with ``cmin ≤ p ≤ cmax`` just after a non-space character that a blank line follows
    (within ``text[:hi]``), ascending: where a paragraph, heading, list or code block ends."""
    hi = len(text) if hi is None else hi
    out: list[int] = []
    # A blank line is whitespace only, so one that yields a cut <= cmax lies before the first non-space character
    # at or after cmax: the search stops there instead of running on to the end of the block.
    after = _NOT_SPACE.search(text, max(cmax, 0), hi)
    stop = hi if after is None else after.start()
    # Blank lines are found by a plain search; the cut is where the whitespace before the blank line begins.
    for m in _BLANK_LINE.finditer(text, max(cmin - 1, 0), stop):
        p = m.start()
        while p > 0 and text[p - 1] in _SPACE:
            p -= 1
        if p > cmax:
            break
        if p >= cmin and p > 0 and (not out or out[-1] != p):
            out.append(p)
    return out


def ends_line(text: str, pos: int, hi: int) -> bool:
    """True if only spaces, tabs or ``\\r`` lie between ``pos`` and the next line break or ``hi``."""
    while pos < hi and text[pos] in " \t\r":
        pos += 1
    return pos >= hi or text[pos] == "\n"


def chunk_end(text: str, lo: int, hi: int, a: int, limit: int, bounds: Boundaries) -> int:
    """Where the chunk of ``text[lo:hi]`` that starts at ``a`` ends, at most ``limit`` (< ``hi``); -1 if no
    sentence end or paragraph break lies in ``(a, limit]``."""
    fill = a + (limit - a) // 2
    paragraphs = paragraph_cuts(text, fill, limit, hi)
    if paragraphs:
        return paragraphs[-1]
    c = bounds.last_cut(text, lo, hi, a, limit)
    if c >= fill and not ends_line(text, c, hi):
        # A sentence end at a line end in [fill, c]: test the end of each line, from the right, against the
        # sentence ends of [fill, c] (found by one scan when the first line end is met).
        ends: set[int] | None = None
        nl = text.rfind("\n", fill, c)
        while nl >= fill:
            p = nl
            while p > fill and text[p - 1] in _SPACE:
                p -= 1
            if p >= fill:
                if ends is None:
                    ends = set(bounds.cuts_between(text, lo, hi, fill, c))
                if p in ends:
                    return p
            nl = text.rfind("\n", fill, p)
    if c > 0:
        return c
    paragraphs = paragraph_cuts(text, a + 1, fill, hi)
    return paragraphs[-1] if paragraphs else -1


def is_runt(tokens: int, chars: int, max_tokens: int, max_chars: int) -> bool:
    """A piece under a quarter of both caps (``max_tokens`` and ``max_chars``) is a runt: small whichever cap
    binds (characters in Latin text, tokens in CJK)."""
    return 4 * tokens < max_tokens and 4 * chars < max_chars


def balanced_cut(text: str, lo: int, hi: int, a: int, ta: int, c: int, block: BlockTokens, bounds: Boundaries, *,
                 max_tokens: int, max_chars: int) -> int:
    """A cut for the last two chunks ``text[a:c]`` and ``text[c:hi]`` of a block whose second is a runt, moved to
    the preferred place nearest their middle where both fit (``max_chars``, ``max_tokens``) and neither is a
    runt; ``c`` if there is none."""
    tokens_before = block.tokens_before
    t_hi = tokens_before(hi)
    mid = (a + hi) // 2

    def fits(x: int) -> bool:
        left, right = tokens_before(x) - ta, t_hi - tokens_before(x)
        return (x - a <= max_chars and hi - x <= max_chars and left <= max_tokens and right <= max_tokens
                and not is_runt(left, x - a, max_tokens, max_chars)
                and not is_runt(right, hi - x, max_tokens, max_chars))

    window_lo, window_hi = a + (hi - a) // 4, hi - (hi - a) // 4
    sentences = bounds.cuts_between(text, lo, hi, window_lo, window_hi)
    tiers = (
        paragraph_cuts(text, window_lo, window_hi, hi),
        [x for x in sentences if ends_line(text, x, hi)],
        sentences,
    )
    for tier in tiers:
        good = [x for x in tier if fits(x)]
        if good:
            return min(good, key=lambda x: (abs(x - mid), x))
    return c
