"""chunking.parsers.xls: BIFF8 workbooks written with xlwt (tests/parsers/made.py), parsed to exact page texts."""

from __future__ import annotations

import datetime

import pytest

from chunking.parsers import ParseError, ReadContext, parse_document
from chunking.parsers.limits import Limits
from tests.parsers.helpers import assert_page_invariants
from tests.parsers.made import xls, zip_package


def test_sheets_are_pages_with_the_used_range_as_a_table():
    data = xls({
        "Sales 2024": [[], [None, "Region", "Q1", "When"], [None, "North & East", 10, datetime.date(2024, 5, 1)],
                       [], [None, "South", 20.5, True]],
        "Empty": [],
        "Notes": [["Figures are unaudited."]],
    }, formulas={("Notes", 0, 1): "1+1"})  # xlwt caches no formula value: the cell reads as empty
    pages = parse_document(data, source="book.xls")

    assert_page_invariants(pages)
    assert [page.text for page in pages] == [
        "<figure><table>\n<caption>Sales 2024</caption>\n"
        "<thead><tr><th>Region</th><th>Q1</th><th>When</th></tr></thead>\n"
        "<tr><td>North &amp; East</td><td>10</td><td>2024-05-01</td></tr>\n"
        "<tr><td>South</td><td>20.5</td><td>TRUE</td></tr>\n</table></figure>\n",
        "",
        "<figure><table>\n<caption>Notes</caption>\n<thead><tr><th>Figures are unaudited.</th></tr></thead>\n"
        "</table></figure>\n",
    ]


@pytest.mark.parametrize(("data", "limits", "reason"), [
    (zip_package({"[Content_Types].xml": "<Types/>"}), Limits(),
     r"not a valid XLS: a ZIP package \(an .xlsx or .ods renamed\?\)"),
    (b"id,name\n1,a\n", Limits(), r"not a valid XLS: not an OLE compound file"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600, Limits(), r"not a valid XLS: "),
    (xls({"a": [["x"]], "b": [["y"]], "c": [["z"]]}), Limits(max_pages=2), r"3 pages, more than 2 \(MAX_PAGES\)"),
    (xls({"a": [[f"row {i}"] for i in range(100)]}), Limits(max_page_chars=500),
     r"page 1 has more than 500 characters \(MAX_PAGE_CHARS\)"),
])
def test_refusals_name_their_reason(data, limits, reason):
    with pytest.raises(ParseError, match=reason):
        parse_document(data, source="book.xls", context=ReadContext(limits))
