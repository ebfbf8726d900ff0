"""What the parser chosen for a document changes downstream: the local one of its format (``chunking.formats``), or
Document Intelligence when the settings send its extension there (``chunking.settings.docintel``:
``DOCUMENT_INTELLIGENCE_ENDPOINT`` and ``PARSERS``; the readers themselves are built by
``chunking.services.document_readers``)."""

from __future__ import annotations

from typing import Any

from chunking.formats import HEADING_EXTENSIONS, extension_of, format_of

__all__ = ["PICTURE_EXTENSIONS", "has_headings", "parser_fingerprint", "reads_pictures", "stores_pictures"]

#: The formats whose local parser reads the pictures inside a document (``chunking.parsers.pictures``).
PICTURE_EXTENSIONS = frozenset({".docx", ".pptx", ".pdf"})


def parser_fingerprint(source: str, settings: Any) -> str:
    """What the parser of *source* adds to its document version: ``""`` for a local parser (so versions made
    before Document Intelligence existed stay valid), the model and API version for Document Intelligence."""
    options = settings.document_intelligence
    return options.fingerprint if options.uses_service(extension_of(source)) else ""


def has_headings(source: str, settings: Any) -> bool:
    """Whether the ``#`` lines of *source*'s pages are headings (its chunks get heading paths): for the formats
    of ``chunking.formats.HEADING_EXTENSIONS``, and for every format Document Intelligence reads under *settings*
    (its renderer writes titles and section headings as ``#`` lines and escapes a paragraph that starts like one,
    ``chunking.parsers.docintel.render``)."""
    extension = extension_of(source)
    return extension in HEADING_EXTENSIONS or settings.document_intelligence.uses_service(extension)


def reads_pictures(source: str, settings: Any) -> bool:
    """Whether the parser of *source* reads the pictures inside it, one by one (``PICTURE_EXTENSIONS`` read
    locally): what a vision describer can describe. A format Document Intelligence reads gets the text the
    service finds inside each figure instead (``chunking.parsers.docintel.render``)."""
    extension = extension_of(source)
    return extension in PICTURE_EXTENSIONS and not settings.document_intelligence.uses_service(extension)


def stores_pictures(source: str, settings: Any) -> bool:
    """Whether *source*'s figure images are stored under *settings* (``FIGURES_STORE``;
    docs/parsers.md#figure-images): the pictures its local parser reads (``reads_pictures``), the frames of an
    image file read by local OCR, and the figure regions Document Intelligence finds in a PDF."""
    if not settings.figure_images.store:
        return False
    extension = extension_of(source)
    if settings.document_intelligence.uses_service(extension):
        return extension == ".pdf"
    fmt = format_of(source)
    return reads_pictures(source, settings) or (fmt is not None and fmt.parser == "image")
