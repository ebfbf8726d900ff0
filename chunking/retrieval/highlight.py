"""The passage of a hit that matches the query, with the query's words marked, for people reading search results.

Query terms are the offline embedder's words of the query (stop words dropped; a CJK run gives its character
bigrams). A term matches a word of the text with the same stem, the stem being the word less one common
inflection suffix (``-ing``, ``-ed``, ``-s``, ``-es``, ``-er(s)``, ``-ion(s)``, ``-ation(s)``; three characters
kept at least): ``printing`` also marks ``printed`` and ``prints``, ``exams`` does not mark ``example``. It is a
rough stand-in for the index's Porter stemmer, for display only. CJK bigrams match as substrings. The passage is the window of the text that holds the most distinct terms (the earliest on ties).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from chunking.embeddings.offline import CJK_RUN, content_words

__all__ = ["Highlight", "highlight"]

_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Highlight:
    """A passage of a text: ``text`` (white space collapsed, ``…`` where it was cut) and the ``(start, end)``
    offsets of the matched words within it."""

    text: str
    marks: tuple[tuple[int, int], ...]

    def render(self, before: str = "**", after: str = "**") -> str:
        """The passage with each match wrapped in *before* and *after* (``"\\x1b[1m"``, ``"\\x1b[0m"`` for bold)."""
        out, pos = [], 0
        for start, end in self.marks:
            out += [self.text[pos:start], before, self.text[start:end], after]
            pos = end
        out.append(self.text[pos:])
        return "".join(out)


_SUFFIXES = ("ations", "ation", "ings", "ing", "ions", "ion", "ers", "er", "ed", "es", "s")


def _stem(word: str) -> str:
    return next((word[: -len(s)] for s in _SUFFIXES if word.endswith(s) and len(word) - len(s) >= 3), word)


def _same_word(word: str, term: str) -> bool:
    return word == term or _stem(word) == _stem(term)


def _matches(text: str, terms: list[str]) -> list[tuple[int, int, str]]:
    lowered = text.lower()
    found: list[tuple[int, int, str]] = []
    latin = [t for t in terms if not CJK_RUN.search(t)]
    for word in _WORD.finditer(lowered):
        for term in latin:
            if _same_word(word.group(), term):
                found.append((word.start(), word.end(), term))
                break
    for term in (t for t in terms if CJK_RUN.search(t)):
        start = lowered.find(term)
        while start >= 0:
            found.append((start, start + len(term), term))
            start = lowered.find(term, start + 1)
    found.sort()
    merged: list[tuple[int, int, str]] = []
    for start, end, term in found:  # overlapping CJK bigrams become one mark
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]), merged[-1][2])
        else:
            merged.append((start, end, term))
    return merged


def highlight(text: str, query: str, width_chars: int = 300) -> Highlight:
    """The passage of *text* of about *width_chars* characters holding the most distinct query terms of *query*.

    Returns:
        the passage (the start of the text when nothing matches) with its marks; ``width_chars`` ≥ 1.
    """
    flat = " ".join(text.split())
    terms = list(dict.fromkeys(content_words(query)))
    found = _matches(flat, terms)
    start, end = 0, min(len(flat), width_chars)
    if found and len(flat) > width_chars:
        best, first = -1, 0
        for i, (at, _, _) in enumerate(found):
            window = {term for s, e, term in found[i:] if e <= at + width_chars}
            if len(window) > best:
                best, first = len(window), at
        # Open the passage a little before its first match, at a word boundary, so it reads as a sentence.
        start = max(0, first - width_chars // 5)
        while 0 < start < len(flat) and not flat[start - 1].isspace():
            start -= 1
        end = min(len(flat), first + width_chars)
    while end < len(flat) and not flat[end].isspace() and end - start < width_chars + 80:
        end += 1
    prefix = "…" if start > 0 else ""
    suffix = "…" if end < len(flat) else ""
    marks = tuple((s - start + len(prefix), e - start + len(prefix)) for s, e, _ in found if s >= start and e <= end)
    return Highlight(prefix + flat[start:end] + suffix, marks)
