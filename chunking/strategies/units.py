"""The document as the strategies see it: its text across pages (``DocumentText``) and its atomic units
(``Unit``: sentences, figure blocks, pieces of oversize sentences), with document offsets.

Units follow the sentence splitter (docs/splitters.md#the-steps): step 1 (``<figure>`` blocks are units of their own),
step 2 (a text block is cut after every sentence end, docs/splitters.md#sentence-end; a span with no letter or digit,
such as the dots of a table of contents' leader, stays with the sentence before it), step 4 (a sentence over the unit
cap is cut nearest its middle at a sentence end, word break, or hard), step 5 (a figure over ``max_figure_tokens``
becomes ``figure_part`` units, each a balanced figure). Every unit is stripped; whitespace is never a unit.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from chunking.model import Chunk, Page
from chunking.splitters.sentence.boundaries import Boundaries, figure_blocks
from chunking.splitters.sentence.config import SentenceSplitterConfig
from chunking.splitters.sentence.figures import split_figure
from chunking.splitters.sentence.oversize import cut_oversize, strip_range
from chunking.tokens import token_counter

__all__ = ["EMBEDDING_MAX_TOKENS", "DocumentText", "Unit", "sentence_spans", "sentence_units", "unit_runs"]

#: Per-input limit of the embedding models (text-embedding-3-*, ada-002), in tokens (Azure OpenAI quotas-limits).
EMBEDDING_MAX_TOKENS = 8191
# A blank line (two line breaks with only spaces between) starts a paragraph.
_BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*\n")
# Units carry no character cap of their own; this only keeps step 4's character test from binding.
_NO_CHAR_CAP = 10**9
# A letter or a digit of any script.
_WORDY = re.compile(r"[^\W_]")


@dataclass(frozen=True, slots=True)
class Unit:
    """One atomic piece of a document.

    Attributes:
        start, end: half-open document offsets of the (stripped) unit. For overlapping pieces of a hard-cut
            sentence the spans overlap by the step-4 overlap.
        tokens: exact tokens of ``text``.
        kind: ``"sentence"``, ``"figure"`` (a whole figure block) or ``"figure_part"`` (a piece of an oversize
            figure: ``text`` is re-wrapped, not a document slice).
        paragraph_start: a blank line (or the start of the document) comes before the unit.
        text: the unit's text.
    """

    start: int
    end: int
    tokens: int
    kind: str
    paragraph_start: bool
    text: str


class DocumentText:
    """The text of a document given as pages: slices by document offset, and the page of an offset.

    Pages follow ``Page``'s rules (increasing offsets, no overlap); characters in gaps between pages are not part
    of the text, so ``slice(a, b)`` is the concatenation of the page characters whose offset is in ``[a, b)``.
    """

    def __init__(self, pages: Iterable[Page]) -> None:
        self.pages = [p for p in pages if p.text]
        self._offsets = [p.offset for p in self.pages]

    @property
    def start(self) -> int:
        return self.pages[0].offset if self.pages else 0

    @property
    def end(self) -> int:
        return self.pages[-1].offset + len(self.pages[-1].text) if self.pages else 0

    def slice(self, start: int, end: int) -> str:
        """The document text of ``[start, end)``."""
        parts = []
        i = max(0, bisect_right(self._offsets, start) - 1)
        while i < len(self.pages) and self.pages[i].offset < end:
            page = self.pages[i]
            a, b = max(start, page.offset) - page.offset, min(end, page.offset + len(page.text)) - page.offset
            if b > a:
                parts.append(page.text[a:b])
            i += 1
        return "".join(parts)

    def page_at(self, offset: int) -> int:
        """``page_num`` of the page holding *offset* (the previous page for an offset in a gap)."""
        i = max(0, bisect_right(self._offsets, offset) - 1)
        return self.pages[i].page_num if self.pages else 0

    def sub_pages(self, start: int, end: int) -> list[Page]:
        """The pages cut to ``[start, end)``: what a splitter sees when it splits inside a parent's span."""
        out = []
        for page in self.pages:
            a, b = max(start, page.offset), min(end, page.offset + len(page.text))
            if b > a:
                out.append(Page(page.page_num, a, page.text[a - page.offset : b - page.offset]))
        return out

    def chunk(self, start: int, end: int, count: Callable[[str], int], *, kind: str = "text", text: str | None = None,
              metadata: dict[str, Any] | None = None, headings: tuple[str, ...] = ()) -> Chunk:
        """A ``Chunk`` of the verbatim slice ``[start, end)`` (or of *text* for non-verbatim parts) with its pages
        and exact token count."""
        body = self.slice(start, end) if text is None else text
        return Chunk(text=body, char_start=start, char_end=end, page_start=self.page_at(start),
                     page_end=self.page_at(max(start, end - 1)), token_count=count(body),
                     kind=kind, headings=headings, metadata=dict(metadata or {}))  # type: ignore[arg-type]


