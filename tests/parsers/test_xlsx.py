"""chunking.parsers.xlsx: workbooks written with XlsxWriter (which stores formulas' cached values, as Excel does)
and openpyxl, parsed to exact page texts."""

from __future__ import annotations

import datetime
import io

import openpyxl
import pytest
import xlsxwriter

from chunking.format_splitters import split_sentences
from chunking.parsers import ParseError, ReadContext, parse_document
from chunking.parsers.limits import Limits
from tests.parsers.helpers import assert_page_invariants


def _workbook() -> bytes:
    buffer = io.BytesIO()
    book = xlsxwriter.Workbook(buffer)
    sales = book.add_worksheet("Sales 2024")
    # The used range starts at B2: the empty first row and column are not part of the table.
    sales.write_row(1, 1, ["Region", "Q1", "Q2", "Total"])
    sales.write_row(2, 1, ["North & East", 10, 20.5])
    sales.write_formula(2, 4, "=C3+D3", None, 30.5)  # the value Excel would have cached
    sales.write_row(4, 1, ["South", 3, 4])  # row 4 is empty: left out
    sales.write_formula(4, 4, "=C5+D5", None, 7)
    sales.write_boolean(5, 1, True)
    sales.write_datetime(5, 2, datetime.datetime(2024, 5, 1), book.add_format({"num_format": "yyyy-mm-dd"}))
    book.add_worksheet("Empty")
    notes = book.add_worksheet("Notes")
    notes.write(0, 0, "Figures are unaudited.")
    book.close()
    return buffer.getvalue()


def test_sheets_are_pages_with_the_used_range_as_a_table_and_cached_formula_values():
    pages = parse_document(_workbook(), source="book.xlsx")

    assert_page_invariants(pages)
    assert [page.text for page in pages] == [
        "<figure><table>\n<caption>Sales 2024</caption>\n"
        "<thead><tr><th>Region</th><th>Q1</th><th>Q2</th><th>Total</th></tr></thead>\n"
        "<tr><td>North &amp; East</td><td>10</td><td>20.5</td><td>30.5</td></tr>\n"
        "<tr><td>South</td><td>3</td><td>4</td><td>7</td></tr>\n"
        "<tr><td>TRUE</td><td>2024-05-01</td><td></td><td></td></tr>\n"
        "</table></figure>\n",
        "",
        "<figure><table>\n<caption>Notes</caption>\n<thead><tr><th>Figures are unaudited.</th></tr></thead>\n"
        "</table></figure>\n",
    ]


def test_a_large_sheet_is_split_by_rows_with_caption_and_header_in_every_part():
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Inventory"
    sheet.append(["Item", "Count"])
    for i in range(3000):
        sheet.append([f"Part number {i} of the warehouse stock", i])
    buffer = io.BytesIO()
    book.save(buffer)

    pages = parse_document(buffer.getvalue(), source="inv.xlsx")
    chunks = split_sentences(pages, 500, 1000)

    assert len(chunks) > 1
    for chunk in chunks:
        assert chunk.kind == "figure_part" and chunk.page_start == 0
        assert chunk.text.startswith("<figure><table><caption>Inventory</caption>"
                                     "<thead><tr><th>Item</th><th>Count</th></tr></thead><tr>")
    assert sum(chunk.text.count("<tr><td>") for chunk in chunks) == 3000


def test_formulas_without_a_cached_value_are_empty_cells():
    book = openpyxl.Workbook()  # openpyxl writes formulas but never computes them
    book.active.append(["a", "b"])
    book.active.append([1, "=A2*2"])
    buffer = io.BytesIO()
    book.save(buffer)

    [page] = parse_document(buffer.getvalue(), source="f.xlsx")

    assert "<tr><td>1</td><td></td></tr>" in page.text


def test_a_sheet_over_max_page_chars_is_refused_naming_the_setting():
    book = openpyxl.Workbook()
    book.create_sheet("Second")
    for i in range(200):
        book["Second"].append([f"row {i}"])
    buffer = io.BytesIO()
    book.save(buffer)

    with pytest.raises(ParseError) as caught:
        parse_document(buffer.getvalue(), source="big.xlsx", context=ReadContext(limits=Limits(max_page_chars=1000)))

    assert caught.value.reason == "page 2 has more than 1000 characters (MAX_PAGE_CHARS)"


def test_an_old_xls_file_is_refused_with_a_reason():
    with pytest.raises(ParseError) as caught:
        parse_document(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(600), source="old.xlsx")

    assert caught.value.reason == "not a valid XLSX: password-protected, or an old .xls file (OLE compound file)"


def test_a_zip_that_is_not_a_workbook_is_refused_with_a_reason():
    buffer = io.BytesIO()
    import zipfile

    with zipfile.ZipFile(buffer, "w") as package:
        package.writestr("hello.txt", "not a workbook")

    with pytest.raises(ParseError) as caught:
        parse_document(buffer.getvalue(), source="x.xlsx")

    assert caught.value.reason.startswith("not a valid XLSX: ")
