"""Span primitives shared by the text splitters.

A *span* is a half-open pair ``(start, end)`` of character offsets (code points) into the source text. Splitters
work on spans and slice the text once at the end, so every offset they report comes from this bookkeeping and is
never recovered by searching the text.

Steps (docs/splitters.md#charactertextsplitter):
1. :func:`separator_pieces` cuts a span at the matches of a separator regex, attaching each verbatim match to the
   following piece, the preceding piece, or to neither (``keep``).
2. :func:`cut_to_fit` cuts an oversized span into the longest prefixes that fit, at the last whitespace within the
   cap when there is one, else at a character boundary.
3. :func:`strip_span` narrows a span to its non-whitespace extent.
"""

from __future__ import annotations

import re
from typing import Callable, Literal

__all__ = [
    "Keep",
    "Span",
    "compile_separator",
    "cut_to_fit",
    "normalize_keep",
    "separator_pieces",
    "strip_span",
]

Span = tuple[int, int]
#: Where a separator match goes: glued to the following piece, to the preceding one, to neither, or ``"auto"``: to
#: the preceding piece when the match is sentence punctuation (:data:`SENTENCE_PUNCTUATION`), else to the following.
Keep = Literal["start", "end", "none", "auto"]

#: Characters that close a sentence: a separator match made only of these (and whitespace) ends the piece before it
#: with ``keep_separator=True``.
SENTENCE_PUNCTUATION = frozenset(".!?。！？;…")


def normalize_keep(keep_separator: bool | str) -> Keep:
    """Map LangChain's ``keep_separator`` values to a :data:`Keep`: ``True`` → ``"auto"``, ``"start"``, ``"end"``,
    ``False`` → ``"none"``.

    Raises:
        ValueError: any other value.
    """
    if keep_separator is True:
        return "auto"
    if keep_separator == "start":
        return "start"
    if keep_separator is False or keep_separator is None:
        return "none"
    if keep_separator == "end":
        return "end"
    raise ValueError(f"keep_separator must be True, False, 'start' or 'end', got {keep_separator!r}")


def compile_separator(separator: str, is_regex: bool) -> re.Pattern[str]:
    """Compile *separator*; a literal separator is ``re.escape``d first. Capture groups are harmless: only the
    whole match (group 0) is ever used.

    Raises:
        re.error: *separator* is not a valid regular expression.
    """
    return re.compile(separator if is_regex else re.escape(separator))


def separator_pieces(
    text: str,
    pattern: re.Pattern[str],
    start: int,
    end: int,
    keep: Keep,
    allowed: Callable[[int], bool] | None = None,
) -> list[Span]:
    """Cut ``text[start:end]`` at the matches of *pattern*.

    Args:
        text: the whole source text.
        pattern: the separator; zero-width matches (lookarounds, ``""``) cut without consuming text.
        start, end: the span to cut, in characters of *text*.
        keep: ``"start"`` glues each match to the front of the following piece, ``"end"`` to the end of the
            preceding piece, ``"none"`` leaves it outside both pieces, ``"auto"`` acts as ``"end"`` for a match of
            sentence punctuation (``". "``, ``"。"``) and as ``"start"`` for any other (newlines, code keywords).
        allowed: optional filter on a match's absolute start offset; matches it rejects are ignored.

    Returns:
        Non-empty spans, in order, inside ``[start, end)``. Example: ``"a, b"`` cut at ``", "`` with
        ``keep="end"`` gives ``[(0, 3), (3, 4)]`` (``"a, "`` and ``"b"``).
    """
    sub = text[start:end]
    pieces: list[Span] = []
    begin = 0  # offset in *sub* where the next piece begins
    for match in pattern.finditer(sub):
        m_start, m_end = match.span()
        if allowed is not None and not allowed(start + m_start):
            continue
        mode = keep
        if keep == "auto":
            mode = "end" if m_end > m_start and _is_punctuation(match.group()) else "start"
        if mode == "start":
            piece, begin_next = (begin, m_start), m_start
        elif mode == "end":
            piece, begin_next = (begin, m_end), m_end
        else:
            piece, begin_next = (begin, m_start), m_end
        if piece[1] > piece[0]:
            pieces.append((start + piece[0], start + piece[1]))
        begin = max(begin, begin_next)
    if len(sub) > begin:
        pieces.append((start + begin, end))
    return pieces


def _is_punctuation(separator: str) -> bool:
    stripped = separator.strip()
    return bool(stripped) and all(char in SENTENCE_PUNCTUATION for char in stripped)


def has_match(
    text: str, pattern: re.Pattern[str], start: int, end: int, allowed: Callable[[int], bool] | None = None
) -> bool:
    """Whether *pattern* matches anywhere in ``text[start:end]`` (subject to *allowed*, as above)."""
    sub = text[start:end]
    if allowed is None:
        return pattern.search(sub) is not None
    return any(allowed(start + m.start()) for m in pattern.finditer(sub))


def cut_to_fit(text: str, start: int, end: int, measure: Callable[[str], int], limit: int) -> list[Span]:
    """Cut ``text[start:end]`` into the longest prefixes whose *measure* is ≤ *limit*, at whitespace when possible.

    Each cut end is the largest end found by binary search on the prefix length. When that end falls inside a
    word (no whitespace on either side) and the prefix holds whitespace after its first character, the cut moves
    back to just after the last whitespace run: ``"orange and tomato"`` at 10 → ``"orange and"``, ``" tomato"``
    (not ``"orange an"``, ``"d tomato"``). A single character that alone measures more than *limit* (possible with
    token lengths) becomes a span of its own.

    Returns:
        Contiguous spans covering ``[start, end)``, in order.
    """
    spans: list[Span] = []
    pos = start
    while pos < end:
        if measure is len:
            cut = min(end, pos + limit)
        else:
            cut = _longest_fitting_prefix(text, pos, end, measure, limit)
        if cut < end and not text[cut].isspace() and not text[cut - 1].isspace():
            space = _last_space(text, pos + 1, cut)
            if space > pos:
                cut = space
        spans.append((pos, cut))
        pos = cut
    return spans


def _last_space(text: str, start: int, end: int) -> int:
    """The offset just after the last whitespace character of ``text[start:end]``, or -1 if it has none."""
    for index in range(end - 1, start - 1, -1):
        if text[index].isspace():
            return index + 1
    return -1


def _longest_fitting_prefix(text: str, pos: int, end: int, measure: Callable[[str], int], limit: int) -> int:
    """The largest ``cut`` in ``(pos, end]`` with ``measure(text[pos:cut]) <= limit`` (``pos + 1`` if none).

    The bracket is found by doubling a probe length (so a huge span costs about as much as the answer), then
    narrowed by binary search on the prefix length.
    """
    fits, step = pos, max(1, limit)
    while True:
        probe = min(end, pos + step)
        if measure(text[pos:probe]) > limit:
            break
        fits = probe
        if probe == end:
            return end
        step *= 2
    low, high = fits, probe - 1  # text[pos:low] fits (or is empty), text[pos:probe] does not
    while low < high:
        mid = (low + high + 1) // 2
        if measure(text[pos:mid]) <= limit:
            low = mid
        else:
            high = mid - 1
    return max(low, pos + 1)


def strip_span(text: str, start: int, end: int) -> Span | None:
    """Narrow ``[start, end)`` to exclude leading and trailing whitespace; ``None`` if nothing else is left."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if end > start else None
