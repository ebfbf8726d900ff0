"""Excel workbooks (.xlsx, .xlsm): one page per worksheet, read with openpyxl (MIT) in its streaming read-only mode.

Each sheet's page is its used range as one ``<figure><table>`` captioned with the sheet's name: the smallest
rectangle holding every non-empty cell, with fully empty rows inside it left out. The name is the caption rather
than a heading line so that every part of a split table carries it, and no chunk is a bare heading. The first row
of the range is the header row (``<thead>``, repeated by the sentence splitter in every part of a table too large
for one chunk). A formula
cell shows the value Excel cached when it last saved the file (openpyxl's ``data_only``): a workbook written by a
program that does not compute formulas has no cached values, and those cells are empty.

Values: numbers as a spreadsheet shows them without formatting (``3``, ``20.5``), dates as ISO 8601, booleans as
``TRUE``/``FALSE`` (``chunking.parsers.office.render_value``). Read-only mode does not report merged cells: a
merged range's value is in its top-left cell and the other cells are empty. Chart sheets hold no cell text and
are skipped; hidden sheets are read like the others.

The package is checked first (``chunking.parsers.office.check_package``); ``MAX_PAGES`` bounds the sheets,
``MAX_PAGE_CHARS`` each sheet's text (counted while rows are read, so a huge sheet is refused without being held),
and the stage-1 deadline is checked every ``_ROWS_PER_CHECK`` rows.
"""

from __future__ import annotations

import io
from collections.abc import Iterator

from chunking.model import Page
from chunking.parsers._common import ParseError, ReadContext, pages_from_texts
from chunking.parsers.office import check_package, html_table, render_value

__all__ = ["parse"]

_ROWS_PER_CHECK = 1000


def parse(data: bytes, *, source: str, context: ReadContext | None = None) -> Iterator[Page]:
    """Parse a workbook into one page per worksheet, in workbook order (module docstring).

    Returns:
        ``Page(n, offset, text)`` for the ``n + 1``-th worksheet; a sheet without values has an empty text.

    Raises:
        ParseError: the package checks' reasons; ``not a valid XLSX: …`` when openpyxl cannot open it;
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
        for index, sheet in enumerate(sheets):
            text = sheet_text(sheet, source=source, index=index, context=context)
            texts.append(text)
    finally:
        workbook.close()
    return pages_from_texts(texts)


def sheet_text(sheet, *, source: str, index: int, context: ReadContext) -> str:
    """One worksheet's used range as a table captioned with the sheet's name, ``""`` without values."""
    limits = context.limits
    sheet.reset_dimensions()  # the stored dimension can lie (or be absent); read the rows as they are
    rows: list[list[str]] = []
    chars = len(sheet.title)
    first_col, last_col = None, -1
    for count, values in enumerate(sheet.iter_rows(values_only=True), start=1):
        if count % _ROWS_PER_CHECK == 0:
            context.check_time(source)
        cells = [render_value(value) for value in values]
        filled = [i for i, text in enumerate(cells) if text.strip()]
        if not filled:
            continue
        first_col = filled[0] if first_col is None else min(first_col, filled[0])
        last_col = max(last_col, filled[-1])
        chars += sum(len(text) + 9 for text in cells)  # "<td></td>" around each cell
        if chars > limits.max_page_chars:
            raise ParseError(source, limits.page_chars_reason(index))
        rows.append(cells)
    if not rows:
        return ""
    width = last_col - first_col + 1
    table = [[(_cell(row, first_col + i), 1, 1) for i in range(width)] for row in rows]
    return html_table(table, header_rows=1, caption=sheet.title) + "\n"


def _cell(row: list[str], column: int) -> str:
    return row[column] if column < len(row) else ""
