"""chunking.parsers.pdf.paths: PDFium's paths as pdfplumber's edges, checked against pdfplumber's own reading."""

from __future__ import annotations

import io

import pdfplumber
import pypdfium2 as pdfium
import pytest
from fpdf import FPDF

from chunking.parsers.pdf import paths
from chunking.parsers.pdf.paths import path_edges
from tests.parsers.helpers import corpus_bytes, draw_prices, draw_rows, one_page_pdf

_TOLERANCE_PT = 0.05


def _ours(data: bytes, index: int = 0) -> list[tuple]:
    document = pdfium.PdfDocument(data)
    try:
        page = document[index]
        try:
            edges = path_edges(page)
        finally:
            page.close()
    finally:
        document.close()
    assert edges is not None
    return _sides(edges)


def _pdfplumbers(data: bytes, index: int = 0) -> list[tuple]:
    with pdfplumber.open(io.BytesIO(data)) as plumbed:
        return _sides(plumbed.pages[index].edges)


def _sides(edges) -> list[tuple]:
    return sorted((edge["orientation"] or "", edge["x0"], edge["top"], edge["x1"], edge["bottom"]) for edge in edges)


def _assert_same(ours: list[tuple], theirs: list[tuple]) -> None:
    """The same edges, each side within ``_TOLERANCE_PT`` (PDFium keeps coordinates as 32-bit floats)."""
    assert len(ours) == len(theirs)
    left = list(theirs)
    for mine in ours:
        match = next((k for k, other in enumerate(left) if other[0] == mine[0]
                      and all(abs(a - b) <= _TOLERANCE_PT for a, b in zip(mine[1:], other[1:]))), None)
        assert match is not None, mine
        del left[match]


def _shapes(pdf: FPDF) -> None:
    pdf.line(20, 30, 120, 30)  # a line
    pdf.line(20, 40, 20, 90)
    pdf.line(30, 40, 90, 80)  # a slanted line: pdfplumber calls it vertical
    pdf.rect(130, 30, 50, 20)  # a stroked rectangle
    pdf.rect(130, 60, 50, 20, style="F")  # a filled one
    pdf.rect(20, 100, 60, 30, round_corners=True)  # Bézier corners: a curve
    pdf.ellipse(100, 100, 40, 20)
    pdf.polygon([(20, 150), (80, 150), (80, 190), (50, 170)])  # an open polygon
    pdf.polygon([(100, 150), (160, 150), (160, 190), (100, 190)], style="D")  # four sides, closed
    pdf.set_dash_pattern(dash=2, gap=1)
    pdf.line(20, 210, 180, 210)


@pytest.mark.parametrize("draw", [draw_prices, _shapes], ids=["ruled table", "lines rectangles curves"])
def test_the_edges_of_drawn_pages_are_pdfplumbers(draw):
    data = one_page_pdf(draw)

    ours = _ours(data)

    assert ours  # every shape drew something
    _assert_same(ours, _pdfplumbers(data))


def test_a_table_drawn_cell_by_cell_in_a_rotated_frame_has_pdfplumbers_edges():
    def draw(pdf: FPDF) -> None:
        with pdf.rotation(30, x=100, y=100):  # a cm with a rotation and a translation
            draw_rows(pdf, (40, 30), [("a", "b"), ("c", "d")])

    data = one_page_pdf(draw)

    _assert_same(_ours(data), _pdfplumbers(data))


@pytest.mark.parametrize(("name", "index"), [("amc-manual.ja.pdf", 2), ("amc-manual.ja.pdf", 51),
                                             ("amc-manual.en.pdf", 64)])
def test_the_edges_of_the_manuals_table_pages_are_pdfplumbers(name, index):
    """Page 52 of the Japanese manual draws inside two form XObjects."""
    data = corpus_bytes(name)

    ours = _ours(data, index)

    assert len(ours) > 100
    _assert_same(ours, _pdfplumbers(data, index))


def test_a_page_past_the_segment_bound_gives_no_edges(monkeypatch):
    monkeypatch.setattr(paths, "MAX_SEGMENTS", 5)
    document = pdfium.PdfDocument(one_page_pdf(draw_prices))
    page = document[0]

    assert path_edges(page) is None
    page.close()
    document.close()
