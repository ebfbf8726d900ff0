"""Excel workbooks (.xlsx, .xlsm): one page per worksheet, read with openpyxl (MIT) in its streaming read-only mode.

Each sheet's page is its used range as one ``<figure><table>`` captioned with the sheet's name: the smallest
rectangle holding every non-empty cell, with fully empty rows inside it left out. The name is the caption rather
than a heading line so that every part of a split table carries it, and no chunk is a bare heading. The first row
of the range is the header row (``<thead>``, repeated by the sentence splitter in every part of a table too large
for one chunk). A formula
cell shows the value Excel cached when it last saved the file (openpyxl's ``data_only``): a workbook written by a
program that does not compute formulas has no cached values, and those cells are empty.

Values: numbers as a spreadsheet shows them without formatting (``3``, ``20.5``), dates as ISO 8601, booleans as
``TRUE``/``FALSE`` (``chunking.parsers.office.render_value``). Merged cells keep their shape: the top-left cell of
a merged range gets ``rowspan``/``colspan`` (counted in the rows and columns of the table, so clipped to the used
range) and the cells it covers are left out, as the PPTX parser does; a row taking part in a merge is kept even
when it holds no value. Read-only mode does not report merged ranges, so they are read from the sheet part's
``<mergeCell ref="B2:C3"/>`` elements (ECMA-376 Part 1, §18.3.1.55), which follow the cell data: the part is
scanned in 1 MiB pieces for them (a byte search, no XML tree), not held. Chart sheets hold no cell text and are
skipped; hidden sheets are read like the others.

The package is checked first (``chunking.parsers.office.check_package``); ``MAX_PAGES`` bounds the sheets,
``MAX_PAGE_CHARS`` each sheet's text (counted while rows are read, so a huge sheet is refused without being held),
and the stage-1 deadline is checked every thousand rows (``chunking.parsers.office.used_range``).
"""

from __future__ import annotations

import bisect
import io
import re
import zipfile
from collections.abc import Iterator, Sequence
from xml.etree.ElementTree import ParseError as XMLParseError

from chunking.model import Page
from chunking.parsers._common import ParseError, ReadContext, pages_from_texts
from chunking.parsers.office import check_package, html_table, render_value, used_range

__all__ = ["parse"]

_SCAN_BYTES = 1 << 20  # the piece of a sheet part searched at a time for its merged ranges
# A mergeCell element (any namespace prefix): in the part's bytes "<" only opens markup (text has "&lt;").
_MERGE_CELL = re.compile(rb'<(?:[A-Za-z_][\w.-]*:)?mergeCell\s[^>]*?\bref="'
                         rb'([A-Za-z]{1,3})(\d{1,7})(?::([A-Za-z]{1,3})(\d{1,7}))?"')
_TAIL_BYTES = 200  # kept from one piece to the next, longer than any mergeCell element


def parse(data: bytes, *, source: str, context: ReadContext | None = None) -> Iterator[Page]:
    """Parse a workbook into one page per worksheet, in workbook order (module docstring).

    Returns:
        ``Page(n, offset, text)`` for the ``n + 1``-th worksheet; a sheet without values has an empty text.

    Raises:
        ParseError: the package checks' reasons; ``not a valid XLSX: …`` when openpyxl cannot open it or read a
            sheet (``not a valid XLSX: xl/worksheets/sheet1.xml is not well-formed XML (…)``);
            ``N pages, more than M (MAX_PAGES)``; ``page N has more than … characters (MAX_PAGE_CHARS)``;
            the ``STAGE1_MAX_SECONDS`` reason.
    """
    import openpyxl

    context = context if context is not None else ReadContext()
    check_package(data, source=source, context=context, kind="XLSX", old_format=".xls")
    try:
        workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except Exception as error:  # openpyxl raises KeyError, ValueError, InvalidFileException, XML errors
        raise ParseError(source, f"not a valid XLSX: {type(error).__name__}: {error}"[:300]) from None
    try:
        sheets = workbook.worksheets
        limits = context.limits
        if len(sheets) > limits.max_pages:
            raise ParseError(source, limits.pages_reason(len(sheets)))
        texts = []
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            for index, sheet in enumerate(sheets):
                part = getattr(sheet, "_worksheet_path", "")
                try:
                    merges = merged_ranges(package, part)
                    texts.append(sheet_text(sheet, source=source, index=index, context=context, merges=merges))
                except ParseError:
                    raise
                except XMLParseError as error:  # openpyxl reads a sheet's XML only now, in read-only mode
                    raise ParseError(source, f"not a valid XLSX: {part or f'sheet {index + 1}'} is not "
                                             f"well-formed XML ({error})"[:300]) from None
                except Exception as error:  # openpyxl's cell readers raise ValueError, TypeError, KeyError…
                    raise ParseError(source, f"not a valid XLSX: {part or f'sheet {index + 1}'}: "
                                             f"{type(error).__name__}: {error}"[:300]) from None
    finally:
        workbook.close()
    return pages_from_texts(texts)


