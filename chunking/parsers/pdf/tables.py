"""Ruled tables in text PDFs: found by pdfplumber (MIT), read by PDFium, rendered as ``<figure><table>``.

Why both libraries (figures from ``benchmarks/pdf_tables.py``, in docs/parsers.md#tables-in-pdfs): pdfplumber's
table finder (intersections of ruling lines → cells → tables) is the well-kept implementation, but it parses the
page with pdfminer at about 0.5 s a page, 100 times PDFium's text extraction; run on every page it would make a
100-page manual take 50 s. PDFium alone has no table model: its geometry only says where lines are. So
PDFium's geometry is the gate and pdfplumber runs only on pages that pass it:

  * **Gate** (``has_grid``): the page's path objects are read as rules (thin horizontal or vertical paths, and
    the four edges of stroked rectangles), collinear rules that touch are joined (a table drawn cell by cell
    has row rules in pieces), and a page passes when a vertical rule meets a horizontal rule more than
    ``_INTERIOR_PT`` points inside the horizontal rule's ends, which is where a column separator meets a row
    rule. The frames of code listings (and any box) have vertical rules only at their ends, so they do not pass.
  * **Tables**: pdfplumber's table finder (lines strategy) on the pages that pass; a table is kept when its
    grid has at least 2 rows and 2 columns and 2 cells with text. The finder works on the page's edges as PDFium
    reads its paths (``chunking.parsers.pdf.paths``): the same edges pdfplumber gets from pdfminer, without
    interpreting the page's content stream in Python, which was most of its time.
  * **Text**: every cell's text, and the text above, between and below the tables (full-width bands), is read
    by PDFium (``get_text_bounded``) and cleaned like the rest of the page, so a page reads the same whether or
    not it holds a table. Cells covering several grid columns or rows get ``colspan``/``rowspan``; the first row
    is the header row (``<thead>``). A table continued at the top of the next page is joined to it
    (``chunking.parsers.pdf.table_join``).
  * **Open rows**: at the top of a page's first table and the bottom of its last one, a row whose outer rule
    is missing (the page break cut it, or the writer drew no rule there) is found from the column rules running
    on past the grid (``chunking.parsers.pdf.table_rows``) and read as the table's first (last) row when it
    holds text, so its text does not stay loose beside the table and a cut row's parts can be joined.

Pages are read in windows (``PdfTables.add``): a table continued from a window's last page into the next
window is joined as within one.

Bounded work: a page with more than ``_MAX_RULES`` rules is not examined (its text is kept as it is, and the
ledger note says so), and the stage-1 deadline is checked before each page pdfplumber reads.
"""

from __future__ import annotations

import bisect
import ctypes
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import NamedTuple

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from chunking.parsers._common import ReadContext
from chunking.parsers.pdf.paths import MAX_SEGMENTS, Edges, path_edges
from chunking.parsers.pdf.table_join import ContinuedTables, PageLayout, TableBlock
from chunking.parsers.pdf.table_rows import Box, open_row

__all__ = ["PdfTables", "Rule", "has_grid", "page_has_grid"]

_THIN_PT = 2.0  # a path at most this thick is a rule
_MIN_RULE_PT = 4.0  # ...and at least this long
_INTERIOR_PT = 15.0  # a column separator meets a row rule this far inside its ends (listing frames: 6-8 pt)
_TOUCH_PT = 2.0  # how close a rule's end must come to another rule to meet it
_MAX_RULES = 4000  # per page and direction: beyond this a page is a drawing, not a table
_MIN_GRID = 2  # rows and columns of a kept table


class Rule(NamedTuple):
    """A straight rule in PDF points (origin bottom-left): ``at`` is its x (vertical) or y (horizontal),
    ``start``-``end`` its extent along the other axis. A named tuple: a page may have thousands."""

    at: float
    start: float
    end: float


