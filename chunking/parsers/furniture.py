"""Page furniture: running headers, running footers and bare page numbers, recognised per document.

A line is furniture when, after every run of digits and every roman numeral is replaced by ``#`` and spaces
are collapsed, the same line sits among the first (or last) two lines of many pages of one document: at least
``MIN_PAGES`` pages and ``MIN_SHARE`` of the pages that hold text. ``Auto Multiple Choice 12 / 92`` and
``Auto Multiple Choice iii`` both become ``Auto Multiple Choice #``, a key that repeats on every page; a
bare page number becomes ``#``. A key needs a letter unless it is a bare number, so a repeated ``}`` at the top
of code listings is never taken for furniture. The title page's ``Auto Multiple Choice`` (no number) has a key
of its own and stays text.

Furniture is cut from the top and bottom of the page text and kept beside it (``Page.header``,
``Page.footer``); the page keeps its number, so citations stay right. Offsets keep counting the furniture:
the document text is every page's ``header + text + footer`` in order, and ``Page.offset`` is where ``text``
starts, so the furniture lies in the gaps between pages that the splitters never see
(docs/splitters.md#page-furniture).

A table-of-contents page is furniture as a whole: a page on which at least ``TOC_MIN_ENTRIES`` lines, and at
least ``TOC_MIN_SHARE`` of its non-blank lines, are entries (a title, a dot leader of three or more dots or two
ellipses, a page number: ``2.1 Operating system . . . . . 1``). Its text moves to ``Page.header`` and its body is empty, so
it is never indexed: its entries repeat the headings of the body, which are indexed with their text, and a
page of nothing but headings matches almost any query better than the answer it points to
(docs/splitters.md#page-furniture says why it is dropped rather than demoted). A few entries on a body page stay
text (their dot leaders are no sentence ends).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["FurnitureKeys", "MIN_PAGES", "MIN_SHARE", "TOC_MIN_ENTRIES", "TOC_MIN_SHARE", "PageParts",
           "cut_furniture", "edge_keys", "is_toc_page", "learn_furniture", "split_furniture"]

#: A key must repeat on at least this many pages...
MIN_PAGES = 3
#: ...and on at least this share of the pages that hold text.
MIN_SHARE = 0.25
#: Only this many lines at each end of a page are looked at.
EDGE_LINES = 2
#: A line longer than this is body text, whatever repeats.
MAX_LINE_CHARS = 120

#: A table-of-contents page has at least this many entries...
TOC_MIN_ENTRIES = 5
#: ...making up at least this share of its non-blank lines.
TOC_MIN_SHARE = 0.5

# A dot leader (three or more dots or middle dots, spaced or not, or two or more ellipses) then a page number,
# at the end of the line.
_TOC_ENTRY = re.compile(r"(?:(?:[.\u00b7\u30fb\u2024][ \t\u00a0]?){3,}|(?:\u2026[ \t\u00a0]?){2,})"
                        r"[ \t\u00a0]*(?:\d+|[ivxlcdm]+)[ \t]*$", re.I)
_DIGITS = re.compile(r"\d+")
_ROMAN = re.compile(r"\b(?=[ivxlcdm]+\b)m{0,4}(?:cm|cd|d?c{0,3})(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3})\b", re.I)
_SPACES = re.compile(r"\s+")
_NUMBER_RUN = re.compile(r"#(?:[^\w#]*#)+")  # "# / #", "#-#": one number, as "12 / 92" and "iv" must match
_NUMBER_KEY = re.compile(r"[\W_]*#[\W_]*")  # "#", "- # -", "[#]", "Page #" is caught by the letter rule


@dataclass(frozen=True, slots=True)
class PageParts:
    """One page's text cut in three: ``header + body + footer`` is the page text."""

    header: str
    body: str
    footer: str


def line_key(line: str) -> str | None:
    """The repeat key of one line, or None if the line can never be furniture.

    Example: ``"Auto Multiple Choice 12 / 92"`` and ``"Auto Multiple Choice iv"`` → ``"Auto Multiple Choice #"``;
    ``"xiv"`` and ``"- 7 -"`` → ``"#"`` and ``"- # -"``.
    """
    line = line.strip()
    if not line or len(line) > MAX_LINE_CHARS:
        return None
    key = _NUMBER_RUN.sub("#", _SPACES.sub(" ", _ROMAN.sub("#", _DIGITS.sub("#", line))))
    if _NUMBER_KEY.fullmatch(key) or any(ch.isalpha() for ch in key):
        return key
    return None


