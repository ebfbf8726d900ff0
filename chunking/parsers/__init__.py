"""Document parsers: bytes of one file in, its text as ``Page`` objects out.

Each format has a module with one ``parse(data, *, source) -> Iterator[Page]``; ``parse_document`` picks the
module from the file extension (by the table ``chunking.formats.FORMATS``) and turns every failure into a
``ParseError`` whose reason a person can act on (the pipeline stores it in the ledger as the reason a file was not
indexed).

Shared rules: ``page_num`` is 0-based and strictly increasing; a page's ``offset`` is the total length of the
texts of the pages before it, so the page texts concatenated are the document text; formats without pages
give one page. Headings are Markdown ``#`` lines and tables ``<figure><table>…</table></figure>`` blocks.

May import: core, errors.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from azure.core.exceptions import AzureError

from chunking.formats import FORMATS, SUPPORTED_EXTENSIONS, extension_of, format_of
from chunking.model import Page
from chunking.parsers import docx, html, image, json, pdf, pptx, text, xlsx
from chunking.parsers import archive, eml, epub, odf, rtf, xls
from chunking.parsers import msg
from chunking.parsers._common import ParseError, ReadContext, UnsupportedFileType
from chunking.parsers.furniture import FurnitureKeys

__all__ = ["SUPPORTED_EXTENSIONS", "ParseError", "ReadContext", "UnsupportedFileType", "no_text_error", "page_count",
           "parse_document", "read_pages"]

_Parser = Callable[..., Iterator[Page]]

#: The parser of each format: which extension goes to which module is decided in ``chunking.formats``.
_MODULES: dict[str, _Parser] = {"pdf": pdf.parse, "docx": docx.parse, "html": html.parse, "json": json.parse,
                                "text": text.parse, "pptx": pptx.parse, "xlsx": xlsx.parse, "image": image.parse}
_MODULES.update({"epub": epub.parse, "odf": odf.parse, "rtf": rtf.parse, "xls": xls.parse, "eml": eml.parse,
                 "archive": archive.parse})
_MODULES.update({"msg": msg.parse})
_PARSERS: dict[str, _Parser] = {ext: _MODULES[fmt.parser] for ext, fmt in FORMATS.items()}

_MAX_DETAIL_CHARS = 300  # of a library's error message quoted in a reason, to keep ledger entries short
_BYTES_PER_MB = 1024 * 1024  # sizes are reported in MiB, like the Azure limits they are compared with


def parse_document(data: bytes | Path, *, source: str, max_bytes: int | None = None,
                   context: ReadContext | None = None, readers: Mapping[str, _Parser] | None = None) -> list[Page]:
    """Parse one file into its pages, choosing the parser by the extension of ``source``.

    Args:
        data: the raw file content.
        source: the file's name or blob path (e.g. ``"docs/Guide.PDF"``); its extension, compared
            case-insensitively, selects the parser, and it names the file in every error.
        max_bytes: largest accepted ``len(data)`` in bytes; ``None`` for no limit.
        context: the per-document limits and deadline, and where notes about the document are collected
            (default: ``ReadContext()``, the default limits and no deadline).
        readers: extension → parser replacing the local one (``chunking.services.document_readers``:
            Document Intelligence for the extensions the settings send to it).

    Returns:
        The pages in order, at least one, with text in at least one of them. Example: a two-page PDF gives
        ``[Page(0, 0, "ab\\n"), Page(1, 3, "cd\\n")]``.

    Raises:
        UnsupportedFileType: the extension is not in ``SUPPORTED_EXTENSIONS`` (``unsupported file type .xyz``).
        ParseError: ``file is empty``; ``exceeds max size N MB``; ``encrypted PDF``; ``not a valid PDF: …``;
            ``not a valid DOCX: …``; ``not valid UTF-8 or any detected
            encoding``; ``invalid JSON: line L column C: …``; ``no text found``; a limit's reason naming its
            setting (``more than 10000000 characters of text (MAX_DOCUMENT_CHARS)``, see ``chunking.parsers.limits``);
            or ``could not parse: …`` wrapping any other failure of a parsing library.
        azure.core.exceptions.AzureError: a service parser (Document Intelligence) could not be reached or kept
            failing: transient, the document is worth another try.
    """
    size_bytes = data.stat().st_size if isinstance(data, Path) else len(data)
    pages = list(read_pages(data, source=source, size_bytes=size_bytes, max_bytes=max_bytes, context=context,
                            readers=readers))
    if not any(page.text.strip() for page in pages):
        raise no_text_error(source)
    return pages


def read_pages(data: bytes | Path, *, source: str, size_bytes: int | None = None, max_bytes: int | None = None,
               context: ReadContext | None = None, start: int = 0, end: int | None = None, offset: int = 0,
               chars_before: int = 0, check_streams: bool | None = None, furniture: FurnitureKeys | None = None,
               learnt: Callable[[FurnitureKeys], None] | None = None,
               readers: Mapping[str, _Parser] | None = None, page_loads: pdf.PageLoads | None = None,
               record_loads: pdf.PageLoads | None = None) -> Iterator[Page]:
    """``parse_document`` page by page, for stage 1's bounded memory: a generator of the pages of one page range
    (PDF) or of the whole document (every other format, which has one page, or whose pages need the whole
    file), with every error a ``ParseError`` as there.

    Args:
        data: the raw bytes, or the path of a local file holding them (a PDF is then read from the file as
            PDFium needs it; other formats read the file).
        size_bytes: ``len(data)`` or the file's size, when the caller knows it.
        start, end, offset: the PDF page range and the document offset where it starts (``pdf.parse``); a range
            after the first skips the checks of the whole file (size, emptiness, compressed streams).
        chars_before: characters of the document's text in the ranges before, counted against
            ``MAX_DOCUMENT_CHARS``.
        check_streams: scan a PDF's compressed streams against ``MAX_DECOMPRESSED_BYTES`` (default: in the first
            range only; ``page_count`` scans them too).
        furniture, learnt: a PDF range's running headers and footers, as ``pdf.parse`` takes and reports them.
        readers: as in ``parse_document`` (a service parser reads the whole document: no page ranges).
        page_loads, record_loads: a PDF's page loads to reuse and to record, as ``pdf.parse`` takes them (a
            range's read reuses those its head read recorded); other formats ignore them.

    Does not check that the document holds text: the caller does, once all ranges were read (``no_text_error``).
    """
    extension = extension_of(source)
    parser = (readers or {}).get(extension) or _PARSERS.get(extension)
    if parser is None:
        reason = f"unsupported file type {extension}" if extension else "unsupported file type (no extension)"
        raise UnsupportedFileType(source, reason)
    first = start == 0
    if first:
        size_bytes = size_bytes if size_bytes is not None else (
            data.stat().st_size if isinstance(data, Path) else len(data))
        if not size_bytes:
            raise ParseError(source, "file is empty")
        if max_bytes is not None and size_bytes > max_bytes:
            raise ParseError(source, f"exceeds max size {_format_size(max_bytes)}")

    context = context if context is not None else ReadContext()
    limits = context.limits
    try:
        if parser is pdf.parse:
            pages = pdf.parse(data, source=source, context=context, start=start, end=end, offset=offset,
                              check_streams=first if check_streams is None else check_streams,
                              furniture=furniture, learnt=learnt, page_loads=page_loads,
                              record_loads=record_loads)
        else:
            pages = parser(data.read_bytes() if isinstance(data, Path) else data, source=source, context=context)
        chars = chars_before
        for page in pages:
            chars += len(page.text)
            if chars > limits.max_document_chars:
                raise ParseError(source, limits.document_chars_reason())
            yield page
    except (ParseError, AzureError):  # a service's failure is not the document's: it propagates as it is
        raise
    except RecursionError:
        # Parsers bound their recursion by MAX_NESTING_DEPTH; only a limit set above what Python's stack allows
        # gets here.
        raise ParseError(source, f"nested too deeply to parse: lower MAX_NESTING_DEPTH (now "
                                 f"{limits.max_nesting_depth}) to have such files refused early") from None
    except MemoryError:
        raise ParseError(source, "out of memory while parsing: lower MAX_DECOMPRESSED_BYTES or "
                                 "MAX_DOCUMENT_CHARS") from None
    except Exception as error:  # a library failure must still name the file and reach the ledger
        detail = str(error)[:_MAX_DETAIL_CHARS]
        raise ParseError(source, f"could not parse: {type(error).__name__}: {detail}") from error


def no_text_error(source: str) -> ParseError:
    """The reason for a document none of whose pages holds text."""
    fmt = format_of(source)
    hint = f" (scanned or image-only PDF?): {image.NEEDS_OCR}" if fmt is not None and fmt.parser == "pdf" else ""
    return ParseError(source, f"no text found{hint}")


def page_count(data: bytes | Path, *, source: str, context: ReadContext | None = None,
               readers: Mapping[str, _Parser] | None = None) -> int | None:
    """Pages of a document that can be read in page ranges (the format table's ``page_ranges``: PDF) when its
    local parser reads it; ``None`` for other formats, and for one *readers* sends to a service.

    Raises:
        ParseError: a PDF that PDFium cannot open, or one over ``MAX_PAGES`` pages.
    """
    extension = extension_of(source)
    fmt = FORMATS.get(extension)
    if fmt is None or not fmt.page_ranges or (readers or {}).get(extension) \
            or _PARSERS.get(extension) is not pdf.parse:
        return None
    return pdf.page_count(data, source=source, context=context)


def _format_size(size_bytes: int) -> str:
    """``200 MB``, ``1.5 MB``; limits below 0.01 MB (only seen in tests) in bytes: ``10 bytes``."""
    mb = size_bytes / _BYTES_PER_MB
    if mb.is_integer():
        return f"{int(mb)} MB"
    if mb >= 0.01:
        return f"{mb:.2f}".rstrip("0").rstrip(".") + " MB"
    return f"{size_bytes} bytes"