class PdfTables:
    """The page texts of one page range of a PDF with each ruled table's flat text replaced by a
    ``<figure><table>`` block, given window after window of consecutive pages.

    Args:
        document: the open PDFium document (the parser's own: each page is loaded once, for its text and its
            gate, and only pages with a grid are loaded again); source: its name in notes and errors.
        lock: held while PDFium is used (it is not thread-safe); clean: the page-text clean-up of the PDF parser.

    ``add(texts, start=…, last=…)`` takes the cleaned page texts (from PDFium) of the pages from *start*
    (0-based), the window after the one before, and returns the final texts of the pages ready, in page
    order; pages without a table keep their text unchanged. A page whose last table may go on into the next
    window is held until that window is given (tables per window: a window holds its pages' texts at once);
    with *last* every page held is returned.
    """

    def __init__(self, document: pdfium.PdfDocument, *, source: str, context: ReadContext,
                 lock: AbstractContextManager, clean: Callable[[str], str]) -> None:
        self._document, self._source, self._context, self._lock, self._clean = document, source, context, lock, clean
        self._joiner = ContinuedTables()  # a table continued on the next page is joined to its start
        self._texts: dict[int, str] = {}  # page index -> text; a page the joiner holds is missing
        self._next: int | None = None  # the first page index not yet returned

    def add(self, texts: Sequence[str], *, start: int, last: bool, grid_pages: Sequence[int] = ()) -> list[str]:
        """The final texts of the pages ready (class docstring); *grid_pages* are the indexes of the pages of
        this window that passed the gate (``page_has_grid``, run by the caller on the page it has loaded)."""
        self._next = start if self._next is None else self._next
        self._texts.update(zip(range(start, start + len(texts)), texts))
        end = start + len(texts)
        if grid_pages:
            for index, rendered in _tables_on(self._document, list(grid_pages), self._source, self._context,
                                              self._lock, self._clean, self._joiner, self._texts):
                self._texts[index] = rendered
        reached = self._joiner.reached
        if last or (reached is not None and reached < end - 1):  # no page of this range can continue it
            self._texts.update(self._joiner.finish())
        out = []
        while self._next in self._texts:
            out.append(self._texts.pop(self._next))
            self._next += 1
        return out


def has_grid(vertical: Sequence[Rule], horizontal: Sequence[Rule]) -> bool:
    """True when a vertical rule meets a horizontal one well inside its ends (the gate of the module docstring).

    Collinear rules that touch are joined first: a table drawn as one rectangle per cell has row rules made of
    pieces, one per cell, which join into one rule across the table.

    Example: a 2-column table's middle rule at x=300 meeting a row rule from 100 to 500 → True; a box whose
    verticals sit at its own ends (x=100 and x=500) → False.
    """
    rows = _joined(horizontal)
    heights = [rule.at for rule in rows]
    for v in _joined(vertical):
        low = bisect.bisect_left(heights, v.start - _TOUCH_PT)
        for h in rows[low : bisect.bisect_right(heights, v.end + _TOUCH_PT)]:
            if h.start + _INTERIOR_PT < v.at < h.end - _INTERIOR_PT:
                return True
    return False


def _joined(rules: Sequence[Rule]) -> list[Rule]:
    """Rules on one line (within 1 pt) that overlap or touch, joined; sorted by position, then start."""
    joined: list[Rule] = []
    last_line = None
    for line, rule in sorted(((round(r.at), r) for r in rules), key=_line_then_start):
        if line == last_line and rule.start <= joined[-1].end + _TOUCH_PT:
            last = joined[-1]
            joined[-1] = Rule(last.at, last.start, max(last.end, rule.end))
        else:
            joined.append(rule)
            last_line = line
    joined.sort(key=_position)
    return joined


def _line_then_start(item: tuple[int, Rule]) -> tuple[int, float]:
    return item[0], item[1].start


def _position(rule: Rule) -> float:
    return rule.at


