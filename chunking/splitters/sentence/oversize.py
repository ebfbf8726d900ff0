"""Step 4 of the sentence splitter: cut one span that is over the caps into pieces that fit
(docs/splitters.md#step-4-oversize-span).

After azure-search-openai-demo's ``SentenceTextSplitter`` (recursive cut at the sentence end or word break
nearest the middle, else at the midpoint with an overlap), with our fixes
(docs/splitters.md#departures-from-azure-search-openai-demo): the overlap is added once,
between final leaves at hard cuts only, from a per-span budget (R6), and every piece also fits the
hard character cap (R5).

Phase A cuts recursively: a stripped piece that fits (``tokens ≤ max_tokens`` and ``len ≤ hard_chars``) is a
leaf; otherwise the sentence end nearest the middle (within the middle third) is cut after, else the nearest
paragraph break, line break, word break or (text without whitespace) weak break, else the midpoint (a hard cut,
never before a combining mark). Phase B extends the two leaves of every hard cut towards each other by at most
``o`` characters each, while they still fit.
"""

from __future__ import annotations

import re
from typing import Callable, NamedTuple

from .boundaries import Boundaries, is_combining, nearest_match
from .cuts import paragraph_cuts

__all__ = ["Piece", "cut_oversize", "strip_range"]

_NATURAL, _HARD, _WEAK = 1, 2, 3  # kinds of cut (and of the stack's junction markers)
# Where text without whitespace (identifiers, paths, URLs) may still be cut before a hard cut: after these.
_WEAK_BREAK = re.compile(r"[./\-_=|,;]")
_LAST_WEAK_BREAK = re.compile(r"(?s:.*)[./\-_=|,;]")


class Piece(NamedTuple):
    """One piece of an oversize span: ``text[start:end]`` (stripped, character indices), its exact token
    count, and whether the cut before it was a hard (midpoint) cut."""

    start: int
    end: int
    tokens: int
    hard_left: bool  # the cut before it was hard or weak: no look-ahead across it


