"""chunking.parsers.xlsx: workbooks written with XlsxWriter (which stores formulas' cached values, as Excel does)
and openpyxl, parsed to exact page texts."""

from __future__ import annotations

import datetime
import io

import openpyxl
import pytest
import xlsxwriter

from chunking.documents.splitter import split_sentences
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


def _merged_workbook() -> bytes:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Budget"
    for ref, value in (("A1", "Team"), ("B1", "2024"), ("B2", "H1"), ("C2", "H2"), ("A3", "Research"), ("B3", 1),
                       ("C3", 2), ("B4", 3), ("C4", 4), ("A5", "Closed for audit"), ("A7", "Ops"), ("B7", 5),
                       ("C7", 6)):
        sheet[ref] = value
    for merged in ("A1:A2", "B1:C1", "A3:A4", "A5:C6", "E1:E10"):  # E1:E10 holds nothing: no part of the table
        sheet.merge_cells(merged)
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def test_merged_cells_keep_their_shape_as_rowspan_and_colspan():
    [page] = parse_document(_merged_workbook(), source="budget.xlsx")

    assert page.text == (
        "<figure><table>\n<caption>Budget</caption>\n"
        '<thead><tr><th rowspan="2">Team</th><th colspan="2">2024</th></tr></thead>\n'
        "<tr><td>H1</td><td>H2</td></tr>\n"
        '<tr><td rowspan="2">Research</td><td>1</td><td>2</td></tr>\n'
        "<tr><td>3</td><td>4</td></tr>\n"
        '<tr><td rowspan="2" colspan="3">Closed for audit</td></tr>\n'
        "<tr></tr>\n"  # row 6: wholly covered, kept so that the rowspan above counts real rows
        "<tr><td>Ops</td><td>5</td><td>6</td></tr>\n"
        "</table></figure>\n"
    )


def test_a_merge_reaching_past_the_used_range_is_clipped_to_it():
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Wide"
    sheet["A1"], sheet["B1"], sheet["A2"] = "Name", "Notes", "Long note"
    sheet.merge_cells("A2:D9")  # four columns and eight rows, of which the table shows one row and two columns
    buffer = io.BytesIO()
    book.save(buffer)

    [page] = parse_document(buffer.getvalue(), source="wide.xlsx")

    assert page.text == ("<figure><table>\n<caption>Wide</caption>\n<thead><tr><th>Name</th><th>Notes</th></tr>"
                         '</thead>\n<tr><td colspan="2">Long note</td></tr>\n</table></figure>\n')


def test_merged_ranges_are_found_across_the_pieces_a_sheet_part_is_read_in(monkeypatch):
    import zipfile

    from chunking.parsers import xlsx

    monkeypatch.setattr(xlsx, "_SCAN_BYTES", 7)  # every element is cut by a piece boundary
    with zipfile.ZipFile(io.BytesIO(_merged_workbook())) as package:
        found = xlsx.merged_ranges(package, "xl/worksheets/sheet1.xml")

    assert sorted(found) == [(1, 1, 2, 1), (1, 2, 1, 3), (1, 5, 10, 5), (3, 1, 4, 1), (5, 1, 6, 3)]  # once each


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
