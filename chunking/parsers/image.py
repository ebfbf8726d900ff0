"""Images (.png, .jpg, .jpeg, .bmp, .tif, .tiff, .gif; .heif only through Document Intelligence): their text is
read by local OCR (``chunking.parsers.ocr``, the extra ``ocr``), one page per frame of a multi-page TIFF, the
first frame of an animated GIF. With ``DOCUMENT_INTELLIGENCE_ENDPOINT`` set, images go to
``chunking.parsers.docintel`` instead and never reach this module; without either, an image is refused with a
reason naming both (``NEEDS_OCR``), and the pipeline records it in the ledger.

Images are opened with Pillow (already installed for the PDF renderer). A picture of more than
``MAX_IMAGE_PIXELS`` pixels is refused before it is decoded: Pillow decodes a whole frame at once, and a small PNG
can declare a huge canvas (a decompression bomb; Pillow's own guard warns at 89 million pixels).
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterator
from io import BytesIO

from chunking.formats import extension_of
from chunking.model import Page
from chunking.parsers import ocr
from chunking.parsers._common import ParseError, ReadContext

__all__ = ["DECODE_FAILURES", "MAX_IMAGE_PIXELS", "NEEDS_OCR", "parse", "png_bytes"]

#: The reason an image (or a PDF without a text layer) is not read.
NEEDS_OCR = ocr.NEEDS_OCR
#: The largest frame read, in pixels (width × height): 64 million is a 600 DPI scan of an A3 page, and about
#: 200 MB as RGB.
MAX_IMAGE_PIXELS = 64_000_000
#: Formats Pillow cannot open without a plug-in: only Document Intelligence reads them.
_SERVICE_ONLY = frozenset({".heif"})
#: Formats whose further frames are more pages (a multi-page scan); a GIF's further frames are an animation.
_PAGED = frozenset({".tif", ".tiff"})
# Modes PNG stores as they are (Pillow's PNG writer); any other (CMYK, YCbCr, LAB, HSV, F, I;16 variants) is
# converted to RGB or, with transparency, RGBA first.
_PNG_MODES = frozenset({"1", "L", "LA", "P", "RGB", "RGBA", "I", "I;16"})
#: What Pillow raises on a damaged picture while opening, seeking or decoding it: ``OSError`` (its
#: ``UnidentifiedImageError`` among them), and from its TIFF and GIF readers ``SyntaxError`` and ``TypeError`` (a
#: frame without dimensions), from others ``ValueError``, ``EOFError``, ``IndexError``, ``KeyError``,
#: ``struct.error`` or ``ZeroDivisionError``.
DECODE_FAILURES = (OSError, SyntaxError, TypeError, ValueError, EOFError, IndexError, KeyError, struct.error,
                   ZeroDivisionError)


def png_bytes(image) -> bytes:
    """The PIL image *image* (its current frame) encoded as PNG by Pillow, converted to RGB (RGBA when it has
    transparency) first when PNG cannot hold its mode (CMYK JPEGs, floating-point TIFFs)."""
    if image.mode not in _PNG_MODES:
        alpha = "A" in image.getbands() or "transparency" in image.info
        image = image.convert("RGBA" if alpha else "RGB")
    buffer = BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def parse(data: bytes, *, source: str, context: ReadContext | None = None) -> Iterator[Page]:
    """Read the text of an image with local OCR: one ``Page`` per frame of a TIFF, one page for the other formats,
    each page's text in reading order (``chunking.parsers.ocr.reading_order``) ending with ``\\n`` ("" for a
    frame without text), offsets the lengths of the pages before. When pictures are kept (figure images,
    ``Limits.keep_pictures``), each frame up to ``FIGURES_MAX_PER_DOCUMENT`` is kept as a PNG
    (``ReadContext.images``) and its page starts with its mark ``<p data-page-picture="<sha256>"></p>``
    (``chunking.parsers.pictures.PAGE_PICTURE``), which stage 1 removes.

    Raises:
        ParseError: ``image file: needs OCR: install the OCR extra …, or set DOCUMENT_INTELLIGENCE_ENDPOINT …``
            without the extra; ``not a valid image: …`` when Pillow cannot open or decode it (``not a valid image:
            frame 2: …`` for a TIFF's later frame); ``image of W×H pixels, more than 64000000``, or ``image of more
            than 64000000 pixels`` when Pillow refuses a canvas over twice its own limit while opening it; ``HEIF
            image: read only by Document Intelligence …``; ``STAGE1_MAX_SECONDS`` between frames.
    """
    context = context if context is not None else ReadContext()
    if not ocr.available():
        raise ParseError(source, f"image file: {NEEDS_OCR}")
    if extension_of(source) in _SERVICE_ONLY:
        raise ParseError(source, "HEIF image: read only by Document Intelligence (set DOCUMENT_INTELLIGENCE_ENDPOINT)")
    from PIL import Image

    try:
        picture = Image.open(BytesIO(data))
        frames = getattr(picture, "n_frames", 1) if extension_of(source) in _PAGED else 1
    except Image.DecompressionBombError:  # a canvas over twice Pillow's own limit, refused before it is read
        raise ParseError(source, f"image of more than {MAX_IMAGE_PIXELS} pixels") from None
    except DECODE_FAILURES as error:  # UnidentifiedImageError is an OSError
        raise ParseError(source, f"not a valid image: {str(error)[:200]}") from None
    offset, kept = 0, 0
    with picture:
        for index in range(frames):
            context.check_time(source)
            try:
                picture.seek(index)
            except DECODE_FAILURES as error:
                raise ParseError(source, f"not a valid image: frame {index + 1}: {str(error)[:200]}") from None
            width, height = picture.size
            if width * height > MAX_IMAGE_PIXELS:
                raise ParseError(source, f"image of {width}×{height} pixels, more than {MAX_IMAGE_PIXELS}")
            try:
                picture.load()
            except Image.DecompressionBombError:
                raise ParseError(source, f"image of more than {MAX_IMAGE_PIXELS} pixels") from None
            except DECODE_FAILURES as error:
                raise ParseError(source, f"not a valid image: {str(error)[:200]}") from None
            mark = ""
            if context.limits.keep_pictures and kept < context.limits.figures_max_per_document:
                png = png_bytes(picture)
                digest = hashlib.sha256(png).hexdigest()
                context.images[digest] = png
                mark, kept = f'<p data-page-picture="{digest}"></p>', kept + 1
            text = mark + ocr.read_image(picture, source=source)
            ocr.count_page(context)
            yield Page(index, offset, text)
            offset += len(text)
