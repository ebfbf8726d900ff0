"""What a parse child reads at the start of stage 1 (``chunking.parsers.sandbox``'s targets): a document's page
count, declared title and first pages, and, for a PDF, its first page range after them, in one call. These run
in the child under ``PARSE_ISOLATION=process`` and in the worker itself otherwise; the functions of
``chunking.parsers.sandbox`` choose where.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from chunking.formats import format_of
from chunking.model import Page
from chunking.parsers import ReadContext, page_count, read_pages
from chunking.parsers.furniture import FurnitureKeys
from chunking.parsers.pdf import PageLoads
from chunking.parsers.titles import property_title

__all__ = ["TITLE_BYTES", "head_is_whole", "read_first_range", "read_head", "read_start", "title_needs_pdfium"]

#: How much of a file other than a PDF or a ZIP package ``read_head`` reads for its declared title.
TITLE_BYTES = 1 << 20


def head_is_whole(count: int, pages: int, head: list[Page]) -> bool:
    """The head read of a document of *count* pages was its whole read (``read_start``'s ``whole``)."""
    return count <= pages and len(head) == count


def read_first_range(data: bytes | Path, *, source: str, context: ReadContext, pages: int, range_pages: int,
                     started: Callable[[tuple[int, str, list[Page]]], None],
                     learnt: Callable[[FurnitureKeys], None] | None = None, **kwargs) -> Iterator[Page]:
    """``read_first_range_bounded``'s work in its child: ``read_start`` (its ``(count, title, head)`` handed to
    *started*), then, unless the head was the whole document, the pages 0 to ``min(count, range_pages)`` by
    ``read_pages(**kwargs)``, which takes the head's page loads instead of loading those pages again. Pictures
    the head kept are dropped unless the head is the whole document: the range's read keeps its own.

    Raises:
        ParseError: as ``read_start`` and ``read_pages`` raise.
    """
    count, title, head, loads = read_start(data, source=source, context=context, pages=pages)
    whole = bool(count) and head_is_whole(count, pages, head)
    if not whole:
        context.images.clear()
    started((count, title, head))
    if not count or whole:
        return
    yield from read_pages(data, source=source, context=context, start=0, end=min(count, range_pages),
                          learnt=learnt, page_loads=loads or None, **kwargs)


def read_start(data: bytes | Path, *, source: str, context: ReadContext,
               pages: int = 0) -> tuple[int, str, list[Page], PageLoads]:
    """``(page_count(…), *read_head(…), page loads)`` of a document with page ranges, in one call (one child
    process); ``(0, "", [], {})`` for a document without pages. The page loads are those of the head's pages
    (``read_start_bounded``); none when the head is the whole document (nothing reads those pages again).

    Raises:
        ParseError: as ``page_count`` and ``read_head`` raise.
    """
    count = page_count(data, source=source, context=context)
    if not count:
        return count, "", [], {}
    whole = count <= pages
    loads: PageLoads = {}
    title, head = read_head(data, source=source, context=context, pages=pages, whole=whole,
                            record_loads=None if whole else loads)
    return count, title, head, loads


def read_head(data: bytes | Path, *, source: str, context: ReadContext, pages: int = 0,
              whole: bool = False, record_loads: PageLoads | None = None) -> tuple[str, list[Page]]:
    """``(title, head)``: the title *source* declares (``chunking.parsers.titles.property_title``: PDF ``/Title``,
    ``dc:title``, ``<title>``, front matter; ``""`` if none) and, for a PDF, its first *pages* pages (``[]`` for
    0), read within the limits and deadline of *context*. *data* is the bytes or the local file holding them: a
    PDF is opened from the file, an Office package read whole, and other formats only in their first
    ``TITLE_BYTES`` (the title properties they have sit at their start). *record_loads*: where to record what
    loading the PDF's pages gave (``read_pages``), for the read of the range that holds them.

    Raises:
        ParseError: reading the pages failed, as ``read_pages`` raises.
    """
    if not isinstance(data, Path):
        title = property_title(data, source)
    elif title_needs_pdfium(source):
        title = property_title(str(data), source)  # type: ignore[arg-type]  # PDFium opens a path itself
    elif (fmt := format_of(source)) is not None and fmt.zip_package:  # the title is in a part of the package
        title = property_title(data.read_bytes(), source)
    else:
        with open(data, "rb") as file:
            title = property_title(file.read(TITLE_BYTES), source)
    # The pages are read again for their chunks, unless they are the whole document (*whole*: stage 1 then splits
    # these very pages): OCR only what the language needs.
    context.head = not whole
    try:
        head = list(read_pages(data, source=source, context=context, end=pages, check_streams=False,
                               record_loads=record_loads)) if pages else []
    finally:
        context.head = False
    return title, head


def title_needs_pdfium(source: str) -> bool:
    """The title *source* declares is read by PDFium (a PDF's document information), which opens a path."""
    fmt = format_of(source)
    return fmt is not None and fmt.title_source == "pdf-info"
