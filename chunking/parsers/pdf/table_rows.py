"""Open table rows: a row of a ruled PDF table that the page break left without its rule at the page's edge.

A table broken by a page break ends its part of page *n* with the rule under its last whole row, and its part
of page *n + 1* starts with the rule above the next one; a row cut in two, or a row put whole at the top of
the next page by a writer that draws no rule there, is missing that outer rule. The column rules still run
past the grid's last (or first) row rule into the page margin, with the row's text between them, and
pdfplumber's lines strategy, which builds cells from four rules each, leaves that row out of the table: its
text would be loose text next to the table.

``open_row`` finds such a row from the vertical rules alone: at the grid's top (or bottom) edge, the rules at
the first and last column edges (within ``SAME_COLUMN_PT``) both run on beyond the row rule by at least
``OPEN_MIN_PT``; the row ends where the shorter of the two does, and its cells are cut at the inner column
edges whose rule reaches as far (a missing inner rule makes a cell span two columns). Whether the row holds
text, and how it joins the table's part on the other page, is decided by the callers
(``chunking.parsers.pdf.tables``, ``chunking.parsers.pdf.table_join``).
"""

from __future__ import annotations

from collections.abc import Sequence

from chunking.parsers.pdf.table_join import SAME_COLUMN_PT

__all__ = ["OPEN_MIN_PT", "Box", "open_row"]

#: Column rules must run at least this far (points) beyond the grid's outer row rule to hold an open row.
OPEN_MIN_PT = 4.0
_TOUCH_PT = 2.0  # a column rule this close to the row rule starts from it

Box = tuple[float, float, float, float]  # x0, top, x1, bottom: points from the page's top-left (pdfplumber's)


def open_row(columns: Sequence[float], edge: float, verticals: Sequence[tuple[float, float, float]], *,
             above: bool) -> tuple[list[tuple[Box, int, int]], float] | None:
    """The open row beyond a grid's top (*above*) or bottom row rule, or None (module docstring).

    Args:
        columns: x of the grid's column edges, left to right (points); edge: y of its first (*above*) or last
            row rule, points from the page's top; verticals: the page's vertical rules as ``(x, top, bottom)``.

    Returns:
        ``(cells, reach)``: the row's cells left to right as ``(box, rowspan 1, colspan)``, and the y where the
        row ends (its top when *above*, its bottom otherwise).

    Example: columns (10, 70, 110), edge 100, rules (10, 40, 300), (70, 40, 300), (110, 50, 300), above →
    ``([((10, 50, 70, 100), 1, 1), ((70, 50, 110, 100), 1, 1)], 50)``.
    """
    reaches = [_reach(x, edge, verticals, above) for x in columns]
    first, last = reaches[0], reaches[-1]
    if first is None or last is None:
        return None
    reach = max(first, last) if above else min(first, last)
    kept = [i for i, r in enumerate(reaches) if r is not None and (r <= reach + _TOUCH_PT if above
                                                                    else r >= reach - _TOUCH_PT)]
    top, bottom = (reach, edge) if above else (edge, reach)
    cells = [((columns[a], top, columns[b], bottom), 1, b - a) for a, b in zip(kept, kept[1:])]
    return cells, reach


def _reach(x: float, edge: float, verticals: Sequence[tuple[float, float, float]], above: bool) -> float | None:
    """How far the rules at column edge *x* that leave the row rule at *edge* run beyond it, or None."""
    ends = [top if above else bottom for vx, top, bottom in verticals
            if abs(vx - x) <= SAME_COLUMN_PT and top - _TOUCH_PT <= edge <= bottom + _TOUCH_PT
            and (top <= edge - OPEN_MIN_PT if above else bottom >= edge + OPEN_MIN_PT)]
    if not ends:
        return None
    return min(ends) if above else max(ends)
