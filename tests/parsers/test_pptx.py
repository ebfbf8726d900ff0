"""chunking.parsers.pptx: presentations built with python-pptx, parsed to exact page texts."""

from __future__ import annotations

import io
import zipfile

import pptx
import pytest
from pptx.util import Inches

from chunking.documents.splitter import split_sentences
from chunking.parsers import ParseError, ReadContext, parse_document
from chunking.parsers.limits import Limits
from tests.parsers.helpers import assert_page_invariants

_TITLE_AND_CONTENT, _TITLE_ONLY, _BLANK = 1, 5, 6


def _saved(presentation) -> bytes:
    buffer = io.BytesIO()
    presentation.save(buffer)
    return buffer.getvalue()


def _deck() -> bytes:
    deck = pptx.Presentation()
    first = deck.slides.add_slide(deck.slide_layouts[_TITLE_AND_CONTENT])
    first.shapes.title.text = "Quarterly results"
    body = first.placeholders[1].text_frame
    body.text = "Revenue grew"
    deeper = body.add_paragraph()
    deeper.text = "most in the north"
    deeper.level = 1
    first.notes_slide.notes_text_frame.text = "Mention the new office.\nThank the team."

    second = deck.slides.add_slide(deck.slide_layouts[_TITLE_ONLY])
    second.shapes.title.text = "By region"
    table = second.shapes.add_table(3, 3, Inches(1), Inches(2), Inches(6), Inches(2)).table
    table.cell(0, 0).merge(table.cell(0, 1))
    table.cell(0, 0).text = "Region & team"
    table.cell(0, 2).text = "Q1"
    table.cell(1, 0).merge(table.cell(2, 0))
    table.cell(1, 0).text = "North"
    table.cell(1, 1).text = "Oslo"
    table.cell(1, 2).text = "10"
    table.cell(2, 1).text = "Bergen"
    table.cell(2, 2).text = "7"
    # A free text box placed above the table is read before it (reading order is by position).
    note = second.shapes.add_textbox(Inches(1), Inches(1.2), Inches(6), Inches(0.5))
    note.text_frame.text = "Figures in millions"

    third = deck.slides.add_slide(deck.slide_layouts[_BLANK])
    low = third.shapes.add_textbox(Inches(1), Inches(4), Inches(3), Inches(1))
    low.text_frame.text = "Bottom text"
    high = third.shapes.add_textbox(Inches(1), Inches(1), Inches(3), Inches(1))
    high.text_frame.text = "Top text"
    return _saved(deck)


def test_slides_are_pages_with_titles_lists_tables_and_notes_exactly():
    pages = parse_document(_deck(), source="deck.pptx")

    assert_page_invariants(pages)
    assert [page.text for page in pages] == [
        "# Quarterly results\n\n- Revenue grew\n  - most in the north\n\nNotes:\nMention the new office.\n"
        "Thank the team.\n",
        "# By region\n\nFigures in millions\n\n<figure><table>\n"
        '<thead><tr><th colspan="2">Region &amp; team</th><th>Q1</th></tr></thead>\n'
        '<tr><td rowspan="2">North</td><td>Oslo</td><td>10</td></tr>\n'
        "<tr><td>Bergen</td><td>7</td></tr>\n</table></figure>\n",
        "# Slide 3\n\nTop text\n\nBottom text\n",
    ]


def test_each_slide_is_its_own_chunk_with_its_page_and_heading():
    pages = parse_document(_deck(), source="deck.pptx")
    chunks = split_sentences(pages, 500, 1000)

    assert [(c.page_start, c.page_end, c.kind) for c in chunks] == [(0, 0, "text"), (1, 1, "figure"), (2, 2, "text")]
    assert chunks[1].text.startswith("# By region\n\nFigures in millions\n\n<figure><table>")


def test_a_table_without_a_header_row_has_only_td_cells():
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[_BLANK])
    table = slide.shapes.add_table(2, 1, Inches(1), Inches(1), Inches(2), Inches(1)).table
    table.first_row = False
    table.cell(0, 0).text = "a"
    table.cell(1, 0).text = "b"

    [page] = parse_document(_saved(deck), source="t.pptx")

    assert page.text == "# Slide 1\n\n<figure><table>\n<tr><td>a</td></tr>\n<tr><td>b</td></tr>\n</table></figure>\n"


def test_a_picture_with_alternative_text_is_a_figure(tmp_path):
    from PIL import Image

    image = tmp_path / "dot.png"
    Image.new("RGB", (4, 4), "red").save(image)
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[_TITLE_ONLY])
    slide.shapes.title.text = "Chart"
    picture = slide.shapes.add_picture(str(image), Inches(1), Inches(2))
    picture._element.nvPicPr.cNvPr.set("descr", "Sales rose 5% in May")
    slide.shapes.add_picture(str(image), Inches(3), Inches(2))  # no description: nothing to read

    [page] = parse_document(_saved(deck), source="c.pptx")

    assert page.text == "# Chart\n\n<figure>Sales rose 5% in May</figure>\n"


def test_too_many_slides_is_refused_naming_max_pages():
    deck = pptx.Presentation()
    for _ in range(3):
        deck.slides.add_slide(deck.slide_layouts[_BLANK])
    context = ReadContext(limits=Limits(max_pages=2))

    with pytest.raises(ParseError) as caught:
        parse_document(_saved(deck), source="big.pptx", context=context)

    assert caught.value.reason == "3 pages, more than 2 (MAX_PAGES)"


@pytest.mark.parametrize(("data", "reason"), [
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(100),
     "not a valid PPTX: password-protected, or an old .ppt file (OLE compound file)"),
    (b"PK\x03\x04 not really a zip", "not a valid PPTX: not a ZIP package (File is not a zip file)"),
])
def test_what_is_not_a_pptx_is_refused_with_a_reason(data, reason):
    with pytest.raises(ParseError) as caught:
        parse_document(data, source="x.pptx")

    assert caught.value.reason == reason


def test_a_part_with_a_dtd_is_refused():
    source = io.BytesIO(_deck())
    out = io.BytesIO()
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename == "ppt/slides/slide1.xml":
                data = data.replace(b"?>", b'?><!DOCTYPE x [<!ENTITY e "boom">]>', 1)
            zout.writestr(info, data)

    with pytest.raises(ParseError) as caught:
        parse_document(out.getvalue(), source="dtd.pptx")

    assert caught.value.reason == "not a valid PPTX: ppt/slides/slide1.xml holds a DTD (Office never writes one)"


def test_a_zip_bomb_is_refused_by_the_decompressed_limit():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
        zout.writestr("ppt/slides/slide1.xml", b" " * 5_000_000)

    with pytest.raises(ParseError) as caught:
        parse_document(out.getvalue(), source="bomb.pptx",
                       context=ReadContext(limits=Limits(max_decompressed_bytes=1_000_000)))

    assert caught.value.reason == "expands past 1000000 bytes when decompressed (MAX_DECOMPRESSED_BYTES)"
