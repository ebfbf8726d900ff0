"""The sentence splitter on every PDF, DOCX and HTML document of the test documents (English, Japanese, Chinese,
Spanish): the invariants of docs/splitters.md#sentence-splitter-invariants hold with the defaults and with small caps.

Pages are extracted here (pypdfium2, python-docx, BeautifulSoup) rather than with the project's parsers, so
these tests do not depend on them.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from chunking.model import Page
from chunking.splitters import SentenceTextSplitter
from tests.sample_documents import document_path
from tests.splitters.sentence_invariants import check_invariants, pages_from_texts, tokens

DOCUMENTS = ["amc-manual.en.pdf", "amc-manual.ja.pdf", "aptitude-ch02s05s05.ja.html",
             "debian-reference-ch02.zh-cn.html", "debian-reference-ch01.es.docx"]
SETTINGS = [
    pytest.param({}, id="defaults"),
    pytest.param({"max_tokens": 60, "max_chars": 300}, id="small"),
]


def _pages(path: Path) -> list[Page]:
    if path.suffix == ".pdf":
        import pypdfium2 as pdfium

        pdf = pdfium.PdfDocument(str(path))
        try:
            texts = [pdf[i].get_textpage().get_text_bounded() for i in range(len(pdf))]
        finally:
            pdf.close()
        return pages_from_texts(texts)
    if path.suffix == ".docx":
        import docx

        return [Page(0, 0, "\n".join(p.text for p in docx.Document(str(path)).paragraphs))]
    from bs4 import BeautifulSoup, XMLParsedAsHTMLWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        text = BeautifulSoup(path.read_text(encoding="utf-8"), "lxml").get_text()
    return [Page(0, 0, text)]


@pytest.fixture(scope="module", params=DOCUMENTS)
def document(request) -> tuple[str, list[Page]]:
    return request.param, _pages(document_path(request.param))


@pytest.mark.parametrize("settings", SETTINGS)
def test_invariants_hold_on_real_documents(document, settings):
    name, pages = document
    splitter = SentenceTextSplitter(**settings)
    chunks = list(splitter.split_pages(pages))
    check_invariants(pages, chunks, splitter.config)
    # Sanity on the scale: chunks are filled towards a cap, not one per sentence.
    cfg = splitter.config
    chars = sum(len(p.text) for p in pages)
    token_total = sum(tokens(p.text) for p in pages)
    assert len(chunks) <= 4 * (chars / cfg.max_chars + token_total / cfg.max_tokens) + len(pages), name


def test_every_page_with_text_is_cited(document):
    name, pages = document
    chunks = list(SentenceTextSplitter().split_pages(pages))
    cited = set()
    for c in chunks:
        cited.update(range(c.page_start, c.page_end + 1))
    assert cited == {p.page_num for p in pages if p.text.strip()}, name
