"""chunking.parsers.odf: OpenDocument text, spreadsheet and presentation packages made by tests/parsers/made.py,
parsed to exact page texts; the refusals."""

from __future__ import annotations

import pytest

from chunking.parsers import ParseError, ReadContext, parse_document
from chunking.parsers.limits import Limits
from chunking.parsers.titles import property_title
from tests.parsers.helpers import assert_page_invariants
from tests.parsers.made import odf

_TEXT_BODY = (
    '<text:sequence-decls><text:sequence-decl text:name="Table"/></text:sequence-decls>'
    '<text:h text:outline-level="1">Intro</text:h>'
    '<text:p>Hello <text:span>wide</text:span><text:s text:c="3"/>world<text:note text:note-class="footnote">'
    "<text:note-citation>1</text:note-citation><text:note-body><text:p>A note.</text:p></text:note-body></text:note>"
    '<office:annotation><text:p>a comment</text:p></office:annotation>.</text:p>'
    '<text:h text:outline-level="9">Deep</text:h>'
    "<text:list><text:list-item><text:p>one</text:p><text:list><text:list-item><text:p>sub</text:p></text:list-item>"
    "</text:list></text:list-item><text:list-item><text:p>two</text:p></text:list-item></text:list>"
    '<text:section text:name="S"><text:p>In a section<text:tab/>tabbed<text:line-break/>next.</text:p></text:section>'
    '<table:table table:name="T"><table:table-column table:number-columns-repeated="2"/><table:table-header-rows>'
    "<table:table-row><table:table-cell><text:p>Item</text:p></table:table-cell><table:table-cell><text:p>Price"
    "</text:p></table:table-cell></table:table-row></table:table-header-rows><table:table-row>"
    '<table:table-cell><text:p>Tea &amp; cake</text:p></table:table-cell><table:table-cell office:value-type="float"'
    ' office:value="3.5"><text:p>3.50 €</text:p></table:table-cell></table:table-row></table:table>'
    '<text:p><draw:frame draw:name="f"><svg:title>A chart of sales</svg:title><draw:image/></draw:frame></text:p>'
)


def test_a_text_document_is_one_page_with_headings_lists_notes_and_tables():
    data = odf("text", _TEXT_BODY, title="Annual &amp; Report")
    pages = parse_document(data, source="report.odt")

    assert_page_invariants(pages)
    assert [page.text for page in pages] == [
        "# Intro\n\nHello wide world[^1].\n\n[^1]: A note.\n\n###### Deep\n\n- one\n  - sub\n- two\n\n"
        "In a section tabbed next.\n\n<figure><table>\n<thead><tr><th>Item</th><th>Price</th></tr></thead>\n"
        "<tr><td>Tea &amp; cake</td><td>3.5</td></tr>\n</table></figure>\n\n<figure>A chart of sales</figure>\n"
    ]
    assert property_title(data, "report.odt") == "Annual & Report"


_SHEETS = (
    '<table:table table:name="Sales">'
    '<table:table-row table:number-rows-repeated="2"><table:table-cell table:number-columns-repeated="3"/>'
    "</table:table-row>"  # two empty rows above the used range
    "<table:table-row><table:table-cell/><table:table-cell><text:p>Region</text:p></table:table-cell>"
    "<table:table-cell><text:p>Q1</text:p></table:table-cell><table:table-cell><text:p>When</text:p>"
    "</table:table-cell></table:table-row>"
    '<table:table-row><table:table-cell/><table:table-cell table:number-rows-spanned="2"><text:p>North</text:p>'
    '</table:table-cell><table:table-cell office:value-type="float" office:value="10"><text:p>10.00</text:p>'
    '</table:table-cell><table:table-cell office:value-type="date" office:date-value="2024-05-01"><text:p>May 1'
    "</text:p></table:table-cell></table:table-row>"
    "<table:table-row><table:table-cell/><table:covered-table-cell/>"
    '<table:table-cell office:value-type="boolean" office:boolean-value="true"><text:p>TRUE</text:p>'
    '</table:table-cell><table:table-cell table:formula="of:=1/0" office:value-type="string" office:string-value="">'
    "<text:p>#DIV/0!</text:p></table:table-cell></table:table-row>"
    '<table:table-row table:number-rows-repeated="1048570"><table:table-cell table:number-columns-repeated="1024"/>'
    "</table:table-row></table:table>"
    '<table:table table:name="Empty"><table:table-row><table:table-cell/></table:table-row></table:table>'
)


def test_sheets_are_pages_with_the_used_range_and_declared_repeats_cost_nothing():
    data = odf("spreadsheet", _SHEETS)
    pages = parse_document(data, source="book.ods", context=ReadContext(Limits(max_page_chars=2000)))

    assert_page_invariants(pages)
    assert [page.text for page in pages] == [
        "<figure><table>\n<caption>Sales</caption>\n"
        "<thead><tr><th>Region</th><th>Q1</th><th>When</th></tr></thead>\n"
        '<tr><td rowspan="2">North</td><td>10</td><td>2024-05-01</td></tr>\n'
        "<tr><td>TRUE</td><td>#DIV/0!</td></tr>\n</table></figure>\n",
        "",
    ]


