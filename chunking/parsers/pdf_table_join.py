"""Ruled PDF tables continued across a page break, joined into one table on the page where they start.

A table too long for its page goes on at the top of the next one, often with its header row drawn again.
Read page by page, it would be two tables, the second one's first row taken for a header. Document
Intelligence returns such a table as one table (bounding regions on both pages), which its renderer keeps
whole on the page where it starts (``chunking.parsers.docintel_render``); this module does the same for the
tables ``chunking.parsers.pdf_tables`` finds. A table on page *n* continues on page *n + 1* when:

* it is the last table of page *n* and reaches its bottom: at most ``EDGE_LINES`` lines of text below it (a
  page footer or number), in the lowest ``EDGE_SHARE`` of the page;
* the first table of page *n + 1* is at its top in the same way (at most a running header above it);
* both have the same column edges, within ``SAME_COLUMN_PT`` points (the same grid, drawn again).

The continuation's rows are added to the first table's body, without its first row when that row repeats the
first table's header row (same texts and spans); the text around it stays on its own page. A table running
over several pages is joined page after page as long as each continuation fills its page to the bottom.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from chunking.parsers.office import html_table

__all__ = ["EDGE_LINES", "EDGE_SHARE", "SAME_COLUMN_PT", "ContinuedTables", "PageLayout", "TableBlock"]

#: Lines of text (page footer, page number, running header) allowed between a table and its page's edge.
EDGE_LINES = 2
#: ...within this share of the page's height from that edge.
EDGE_SHARE = 0.2
#: Two tables' column edges further apart than this (points) are different grids.
SAME_COLUMN_PT = 2.0

Cell = tuple[str, int, int]  # text, rowspan, colspan


@dataclass(eq=False)
class TableBlock:
    """One table of a page: rows of cells (the first row the header row), the x of its grid's column edges,
    and its top and bottom (points from the page's top)."""

    rows: list[list[Cell]]
    columns: tuple[float, ...]
    top: float
    bottom: float


@dataclass(eq=False)
class PageLayout:
    """A page with tables, top to bottom: text bands (cleaned page text) and tables; its height in points."""

    height: float
    parts: list[str | TableBlock] = field(default_factory=list)

    def render(self) -> str:
        """The page text: each table as a ``<figure><table>`` block, parts on their own lines."""
        texts = (part if isinstance(part, str) else html_table(part.rows, header_rows=1) + "\n"
                 for part in self.parts)
        return "\n".join(text for text in texts if text.strip())


class ContinuedTables:
    """Joins continued tables over the pages with tables of one document, given in page order.

    ``add(index, layout)`` yields ``(page index, page text)`` for each page whose text is final; a page whose
    last table may go on is held until the next page says whether it does; ``finish()`` yields the page held.
    So texts come out of page order: the caller places each by its index.
    """

    def __init__(self) -> None:
        self._anchor: tuple[int, PageLayout, TableBlock] | None = None  # the page holding a table that may go on
        self._last = -1  # the last page index that table reached

    def add(self, index: int, layout: PageLayout) -> Iterator[tuple[int, str]]:
        head, tail = _head(layout), _tail(layout)
        if (self._anchor is not None and self._last == index - 1 and head is not None
                and _same_columns(self._anchor[2], head)):
            table = self._anchor[2]
            table.rows.extend(head.rows[1:] if head.rows[:1] == table.rows[:1] else head.rows)
            layout.parts = [part for part in layout.parts if part is not head]
            if tail is head:  # the table fills this page too: it may go on
                self._last = index
                yield index, layout.render()
                return
        yield from self.finish()
        if tail is not None:
            self._anchor, self._last = (index, layout, tail), index
        else:
            yield index, layout.render()

    def finish(self) -> Iterator[tuple[int, str]]:
        if self._anchor is not None:
            index, layout, _ = self._anchor
            self._anchor = None
            yield index, layout.render()


def _head(layout: PageLayout) -> TableBlock | None:
    """The page's first table when it starts at the top (module docstring)."""
    for position, part in enumerate(layout.parts):
        if isinstance(part, TableBlock):
            near = part.top <= EDGE_SHARE * layout.height
            return part if near and _lines(layout.parts[:position]) <= EDGE_LINES else None
    return None


def _tail(layout: PageLayout) -> TableBlock | None:
    """The page's last table when it reaches the bottom (module docstring)."""
    for position in range(len(layout.parts) - 1, -1, -1):
        part = layout.parts[position]
        if isinstance(part, TableBlock):
            near = layout.height - part.bottom <= EDGE_SHARE * layout.height
            return part if near and _lines(layout.parts[position + 1:]) <= EDGE_LINES else None
    return None


def _lines(parts: list[str | TableBlock]) -> int:
    return sum(1 for part in parts if isinstance(part, str) for line in part.splitlines() if line.strip())


def _same_columns(first: TableBlock, second: TableBlock) -> bool:
    return len(first.columns) == len(second.columns) and all(
        abs(a - b) <= SAME_COLUMN_PT for a, b in zip(first.columns, second.columns))
