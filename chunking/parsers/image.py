"""Images (.png, .jpg, .jpeg, .bmp, .tif, .tiff, .heif): their text can only be read by OCR, which the embedded
default does not have. Without Document Intelligence an image is refused with a reason that names the setting
to enable (the pipeline records it in the ledger); with ``DOCUMENT_INTELLIGENCE_ENDPOINT`` set, images go to
``chunking.parsers.docintel`` instead and never reach this module.
"""

from __future__ import annotations

from collections.abc import Iterator

from chunking.model import Page
from chunking.parsers._common import ParseError, ReadContext

__all__ = ["NEEDS_OCR", "parse"]

#: The reason an image (or a PDF without a text layer) is not read locally.
NEEDS_OCR = "needs OCR: set DOCUMENT_INTELLIGENCE_ENDPOINT to read it with Document Intelligence"


def parse(data: bytes, *, source: str, context: ReadContext | None = None) -> Iterator[Page]:
    """Refuse an image.

    Raises:
        ParseError: always, ``image file: needs OCR: set DOCUMENT_INTELLIGENCE_ENDPOINT to read it with Document
            Intelligence``.
    """
    raise ParseError(source, f"image file: {NEEDS_OCR}")