def sheet_text(sheet, *, source: str, index: int, context: ReadContext,
               merges: Sequence[tuple[int, int, int, int]] = ()) -> str:
    """One worksheet's used range as a table captioned with the sheet's name, ``""`` without values.

    Args:
        merges: the sheet's merged ranges as ``(first_row, first_column, last_row, last_column)``, 1-based and
            inclusive (``merged_ranges``).
    """
    sheet.reset_dimensions()  # the stored dimension can lie (or be absent); read the rows as they are
    merged_rows = _RowRanges([(top, bottom) for top, _, bottom, _ in merges])
    # Read-only mode yields every row from row 1 on, empty ones included, so the count is the row number.
    cells = ([render_value(value) for value in values] for values in sheet.iter_rows(values_only=True))
    used = used_range(cells, source=source, index=index, caption=sheet.title, context=context, keep=merged_rows)
    if used is None:
        return ""
    rows = used.rows
    while not any(text.strip() for text in rows[-1][1]):  # merged rows below the last value hold nothing
        rows.pop()
    while not any(text.strip() for text in rows[0][1]):
        rows.pop(0)
    table = _table(rows, used.first_col, used.last_col, merges)
    return html_table(table, header_rows=1, caption=sheet.title) + "\n"


def _table(rows: list[tuple[int, list[str]]], first_col: int, last_col: int,
           merges: Sequence[tuple[int, int, int, int]]) -> list[list[tuple[str, int, int]]]:
    """``html_table`` rows of the used range (0-based columns *first_col*..*last_col*) with the merged ranges
    whose top-left cell lies in it as spans, clipped to the rows and columns the table shows."""
    numbers = [number for number, _ in rows]  # increasing
    anchors: dict[tuple[int, int], tuple[int, int]] = {}
    covered: set[tuple[int, int]] = set()
    for top, left, bottom, right in merges:
        column = left - 1
        at = bisect.bisect_left(numbers, top)
        if at == len(numbers) or numbers[at] != top or not first_col <= column <= last_col:
            continue
        shown = numbers[at:bisect.bisect_right(numbers, bottom)]
        width = min(right - 1, last_col) - column + 1
        if len(shown) * width <= 1 or (top, column) in covered:
            continue
        anchors[top, column] = (len(shown), width)
        covered.update((n, c) for n in shown for c in range(column, column + width) if (n, c) != (top, column))
    table = []
    for number, cells in rows:
        row = []
        for column in range(first_col, last_col + 1):
            if (number, column) in covered:
                continue
            rowspan, colspan = anchors.get((number, column), (1, 1))
            row.append((_cell(cells, column), rowspan, colspan))
        table.append(row)
    return table


class _RowRanges:
    """Row numbers covered by any of some ``(first, last)`` ranges, answered by binary search."""

    def __init__(self, ranges: Sequence[tuple[int, int]]) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []
        for first, last in sorted(ranges):
            if self._ends and first <= self._ends[-1] + 1:
                self._ends[-1] = max(self._ends[-1], last)
            else:
                self._starts.append(first)
                self._ends.append(last)

    def __contains__(self, number: int) -> bool:
        i = bisect.bisect_right(self._starts, number) - 1
        return i >= 0 and number <= self._ends[i]


def merged_ranges(package: zipfile.ZipFile, part: str) -> list[tuple[int, int, int, int]]:
    """The merged ranges of the worksheet stored at *part* (``xl/worksheets/sheet1.xml``) as ``(first_row,
    first_column, last_row, last_column)``, 1-based and inclusive, in document order; ``[]`` when the part is
    missing. The part is read in pieces (module docstring)."""
    try:
        stream = package.open(part.lstrip("/"))
    except (KeyError, ValueError):
        return []
    found: list[tuple[int, int, int, int]] = []
    with stream:
        tail = b""
        while piece := stream.read(_SCAN_BYTES):
            window = tail + piece
            end = 0
            for match in _MERGE_CELL.finditer(window):
                c1, r1, c2, r2 = match.groups()
                c2, r2 = (c2, r2) if c2 else (c1, r1)
                top, bottom = sorted((int(r1), int(r2)))
                left, right = sorted((_column(c1), _column(c2)))
                found.append((top, left, bottom, right))
                end = match.end()
            tail = window[max(end, len(window) - _TAIL_BYTES):]
    return found


def _column(letters: bytes) -> int:
    """``b"A"`` → 1, ``b"AB"`` → 28 (the spreadsheet's base-26 column names)."""
    number = 0
    for letter in letters.upper():
        number = number * 26 + letter - 64
    return number


def _cell(row: list[str], column: int) -> str:
    return row[column] if column < len(row) else ""
