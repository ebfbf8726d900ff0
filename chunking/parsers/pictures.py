"""Pictures inside documents (DOCX drawings, PPTX pictures, PDF image objects on pages that have text): read by
local OCR and the text placed inside the picture's ``<figure>`` block, before splitting, so a word that exists only
in a diagram or a screenshot is chunked, embedded and found like prose. The text is marked as generated:
``<figure>alt text<p data-generated="ocr">what OCR read</p></figure>``.

Budget (docs/parsers.md#pictures-in-documents), per document (per page range of a long PDF):

* **icons**: a picture under ``MIN_SIDE_PX`` pixels on a side, or under ``MIN_PIXELS`` in all, is a bullet, an
  icon or a rule: not read;
* **repeats**: a picture already met in the document (the same bytes: a logo in every slide's corner) is read
  once, its later copies not;
* **at most** ``FIGURES_MAX_PER_DOCUMENT`` pictures are read (the limit's setting; 0 reads none).

What was read and skipped is one note of the document (``figures: 2 read by local OCR; skipped: 3 icons,
1 repeated``), which the ledger keeps. Without the OCR extra nothing is read and nothing is noted: a picture keeps
its alternative text only.

With a vision describer (``Limits.keep_pictures``, docs/parsers.md#figure-descriptions) the same rules choose the
pictures to describe; each one kept is stored in ``ReadContext.images`` under its SHA-256 and its block names it,
``<p data-generated="ocr" data-picture="<sha256>">…</p>`` (OCR text inside when the extra is installed), for
stage 1 to put the description there after parsing. That attribute never reaches the splitter. The same kept
pictures are the figure images stage 1 stores (docs/parsers.md#figure-images): each is kept as PNG
(``chunking.parsers.image.png_bytes``: a JPEG, GIF, BMP or TIFF is converted here, in the parse child, under its
memory limit). A picture that is a whole page (an image file's frame) is marked ``PAGE_PICTURE`` at the start of
that page instead (``chunking.parsers.image``).
"""

from __future__ import annotations

import hashlib
import html
import re
from collections import Counter
from dataclasses import dataclass, field
from io import BytesIO

from chunking.parsers import image as image_files
from chunking.parsers import ocr
from chunking.parsers._common import ReadContext

__all__ = ["GENERATED_MARK", "KEPT_PICTURE", "MIN_PIXELS", "MIN_SIDE_PX", "PAGE_PICTURE", "PictureLog",
           "count_skipped", "figure_block", "picture_log", "pixel_counts", "read_picture", "take_kept"]

#: A picture narrower or lower than this, in pixels, is an icon or a rule.
MIN_SIDE_PX = 48
#: A picture of fewer pixels than this (e.g. 100 × 100) is an icon.
MIN_PIXELS = 10_000
#: The attribute marking text that is not the document's own but was generated from a picture.
GENERATED_MARK = 'data-generated="ocr"'
#: A kept picture's generated paragraph (``Limits.keep_pictures``): group 1 the SHA-256 hex of its bytes, group 2
#: what OCR read (HTML-escaped), or nothing.
KEPT_PICTURE = re.compile(r'<p data-generated="ocr" data-picture="([0-9a-f]{64})">(.*?)</p>', re.DOTALL)
#: A kept picture that is a whole page (an image file's frame), at the start of that page's text: group 1 the
#: SHA-256 hex of its PNG. Stage 1 removes it (docs/parsers.md#figure-images).
PAGE_PICTURE = re.compile(r'<p data-page-picture="([0-9a-f]{64})"></p>')
_NOTE = re.compile(r"^figures: ")
_SKIP_ORDER = ("icons", "repeated", "over FIGURES_MAX_PER_DOCUMENT", "unreadable")


@dataclass
class PictureLog:
    """What one document's pictures cost: the hashes met, the pictures read and those skipped by reason."""

    seen: set[str] = field(default_factory=set)
    read: int = 0
    skipped: Counter = field(default_factory=Counter)
    #: a PDF's bytes name an image XObject (``chunking.parsers.scans.check_pictures``); None: not a PDF, or not
    #: checked.
    pdf_images: bool | None = None
    #: scanned pages read by OCR for a PDF's title and language only (``chunking.parsers.scans.HEAD_OCR_PAGES``).
    head_pages: int = 0
    #: pictures kept for a describer without being read by OCR (no OCR extra): they count against the limit too.
    kept: int = 0
    #: the SHA-256 of the picture the last ``read_picture`` kept ("" when it kept none): ``take_kept``.
    last: str = ""

    def note(self) -> str:
        """``figures: 2 read by local OCR; skipped: 3 icons, 1 repeated`` (the parts that are not zero)."""
        parts = [f"{self.read} read by local OCR"] if self.read else []
        skipped = [f"{self.skipped[reason]} {reason}" for reason in _SKIP_ORDER if self.skipped[reason]]
        if skipped:
            parts.append("skipped: " + ", ".join(skipped))
        return "figures: " + "; ".join(parts)


def picture_log(context: ReadContext) -> PictureLog:
    """The ``PictureLog`` of *context*'s document, made on first use."""
    if context.pictures is None:
        context.pictures = PictureLog()
    return context.pictures


def _update_note(context: ReadContext, log: PictureLog) -> None:
    text = log.note()
    for i, note in enumerate(context.notes):
        if _NOTE.match(note):
            context.notes[i] = text
            return
    context.note(text)


