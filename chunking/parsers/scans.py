"""PDF pages without a text layer (scanned pages): rendered with PDFium and read by local OCR
(``chunking.parsers.ocr``), so a PDF that mixes text pages and scanned pages keeps PDFium's text where there is
one and OCR's where there is none, page numbers and offsets unchanged (the PDF parser calls ``scanned_page_text``
for a page whose text layer is empty).

A page is read by OCR only when it holds an image object: a blank page (a separator, the back of a sheet) costs
nothing. It is rendered at ``RENDER_DPI`` (the longer side capped at ``RENDER_MAX_SIDE_PX``), which keeps body text
of a scan at 10 points about 20 pixels high, what the recognition model reads well.
"""

from __future__ import annotations

import threading
from typing import Any

from chunking.parsers import ocr
from chunking.parsers._common import ReadContext

__all__ = ["RENDER_DPI", "RENDER_MAX_SIDE_PX", "has_image", "scanned_page_text"]

#: Resolution a scanned page is rendered at for OCR, in dots per inch (PDF user space is 72 per inch).
RENDER_DPI = 150
#: The longer side of a rendered page, at most, in pixels (a poster-sized page is rendered smaller).
RENDER_MAX_SIDE_PX = 2200
_POINTS_PER_INCH = 72


def has_image(page: Any) -> bool:
    """True when the PDFium page *page* draws at least one image (at any depth of form XObjects)."""
    import pypdfium2.raw as pdfium_c

    return next(iter(page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_IMAGE,), max_depth=3)), None) is not None


def scanned_page_text(document: Any, index: int, *, source: str, context: ReadContext, lock: threading.Lock) -> str:
    """The text local OCR reads on page *index* (0-based) of the open PDFium *document*, in reading order and
    ending with ``\\n``; ``""`` when the page draws no image, or when the OCR extra is not installed (the page is
    then named in a note of *context*, and a document with no text at all is refused with ``NEEDS_OCR``).
    PDFium is called under *lock* only while the page is rendered, never while OCR runs.

    Raises:
        ParseError: as ``chunking.parsers.ocr.recognize`` (``out of memory while parsing`` becomes the stage-1
            child's memory reason); the deadline (``STAGE1_MAX_SECONDS``) before rendering.
    """
    context.check_time(source)
    with lock:
        page = document[index]
        try:
            if not has_image(page):
                return ""
            if not ocr.available():
                context.note(f"page {index + 1} has no text layer and was not read: {ocr.NEEDS_OCR}")
                return ""
            width, height = page.get_size()
            scale = min(RENDER_DPI / _POINTS_PER_INCH, RENDER_MAX_SIDE_PX / max(width, height, 1.0))
            bitmap = page.render(scale=scale, grayscale=True)
            try:
                image = bitmap.to_pil().copy()  # the PIL image shares the bitmap's buffer until copied
            finally:
                bitmap.close()
        finally:
            page.close()
    text = ocr.read_image(image, source=source)
    ocr.count_page(context)
    return text
