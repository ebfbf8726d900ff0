"""Excel 97-2003 workbooks (.xls, BIFF8): one page per worksheet, read with xlrd (BSD).

Each sheet is written as the XLSX parser writes one (``chunking.parsers.xlsx``): its used range as a
``<figure><table>`` captioned with the sheet's name, the first row of the range the header row, fully empty rows
left out. A formula cell shows the value Excel cached when it saved the file (BIFF stores it beside the formula;
xlrd reads it). Values: numbers as a spreadsheet shows them unformatted (``3``, ``20.5``), dates as ISO 8601 (by
the workbook's 1900 or 1904 date system), booleans as ``TRUE``/``FALSE`` (``chunking.parsers.office.render_value``),
error cells as Excel shows them (``#DIV/0!``). Lost: merged ranges (xlrd reports them only with its formatting
mode, which reads every style record), number formats, comments, charts and chart sheets.

Refused with a reason: a file that is not an OLE compound file (an ``.xlsx`` renamed, a CSV named ``.xls``), an
encrypted (password-protected) workbook, any other file xlrd cannot read, more sheets than ``MAX_PAGES``, a sheet
over ``MAX_PAGE_CHARS`` characters (counted row by row, before the sheet's table is built). Sheets are loaded one
at a time (xlrd's ``on_demand``) and released after; the stage-1 deadline is checked every thousand rows
(``chunking.parsers.office.used_range``).
"""

from __future__ import annotations

import io
from collections.abc import Iterator

from chunking.model import Page
from chunking.parsers._common import ParseError, ReadContext, pages_from_texts
from chunking.parsers.office import html_table, render_value, used_range

__all__ = ["parse"]

_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # [MS-CFB] §2.2 compound file header signature
_ZIP_MAGIC = b"PK\x03\x04"


def parse(data: bytes, *, source: str, context: ReadContext | None = None) -> Iterator[Page]:
    """Parse a .xls workbook into one page per worksheet, in workbook order (module docstring).

    Returns:
        ``Page(n, offset, text)`` for the ``n + 1``-th worksheet; a sheet without values has an empty text.

    Raises:
        ParseError: ``not a valid XLS: a ZIP package (an .xlsx or .ods renamed?)``; ``not a valid XLS: not an
            OLE compound file``; ``not a valid XLS: password-protected``; ``not a valid XLS: …`` for what xlrd
            cannot read; ``N pages, more than M (MAX_PAGES)``; ``page N has more than … characters
            (MAX_PAGE_CHARS)``; the ``STAGE1_MAX_SECONDS`` reason.
    """
    import xlrd

    context = context if context is not None else ReadContext()
    if data.startswith(_ZIP_MAGIC):
        raise ParseError(source, "not a valid XLS: a ZIP package (an .xlsx or .ods renamed?)")
    if not data.startswith(_OLE_MAGIC):
        raise ParseError(source, "not a valid XLS: not an OLE compound file")
    try:
        book = xlrd.open_workbook(file_contents=data, on_demand=True, ragged_rows=True, logfile=io.StringIO())
    except Exception as error:  # xlrd raises XLRDError, CompDocError, struct and index errors on damaged files
        message = str(error)
        if "encrypted" in message.lower():
            raise ParseError(source, "not a valid XLS: password-protected") from None
        raise ParseError(source, f"not a valid XLS: {type(error).__name__}: {message}"[:300]) from None
    try:
        limits = context.limits
        if book.nsheets > limits.max_pages:
            raise ParseError(source, limits.pages_reason(book.nsheets))
        texts = []
        for index in range(book.nsheets):
            context.check_time(source)
            try:
                sheet = book.sheet_by_index(index)
            except Exception as error:
                raise ParseError(source, f"not a valid XLS: sheet {index + 1}: {type(error).__name__}: "
                                         f"{error}"[:300]) from None
            texts.append(_sheet_text(sheet, book, source=source, index=index, context=context))
            book.unload_sheet(index)
    finally:
        book.release_resources()
    return pages_from_texts(texts)


def _sheet_text(sheet, book, *, source: str, index: int, context: ReadContext) -> str:
    """One worksheet's used range as a table captioned with the sheet's name, ``""`` without values."""
    rows = ([_value(cell, book) for cell in sheet.row(number)] for number in range(sheet.nrows))
    used = used_range(rows, source=source, index=index, caption=sheet.name, context=context)
    if used is None:
        return ""
    columns = range(used.first_col, used.last_col + 1)
    table = [[(cells[c] if c < len(cells) else "", 1, 1) for c in columns] for _, cells in used.rows]
    return html_table(table, header_rows=1, caption=sheet.name) + "\n"


def _value(cell, book) -> str:
    import xlrd

    kind = cell.ctype
    if kind == xlrd.XL_CELL_DATE:
        try:
            return render_value(xlrd.xldate_as_datetime(cell.value, book.datemode))
        except (ValueError, OverflowError, xlrd.xldate.XLDateError):
            return render_value(cell.value)
    if kind == xlrd.XL_CELL_BOOLEAN:
        return render_value(bool(cell.value))
    if kind == xlrd.XL_CELL_ERROR:
        return xlrd.error_text_from_code.get(cell.value, "#ERROR")
    if kind in (xlrd.XL_CELL_EMPTY, xlrd.XL_CELL_BLANK):
        return ""
    return render_value(cell.value)