def test_a_repeated_filled_row_is_counted_before_it_is_expanded():
    sheet = ('<table:table table:name="S"><table:table-row table:number-rows-repeated="1000000">'
             "<table:table-cell><text:p>x</text:p></table:table-cell></table:table-row></table:table>")
    with pytest.raises(ParseError, match=r"page 1 has more than 10000 characters \(MAX_PAGE_CHARS\)"):
        parse_document(odf("spreadsheet", sheet), source="s.ods", context=ReadContext(Limits(max_page_chars=10_000)))


_SLIDES = (
    '<draw:page draw:name="p1"><draw:frame presentation:class="title"><draw:text-box><text:p>Welcome</text:p>'
    '</draw:text-box></draw:frame><draw:frame presentation:class="outline"><draw:text-box><text:list><text:list-item>'
    "<text:p>First point</text:p></text:list-item></text:list></draw:text-box></draw:frame>"
    '<draw:frame presentation:class="footer"><draw:text-box><text:p>Company confidential</text:p></draw:text-box>'
    "</draw:frame><presentation:notes><draw:frame><draw:text-box><text:p>Say hello.</text:p></draw:text-box>"
    "</draw:frame></presentation:notes></draw:page>"
    '<draw:page draw:name="p2"><draw:frame><table:table><table:table-row><table:table-cell><text:p>a</text:p>'
    "</table:table-cell><table:table-cell><text:p>b</text:p></table:table-cell></table:table-row></table:table>"
    "</draw:frame></draw:page>"
)


def test_slides_are_pages_with_their_title_as_heading_and_notes_last():
    pages = parse_document(odf("presentation", _SLIDES), source="deck.odp")

    assert_page_invariants(pages)
    assert [page.text for page in pages] == [
        "# Welcome\n\n- First point\n\nNotes:\n\nSay hello.\n",
        "# Slide 2\n\n<figure><table>\n<tr><td>a</td><td>b</td></tr>\n</table></figure>\n",
    ]


@pytest.mark.parametrize(("data", "reason"), [
    (odf("text", "<text:p>x</text:p>", manifest_extra='<manifest:encryption-data/>'),
     "not a valid OpenDocument: password-protected (content.xml is encrypted)"),
    (b"not a zip", "not a valid OpenDocument: not a ZIP package"),
    (odf("chart", "<text:p>x</text:p>"), "not a valid OpenDocument: content.xml has no text, spreadsheet or "
                                         "presentation body"),
    (odf("text", ""), "no text found"),
])
def test_damaged_or_protected_files_are_refused_with_their_reason(data, reason):
    with pytest.raises(ParseError) as caught:
        parse_document(data, source="x.odt")
    assert caught.value.reason.startswith(reason)


def test_limits_nesting_pages_and_zip_bomb():
    deep = odf("text", '<text:section text:name="s">' * 40 + "<text:p>x</text:p>" + "</text:section>" * 40)
    with pytest.raises(ParseError, match=r"OpenDocument XML elements nested more than 30 levels deep"):
        parse_document(deep, source="d.odt", context=ReadContext(Limits(max_nesting_depth=30)))
    slides = odf("presentation", '<draw:page draw:name="p"/>' * 3)
    with pytest.raises(ParseError, match=r"3 pages, more than 2 \(MAX_PAGES\)"):
        parse_document(slides, source="d.odp", context=ReadContext(Limits(max_pages=2)))
    bomb = odf("text", "<text:p>" + "x" * 3_000_000 + "</text:p>")
    with pytest.raises(ParseError, match=r"MAX_DECOMPRESSED_BYTES"):
        parse_document(bomb, source="d.odt", context=ReadContext(Limits(max_decompressed_bytes=1 << 20)))


def test_a_table_in_a_cell_is_not_read_as_rows_of_the_outer_table():
    inner = ('<table:table table:name="In"><table:table-row><table:table-cell><text:p>inner</text:p>'
             "</table:table-cell></table:table-row></table:table>")
    outer = ('<table:table table:name="Out"><table:table-rows><table:table-row><table:table-cell><text:p>a</text:p>'
             f"{inner}</table:table-cell></table:table-row></table:table-rows></table:table>")
    assert [p.text for p in parse_document(odf("text", outer), source="t.odt")] == [
        "<figure><table>\n<tr><td>a inner</td></tr>\n</table></figure>\n"]


def test_a_text_document_is_bounded_by_document_characters_not_page_characters():
    body = "<text:p>" + "word " * 400 + "</text:p>"
    data = odf("text", body * 3)
    assert len(parse_document(data, source="t.odt", context=ReadContext(Limits(max_page_chars=1000)))[0].text) > 5000
    with pytest.raises(ParseError, match=r"more than 5000 characters of text \(MAX_DOCUMENT_CHARS\)"):
        parse_document(data, source="t.odt", context=ReadContext(Limits(max_document_chars=5000)))
