"""A DOCX body read block by block: the same text as walking python-docx's whole tree, one piece of the body in
memory at a time, section properties kept for what reads the document afterwards, limits checked while
reading."""

from __future__ import annotations

import io

import docx
import pytest
from docx.oxml.ns import qn
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunking.parsers import ParseError, ReadContext
from chunking.parsers import docx as docx_parser
from chunking.parsers.docx.package import open_docx
from chunking.parsers.docx.parts import prepare_body
from chunking.parsers.limits import Limits
from tests.scenarios.hostile import generate

_WORDS = st.text(alphabet="abcdefgh ", min_size=1, max_size=30)
_BLOCK = st.one_of(
    st.tuples(st.just("p"), _WORDS, st.sampled_from(["Normal", "Heading 1", "Heading 2", "List Bullet", "Title"])),
    st.tuples(st.just("table"), st.lists(st.lists(_WORDS, min_size=1, max_size=3), min_size=1, max_size=3),
              st.just("")),
)


def _built(blocks) -> bytes:
    document = docx.Document()
    for kind, content, style in blocks:
        if kind == "p":
            document.add_paragraph(content, style=style)
        else:
            table = document.add_table(rows=len(content), cols=max(map(len, content)))
            for row, cells in zip(table.rows, content):
                for cell, text in zip(row.cells, cells):
                    cell.text = text
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def _whole_tree_text(data: bytes) -> str:
    """The text as the parser read it before streaming: python-docx's whole tree, prepared and walked."""
    document = docx.Document(io.BytesIO(data))
    notes = prepare_body(document, document.element.body, ReadContext())
    writer = docx_parser._BodyWriter(document)
    writer.walk(document.element.body)
    return "\n\n".join(writer.finish() + notes)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_BLOCK, min_size=1, max_size=12))
def test_streamed_text_equals_the_whole_tree_walk(blocks):
    data = _built(blocks)
    expected = _whole_tree_text(data)

    pages = list(docx_parser.parse(data, source="built.docx"))

    assert [page.text for page in pages] == [expected]


def test_notes_are_numbered_as_in_the_whole_tree_when_an_endnote_comes_first():
    from tests.parsers.test_docx_parts import _notes_part, _reference

    document = docx.Document()
    _notes_part(document, "footnote", {1: "A footnote.", 2: "Another."})
    _notes_part(document, "endnote", {1: "An endnote."})
    first = document.add_paragraph("Early")
    _reference(first, "endnote", 1)
    for i in range(3):
        _reference(document.add_paragraph(f"Later {i}"), "footnote", 1 + i % 2)
    buffer = io.BytesIO()
    document.save(buffer)

    text = list(docx_parser.parse(buffer.getvalue(), source="notes.docx"))[0].text

    assert text == _whole_tree_text(buffer.getvalue())
    assert text.startswith("Early[^3]\n\nLater 0[^1]")


def test_the_body_never_holds_more_than_one_piece_and_sections_are_kept():
    paragraph = b"<w:p><w:r><w:t>block</w:t></w:r></w:p>"
    sect = b'<w:sectPr><w:pgSz w:w="12240" w:h="15840"/></w:sectPr>'
    data = generate.docx_with(generate.DOCUMENT_HEAD + paragraph * 60_000 + sect + generate.DOCUMENT_TAIL)
    opened = open_docx(data, "big.docx", ReadContext())
    most = count = 0
    for element in opened.blocks():
        assert element.getprevious() is None  # everything before it is gone
        if count % 5000 == 0:  # (counting an lxml element's children walks them)
            most = max(most, len(element.getparent()))
        count += 1

    assert count == 60_000
    # Children parsed from one 1 MiB piece of XML at most, not the 2.3 MB body.
    assert most <= (1 << 20) // len(paragraph) + 2
    assert len(opened.document.element.body) == 1 and opened.document.element.body[0].tag == qn("w:sectPr")
    assert opened.document.sections[0].page_height == 15840 * 635


def test_characters_are_counted_while_reading():
    data = generate.docx_with(generate.paragraphs(4 << 20))
    context = ReadContext(limits=Limits(max_document_chars=100_000))

    with pytest.raises(ParseError) as raised:
        list(docx_parser.parse(data, source="long.docx", context=context))

    assert raised.value.reason == "more than 100000 characters of text (MAX_DOCUMENT_CHARS)"


@pytest.mark.parametrize(("body", "reason"), [
    (generate.DOCUMENT_HEAD + b"<w:p><w:r><w:t>open" + generate.DOCUMENT_TAIL,
     "not a valid DOCX: word/document.xml: Opening and ending tag mismatch: t line 2 and body, line 2, column 120"),
    (generate.DOCUMENT_HEAD + b"<w:p>" * 300 + b"</w:p>" * 300 + generate.DOCUMENT_TAIL,
     "not a valid DOCX: XML nested deeper than 256 levels"),
])
def test_a_damaged_body_is_a_reason(body, reason):
    with pytest.raises(ParseError) as raised:
        list(docx_parser.parse(generate.docx_with(body), source="bad.docx"))

    assert raised.value.reason == reason
