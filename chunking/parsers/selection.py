"""Which parser reads a document: the local one of its format (``chunking.formats``), or Document Intelligence
when the settings send its extension there (``chunking.settings.docintel``: ``DOCUMENT_INTELLIGENCE_ENDPOINT``
and ``PARSERS``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from chunking.formats import HEADING_EXTENSIONS, SUPPORTED_EXTENSIONS, extension_of
from chunking.model import Page

__all__ = ["document_readers", "has_headings", "parser_fingerprint"]

_Parser = Callable[..., Iterator[Page]]


def document_readers(settings: Any, **client_kwargs: Any) -> dict[str, _Parser]:
    """Extension → parser, for the extensions that do not use their local parser under *settings* (a
    ``chunking.settings.Settings``); ``{}`` when every format is parsed locally. Pass the result to
    ``chunking.parsers.parse_document(readers=…)``.

    Args:
        client_kwargs: passed to the Document Intelligence client (``transport=`` in tests).
    """
    options = settings.document_intelligence
    extensions = [ext for ext in sorted(SUPPORTED_EXTENSIONS) if options.uses_service(ext)]
    if not extensions:
        return {}
    from chunking.parsers.docintel import DocumentIntelligenceReader

    reader = DocumentIntelligenceReader(options, **client_kwargs)
    return dict.fromkeys(extensions, reader.parse)


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