def page_has_grid(page: pdfium.PdfPage, index: int, context: ReadContext) -> bool:
    """True when the loaded *page* (0-based *index*) passes the gate of the module docstring: its rules hold a
    grid. A page with more than ``_MAX_RULES`` rules in one direction does not pass, and *context* notes it.
    The caller holds the PDFium lock; the page stays open (the parser reads its text from the same load)."""
    vertical, horizontal = _rules(page)
    if len(vertical) > _MAX_RULES or len(horizontal) > _MAX_RULES:
        context.note(f"page {index + 1}: more than {_MAX_RULES} ruling lines, not searched for tables")
        return False
    return bool(vertical) and bool(horizontal) and has_grid(vertical, horizontal)


def _rules(page: pdfium.PdfPage) -> tuple[list[Rule], list[Rule]]:
    """The page's rules, read from its top-level path objects (raw calls: no Python object per path)."""
    raw_page = page.raw
    vertical: list[Rule] = []
    horizontal: list[Rule] = []
    left, bottom, right, top = (ctypes.c_float() for _ in range(4))
    fill, stroke = ctypes.c_int(), ctypes.c_int()
    get_object, get_type, get_bounds = pdfium_c.FPDFPage_GetObject, pdfium_c.FPDFPageObj_GetType, \
        pdfium_c.FPDFPageObj_GetBounds
    path_type = pdfium_c.FPDF_PAGEOBJ_PATH
    for k in range(pdfium_c.FPDFPage_CountObjects(raw_page)):
        obj = get_object(raw_page, k)
        if get_type(obj) != path_type or not get_bounds(obj, left, bottom, right, top):
            continue
        x0, y0, x1, y1 = left.value, bottom.value, right.value, top.value
        width, height = x1 - x0, y1 - y0
        if width <= _THIN_PT and height >= _MIN_RULE_PT:
            vertical.append(Rule((x0 + x1) / 2, y0, y1))
        elif height <= _THIN_PT and width >= _MIN_RULE_PT:
            horizontal.append(Rule((y0 + y1) / 2, x0, x1))
        elif pdfium_c.FPDFPath_GetDrawMode(obj, fill, stroke) and stroke.value:
            vertical += [Rule(x0, y0, y1), Rule(x1, y0, y1)]
            horizontal += [Rule(y0, x0, x1), Rule(y1, x0, x1)]
        if len(vertical) > _MAX_RULES or len(horizontal) > _MAX_RULES:
            break
    return vertical, horizontal


def _tables_on(document: pdfium.PdfDocument, pages: list[int], source: str, context: ReadContext,
               lock: AbstractContextManager, clean: Callable[[str], str], joiner: ContinuedTables,
               texts: dict[int, str]):
    """``(page index, page text with tables)`` for the pages in *pages* where pdfplumber finds a table, as
    *joiner* gives them out; each such page's flat text is taken out of *texts* until then.

    pdfplumber's table finder runs on the page's edges as PDFium reads them (``chunking.parsers.pdf.paths``),
    not on pdfminer's reading of the page: the same edges, without interpreting the content stream in Python."""
    from pdfplumber.table import TableFinder, TableSettings

    settings = TableSettings.resolve(None)  # pdfplumber's defaults: the lines strategy
    for index in pages:
        context.check_time(source)
        with lock:
            page = document[index]
        try:
            with lock:
                edges = path_edges(page)
            if edges is None:
                context.note(f"page {index + 1}: more than {MAX_SEGMENTS} path segments, not searched for tables")
                continue
            found = TableFinder(_EdgesOf(edges), settings).tables
            tables = [t for t in (_grid(table) for table in found) if t is not None]
            if tables:
                verticals = [(e["x0"], e["top"], e["bottom"]) for e in edges if e["orientation"] == "v"]
                tables.sort(key=lambda t: t.bbox[1])
                tables[0].above = open_row(tables[0].columns, tables[0].bbox[1], verticals, above=True)
                tables[-1].below = open_row(tables[-1].columns, tables[-1].bbox[3], verticals, above=False)
                # An open row counts: a table's last part may be the rest of a cut row and one more row.
                tables = [t for t in tables if t.grid_rows + (t.above is not None) + (t.below is not None) >= _MIN_GRID]
            if not tables:
                continue
            with lock:
                layout = _page_layout(page, tables, clean)
        finally:
            with lock:
                page.close()
        texts.pop(index, None)
        yield from joiner.add(index, layout)


