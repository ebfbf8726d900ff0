"""Local OCR (chunking/parsers/ocr.py, image.py, scans.py): images and PDF pages without a text layer read with the
RapidOCR models the ``rapidocr`` wheel ships (the extra ``ocr``, installed by requirements-dev.txt), their text in
reading order, page numbers and offsets exact; without the extra, the reason names it."""

from __future__ import annotations

import pytest

from chunking.parsers import ParseError, ReadContext, image, ocr, parse_document, scans
from chunking.parsers.ocr import OcrLine, reading_order
from tests.pixel_documents import image_bytes, paragraph_image, pdf_of

LINES = ["The quartermaster inspected the zeppelin hangar.", "Nobody expected the xylophonist to arrive."]
READ = "The quartermaster inspected the zeppelin hangar.\nNobody expected the xylophonist to arrive.\n"


# --- reading order (exact, no engine) ----------------------------------------------------------------------------


def _line(text: str, x0: float, y0: float, x1: float, y1: float) -> OcrLine:
    return OcrLine(text, x0, y0, x1, y1)


def test_reading_order_of_no_lines_is_empty():
    assert reading_order([]) == ""


def test_two_columns_are_read_column_by_column_under_a_full_width_title():
    lines = [  # given in the engine's arbitrary order
        _line("B2", 320, 140, 560, 160), _line("A1", 20, 100, 260, 120), _line("Title", 20, 40, 560, 60),
        _line("B1", 320, 100, 560, 120), _line("A2", 20, 140, 260, 160),
    ]
    assert reading_order(lines) == "Title\n\nA1\nA2\n\nB1\nB2\n"


def test_boxes_on_one_line_are_joined_left_to_right_and_paragraph_gaps_are_blank_lines():
    lines = [
        _line("world", 130, 21, 200, 39), _line("hello", 20, 20, 110, 40),
        _line("next line", 20, 45, 200, 65),
        _line("new paragraph", 20, 110, 200, 130),
    ]
    assert reading_order(lines) == "hello world\nnext line\n\nnew paragraph\n"


# --- image files --------------------------------------------------------------------------------------------------


def test_a_png_paragraph_is_read_line_by_line_and_counted():
    context = ReadContext()
    pages = parse_document(image_bytes(paragraph_image(LINES)), source="scans/note.png", context=context)

    assert [(p.page_num, p.offset, p.text) for p in pages] == [(0, 0, READ)]
    assert context.notes == ["local OCR: 1 page"]


def test_a_multi_page_tiff_is_one_page_per_frame_with_exact_offsets():
    first, second = paragraph_image(LINES[:1]), paragraph_image(["Second page: eleven marmots."])
    data = image_bytes(first, "TIFF", save_all=True, append_images=[second])
    context = ReadContext()

    pages = parse_document(data, source="fax.tiff", context=context)

    one = "The quartermaster inspected the zeppelin hangar.\n"
    assert [(p.page_num, p.offset, p.text) for p in pages] == [(0, 0, one),
                                                                (1, len(one), "Second page: eleven marmots.\n")]
    assert context.notes == ["local OCR: 2 pages"]


def test_a_jpeg_is_read_too():
    pages = parse_document(image_bytes(paragraph_image(LINES[1:]), "JPEG", quality=90), source="photo.JPG")
    assert pages[0].text == "Nobody expected the xylophonist to arrive.\n"


def test_a_broken_image_is_refused_with_its_name():
    with pytest.raises(ParseError) as caught:
        parse_document(b"\x89PNG\r\n\x1a\n", source="scan.png")
    assert caught.value.reason.startswith("not a valid image: ")
    assert str(caught.value).startswith("scan.png: not a valid image")


def test_an_image_over_the_pixel_limit_is_refused_before_it_is_decoded(monkeypatch):
    monkeypatch.setattr(image, "MAX_IMAGE_PIXELS", 999)
    with pytest.raises(ParseError) as caught:
        parse_document(image_bytes(paragraph_image(["x"], width_px=100)), source="big.png")
    assert caught.value.reason == "image of 100×90 pixels, more than 999"


def test_without_the_extra_an_image_is_refused_naming_the_extra_and_the_setting(monkeypatch):
    monkeypatch.setattr(ocr, "available", lambda: False)
    with pytest.raises(ParseError) as caught:
        parse_document(image_bytes(paragraph_image(LINES)), source="scan.png")
    assert caught.value.reason == (
        "image file: needs OCR: install the OCR extra (pip install 'chunking[ocr]', or pip install -r "
        "requirements-ocr.txt), or set DOCUMENT_INTELLIGENCE_ENDPOINT to read it with Document Intelligence")


# --- scanned PDF pages --------------------------------------------------------------------------------------------


def test_a_pdf_mixing_text_scanned_and_blank_pages_reads_each_where_it_applies(monkeypatch):
    calls = []
    read = ocr.read_image
    monkeypatch.setattr(ocr, "read_image", lambda img, *, source: calls.append(img.size) or read(img, source=source))
    data = pdf_of(["A text page about harbours.", paragraph_image(LINES), None])
    context = ReadContext()

    pages = parse_document(data, source="mixed.pdf", context=context)

    text = "A text page about harbours.\n"
    assert [(p.page_num, p.offset, p.text) for p in pages] == [(0, 0, text), (1, len(text), READ),
                                                                (2, len(text) + len(READ), "")]
    # The text page keeps PDFium's text; the blank page draws no image: one page read by OCR, the A4 page
    # rendered at 150 DPI (595 × 842 points; PDFium rounds the pixel size up).
    assert scans.RENDER_DPI == 150 and calls == [(1240, 1755)]
    assert context.notes == ["local OCR: 1 page"]


def test_without_the_extra_a_scanned_pdf_is_refused_naming_it(monkeypatch):
    monkeypatch.setattr(ocr, "available", lambda: False)
    with pytest.raises(ParseError) as caught:
        parse_document(pdf_of([paragraph_image(LINES)]), source="scan.pdf")
    assert caught.value.reason == f"no text found (scanned or image-only PDF?): {ocr.NEEDS_OCR}"


def test_without_the_extra_the_scanned_pages_of_a_mixed_pdf_are_named_in_a_note(monkeypatch):
    monkeypatch.setattr(ocr, "available", lambda: False)
    context = ReadContext()
    pages = parse_document(pdf_of(["Text first.", paragraph_image(LINES)]), source="mixed.pdf", context=context)
    assert [p.text for p in pages] == ["Text first.\n", ""]
    assert context.notes == [f"page 2 has no text layer and was not read: {ocr.NEEDS_OCR}"]


def test_dark_text_on_a_transparent_background_is_read_on_white():
    from PIL import Image

    text = paragraph_image(LINES[1:]).convert("L")
    transparent = Image.new("RGBA", text.size, (0, 0, 0, 0))  # black, fully transparent
    transparent.putalpha(text.point(lambda v: 255 - v))  # opaque where the text is
    pages = parse_document(image_bytes(transparent), source="logo.png")
    assert pages[0].text == "Nobody expected the xylophonist to arrive.\n"


def test_a_heif_image_names_the_service_that_reads_it():
    with pytest.raises(ParseError) as caught:
        parse_document(b"\x00\x00\x00\x18ftypheic", source="photo.heif")
    assert caught.value.reason == "HEIF image: read only by Document Intelligence (set DOCUMENT_INTELLIGENCE_ENDPOINT)"
