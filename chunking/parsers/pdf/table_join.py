"""Ruled PDF tables continued across a page break, joined into one table on the page where they start.

A table too long for its page goes on at the top of the next one, often with its header row drawn again.
Read page by page, it would be two tables, the second one's first row taken for a header. Document
Intelligence returns such a table as one table (bounding regions on both pages), which its renderer keeps
whole on the page where it starts (``chunking.parsers.docintel.render``); this module does the same for the
tables ``chunking.parsers.pdf.tables`` finds. A table on page *n* continues on page *n + 1* when:

* it is the last table of page *n* and reaches its bottom: at most ``EDGE_LINES`` lines of text below it (a
  page footer or number), in the lowest ``EDGE_SHARE`` of the page;
* the first table of page *n + 1* is at its top in the same way (at most a running header above it);
* both have the same column edges, within ``SAME_COLUMN_PT`` points (the same grid, drawn again).

The continuation's rows are added to the first table's body, without its first row when that row repeats the
first table's header row (same texts and spans); the text around it stays on its own page. A table running
over several pages is joined page after page as long as each continuation fills its page to the bottom.

A row the page break cut in two has no rule at the break: its part on page *n* is the table's last row, open
at the bottom, and its part on page *n + 1* the continuation's first row, open at the top
(``chunking.parsers.pdf.table_rows`` finds such rows). When both are open and have the same cells (spans), they
are one row: each cell's two texts joined with a space, as the cell's own lines are. An open row with no open
row facing it on the other page (a writer that draws no rule at the top of a continuation) is a row of its own.
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
    its top and bottom (points from the page's top), and whether its first (last) row is open: without the
    rule above (below) it, a row the page break may have cut (module docstring)."""

    rows: list[list[Cell]]
    columns: tuple[float, ...]
    top: float
    bottom: float
    open_top: bool = False
    open_bottom: bool = False


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
            rows = head.rows
            whole = _whole_row(table.rows[-1], rows[0]) if table.open_bottom and head.open_top else None
            if whole is not None:  # the two parts of a cut row
                table.rows[-1], rows = whole, rows[1:]
            elif not head.open_top and rows[:1] == table.rows[:1]:  # the header row drawn again
                rows = rows[1:]
            table.rows.extend(rows)
            table.open_bottom = head.open_bottom
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

    @property
    def reached(self) -> int | None:
        """The last page index the table that may go on reaches, or None when no table is held."""
        return None if self._anchor is None else self._last

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


def _whole_row(first: list[Cell], second: list[Cell]) -> list[Cell] | None:
    """The two parts of a cut row as one, cell by cell, or None when their cells differ in number or spans."""
    if [cell[1:] for cell in first] != [cell[1:] for cell in second]:
        return None
    return [(" ".join(text for text in (a, b) if text), rowspan, colspan)
            for (a, rowspan, colspan), (b, _, _) in zip(first, second)]
