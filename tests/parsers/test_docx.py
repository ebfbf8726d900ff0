"""chunking.parsers.docx: the Spanish Debian Reference chapter and documents built with python-docx."""

from __future__ import annotations

import io
import zipfile

import docx
import pytest
from docx.enum.style import WD_STYLE_TYPE
from docx.oxml import OxmlElement
from docx.oxml.ns import qn

from chunking.parsers import ParseError, ReadContext, parse_document
from chunking.parsers import docx as docx_parser
from chunking.parsers.limits import Limits
from tests.parsers.helpers import (
    assert_balanced_figures,
    assert_page_invariants,
    document_text,
    lines_outside_code,
    parse_corpus,
)

DEBIAN_REFERENCE = "debian-reference-ch01.es.docx"


def _saved(document: docx.document.Document) -> bytes:
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def _text(document: docx.document.Document) -> str:
    pages = list(docx_parser.parse(_saved(document), source="built.docx"))
    assert len(pages) == 1
    assert_page_invariants(pages)
    return pages[0].text


def _number(paragraph, level: int, num_id: int = 1) -> None:
    """Give a paragraph direct numbering (w:numPr) at a list level."""
    num_pr = paragraph._p.get_or_add_pPr().get_or_add_numPr()
    num_pr.get_or_add_ilvl().val = level
    num_pr.get_or_add_numId().val = num_id


# --- corpus ---------------------------------------------------------------------------------------------


def test_corpus_docx_is_one_page_at_offset_zero():
    pages = parse_corpus(DEBIAN_REFERENCE)

    assert len(pages) == 1
    assert_page_invariants(pages)
    assert len(pages[0].text) > 100_000


@pytest.mark.parametrize(
    "heading",
    [
        "# Capítulo 1. Tutoriales de GNU/Linux",  # Title and Heading 1
        "## 1.1. Introducción a la consola",
        "### 1.1.1. El cursor del intérprete de órdenes",
        "### 1.1.6. Consolas virtuales",
    ],
)
def test_corpus_docx_headings_are_markdown_lines(heading):
    assert heading in lines_outside_code(document_text(parse_corpus(DEBIAN_REFERENCE)))


def test_corpus_docx_lists_keep_their_levels():
    text = document_text(parse_corpus(DEBIAN_REFERENCE))

    assert (
        "- Escriba «su -l» desde cualquier intérprete de órdenes.\n"
        "  - Esto no conserva el entorno del usuario actual.\n"
        "- Escriba «su» en cualquier intérprete de órdenes."
    ) in text


def test_corpus_docx_tables_are_balanced_figures_in_document_order():
    text = document_text(parse_corpus(DEBIAN_REFERENCE))

    assert assert_balanced_figures(text) == 78  # every w:tbl of the body
    assert "<tr><th>paquete</th><th>popularidad</th><th>tamaño</th><th>descripción</th></tr>" in text
    # Vertically merged cells (the admonition icon) become a rowspan, not a repeated cell.
    assert '<tr><td rowspan="2">[Aviso]</td><td>Aviso</td></tr>\n<tr><td>Nunca comparta' in text
    # The warning table sits between the paragraph before it and the heading after it.
    before = text.index("necesita de un uso basado en la consideración y la responsabilidad.")
    table = text.index("Nunca comparta la contraseña del superusuario con nadie.")
    after = text.index("### 1.1.4. El cursor del intérprete de órdenes de superusuario")
    assert before < table < after


def test_corpus_docx_code_is_fenced_verbatim():
    text = document_text(parse_corpus(DEBIAN_REFERENCE))

    assert "```\n# chvt 3\n```" in text
    assert "foo login: penguin\nPassword:\nLinux foo 5.10.0-6-amd64" in text


# --- built documents ------------------------------------------------------------------------------------