def split_furniture(texts: Sequence[str]) -> list[PageParts]:
    """Cut the running headers, footers and bare page numbers off each page of one document.

    Args:
        texts: the cleaned page texts (each ``""`` or lines ending in ``"\\n"``), in page order.

    Returns:
        One :class:`PageParts` per page, in order; ``header + body + footer == texts[i]``. At most
        ``EDGE_LINES`` lines are cut from each end, blank lines between them included; a page made only of
        furniture keeps an empty body, and so does a table-of-contents page (all of its text is ``header``).
    """
    keys = learn_furniture(edge_keys(text) for text in texts)
    return [cut_furniture(text, keys) for text in texts]


def is_toc_page(body: str) -> bool:
    """True if ``body`` is a table-of-contents page (see the module docstring): at least ``TOC_MIN_ENTRIES``
    lines ending in a dot leader and a page number, and at least ``TOC_MIN_SHARE`` of the non-blank lines."""
    lines = [line for line in body.splitlines() if line.strip()]
    entries = sum(1 for line in lines if _TOC_ENTRY.search(line))
    return entries >= TOC_MIN_ENTRIES and entries >= TOC_MIN_SHARE * len(lines)


@dataclass(frozen=True, slots=True)
class FurnitureKeys:
    """The repeat keys (``line_key``) that are furniture at the top and at the bottom of a document's pages."""

    top: frozenset[str] = frozenset()
    bottom: frozenset[str] = frozenset()


def edge_keys(text: str) -> tuple[frozenset[str], frozenset[str], bool]:
    """What one page contributes to ``learn_furniture``: the keys of its top and bottom ``EDGE_LINES`` lines, and
    whether it holds text. Small, so a streaming parser keeps these for every page instead of the texts."""
    page = text.splitlines(keepends=True)
    top = frozenset(k for k in (line_key(x) for x in _edge(page, False)) if k)
    bottom = frozenset(k for k in (line_key(x) for x in _edge(page, True)) if k)
    return top, bottom, bool(text.strip())


def learn_furniture(edges: Iterable[tuple[frozenset[str], frozenset[str], bool]]) -> FurnitureKeys:
    """The furniture keys of a document from its pages' ``edge_keys``: those at the same end of at least
    ``MIN_PAGES`` pages and ``MIN_SHARE`` of the pages that hold text."""
    top, bottom = Counter(), Counter()
    pages_with_text = 0
    for page_top, page_bottom, has_text in edges:
        top.update(page_top)
        bottom.update(page_bottom)
        pages_with_text += has_text
    need = max(MIN_PAGES, MIN_SHARE * pages_with_text)
    return FurnitureKeys(frozenset(k for k, n in top.items() if n >= need),
                         frozenset(k for k, n in bottom.items() if n >= need))


def cut_furniture(text: str, keys: FurnitureKeys) -> PageParts:
    """One page's text cut by the document's furniture *keys* (see ``split_furniture``); a table-of-contents
    page is furniture as a whole."""
    parts = _cut(text.splitlines(keepends=True), keys.top, keys.bottom) if keys.top or keys.bottom else \
        PageParts("", text, "")
    return PageParts(text, "", "") if is_toc_page(parts.body) else parts


def _edge(page: list[str], from_end: bool) -> list[str]:
    """The first (or last) ``EDGE_LINES`` non-blank lines of a page."""
    out: list[str] = []
    for line in reversed(page) if from_end else page:
        if line.strip():
            out.append(line)
            if len(out) == EDGE_LINES:
                break
    return out


def _cut(page: list[str], top_keys: frozenset[str], bottom_keys: frozenset[str]) -> PageParts:
    lo, hi = _cut_end(page, 0, len(page), top_keys, step=1), len(page)
    hi = _cut_end(page, lo, hi, bottom_keys, step=-1)
    if not "".join(page[lo:hi]).strip():
        # Nothing but furniture: all of it is header, the body stays empty.
        lo = hi = len(page)
    return PageParts("".join(page[:lo]), "".join(page[lo:hi]), "".join(page[hi:]))


def _cut_end(page: list[str], lo: int, hi: int, keys: frozenset[str], *, step: int) -> int:
    """Index after the furniture at the top (``step=1``, returns the new ``lo``) or before the furniture at
    the bottom (``step=-1``, returns the new ``hi``)."""
    cut, seen = (lo if step == 1 else hi), 0
    pos = lo if step == 1 else hi - 1
    while lo <= pos < hi and seen < EDGE_LINES:
        line = page[pos]
        if line.strip():
            seen += 1
            if line_key(line) not in keys:
                break
            cut = pos + 1 if step == 1 else pos
        pos += step
    return cut