def sentence_units(
    pages: Iterable[Page],
    *,
    max_unit_tokens: int,
    count: Callable[[str], int] | None = None,
    max_figure_tokens: int = EMBEDDING_MAX_TOKENS,
    overlap_percent: float = 10.0,
) -> list[Unit]:
    """The units of a document, in order (module docstring).

    Args:
        pages: the parsed pages.
        max_unit_tokens: a sentence over this many tokens is cut by step 4 (≥ 1).
        count: exact token counter (default ``cl100k_base``).
        max_figure_tokens: a figure over this many tokens is split by step 5 (≤ 8191).
        overlap_percent: step 4's overlap at hard cuts, in percent of the sentence (0 for none).

    Returns:
        units with increasing ``start``; every non-whitespace character of the pages lies in at least one unit.
    """
    count = count or token_counter("cl100k_base")
    bounds = Boundaries(SentenceSplitterConfig())
    units: list[Unit] = []
    gap = "\n\n"  # the document start counts as a paragraph start

    def add(start: int, end: int, tokens: int, kind: str, text: str) -> None:
        nonlocal gap
        units.append(Unit(start, end, tokens, kind, bool(_BLANK_LINE.search(gap)), text))
        gap = ""

    for page in pages:
        text = page.text or ""
        pos = 0
        blocks = figure_blocks(text) + [(len(text), len(text))]
        for fig_start, fig_end in blocks:
            for a, b in sentence_spans(text, pos, fig_start, bounds):
                s, e = strip_range(text, a, b)
                gap += text[a:s]
                if s == e:
                    continue
                tokens = count(text[s:e])
                if tokens <= max_unit_tokens:
                    add(page.offset + s, page.offset + e, tokens, "sentence", text[s:e])
                else:
                    pieces = cut_oversize(text, s, e, max_tokens=max_unit_tokens, hard_chars=_NO_CHAR_CAP,
                                          overlap_fraction=overlap_percent / 100, boundaries=bounds, count=count)
                    for piece in pieces:
                        add(page.offset + piece.start, page.offset + piece.end, piece.tokens, "sentence",
                            text[piece.start : piece.end])
                gap = text[e:b]
            if fig_end > fig_start:
                figure = text[fig_start:fig_end]
                tokens = count(figure)
                if tokens <= max_figure_tokens:
                    add(page.offset + fig_start, page.offset + fig_end, tokens, "figure", figure)
                else:
                    for part in split_figure(text, fig_start, fig_end, budget=max_figure_tokens, boundaries=bounds,
                                             count=count):
                        add(page.offset + part.start, page.offset + part.end, part.tokens, "figure_part", part.text)
            pos = fig_end
    return units


def unit_runs(units: Sequence[Unit]) -> list[Unit | list[Unit]]:
    """*units* in order, consecutive units other than ``figure_part`` gathered in lists: a ``figure_part`` is a
    chunk of its own, and no group of sentences spans it."""
    out: list[Unit | list[Unit]] = []
    for unit in units:
        if unit.kind == "figure_part":
            out.append(unit)
        elif out and isinstance(out[-1], list):
            out[-1].append(unit)
        else:
            out.append([unit])
    return out


def sentence_spans(text: str, lo: int, hi: int, bounds: Boundaries) -> list[tuple[int, int]]:
    """Step 2's spans of ``text[lo:hi]``, a span without any letter or digit (a dot leader ``" ."``, a stray
    symbol) joined to the span before it: a unit says something."""
    if hi <= lo:
        return []
    spans: list[tuple[int, int]] = []
    cuts = bounds.sentence_cuts(text, lo, hi)
    for a, b in zip([lo, *cuts], [*cuts, hi]):
        if spans and not _WORDY.search(text, a, b):
            spans[-1] = (spans[-1][0], b)
        else:
            spans.append((a, b))
    return spans

