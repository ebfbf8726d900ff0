"""chunking.parsers.pdf.table_rows and the joining of a table row cut by a page break: PDFs drawn with fpdf2
(a rule around each cell, the rule at the break left out), page layouts built by hand, and the English corpus
manual, whose table on pages 64-65 (1-based) goes on at the top of page 65 with no rule above its first row."""

from __future__ import annotations

import pytest

from chunking.parsers import parse_document
from chunking.parsers import pdf as pdf_parser
from chunking.parsers.pdf.table_join import ContinuedTables, PageLayout, TableBlock
from chunking.parsers.pdf.table_rows import open_row
from tests.parsers.helpers import assert_page_invariants, draw_rows, parse_corpus
from tests.parsers.test_pdf_table_join import _Numbered, _stock

_HEAD = "<figure><table>\n<thead><tr><th>Fruit</th><th>Storage</th></tr></thead>\n"
_APPLE = "<tr><td>Apple</td><td>Keeps a month.</td></tr>\n"
_PLUM = "<tr><td>Plum</td><td>Keeps a week.</td></tr>\n"


def _fruit(first: list[tuple[str, str]], second: list[tuple[str, str]], *, cut: bool = True,
           open_top: bool | None = None, second_widths: tuple[int, int] = (40, 80)) -> bytes:
    """A sentence, then a 2-column table at the bottom of page 1 (header, Apple, *first*), its rows *second* at
    the top of page 2, then a sentence; with *cut* the rules at the page break are left out (the one at the top
    of page 2 as *open_top* says, when given)."""
    pdf = _Numbered()
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("helvetica", size=11)
    pdf.multi_cell(0, 6, "Storage of fruit.")
    pdf.set_y(250)
    draw_rows(pdf, (40, 80), [("Fruit", "Storage"), ("Apple", "Keeps a month."), *first], open_bottom=cut)
    pdf.add_page()
    draw_rows(pdf, second_widths, second, open_top=cut if open_top is None else open_top)
    pdf.ln(4)
    pdf.multi_cell(0, 6, "Eat soon.")
    return bytes(pdf.output())


_CUT = _fruit([("Pear", "Keeps two weeks")], [("", "in a cool cellar."), ("Plum", "Keeps a week.")])


_CUT_TEXTS = [
    f"Storage of fruit.\n\n{_HEAD}{_APPLE}<tr><td>Pear</td><td>Keeps two weeks in a cool cellar.</td></tr>\n"
    f"{_PLUM}</table></figure>\n\nPage 1\n",
    "Eat soon.\nPage 2\n",
]


def test_a_row_cut_by_the_page_break_is_one_row_of_one_table():
    pages = parse_document(_CUT, source="fruit.pdf")

    assert_page_invariants(pages)
    assert [p.text for p in pages] == _CUT_TEXTS


def test_tables_are_joined_across_the_windows_pages_are_read_in(monkeypatch):
    three_pages = _stock(45)  # one table over three pages
    in_one_window = [p.text for p in parse_document(three_pages, source="stock.pdf")]
    monkeypatch.setattr(pdf_parser, "TABLE_WINDOW_PAGES", 1)  # every page in a window of its own

    assert [p.text for p in parse_document(_CUT, source="fruit.pdf")] == _CUT_TEXTS
    assert [p.text for p in parse_document(three_pages, source="stock.pdf")] == in_one_window
    assert in_one_window[0].count("<tr>") == 46 and in_one_window[1:] == ["", "Ask for spares.\n"]


def test_a_table_that_simply_goes_on_keeps_its_rows_apart():
    data = _fruit([("Pear", "Keeps two weeks.")], [("Plum", "Keeps a week."), ("Quince", "Keeps a season.")],
                  cut=False)

    assert [p.text for p in parse_document(data, source="fruit.pdf")] == [
        f"Storage of fruit.\n\n{_HEAD}{_APPLE}<tr><td>Pear</td><td>Keeps two weeks.</td></tr>\n{_PLUM}"
        "<tr><td>Quince</td><td>Keeps a season.</td></tr>\n</table></figure>\n\nPage 1\n",
        "Eat soon.\nPage 2\n",
    ]


def test_an_open_row_facing_a_closed_one_is_a_row_of_its_own():
    # Page 1 closed under Pear, page 2 open above Plum (as in the English manual): Plum is a body row.
    data = _fruit([("Pear", "Keeps two weeks.")], [("Plum", "Keeps a week."), ("Quince", "Keeps a season.")],
                  cut=False, open_top=True)

    assert [p.text for p in parse_document(data, source="fruit.pdf")] == [
        f"Storage of fruit.\n\n{_HEAD}{_APPLE}<tr><td>Pear</td><td>Keeps two weeks.</td></tr>\n{_PLUM}"
        "<tr><td>Quince</td><td>Keeps a season.</td></tr>\n</table></figure>\n\nPage 1\n",
        "Eat soon.\nPage 2\n",
    ]