class _EdgesOf:
    """What pdfplumber's ``TableFinder`` reads of a page with the lines strategy: its ``edges``."""

    def __init__(self, edges: Edges) -> None:
        self.edges = edges


_Cells = list[tuple[Box, int, int]]  # a row of (bbox, rowspan, colspan)


@dataclass
class _Table:
    bbox: Box  # the grid's x0, top, x1, bottom: points from the page's top-left (pdfplumber's)
    cells: list[_Cells]
    columns: tuple[float, ...]  # x of the grid's column edges
    grid_rows: int  # rows of its grid
    above: tuple[_Cells, float] | None = None  # an open row above the grid, and its top (open_row)
    below: tuple[_Cells, float] | None = None  # ...below it, and its bottom


def _grid(found) -> _Table | None:
    """pdfplumber's table as rows of cells with spans counted on its grid, or None below 2 columns."""
    boxes = [cell for row in found.rows for cell in row.cells if cell is not None]
    xs = sorted({round(x0, 1) for x0, _, _, _ in boxes})
    tops = sorted({round(top, 1) for _, top, _, _ in boxes})
    if len(xs) < _MIN_GRID:
        return None
    rows = []
    for row in found.rows:
        cells = []
        for cell in row.cells:
            if cell is None:
                continue  # covered by a cell to its left or above
            x0, top, x1, bottom = cell
            colspan = sum(1 for x in xs if x0 - 0.5 <= x < x1 - 0.5)
            rowspan = sum(1 for y in tops if top - 0.5 <= y < bottom - 0.5)
            cells.append((cell, max(rowspan, 1), max(colspan, 1)))
        if cells:
            rows.append(cells)
    return _Table(found.bbox, rows, (*xs, round(max(x1 for _, _, x1, _ in boxes), 1)), len(tops))


def _page_layout(page: pdfium.PdfPage, tables: list[_Table], clean: Callable[[str], str]) -> PageLayout:
    """The page as bands of text above, between and below its tables, each table in its place (the caller
    closes *page*)."""
    left, low, right, high = page.get_bbox()  # the page box in the page's own space, unrotated (paths.py)
    height = high - low
    layout = PageLayout(height)
    text_page = page.get_textpage()
    try:
        def bounded(x0: float, top: float, x1: float, bottom: float) -> str:
            # Table geometry is measured down from the page box's top, PDFium's up from the page's origin.
            return text_page.get_text_bounded(left=x0, bottom=high - bottom, right=x1, top=high - top)

        def read(row: _Cells) -> list[tuple[str, int, int]]:
            return [(" ".join(clean(bounded(*box)).split()), rs, cs) for box, rs, cs in row]

        cursor = 0.0
        for table in tables:  # top to bottom
            x0, top, x1, bottom = table.bbox
            rows = [read(row) for row in table.cells]
            above = read(table.above[0]) if table.above else None
            if above is not None and any(text for text, _, _ in above):
                rows.insert(0, above)
                top = table.above[1]
            below = read(table.below[0]) if table.below else None
            if below is not None and any(text for text, _, _ in below):
                rows.append(below)
                bottom = table.below[1]
            if top > cursor:
                layout.parts.append(clean(bounded(left, cursor, right, top)))
            if len(rows) >= _MIN_GRID and sum(1 for row in rows for text, _, _ in row if text) >= _MIN_GRID:
                layout.parts.append(TableBlock(rows, table.columns, top, bottom, open_top=top < table.bbox[1],
                                               open_bottom=bottom > table.bbox[3]))
            else:
                layout.parts.append(clean(bounded(left, top, right, bottom)))
            cursor = max(cursor, bottom)
        layout.parts.append(clean(bounded(left, cursor, right, height)))
    finally:
        text_page.close()
    return layout
