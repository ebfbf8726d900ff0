"""chunking.parsers.pdf.table_join: ruled tables continued across page breaks, in PDFs generated with fpdf2
(which breaks a table at the page's bottom margin and, by default, draws its header row again), and on
page layouts built by hand."""

from __future__ import annotations

from fpdf import FPDF

from chunking.parsers import parse_document
from chunking.parsers.pdf.table_join import ContinuedTables, PageLayout, TableBlock
from tests.parsers.helpers import assert_page_invariants


class _Numbered(FPDF):
    def footer(self) -> None:
        self.set_y(-15)
        self.set_font("helvetica", size=8)
        self.cell(0, 10, f"Page {self.page_no()}", align="C")


def _stock(rows: int, *, repeat_header: bool = True, table_at_mm: float = 245) -> bytes:
    """"Stock on 1 May.", then a 2-column table of *rows* parts starting *table_at_mm* down the first page."""
    pdf = _Numbered()
    pdf.add_page()
    pdf.set_font("helvetica", size=11)
    pdf.multi_cell(0, 6, "Stock on 1 May.")
    pdf.set_y(table_at_mm)
    with pdf.table(col_widths=(60, 40), repeat_headings=1 if repeat_header else 0) as table:
        row = table.row()
        row.cell("Part")
        row.cell("Qty")
        for i in range(rows):
            row = table.row()
            row.cell(f"Part {i}")
            row.cell(str(i))
    pdf.ln(4)
    pdf.multi_cell(0, 6, "Ask for spares.")
    return bytes(pdf.output())


def _rows(numbers) -> str:
    return "".join(f"<tr><td>Part {i}</td><td>{i}</td></tr>\n" for i in numbers)


_HEAD = "<figure><table>\n<thead><tr><th>Part</th><th>Qty</th></tr></thead>\n"


def test_a_table_continued_with_its_header_drawn_again_is_one_table_on_its_first_page():
    pages = parse_document(_stock(6), source="stock.pdf")

    assert_page_invariants(pages)
    # Page 1 holds rows 0-2, page 2 the header again and rows 3-5: one table, the header once.
    assert [p.text for p in pages] == [
        f"Stock on 1 May.\n\n{_HEAD}{_rows(range(6))}</table></figure>\n\nPage 1\n",
        "Ask for spares.\nPage 2\n",
    ]


def test_a_continuation_without_the_header_keeps_its_first_row_as_a_body_row():
    pages = parse_document(_stock(6, repeat_header=False), source="stock.pdf")

    assert [p.text for p in pages] == [
        f"Stock on 1 May.\n\n{_HEAD}{_rows(range(6))}</table></figure>\n\nPage 1\n",
        "Ask for spares.\nPage 2\n",
    ]


def test_a_table_over_three_pages_is_joined_page_after_page():
    pages = parse_document(_stock(45), source="stock.pdf")

    # Three pages: "Page N" is recognised as the page footer (furniture), out of the page texts.
    assert [(p.header, p.text, p.footer) for p in pages] == [
        ("", f"Stock on 1 May.\n\n{_HEAD}{_rows(range(45))}</table></figure>\n\n", "Page 1\n"),
        ("Page 2\n", "", ""),
        ("", "Ask for spares.\n", "Page 3\n"),
    ]


def _two_tables(*, second_widths: tuple[int, int], text_after_first: str = "") -> bytes:
    pdf = _Numbered()
    pdf.add_page()
    pdf.set_font("helvetica", size=11)
    pdf.set_y(240)
    for widths, names in (((60, 40), ("Part", "Bolt")), (second_widths, ("City", "Oslo"))):
        with pdf.table(col_widths=widths) as table:
            for name in names:
                row = table.row()
                row.cell(name)
                row.cell("1")
        if text_after_first:
            pdf.multi_cell(0, 5, text_after_first)  # still on the first page
            text_after_first = ""
        pdf.add_page()
    return bytes(pdf.output())


def test_a_table_with_other_columns_at_the_top_of_the_next_page_is_another_table():
    pages = parse_document(_two_tables(second_widths=(30, 70)), source="two.pdf")

    assert [p.text for p in pages] == [
        "<figure><table>\n<thead><tr><th>Part</th><th>1</th></tr></thead>\n<tr><td>Bolt</td><td>1</td></tr>\n"
        "</table></figure>\n\n",
        "<figure><table>\n<thead><tr><th>City</th><th>1</th></tr></thead>\n<tr><td>Oslo</td><td>1</td></tr>\n"
        "</table></figure>\n\n",
        "",
    ]


def test_the_same_columns_at_the_top_of_the_next_page_continue_the_table():
    pages = parse_document(_two_tables(second_widths=(60, 40)), source="two.pdf")

    assert [p.text for p in pages] == [
        "<figure><table>\n<thead><tr><th>Part</th><th>1</th></tr></thead>\n<tr><td>Bolt</td><td>1</td></tr>\n"
        "<tr><td>City</td><td>1</td></tr>\n<tr><td>Oslo</td><td>1</td></tr>\n</table></figure>\n\n", "", ""]


def test_a_table_followed_by_text_on_its_page_does_not_go_on():
    pages = parse_document(_two_tables(second_widths=(60, 40), text_after_first="One.\nTwo.\nThree."),
                           source="two.pdf")

    assert [p.text.count("<figure><table>") for p in pages] == [1, 1, 0]
    assert pages[0].text.endswith("</table></figure>\n\nOne.\nTwo.\nThree.\n")


def _table(top: float, bottom: float, *rows: str, columns=(10.0, 70.0, 110.0)) -> TableBlock:
    return TableBlock([[(text, 1, 1) for text in row.split()] for row in rows], columns, top, bottom)


def _joined(layouts: dict[int, PageLayout]) -> dict[int, str]:
    joiner = ContinuedTables()
    out = {}
    for index, layout in layouts.items():
        out.update(joiner.add(index, layout))
    out.update(joiner.finish())
    return dict(sorted(out.items()))


def test_only_the_next_page_continues_a_table_and_within_the_column_tolerance():
    first = PageLayout(800, ["Intro", _table(600, 790, "A B", "a1 b1")])
    assert _joined({0: first, 1: PageLayout(800, [_table(20, 100, "A B", "a2 b2", columns=(11.5, 71, 108))])}) == {
        0: "Intro\n<figure><table>\n<thead><tr><th>A</th><th>B</th></tr></thead>\n<tr><td>a1</td><td>b1</td></tr>\n"
           "<tr><td>a2</td><td>b2</td></tr>\n</table></figure>\n",
        1: "",
    }
    first = PageLayout(800, ["Intro", _table(600, 790, "A B", "a1 b1")])
    skipped = _joined({0: first, 2: PageLayout(800, [_table(20, 100, "A B", "a2 b2")])})  # page 2 is not next
    assert [text.count("<figure>") for text in skipped.values()] == [1, 1]
    first = PageLayout(800, ["Intro", _table(600, 790, "A B", "a1 b1")])
    moved = _joined({0: first, 1: PageLayout(800, [_table(20, 100, "A B", "a2 b2", columns=(10, 73, 110))])})
    assert [text.count("<figure>") for text in moved.values()] == [1, 1]  # a column edge 3 pt away
    first = PageLayout(800, ["Intro", _table(400, 590, "A B", "a1 b1")])
    high = _joined({0: first, 1: PageLayout(800, [_table(20, 100, "A B", "a2 b2")])})
    assert [text.count("<figure>") for text in high.values()] == [1, 1]  # ends 210 pt above the bottom
