"""The document fields of the version stage 1 makes (``chunking.documents.fields``: title, language, size, storage
URL, metadata, access lists), computed where stage 1 reads the document (docs/architecture.md#long-documents).

A document read whole (every format but a PDF read in page ranges) has all its pages in hand before its records
are made: its fields are what ``configured_fields`` makes of them. A PDF is read page by page and its records go
out as they are made, so its title and language come from its first ``HEAD_PAGES`` pages, read once more for
that at the start of each range: the same bytes give the same fields in every range, with no state carried from
one range's job to the next. The title the file declares (PDF ``/Title``, ``dc:title`` …) is read by whatever
reads the document: the parsing child under ``PARSE_ISOLATION=process`` (it opens the file with PDFium or as a
ZIP package), in-line otherwise.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from chunking.documents.fields import configured_fields
from chunking.formats import format_of
from chunking.model import DocumentFields, Page, SourceProperties
from chunking.parsers import ReadContext
from chunking.parsers.sandbox import read_head_bounded

__all__ = ["HEAD_PAGES", "version_fields"]

#: Pages at the start of a PDF read in page ranges that give its title (first heading) and language.
HEAD_PAGES = 16


def version_fields(local: bytes | Path, *, source: str, size_bytes: int, settings, context: ReadContext,
                   properties: SourceProperties | None, pages: Sequence[Page] | None,
                   readers: Mapping[str, Callable] | None = None,
                   head: tuple[str, Sequence[Page]] | None = None) -> DocumentFields:
    """The fields of the version of *source* (its bytes, or the local file holding them) under *settings*.

    Args:
        size_bytes: the bytes' length (the stored size when *properties* do not say).
        properties: what storage says about the source (``None``: nothing but the name and the bytes).
        pages: every page of the document, when it was read whole; ``None`` for a PDF read in page ranges (its
            first ``HEAD_PAGES`` pages are read for the title and language).
        context: the limits and deadline of the read (the head of a PDF is read within them).
        head: the declared title and first ``HEAD_PAGES`` pages when the caller has read them already
            (``chunking.parsers.sandbox.read_first_range_bounded``, with the page count); then nothing is read here.

    Raises:
        ParseError: reading the head of the PDF failed (the range's own read would fail the same way).
    """
    properties = properties or SourceProperties()
    if properties.size_bytes is None:
        properties = dataclasses.replace(properties, size_bytes=size_bytes)
    fmt = format_of(source)
    if head is not None:
        declared, first = head[0], list(head[1])
    else:
        wanted = HEAD_PAGES if pages is None and fmt is not None and fmt.page_ranges else 0
        declared, first = read_head_bounded(local, source=source, settings=settings, context=context,
                                            readers=readers, pages=wanted)
    return configured_fields(settings, b"", source, first if pages is None else pages, properties,
                             declared_title=declared)