def strip_range(text: str, start: int, end: int) -> tuple[int, int]:
    """``[start, end)`` without its leading and trailing whitespace (possibly empty: ``start == end``)."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _nearest(candidates: list[int], mid: int, reach: int) -> int:
    """The candidate index closest to ``mid`` (left wins a tie) with ``|i - mid| < reach``, or -1."""
    best, best_key = -1, None
    for i in candidates:
        d = abs(i - mid)
        if d < reach:
            key = (d, i)
            if best_key is None or key < best_key:
                best, best_key = i, key
    return best


def cut_oversize(
    text: str,
    start: int,
    end: int,
    *,
    max_tokens: int,
    hard_chars: int,
    overlap_fraction: float,
    boundaries: Boundaries,
    count: Callable[[str], int],
    count_range: Callable[[int, int, int], int | None] | None = None,
) -> list[Piece]:
    """Cut ``text[start:end]`` (one span, no figure) into pieces that fit the caps
    (docs/splitters.md#step-4-oversize-span).

    Args:
        text: the text holding the span; start, end: the span's character range (may carry whitespace).
        max_tokens: token cap of a piece; hard_chars: character cap of a piece.
        overlap_fraction: ``split_overlap_percent / 100``, the overlap budget at hard cuts.
        boundaries: sentence-end and word-break predicates; count: exact token counter.
        count_range: optional ``(lo, hi, limit) -> tokens of text[lo:hi], or None if over limit``, which may
            stop counting past ``limit`` or reuse tokens already known; it answers the many "does this range
            fit?" questions of the recursive cut, so a long span costs about ``max_tokens`` tokens of counting
            per question instead of its whole length.
    Returns:
        Pieces in text order, stripped, never empty. A single character over ``max_tokens`` cannot be cut and
        is returned as it is.
    """
    known: dict[tuple[int, int], int | None] = {}  # exact count, or None: over max_tokens
    if count_range is None:
        def count_range(lo: int, hi: int, limit: int) -> int | None:
            n = count(text[lo:hi])
            return n if n <= limit else None

    def fits(lo: int, hi: int) -> bool:
        if hi - lo > hard_chars:
            return False
        key = (lo, hi)
        if key not in known:
            known[key] = count_range(lo, hi, max_tokens)
        return known[key] is not None

    hard_cuts = 0
    leaves: list[tuple[int, int]] = []
    hard_after: list[bool] = []  # hard_after[i]: the junction between leaves[i] and leaves[i + 1] is hard
    weak_after: list[bool] = []  # ... or was cut at a weak break: no look-ahead across it, no overlap either

    # An explicit stack instead of recursion: unpunctuated text can be cut hundreds of levels deep.
    # Items are ranges to cut, or markers for the junction between a left and a right part.
    stack: list[tuple[int, int, int]] = [(start, end, 0)]
    pending_junction: list[int] = []
    while stack:
        lo, hi, marker = stack.pop()
        if marker:
            pending_junction.append(marker)
            continue
        lo, hi = strip_range(text, lo, hi)
        if lo >= hi:
            continue
        n = hi - lo
        if n == 1 or fits(lo, hi):
            if leaves:
                # The junction is hard if any cut between the previous leaf and this one was hard.
                hard_after.append(_HARD in pending_junction)
                weak_after.append(_WEAK in pending_junction)
            pending_junction.clear()
            leaves.append((lo, hi))
            continue
        cut, kind = _find_cut(text, lo, hi, boundaries)
        hard_cuts += kind == _HARD
        # Right part is pushed first so the left is handled first; the marker sits between them.
        stack.append((cut, hi, 0))
        stack.append((0, 0, kind))
        stack.append((lo, cut, 0))

    if not leaves:
        return []
    if hard_cuts and overlap_fraction > 0:
        starts, ends, hard_left = _overlap_hard_cuts(text, leaves, hard_after, end - start, hard_cuts,
                                                     overlap_fraction, fits)
    else:
        starts, ends = [s for s, _ in leaves], [e for _, e in leaves]
        hard_left = [False] + hard_after
    hard_left = [h or (i > 0 and weak_after[i - 1]) for i, h in enumerate(hard_left)]
    pieces = []
    for s, e, hard in zip(starts, ends, hard_left):
        s, e = strip_range(text, s, e)
        if s < e:
            t = known.get((s, e))
            pieces.append(Piece(s, e, count(text[s:e]) if t is None else t, hard))
    return pieces


def _find_cut(text: str, lo: int, hi: int, boundaries: Boundaries) -> tuple[int, int]:
    """Return the cut position in ``(lo, hi)`` and its kind, ``_NATURAL``, ``_WEAK`` or ``_HARD`` (phase A).

    Natural cuts in order of preference, each the one nearest the middle within the middle third: a sentence
    end, a paragraph break, a line break, a word break, and in text without whitespace a weak break (after
    ``.`` ``/`` ``-`` ``_`` ``=`` ``|`` ``,`` ``;``); else the midpoint (hard).
    """
    n = hi - lo
    mid = n // 2
    if n >= 4:
        reach = mid - n // 3
        window_lo, window_hi = lo + mid - reach + 1, min(hi, lo + mid + reach)
        if reach > 0:
            # Sentence ends are evaluated on the piece itself, not on the whole text; only those in the window
            # are looked for (a long span is not scanned whole at every level of the cut).
            ends = [c - 1 - lo for c in boundaries.cuts_between(text, lo, hi, window_lo + 1, window_hi)]
            i = _nearest(ends, mid, reach)
            if i < 0:
                paragraphs = [c - 1 - lo for c in paragraph_cuts(text, window_lo + 1, window_hi, hi)]
                i = _nearest(paragraphs, mid, reach)
            if i < 0:
                i = _nearest_char(text, "\n", lo, mid, window_lo, window_hi)
            if i < 0:
                b = boundaries.nearest_word_break(text, window_lo, lo + mid, window_hi)
                i = b - lo if b >= 0 else -1
            if i >= 0:
                return lo + i + 1, _NATURAL
            b = _nearest_weak_break(text, window_lo, lo + mid, window_hi)
            if b >= 0:
                # Inside an identifier or a path: no look-ahead across it, like a hard cut, but no overlap.
                return b + 1, _WEAK
    h = mid
    while h > 1 and is_combining(text[lo + h]):
        h -= 1
    return lo + max(h, 1), _HARD


def _nearest_char(text: str, ch: str, lo: int, mid: int, window_lo: int, window_hi: int) -> int:
    """Offset from ``lo`` of the ``ch`` in ``text[window_lo:window_hi]`` nearest ``lo + mid`` (left on a tie),
    or -1; only the nearest one on each side is looked at."""
    left = text.rfind(ch, window_lo, lo + mid + 1)
    right = text.find(ch, lo + mid + 1, window_hi)
    if left < 0 and right < 0:
        return -1
    if right < 0 or (left >= 0 and lo + mid - left <= right - lo - mid):
        return left - lo
    return right - lo


def _nearest_weak_break(text: str, window_lo: int, mid: int, window_hi: int) -> int:
    """Index of the weak break character (``.`` ``/`` ``-`` ``_`` ``=`` ``|`` ``,`` ``;``) in
    ``text[window_lo:window_hi]`` nearest ``mid`` (left on a tie), or -1."""
    return nearest_match(_WEAK_BREAK, _LAST_WEAK_BREAK, text, window_lo, mid, window_hi)


def _overlap_hard_cuts(text, leaves, hard_after, span_len, hard_cuts, fraction, fits):
    """Phase B: extend both leaves of each hard cut by at most ``o`` characters while they still fit.

    Returns the pieces' start and end positions and, per piece, whether a hard cut precedes it.
    """
    budget = int(fraction * span_len / hard_cuts)
    starts = [s for s, _ in leaves]
    ends = [e for _, e in leaves]
    hard_left = [False] * len(leaves)
    for i, hard in enumerate(hard_after):
        if not hard:
            continue
        (a_lo, a_hi), (b_lo, b_hi) = leaves[i], leaves[i + 1]
        o = min(budget, int(2 * fraction * min(a_hi - a_lo, b_hi - b_lo)))
        hard_left[i + 1] = True
        # A (already carrying its left extension) grows right into B, longest first.
        a_start = starts[i]
        r = _longest_fitting(o, lambda r: fits(*strip_range(text, a_start, b_lo + r)))
        if r:
            ends[i] = strip_range(text, a_start, b_lo + r)[1]
        # B grows left into the original A.
        ext = _longest_fitting(o, lambda ext: fits(*strip_range(text, a_hi - ext, b_hi)))
        if ext:
            starts[i + 1] = strip_range(text, a_hi - ext, b_hi)[0]
    return starts, ends, hard_left


def _longest_fitting(o: int, fits_at: Callable[[int], bool]) -> int:
    """The longest extension ``r`` in ``1..o`` with ``fits_at(r)``, or 0 if none is found.

    Tries ``o``, then 1 (a piece already at the cap takes nothing: two counts), then gallops up from 1 (2, 4, 8,
    …) to the first length that does not fit and bisects between it and the last that did. With counts that
    grow with the extension this is the longest fitting one, found in about ``2 log2(o)`` counts instead of up
    to ``o``; a BPE count need not grow with every character, so where it dips the answer may differ from the
    longest (docs/splitters.md#step-4-oversize-span).
    """
    if o < 1:
        return 0
    if fits_at(o):
        return o
    if o == 1 or not fits_at(1):
        return 0
    good, bad, step = 1, o, 1
    while good + step < bad:
        if not fits_at(good + step):
            bad = good + step
            break
        good, step = good + step, step * 2
    while bad - good > 1:
        mid = (good + bad) // 2
        if fits_at(mid):
            good = mid
        else:
            bad = mid
    return good
