"""Figure images of a PDF read by Document Intelligence: each figure region the service found
(``<figure data-page="P" data-bbox="x0,y0,x1,y1">``, written by ``chunking.parsers.docintel.render`` in inches) is
cropped from its page rendered by PDFium at ``CROP_DPI`` and kept as a PNG, like a picture a local parser keeps
(``chunking.parsers.pictures``; docs/parsers.md#figure-images): its block gets the mark
``<p data-generated="ocr" data-picture="<sha256>"></p>`` right after its opening tag, for stage 1 to store it.

The same budget as local pictures: a region under ``MIN_PICTURE_POINTS`` (an inch) on a side is an icon, a region
whose crop is identical to one kept before is a repeat, and at most ``FIGURES_MAX_PER_DOCUMENT`` are kept.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Sequence

from chunking.model import Page
from chunking.parsers._common import ReadContext
from chunking.parsers.pdf import PDFIUM_LOCK
from chunking.parsers.image import png_bytes
from chunking.parsers.pictures import count_skipped, picture_log
from chunking.parsers.scans import MIN_PICTURE_POINTS, RENDER_MAX_SIDE_PX

__all__ = ["CROP_DPI", "crop_figures"]

#: Resolution a page is rendered at to crop its figures, in dots per inch (as scanned pages are read).
CROP_DPI = 150
_POINTS_PER_INCH = 72
_NUMBER = r"(-?[0-9.]+(?:e[-+]?[0-9]+)?)"
_FIGURE = re.compile(rf'<figure data-page="(\d+)" data-bbox="{_NUMBER},{_NUMBER},{_NUMBER},{_NUMBER}">')


def crop_figures(pages: Sequence[Page], data: bytes, *, source: str, context: ReadContext) -> list[Page]:
    """*pages* (rendered from a PDF's analysis) with each figure region that passes the budget kept in
    ``context.images`` as a PNG cropped from *data*'s page, and marked in its block; offsets moved by the marks.
    Pages PDFium cannot open or render keep their figures unmarked.

    Raises:
        ParseError: the deadline (``STAGE1_MAX_SECONDS``) between pages.
    """
    import pypdfium2 as pdfium

    wanted = {int(m.group(1)) for page in pages for m in _FIGURE.finditer(page.text)}
    if not wanted or context.limits.figures_max_per_document <= 0:
        return list(pages)
    log = picture_log(context)
    crops: dict[int, list[str]] = {}  # page number → the mark of each figure on it, in order ("" when not kept)
    rendered: dict[int, tuple] = {}  # the last page rendered: number → (image, pixels per inch)
    with PDFIUM_LOCK:
        try:
            document = pdfium.PdfDocument(data)
        except pdfium.PdfiumError:
            return list(pages)
        try:
            for page in pages:
                for match in _FIGURE.finditer(page.text):
                    number = int(match.group(1))
                    context.check_time(source)
                    crops.setdefault(number, []).append(
                        _crop(document, number, [float(v) for v in match.groups()[1:]], context, log, rendered))
        finally:
            document.close()
    out, delta = [], 0
    for page in pages:
        text = _FIGURE.sub(lambda m: m.group(0) + crops[int(m.group(1))].pop(0), page.text)
        out.append(dataclasses.replace(page, offset=page.offset + delta, text=text))
        delta += len(text) - len(page.text)
    return out


def _crop(document, number: int, box: list[float], context: ReadContext, log, rendered: dict[int, tuple]) -> str:
    """The mark of the figure in inches *box* on page *number* (1-based) once kept, ``""`` when skipped.
    *rendered* holds the last page rendered, so the figures of one page render it once."""
    x0, y0, x1, y1 = box
    if min(x1 - x0, y1 - y0) * _POINTS_PER_INCH < MIN_PICTURE_POINTS:
        count_skipped(context, "icons")
        return ""
    if log.read + log.kept >= context.limits.figures_max_per_document:
        count_skipped(context, "over FIGURES_MAX_PER_DOCUMENT")
        return ""
    if not 1 <= number <= len(document):
        return ""
    if number not in rendered:
        rendered.clear()
        page = document[number - 1]
        try:
            width, height = page.get_size()
            scale = min(CROP_DPI / _POINTS_PER_INCH, RENDER_MAX_SIDE_PX / max(width, height, 1.0))
            bitmap = page.render(scale=scale)
            try:
                rendered[number] = (bitmap.to_pil().copy(), scale * _POINTS_PER_INCH)  # pixels per inch
            finally:
                bitmap.close()
        finally:
            page.close()
    image, dots = rendered[number]
    left, top = max(0, int(x0 * dots)), max(0, int(y0 * dots))
    right, bottom = min(image.width, int(round(x1 * dots))), min(image.height, int(round(y1 * dots)))
    if right <= left or bottom <= top:
        return ""
    png = png_bytes(image.crop((left, top, right, bottom)))
    digest = hashlib.sha256(png).hexdigest()
    if digest in log.seen:
        count_skipped(context, "repeated")
        return ""
    log.seen.add(digest)
    log.kept += 1
    context.images[digest] = png
    return f'<p data-generated="ocr" data-picture="{digest}"></p>'
