"""Shared by the parser tests: the real documents parsed once, and the invariants every parser's pages must keep."""

from __future__ import annotations

import functools
import re

from chunking.model import Page
from chunking.parsers import parse_document
from tests.sample_documents import document_path

_FIGURE = re.compile(r"<figure><table>.*?</table></figure>", re.DOTALL)
_FENCE = re.compile(r"^(`{3,})\n.*?\n\1$", re.DOTALL | re.MULTILINE)


def corpus_bytes(name: str) -> bytes:
    return document_path(name).read_bytes()


@functools.lru_cache(maxsize=None)
def parse_corpus(name: str) -> tuple[Page, ...]:
    """Parse a test document once per test session."""
    return tuple(parse_document(corpus_bytes(name), source=name))


def assert_page_invariants(pages) -> None:
    """0-based increasing page numbers, exact offsets (every page's ``header + text + footer`` concatenated is
    the document text; ``offset`` is where ``text`` starts)."""
    pages = list(pages)
    assert pages, "a parser must give at least one page"
    assert [page.page_num for page in pages] == list(range(len(pages)))
    for i, page in enumerate(pages):
        before = sum(len(p.header) + len(p.text) + len(p.footer) for p in pages[:i])
        assert page.offset == before + len(page.header), f"offset of page {i}"
        assert isinstance(page.text, str)


def document_text(pages) -> str:
    return "".join(page.header + page.text + page.footer for page in pages)


def lines_outside_code(text: str) -> list[str]:
    """The text's lines, without fenced code blocks (a shell prompt ``# cmd`` in code is not a heading)."""
    return _FENCE.sub("", text).split("\n")


def assert_balanced_figures(text: str) -> int:
    """Every ``<figure><table>`` opens on its own line, closes, and has balanced rows; returns the count."""
    assert text.count("<figure>") == text.count("</figure>")
    assert text.count("<table>") == text.count("</table>")
    figures = _FIGURE.findall(text)
    assert len(figures) == text.count("<figure>")
    for figure in figures:
        assert figure.count("<tr>") == figure.count("</tr>") >= 1
        assert figure.count("<td") + figure.count("<th") == figure.count("</td>") + figure.count("</th>")
        start = text.index(figure)
        assert start == 0 or text[start - 1] == "\n", "a figure starts on its own line"
        end = start + len(figure)
        assert end == len(text) or text[end] == "\n", "a figure ends its line"
    return len(figures)


def one_page_pdf(draw) -> bytes:
    """A one-page PDF made with fpdf2 (Helvetica 11 pt), its content drawn by ``draw(pdf)``."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=11)
    draw(pdf)
    return bytes(pdf.output())


def draw_prices(pdf) -> None:
    """A sentence, a ruled price table (a header cell spanning two columns, two rows), another sentence."""
    pdf.multi_cell(0, 6, "Prices for the coming season are listed below.")
    pdf.ln(4)
    with pdf.table(col_widths=(60, 40, 40)) as table:
        row = table.row()
        row.cell("Fruit & kind")
        row.cell("Price", colspan=2)
        for values in (("Apple", "1.20", "EUR"), ("Pear", "0.90", "EUR")):
            row = table.row()
            for value in values:
                row.cell(value)
    pdf.ln(4)
    pdf.multi_cell(0, 6, "Prices include tax.")


def draw_rows(pdf, widths, rows, *, height: float = 8, open_top: bool = False, open_bottom: bool = False) -> None:
    """Rows of one-line cells with a rule around each cell, from the current position; *open_top* leaves out
    the rule above the first row and *open_bottom* the rule below the last one (a row cut by a page break)."""
    for number, row in enumerate(rows):
        sides = "LR" + ("" if open_top and number == 0 else "T") + ("" if open_bottom and number == len(rows) - 1
                                                                  else "B")
        for width, text in zip(widths, row):
            pdf.cell(width, height, text, border=sides)
        pdf.ln(height)


def numbered_pdf(page_count: int) -> bytes:
    """A PDF of *page_count* pages, page N holding the line ``scanned page N`` (Helvetica 11 pt)."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    for number in range(page_count):
        pdf.add_page()
        pdf.cell(0, 10, f"scanned page {number + 1}")
    return bytes(pdf.output())


def docintel_settings(**env: str):
    """Settings that send the formats Document Intelligence reads to the fake's endpoint (``tests.docintel_fake``),
    with a key, plus *env*."""
    from chunking.settings import Settings
    from tests.docintel_fake import ENDPOINT

    return Settings.from_env({"DOCUMENT_INTELLIGENCE_ENDPOINT": ENDPOINT, "DOCUMENT_INTELLIGENCE_API_KEY": "test-key",
                              **env})


def parse_through_docintel(fake, data: bytes = b"%PDF-1.7 not read locally", source: str = "report.pdf",
                           settings=None, context=None, **client):
    """The pages of *source* read through the real Document Intelligence client talking to *fake* (a transport);
    *client*: the client's keyword arguments (``retry_total``, …)."""
    from chunking.services import document_readers

    readers = document_readers(settings or docintel_settings(), transport=fake, **client)
    return parse_document(data, source=source, context=context, readers=readers)


def count_page_loads(monkeypatch) -> list[int]:
    """The list that each load of a PDF page by the parser (``chunking.parsers.pdf._load_page``) appends its
    0-based index to, from now on (*monkeypatch* undoes it after the test)."""
    from chunking.parsers import pdf

    loaded: list[int] = []
    real = pdf._load_page

    def counting(document, index, source, context):
        loaded.append(index)
        return real(document, index, source, context)

    monkeypatch.setattr(pdf, "_load_page", counting)
    return loaded