def read_picture(data: bytes, *, source: str, context: ReadContext, max_pictures: int | None = None) -> str:
    """The text local OCR reads on the picture *data* (PNG, JPEG, GIF, BMP, TIFF bytes), in reading order on one
    line per text line, without a final newline; ``""`` when it is not read (no OCR extra, an icon, a repeat,
    over the budget, a format Pillow cannot open such as EMF/WMF/SVG) or holds no text.

    Args:
        max_pictures: pictures read at most in this document (default: ``FIGURES_MAX_PER_DOCUMENT`` of
            *context*'s limits).

    Raises:
        ParseError: the deadline (``STAGE1_MAX_SECONDS``); OCR's out-of-memory reason.
    """
    keep = context.limits.keep_pictures
    if not (ocr.available() or keep):
        return ""
    log = picture_log(context)
    log.last = ""
    limit = max_pictures if max_pictures is not None else context.limits.figures_max_per_document
    digest = hashlib.sha256(data).hexdigest()
    reason = ""
    if digest in log.seen:
        reason = "repeated"
    log.seen.add(digest)
    from PIL import Image

    image = None
    if not reason:
        try:
            image = Image.open(BytesIO(data))
            width, height = image.size
        except (*image_files.DECODE_FAILURES, Image.DecompressionBombError):  # EMF, WMF, SVG, damage
            reason = "unreadable"
        else:
            if min(width, height) < MIN_SIDE_PX or width * height < MIN_PIXELS:
                reason = "icons"
            elif width * height > image_files.MAX_IMAGE_PIXELS:
                reason = "unreadable"
            elif log.read + log.kept >= limit:
                reason = "over FIGURES_MAX_PER_DOCUMENT"
    if reason:
        log.skipped[reason] += 1
        _update_note(context, log)
        return ""
    context.check_time(source)
    try:
        image.load()
    except (*image_files.DECODE_FAILURES, Image.DecompressionBombError):
        log.skipped["unreadable"] += 1
        _update_note(context, log)
        return ""
    if keep:  # kept as PNG: what a vision model reads and what is stored (docs/parsers.md#figure-images)
        context.images[digest] = data if image.format == "PNG" else image_files.png_bytes(image)
        log.last = digest
        if not ocr.available():
            log.kept += 1
            return ""
    text = ocr.read_image(image, source=source).strip()
    log.read += 1
    _update_note(context, log)
    return re.sub(r"\n+", "\n", text)


def count_skipped(context: ReadContext, reason: str) -> None:
    """Count one picture not read for *reason* (``"icons"``, …) in the document's note."""
    log = picture_log(context)
    log.skipped[reason] += 1
    _update_note(context, log)


def take_kept(context: ReadContext | None) -> str:
    """The SHA-256 hex of the picture the last ``read_picture`` of *context* kept for a describer, once (then
    ``""``); ``""`` when it kept none."""
    log = context.pictures if context is not None else None
    if log is None:
        return ""
    digest, log.last = log.last, ""
    return digest


def figure_block(alt_text: str, generated: str, picture: str = "") -> str:
    """``<figure>alt<p data-generated="ocr">generated</p></figure>``, both HTML-escaped, its lines joined by
    spaces; ``""`` when both are empty; without the ``<p>`` when nothing was generated (the block alternative text
    alone always had). With *picture* (a kept picture's SHA-256, ``take_kept``) the ``<p>`` is always there and
    names it: ``<p data-generated="ocr" data-picture="…">generated</p>`` (``KEPT_PICTURE``)."""
    alt = html.escape(" ".join(alt_text.split()), quote=False)
    read = html.escape(" ".join(generated.split()), quote=False)
    if picture:
        return f'<figure>{alt}<p {GENERATED_MARK} data-picture="{picture}">{read}</p></figure>'
    if not alt and not read:
        return ""
    return f"<figure>{alt}<p {GENERATED_MARK}>{read}</p></figure>" if read else f"<figure>{alt}</figure>"


_OCR_PAGES = re.compile(r"local OCR: (\d+) pages?")
_FIGURES_READ = re.compile(r"figures: (\d+) read by local OCR")
_FIGURES_SKIPPED = re.compile(r"figures: [^;]*?(?:; )?skipped: ((?:\d+ [^,;]+(?:, )?)+)")
_COUNT = re.compile(r"(\d+) ([^,;]+)")


def pixel_counts(notes: list[str] | str) -> dict:
    """What a document's notes (a list, or the ledger's note: the notes joined with ``"; "``) say local OCR cost:
    ``{"ocr_pages": 3, "figures_read": 2, "figures_skipped": {"icons": 1}}`` (zeros and ``{}`` when they say
    nothing), read back from the notes of ``ocr.count_page`` and ``PictureLog.note``."""
    text = notes if isinstance(notes, str) else "; ".join(notes)
    skipped: dict[str, int] = {}
    for group in _FIGURES_SKIPPED.findall(text):
        for number, reason in _COUNT.findall(group):
            skipped[reason.strip()] = skipped.get(reason.strip(), 0) + int(number)
    return {"ocr_pages": sum(int(n) for n in _OCR_PAGES.findall(text)),
            "figures_read": sum(int(n) for n in _FIGURES_READ.findall(text)), "figures_skipped": skipped}