def test_headings_paragraphs_lists_and_code_golden():
    document = docx.Document()
    document.add_heading("Report", 0)
    document.add_heading("Intro", 1)
    document.add_paragraph("Plain <text> & more.")
    document.add_paragraph("Bullet one", style="List Bullet")
    _number(document.add_paragraph("Nested item"), level=1)
    document.add_paragraph("Bullet two", style="List Bullet")
    document.add_heading("Deep", 3)
    document.styles.add_style("Source Code", WD_STYLE_TYPE.PARAGRAPH)
    document.add_paragraph("# not a heading", style="Source Code")
    document.add_paragraph("    indented()", style="Source Code")
    document.add_heading("Level eight", 8)

    assert _text(document) == (
        "# Report\n\n# Intro\n\nPlain <text> & more.\n\n"
        "- Bullet one\n  - Nested item\n- Bullet two\n\n### Deep\n\n"
        "```\n# not a heading\n    indented()\n```\n\n###### Level eight"
    )


def test_table_golden_with_header_row_spans_escaping_and_nested_table():
    document = docx.Document()
    document.add_paragraph("Before.")
    table = document.add_table(rows=3, cols=3)
    for r, row in enumerate(table.rows):
        for c, cell in enumerate(row.cells):
            cell.text = f"r{r}c{c}"
    table.cell(0, 0).text = "A < B & C"
    table.cell(0, 1).merge(table.cell(0, 2))
    table.cell(1, 0).merge(table.cell(2, 0))
    table.rows[0]._tr.get_or_add_trPr().append(OxmlElement("w:tblHeader"))
    inner = table.cell(1, 1).add_table(rows=1, cols=2)
    inner.cell(0, 0).text, inner.cell(0, 1).text = "in1", "in2"
    document.add_paragraph("After.")

    assert _text(document) == (
        "Before.\n\n<figure><table>\n"
        '<tr><th>A &lt; B &amp; C</th><th colspan="2">r0c1 r0c2</th></tr>\n'
        '<tr><td rowspan="2">r1c0 r2c0</td><td>r1c1 in1 in2</td><td>r1c2</td></tr>\n'
        "<tr><td>r2c1</td><td>r2c2</td></tr>\n"
        "</table></figure>\n\nAfter."
    )


def test_runs_in_hyperlinks_and_line_breaks_are_kept():
    document = docx.Document()
    paragraph = document.add_paragraph("Line one")
    paragraph.add_run().add_break()
    paragraph.add_run("line two")
    hyperlink = OxmlElement("w:hyperlink")
    run = OxmlElement("w:r")
    text = OxmlElement("w:t")
    text.text = " linked"
    text.set(qn("xml:space"), "preserve")
    run.append(text)
    hyperlink.append(run)
    paragraph._p.append(hyperlink)

    assert _text(document) == "Line one\nline two linked"


# --- bad input ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "reason_start"),
    [
        (b"this is plain text, not a zip", "not a valid DOCX: not a ZIP package"),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504), "not a valid DOCX: password-protected, or an old .doc"),
    ],
)
def test_corrupt_docx_is_refused_with_its_name(data, reason_start):
    with pytest.raises(ParseError) as caught:
        parse_document(data, source="broken.docx")

    assert caught.value.reason.startswith(reason_start)
    assert str(caught.value).startswith("broken.docx: not a valid DOCX")


def test_zip_that_is_not_a_word_document_is_refused():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as package:
        package.writestr("hello.txt", "not word")

    with pytest.raises(ParseError) as caught:
        parse_document(buffer.getvalue(), source="fake.docx")

    assert caught.value.reason.startswith("not a valid DOCX: ")


def test_zip_bomb_is_refused_before_python_docx_reads_it():
    document = docx.Document()
    document.add_paragraph("Small text, big padding.")
    buffer = io.BytesIO(_saved(document))
    with zipfile.ZipFile(buffer, "a", compression=zipfile.ZIP_DEFLATED) as package:
        package.writestr("word/media/padding.bin", bytes(2 * 1024 * 1024))  # 2 MiB of zeros, ~2 KB compressed
    context = ReadContext(limits=Limits(max_decompressed_bytes=1024 * 1024))

    with pytest.raises(ParseError) as caught:
        parse_document(buffer.getvalue(), source="bomb.docx", context=context)

    assert str(caught.value) == "bomb.docx: expands past 1 MB when decompressed (MAX_DECOMPRESSED_BYTES)"


def test_docx_without_text_says_so():
    document = docx.Document()
    document.add_paragraph("   ")

    with pytest.raises(ParseError) as caught:
        parse_document(_saved(document), source="blank.docx")

    assert str(caught.value) == "blank.docx: no text found"
