"""PDF pages without a text layer (scanned pages): rendered with PDFium and read by local OCR
(``chunking.parsers.ocr``), so a PDF that mixes text pages and scanned pages keeps PDFium's text where there is
one and OCR's where there is none, page numbers and offsets unchanged (the PDF parser calls ``scanned_page_text``
for a page whose text layer is empty). On pages that have text, pictures (image objects drawn at least
``MIN_PICTURE_POINTS`` on both sides) are read by local OCR as ``chunking.parsers.pictures`` says, and their
``<figure>`` blocks follow the page's text (``page_pictures``).

Cost on PDFs without pictures: none per page. An image XObject is a stream, and a stream is never inside an
object stream (ISO 32000-1, 7.5.7), so its dictionary's ``/Subtype /Image`` is in the file's bytes as written:
one scan of the bytes per document (``check_pictures``) tells whether any page may draw one.

A page is read by OCR only when it holds an image object: a blank page (a separator, the back of a sheet) costs
nothing. It is rendered at ``RENDER_DPI`` (the longer side capped at ``RENDER_MAX_SIDE_PX``), which keeps body text
of a scan at 10 points about 20 pixels high, what the recognition model reads well.
"""

from __future__ import annotations

import mmap
import re
import threading
from io import BytesIO
from pathlib import Path
from typing import Any

from chunking.parsers import ocr
from chunking.parsers._common import ReadContext
from chunking.parsers.image import MAX_IMAGE_PIXELS
from chunking.parsers.pictures import count_skipped, figure_block, picture_log, read_picture, take_kept

__all__ = ["HEAD_OCR_PAGES", "MIN_PICTURE_POINTS", "RENDER_DPI", "RENDER_MAX_SIDE_PX", "check_pictures", "has_image", "page_pictures",
           "scanned_page_text"]

#: Resolution a scanned page is rendered at for OCR, in dots per inch (PDF user space is 72 per inch).
RENDER_DPI = 150
#: The longer side of a rendered page, at most, in pixels (a poster-sized page is rendered smaller).
RENDER_MAX_SIDE_PX = 2200
_POINTS_PER_INCH = 72
#: Scanned pages read by OCR when only a PDF's first pages are read for its title and language (they are read
#: again, with all their scanned pages, for their chunks).
HEAD_OCR_PAGES = 2
#: A picture drawn smaller than this on a side, in points (1/72 inch: 72 is an inch), is an icon or a bullet.
MIN_PICTURE_POINTS = 72
_IMAGE_SUBTYPE = re.compile(rb"/Subtype\s*/Image\b")


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
            if context.head:
                if picture_log(context).head_pages >= HEAD_OCR_PAGES:
                    return ""
                picture_log(context).head_pages += 1
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
    if not context.head:
        ocr.count_page(context)
    return text


def check_pictures(data: bytes | Path, context: ReadContext) -> None:
    """Record in *context* whether the PDF *data* (bytes or a local file) may draw a picture worth reading: the OCR
    extra is installed, ``FIGURES_MAX_PER_DOCUMENT`` is not 0, and its bytes name an image XObject."""
    log = picture_log(context)
    if not (ocr.available() or context.limits.keep_pictures) or context.limits.figures_max_per_document <= 0:
        log.pdf_images = False
        return
    if isinstance(data, Path):
        with open(data, "rb") as file:
            if file.seek(0, 2) == 0:
                log.pdf_images = False
                return
            with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as view:
                log.pdf_images = _IMAGE_SUBTYPE.search(view) is not None
    else:
        log.pdf_images = _IMAGE_SUBTYPE.search(data) is not None


def page_pictures(document: Any, index: int, *, source: str, context: ReadContext, lock: threading.Lock) -> str:
    """The ``<figure>`` blocks of the pictures drawn on page *index* of *document* whose text local OCR reads
    (``chunking.parsers.pictures``), each after a blank line (``"\\n\\n<figure>…</figure>"``); ``""`` when the
    document was not found to hold pictures (``check_pictures``), or none is read. PDFium runs under *lock*
    only while the pictures are decoded."""
    log = context.pictures
    if log is None or not getattr(log, "pdf_images", False) or context.head:
        return ""
    import pypdfium2.raw as pdfium_c

    pictures: list[bytes] = []
    with lock:
        page = document[index]
        try:
            for obj in page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_IMAGE,), max_depth=3):
                left, bottom, right, top = obj.get_bounds()
                if min(right - left, top - bottom) < MIN_PICTURE_POINTS:
                    count_skipped(context, "icons")
                    continue
                width_px, height_px = obj.get_px_size()
                if width_px * height_px > MAX_IMAGE_PIXELS:  # decoded whole by PDFium: refused before
                    count_skipped(context, "unreadable")
                    continue
                buffer = BytesIO()  # the bitmap is PDFium's own (freed with the page), its PIL view shares it
                obj.get_bitmap(render=False).to_pil().save(buffer, "PNG")
                pictures.append(buffer.getvalue())
        finally:
            page.close()
    blocks = []
    for png in pictures:
        read = read_picture(png, source=source, context=context)
        blocks.append(figure_block("", read, take_kept(context)))
    return "".join(f"\n\n{block}" for block in blocks if block)