def test_other_column_edges_on_the_next_page_are_another_table_each_keeping_its_open_row():
    data = _fruit([("Pear", "Keeps two weeks")], [("", "in a cool cellar."), ("Plum", "Keeps a week.")],
                  second_widths=(60, 60))

    assert [p.text for p in parse_document(data, source="fruit.pdf")] == [
        f"Storage of fruit.\n\n{_HEAD}{_APPLE}<tr><td>Pear</td><td>Keeps two weeks</td></tr>\n</table></figure>\n\n"
        "Page 1\n",
        "<figure><table>\n<thead><tr><th></th><th>in a cool cellar.</th></tr></thead>\n"
        f"{_PLUM}</table></figure>\n\nEat soon.\nPage 2\n",
    ]


@pytest.mark.parametrize(("rules", "above", "expected"), [
    # Every column rule runs 50-60 pt above the row rule at 100: the row ends at the shorter outer one.
    ([(10, 40, 300), (70, 40, 300), (110, 50, 300)], True,
     ([((10, 50, 70, 100), 1, 1), ((70, 50, 110, 100), 1, 1)], 50)),
    # The inner rule stops at the row rule: one cell over both columns.
    ([(10, 40, 300), (70, 100, 300), (110.5, 40, 300)], True, ([((10, 40, 110, 100), 1, 2)], 40)),
    # Below the grid's last row rule at 100, rules in pieces: the pieces that leave it count.
    ([(10, 60, 100), (10, 100, 130), (70, 100, 130), (111, 99, 125)], False,
     ([((10, 100, 70, 125), 1, 1), ((70, 100, 110, 125), 1, 1)], 125)),
    ([(10, 40, 100), (110, 40, 101)], False, None),  # the rules end at the grid's bottom rule
    ([(10, 40, 300), (70, 40, 300)], True, None),  # no rule at the last column edge
    ([(10, 97, 300), (110, 97, 300)], True, None),  # 3 pt beyond the rule: not a row
    ([(10, 20, 60), (110, 20, 60)], True, None),  # rules above the grid that do not reach it
])
def test_an_open_row_is_found_from_the_column_rules_alone(rules, above, expected):
    assert open_row((10, 70, 110), 100, rules, above=above) == expected


def _block(*rows: tuple[tuple[str, int], ...], open_top=False, open_bottom=False, top=20.0, bottom=790.0):
    return TableBlock([[(text, 1, span) for text, span in row] for row in rows], (10.0, 70.0, 110.0), top, bottom,
                      open_top=open_top, open_bottom=open_bottom)


def _rendered(first: TableBlock, second: TableBlock) -> str:
    joiner = ContinuedTables()
    out = dict(joiner.add(0, PageLayout(800, ["Intro", first])))
    out.update(joiner.add(1, PageLayout(800, [second])))
    out.update(joiner.finish())
    assert out[1] == ""
    return out[0]


def test_the_two_parts_of_a_cut_row_join_cell_by_cell_when_their_spans_agree():
    head = (("A", 1), ("B", 1))
    joined = _rendered(_block(head, (("a1", 1), ("b1 first", 1)), open_bottom=True, top=600),
                       _block((("", 1), ("b1 rest", 1)), (("a2", 1), ("b2", 1)), open_top=True))
    assert joined == ("Intro\n<figure><table>\n<thead><tr><th>A</th><th>B</th></tr></thead>\n"
                      "<tr><td>a1</td><td>b1 first b1 rest</td></tr>\n<tr><td>a2</td><td>b2</td></tr>\n"
                      "</table></figure>\n")
    spans_differ = _rendered(_block(head, (("a1", 1), ("b1", 1)), open_bottom=True, top=600),
                             _block((("rest", 2),), (("a2", 1), ("b2", 1)), open_top=True))
    assert '<tr><td>a1</td><td>b1</td></tr>\n<tr><td colspan="2">rest</td></tr>\n' in spans_differ
    # An open top is never taken for the header row drawn again.
    repeated = _rendered(_block(head, (("a1", 1), ("b1", 1)), top=600), _block(head, (("a2", 1), ("b2", 1)),
                                                                                open_top=True))
    assert repeated.count("<th>A</th>") == 1 and "<tr><td>A</td><td>B</td></tr>" in repeated


def test_the_english_manual_table_on_pages_64_and_65_is_one_table_with_the_row_at_the_top_of_page_65():
    pages = parse_corpus("amc-manual.en.pdf")
    first, second = pages[63], pages[64]  # 0-based: pages 64 and 65 of the PDF

    assert first.text.count("<figure><table>") == 1 and "<figure>" not in second.text
    assert (
        "<tr><td>formula</td><td>●</td><td></td><td>●</td><td></td><td>Gives the score to be given for the "
        "question, often using a formula that uses some variables (see Section 6.7.3), without taking b and m "
        "values into account.</td></tr>\n"
        "<tr><td>set.XXX</td><td>●</td><td>●</td><td>●</td><td>●</td><td>Gives a particular value to the "
        "variable named XXX, that will be available in a formula. In an answer context, the value is associated "
        "to the variable only if the box is ticked. As a particular case, give a non-null value to the variable "
        "INVALID to declare the responses incoherent (so that the score will be given by the variable e)."
        "</td></tr>\n"
    ) in first.text
    assert first.text.endswith("<td>Tells that the variable XXX has to be defined, unless the data is told "
                               "incoherent and the question scored with the value of e.</td></tr>\n"
                               "</table></figure>\n")
    assert second.text.startswith("\nThe default scale for a simple question is e=0,v=0,b=1,m=0")
