"""chunking.parsers.pdf.tables: ruled tables in PDFs generated with fpdf2 and in the corpus manuals."""

from __future__ import annotations

import pytest
from fpdf import FPDF

from chunking.parsers import ReadContext, parse_document
from chunking.parsers.pdf.tables import Rule, has_grid
from tests.parsers.helpers import assert_page_invariants, parse_corpus
from tests.parsers.helpers import draw_prices as _prices
from tests.parsers.helpers import one_page_pdf as _pdf


def test_a_ruled_table_becomes_a_figure_in_its_place_with_its_colspan():
    [page] = parse_document(_pdf(_prices), source="prices.pdf")

    assert page.text == (
        "Prices for the coming season are listed below.\n\n<figure><table>\n"
        '<thead><tr><th>Fruit &amp; kind</th><th colspan="2">Price</th></tr></thead>\n'
        "<tr><td>Apple</td><td>1.20</td><td>EUR</td></tr>\n"
        "<tr><td>Pear</td><td>0.90</td><td>EUR</td></tr>\n"
        "</table></figure>\n\nPrices include tax.\n"
    )


def test_a_cell_spanning_rows_gets_a_rowspan():
    def draw(pdf: FPDF) -> None:
        with pdf.table(col_widths=(50, 50)) as table:
            row = table.row()
            row.cell("Region")
            row.cell("City")
            row = table.row()
            row.cell("North", rowspan=2)
            row.cell("Oslo")
            table.row().cell("Bergen")

    [page] = parse_document(_pdf(draw), source="spans.pdf")

    assert page.text == (
        "<figure><table>\n<thead><tr><th>Region</th><th>City</th></tr></thead>\n"
        '<tr><td rowspan="2">North</td><td>Oslo</td></tr>\n<tr><td>Bergen</td></tr>\n</table></figure>\n'
    )


def test_a_framed_box_like_a_code_listing_is_not_a_table():
    def draw(pdf: FPDF) -> None:
        pdf.multi_cell(0, 6, "Run these commands:")
        pdf.multi_cell(120, 6, "tar xvzf dist.tar.gz\ncd dist\nmake", border=1)

    [page] = parse_document(_pdf(draw), source="box.pdf")

    assert page.text == "Run these commands:\ntar xvzf dist.tar.gz\ncd dist\nmake\n"


def test_a_one_column_ruled_list_is_not_a_table():
    def draw(pdf: FPDF) -> None:
        with pdf.table(col_widths=(80,)) as table:
            for value in ("first", "second", "third"):
                table.row().cell(value)

    [page] = parse_document(_pdf(draw), source="list.pdf")

    assert "<figure>" not in page.text and page.text.split() == ["first", "second", "third"]


@pytest.mark.parametrize(("vertical", "horizontal", "expected"), [
    ([Rule(300, 100, 200)], [Rule(150, 100, 500)], True),  # a column separator crossing a row rule
    ([Rule(300, 100, 200)], [Rule(200, 100, 500)], True),  # ...or meeting it at its top
    ([Rule(100, 100, 200), Rule(500, 100, 200)], [Rule(100, 100, 500), Rule(200, 100, 500)], False),  # a box
    ([Rule(108, 100, 200)], [Rule(150, 100, 500)], False),  # 8 pt inside the end: a listing's frame piece
    ([Rule(300, 100, 200)], [Rule(250, 100, 500)], False),  # the row rule is above the separator
])
def test_the_gate_wants_a_rule_meeting_another_well_inside_its_ends(vertical, horizontal, expected):
    assert has_grid(vertical, horizontal) is expected


def test_a_page_with_too_many_rules_is_not_searched_and_the_ledger_note_says_so():
    def draw(pdf: FPDF) -> None:
        pdf.multi_cell(0, 6, "Hatched drawing.")
        for i in range(4100):
            pdf.line(10 + (i % 190), 40, 10 + (i % 190), 42 + (i % 7) * 5)

    context = ReadContext()
    [page] = parse_document(_pdf(draw), source="hatch.pdf", context=context)

    assert page.text == "Hatched drawing.\n"
    assert context.notes == ["page 1: more than 4000 ruling lines, not searched for tables"]


def test_corpus_tables_are_found_only_on_the_pages_that_hold_them():
    for name, pages_with_tables in (("amc-manual.en.pdf", {2: 2, 63: 1}), ("amc-manual.ja.pdf", {2: 2, 51: 1})):
        pages = parse_corpus(name)
        assert_page_invariants(pages)
        found = {page.page_num: page.text.count("<figure><table>") for page in pages if "<figure>" in page.text}
        assert found == pages_with_tables, name


def test_corpus_collaborators_table_is_read_cell_by_cell():
    page = parse_corpus("amc-manual.en.pdf")[2]

    assert page.text.startswith(
        "COLLABORATORS\n\n<figure><table>\n"
        '<thead><tr><th></th><th colspan="2">TITLE : Auto Multiple Choice</th><th></th></tr></thead>\n'
        "<tr><td>ACTION</td><td>NAME</td><td>DATE</td><td>SIGNATURE</td></tr>\n"
        "<tr><td>WRITTEN BY</td><td>Alexis Bienvenüe, Anirvan Sarkar, Hiroto Kagotani, and Frédéric Bréal</td>"
        "<td>February 6, 2023</td><td></td></tr>\n"
    )


@pytest.mark.parametrize("rotation", [90, 180, 270])
def test_a_rotated_page_keeps_its_text_around_its_table(rotation):
    """Page objects, table edges and the text PDFium reads back are in the page's own space, unrotated: a
    ``/Rotate`` must not move the bands of text above and below the table off the page."""
    assert _parsed(_reboxed(rotation=rotation)) == _parsed(_pdf(_prices))


def test_a_page_box_off_the_origin_keeps_its_text_around_its_table():
    assert _parsed(_reboxed(crop=(12, 300, 590, 835))) == _parsed(_pdf(_prices))


def _reboxed(rotation: int = 0, crop: tuple[float, float, float, float] | None = None) -> bytes:
    import io

    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(_pdf(_prices))
    page = document[0]
    if rotation:
        page.set_rotation(rotation)
    if crop is not None:
        page.set_cropbox(*crop)
    buffer = io.BytesIO()
    document.save(buffer)
    page.close()
    document.close()
    return buffer.getvalue()


def _parsed(data: bytes) -> str:
    [page] = parse_document(data, source="prices.pdf")
    assert "<table>" in page.text
    return page.text
