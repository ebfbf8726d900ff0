"""PDF files: one page of text per PDF page, extracted with pypdfium2 (Google's PDFium, Apache-2.0/BSD-3).

Why pypdfium2: ``benchmarks/pdf_parsers.py`` on the two corpus manuals (one run, 2 CPUs, Python 3.11,
pypdfium2 5.15.2, pypdf 7.1.1; "ours" is this module, pypdfium2 plus the clean-up below):

=========  =========  =======  =====  =======  ======  ===========  ==========  =========
file       extractor  seconds  pages  chars    glued   eol-hyphens  cjk-spaced  ligatures
=========  =========  =======  =====  =======  ======  ===========  ==========  =========
en         pypdfium2  0.28     101    200,077  15      63 (marked)  0           0
en         pypdf      4.16     101    181,849  1,587   62 (split)   0           0
en         ours       0.20     101    196,350  15      0            0           0
ja         pypdfium2  0.17     78     106,707  14      4 (marked)   95          0
ja         pypdf      3.02     78     103,608  14      4 (split)    255         0
ja         ours       0.26     78     103,843  14      0            0           0
=========  =========  =======  =====  =======  ======  ===========  ==========  =========

glued: runs of 20+ ASCII letters; the 14-15 that remain are real LaTeX macro names (``AMCquestionNumberfalse``).
eol-hyphens: words split by a line-end hyphen ("com-\\nmand"), or PDFium's mark for one. cjk-spaced: a space
between two CJK characters. Neither library produced ligature characters or U+FFFD on these files.

pypdf glues the words of every justified English line ("Themaximumnumberofstudents…"), letter-spaces more
Japanese lines, is 15-20 times slower, and warns about fonts it cannot decode without fontTools. PDFium keeps
word spaces from glyph positions and marks the line-end hyphens it recognises, so they can be joined. pymupdf
is AGPL and was not considered.

Clean-up, in order (``_clean_page_text``):
  1. ``\\r\\n`` and ``\\r`` become ``\\n``.
  2. PDFium's line-end hyphen mark (U+FFFE from ``get_text_range``) joins the two halves of a word:
     "com-|mand" → "command"; if the left half already holds a hyphen, the hyphen is kept
     ("auto-multiple-choice-|analyse" → "auto-multiple-choice-analyse"), because compound names break there.
  3. NUL, form feed and the other C0 control characters except tab and newline are dropped.
  4. A single space between two CJK characters is dropped: justified Japanese lines come out letter-spaced
     ("特 定 の 設 問"), and Chinese and Japanese do not put spaces between words.
  5. Spaces and tabs at the end of each line are dropped; a non-empty page ends with exactly one ``\\n``,
     so that the concatenated pages keep a line break at every page boundary.

Then running headers, footers and bare page numbers are recognised across the document and moved out of the
page text into ``Page.header`` / ``Page.footer`` (``chunking/parsers/furniture.py``; docs/splitters.md#page-furniture).
"""

from __future__ import annotations

import contextlib
import re
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import pypdfium2 as pdfium

from chunking.model import Page
from chunking.parsers._common import ParseError, ReadContext, normalize_newlines
from chunking.parsers.furniture import FurnitureKeys, cut_furniture, edge_keys, learn_furniture
from chunking.parsers.pdf.streams import inflated_bytes
from chunking.parsers.pdf.tables import PdfTables, page_has_grid
from chunking.parsers.scans import check_pictures, page_pictures, scanned_page_text

__all__ = ["HOLD_CHARS", "PDFIUM_LOCK", "PageLoads", "page_count", "parse"]

# PDFium is not thread-safe (pypdfium2 README, "Thread safety"); the Functions host may run invocations on
# several threads of one worker process, so every call into PDFium goes through this lock.
PDFIUM_LOCK = threading.Lock()

# FPDF_ERR_PASSWORD (fpdfview.h): the document needs a password to open.
_ERR_PASSWORD = 4
# What FPDF_GetLastError's codes mean (fpdfview.h), in words for a reason; 0 (FPDF_ERR_SUCCESS) and 1 mean
# PDFium did not say why, which pypdfium2 prints as "PDFium: Success".
_LOAD_ERRORS = {
    2: "PDFium could not open it",
    3: "not a PDF, or damaged beyond repair",
    5: "its security handler is not supported",
}
_NO_REASON = "damaged or truncated (PDFium gave no reason)"
_PDFIUM_SAYS = re.compile(r"\s*\(PDFium: [^)]*\)")

# PDFium marks a hyphen it removed at a line end with U+FFFE (get_text_range) or U+0002 (get_text_bounded).
# _HYPHEN_MARK is the rule of clean-up step 2 as a regular expression; ``_join_hyphenated`` applies it in linear time.
_HYPHEN_MARK = re.compile(r"(\S*)[\ufffe\x02]\n?")
_MARK = re.compile(r"[\ufffe\x02]")
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# Han, kana, CJK punctuation and full-width forms; Hangul is left out because Korean spaces its words.
_CJK = r"[\u2e80-\u2fdf\u3000-\u30ff\u3190-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]"
_CJK_SPACE = re.compile(f"(?<={_CJK}) (?={_CJK})")


#: Page texts held in memory for the furniture pass while their characters stay under this; past it, they wait in
#: a temporary file (``_HeldTexts``), so a document's memory never grows with its length.
HOLD_CHARS = 2_000_000
#: Pages whose texts are held at once while their tables are found (a window of the range).
TABLE_WINDOW_PAGES = 64

#: What loading a page gave, by 0-based page index: its text layer as PDFium gives it (before OCR, pictures and
#: clean-up, which run on every read) and whether it passes the table gate (``parse``'s ``page_loads``).
PageLoads = dict[int, tuple[str, bool]]


def parse(data: bytes | Path, *, source: str, context: ReadContext | None = None, start: int = 0,
          end: int | None = None, offset: int = 0, check_streams: bool = True,
          furniture: FurnitureKeys | None = None,
          learnt: Callable[[FurnitureKeys], None] | None = None,
          page_loads: PageLoads | None = None, record_loads: PageLoads | None = None) -> Iterator[Page]:
    """Parse a PDF into one page per PDF page, blank pages included (so ``page_num`` is the PDF page index),
    page by page: a generator that holds one page's text at a time (plus at most ``HOLD_CHARS`` characters of
    the pages before, for the furniture pass; past that they wait in a temporary file, so each page is read from
    PDFium once).

    Args:
        data: the raw PDF bytes, or the path of a local file holding them (PDFium then reads the file as it
            needs it, and the bytes are never in memory at once).
        source: file name, used in errors.
        context: limits (``MAX_DECOMPRESSED_BYTES``, ``MAX_PAGES``, ``MAX_PAGE_CHARS``) and the stage-1 deadline,
            checked before PDFium reads the file and then page by page; default limits when ``None``.
        start, end: the page range to read (0-based, *end* excluded; ``None`` = to the last page). Running
            headers and footers are recognised within the range (docs/splitters.md#page-furniture).
        offset: document offset of the range's first character (the pages before it, header + text + footer).
        check_streams: scan the compressed streams against ``MAX_DECOMPRESSED_BYTES`` first (a later range of a
            document whose first range passed skips it).
        furniture: keys learnt from the range before, also cut in this one (a range too short to show its
            running header on enough pages still loses it). learnt: called with the keys learnt from this range's
            own pages, before the first page is yielded.
        page_loads: what an earlier read of this document got from loading pages (``PageLoads``): a page found
            there is taken from it instead of being loaded again. record_loads: where to record what loading each
            page gave. Stage 1 records the loads of a PDF's head (its first pages, read for the title and
            language) and hands them to the read of its first page range, so those pages are loaded once.

    Yields:
        ``Page(page_num, offset, text, header, footer)`` for each PDF page of the range in order, ``page_num``
        0-based, ``offset`` the sum of the lengths of the previous pages' ``header + text + footer`` plus this
        page's ``header``. Texts are cleaned as the module docstring describes.

    Raises:
        ParseError: ``encrypted PDF`` when a password is needed to open it; ``not a valid PDF: …`` when PDFium
            cannot load it; ``could not read page N: …`` (N 1-based) when a page fails to extract; the limits'
            reasons (``expands past 100 MB when decompressed (MAX_DECOMPRESSED_BYTES)``, ``N pages, more than
            5000 (MAX_PAGES)``, ``page N has more than … characters (MAX_PAGE_CHARS)``, ``STAGE1_MAX_SECONDS``).
    """
    context = context if context is not None else ReadContext()
    # PDFium inflates a page's content stream whole: a flate bomb is refused before PDFium sees it.
    if check_streams and _inflated(data, context.limits.max_decompressed_bytes) > context.limits.max_decompressed_bytes:
        raise ParseError(source, context.limits.decompressed_reason())
    with _open(data, source) as document:
        count = _count(document, source, context)
        end = count if end is None else min(end, count)
        check_pictures(data, context)  # whether its pages may draw pictures to read (chunking/parsers/scans.py)
        held = _HeldTexts(spill_chars=2 * context.limits.max_document_chars)
        try:
            edges = []
            for text in _range_texts(document, data, start, end, source, context, page_loads, record_loads):
                edges.append(edge_keys(text))
                held.add(text)
            keys = learn_furniture(edges)
            del edges
            if learnt is not None:
                learnt(keys)
            if furniture is not None:
                keys = FurnitureKeys(keys.top | furniture.top, keys.bottom | furniture.bottom)
            texts = (held.texts() if held.complete
                     else _range_texts(document, data, start, end, source, context, page_loads, record_loads))
            for index, text in zip(range(start, end), texts):
                parts = cut_furniture(text, keys)
                yield Page(index, offset + len(parts.header), parts.body, parts.header, parts.footer)
                offset += len(parts.header) + len(parts.body) + len(parts.footer)
        finally:
            held.close()  # also when the consumer stops early


class _HeldTexts:
    """A range's page texts, kept from the furniture pass to the pass that yields them, so PDFium reads each page
    once: in memory up to ``HOLD_CHARS`` characters, then all of them in an anonymous temporary file (UTF-8,
    length-prefixed) up to *spill_chars*; past that, none is kept (``complete`` is False) and the caller reads
    the pages again, as it did for every long range before. Memory stays bounded by ``HOLD_CHARS`` either way;
    the file by *spill_chars* (twice ``MAX_DOCUMENT_CHARS``: a range past that fails on its text anyway)."""

    def __init__(self, *, spill_chars: int) -> None:
        self._texts: list[str] = []
        self._file: IO[bytes] | None = None
        self._chars, self._spill_chars = 0, spill_chars
        self.complete = True

    def add(self, text: str) -> None:
        if not self.complete:
            return
        self._chars += len(text)
        if self._chars > self._spill_chars:
            self.close()
            self.complete = False
        elif self._file is not None or self._chars > HOLD_CHARS:
            if self._file is None:
                self._file = tempfile.TemporaryFile()  # noqa: SIM115  # closed by close(), in parse's finally
                for held in self._texts:
                    self._write(held)
                self._texts = []
            self._write(text)
        else:
            self._texts.append(text)

    def _write(self, text: str) -> None:
        assert self._file is not None
        encoded = text.encode("utf-8", "surrogatepass")
        self._file.write(len(encoded).to_bytes(8, "little"))
        self._file.write(encoded)

    def texts(self) -> Iterator[str]:
        """The texts in order, each let go once given."""
        if self._file is None:
            texts, self._texts = self._texts, []
            for i, text in enumerate(texts):
                texts[i] = ""
                yield text
            return
        self._file.seek(0)
        while header := self._file.read(8):
            yield self._file.read(int.from_bytes(header, "little")).decode("utf-8", "surrogatepass")

    def close(self) -> None:
        self._texts = []
        if self._file is not None:
            self._file.close()
            self._file = None


def _range_texts(document: pdfium.PdfDocument, data: bytes | Path, start: int, end: int, source: str,
                 context: ReadContext, page_loads: PageLoads | None = None,
                 record_loads: PageLoads | None = None) -> Iterator[str]:
    """The cleaned texts of pages *start* … *end* - 1, ruled tables rendered as ``<figure><table>`` blocks
    (``chunking.parsers.pdf.tables``), read ``TABLE_WINDOW_PAGES`` pages at a time. Each page is loaded once
    for its text and the table gate."""
    tables = PdfTables(document, source=source, context=context, lock=PDFIUM_LOCK, clean=_clean_page_text)
    for window in range(start, end, TABLE_WINDOW_PAGES):
        texts, grid_pages = [], []
        for i in range(window, min(end, window + TABLE_WINDOW_PAGES)):
            text, grid = _read_page(document, i, source, context, page_loads, record_loads)
            texts.append(text)
            if grid:
                grid_pages.append(i)
        yield from tables.add(texts, start=window, last=window + TABLE_WINDOW_PAGES >= end, grid_pages=grid_pages)


def page_count(data: bytes | Path, *, source: str, context: ReadContext | None = None) -> int:
    """The number of pages of a PDF (bytes or a local file), after the check of its compressed streams.

    Raises:
        ParseError: as ``parse``: expands past ``MAX_DECOMPRESSED_BYTES``, not a PDF, encrypted, more than
            ``MAX_PAGES`` pages.
    """
    context = context if context is not None else ReadContext()
    if _inflated(data, context.limits.max_decompressed_bytes) > context.limits.max_decompressed_bytes:
        raise ParseError(source, context.limits.decompressed_reason())
    with _open(data, source) as document:
        return _count(document, source, context)


def _inflated(data: bytes | Path, budget: int) -> int:
    if not isinstance(data, Path):
        return inflated_bytes(data, budget)
    import mmap

    with open(data, "rb") as file:
        if file.seek(0, 2) == 0:
            return 0
        with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as view:
            return inflated_bytes(view, budget)  # type: ignore[arg-type]  # re scans any buffer


@contextlib.contextmanager
def _open(data: bytes | Path, source: str) -> Iterator[pdfium.PdfDocument]:
    """The PDFium document of *data*, closed on exit. Every PDFium call holds ``PDFIUM_LOCK`` only for itself,
    never across a ``yield`` of a page: a consumer that stops iterating must not leave the lock held."""
    with PDFIUM_LOCK:
        try:
            document = pdfium.PdfDocument(str(data) if isinstance(data, Path) else data)
        except pdfium.PdfiumError as error:
            code = getattr(error, "err_code", None)
            if code == _ERR_PASSWORD:
                raise ParseError(source, "encrypted PDF") from None
            raise ParseError(source, f"not a valid PDF: {_LOAD_ERRORS.get(code, _NO_REASON)}") from None
    try:
        yield document
    finally:
        with PDFIUM_LOCK:
            document.close()


def _count(document: pdfium.PdfDocument, source: str, context: ReadContext) -> int:
    with PDFIUM_LOCK:
        count = len(document)
    if count > context.limits.max_pages:
        raise ParseError(source, context.limits.pages_reason(count))
    return count


def _read_page(document: pdfium.PdfDocument, index: int, source: str, context: ReadContext,
               page_loads: PageLoads | None = None, record_loads: PageLoads | None = None) -> tuple[str, bool]:
    """Page *index*'s cleaned text, within the deadline and ``MAX_PAGE_CHARS``, and whether it passes the table
    gate (``chunking.parsers.pdf.tables.page_has_grid``), both from one load of the page, or from what an
    earlier read's load gave (*page_loads*: taken out, so each is used once); recorded in *record_loads*."""
    context.check_time(source)
    loaded = page_loads.pop(index, None) if page_loads is not None else None
    text, grid = loaded if loaded is not None else _load_page(document, index, source, context)
    if record_loads is not None:
        record_loads[index] = (text, grid)
    try:
        if not text.strip():  # no text layer: a scanned page is read by OCR (chunking/parsers/scans.py)
            text = scanned_page_text(document, index, source=source, context=context, lock=PDFIUM_LOCK)
        else:  # its pictures' text, if any (chunking/parsers/scans.py)
            text += page_pictures(document, index, source=source, context=context, lock=PDFIUM_LOCK)
    except pdfium.PdfiumError as error:  # a damaged page PDFium loaded once may fail to load again
        raise ParseError(source, f"could not read page {index + 1}: {_pdfium_reason(error)}") from None
    if len(text) > context.limits.max_page_chars:
        raise ParseError(source, context.limits.page_chars_reason(index))
    return _clean_page_text(text), grid


def _load_page(document: pdfium.PdfDocument, index: int, source: str, context: ReadContext) -> tuple[str, bool]:
    """One load of page *index*: its text layer as PDFium gives it, and whether it passes the table gate."""
    with PDFIUM_LOCK:
        try:
            page = document[index]
        except pdfium.PdfiumError as error:
            raise ParseError(source, f"could not read page {index + 1}: {_pdfium_reason(error)}") from None
        try:
            text = _page_text(page)
            grid = len(text) <= context.limits.max_page_chars and page_has_grid(page, index, context)
        except pdfium.PdfiumError as error:
            raise ParseError(source, f"could not read page {index + 1}: {_pdfium_reason(error)}") from None
        finally:
            page.close()
    return text, grid


def _pdfium_reason(error: Exception) -> str:
    """PDFium's message in words: pypdfium2 says "Failed to load page." (a page-tree cycle or a missing page
    object) and may end with a meaningless "(PDFium: Success)"."""
    text = _PDFIUM_SAYS.sub("", str(error)).strip().rstrip(".")
    if text.lower() == "failed to load page":
        return "PDFium could not load it (damaged page tree, or the page object is missing)"
    return f"{text or 'PDFium failed'}: {_NO_REASON}" if "Success" in str(error) or not text else text


def _page_text(page: pdfium.PdfPage) -> str:
    text_page = page.get_textpage()
    try:
        return text_page.get_text_range()
    finally:
        text_page.close()


def _clean_page_text(text: str) -> str:
    text = normalize_newlines(text)
    text = _join_hyphenated(text)
    text = _CONTROL_CHARS.sub("", text)
    text = _CJK_SPACE.sub("", text)
    text = "\n".join(line.rstrip(" \t") for line in text.split("\n")).strip("\n")  # spaces at line ends
    return text + "\n" if text else ""


def _join_hyphenated(text: str) -> str:
    """Step 2 of the clean-up: each run of non-space characters holding PDFium's line-end hyphen marks loses its
    last mark (and a newline right after it); the characters before the mark keep a hyphen when they hold one.

    The same result as ``_HYPHEN_MARK.sub`` with that replacement (a test checks it on random texts), found from
    the marks in linear time: the regular expression tries every start position of a run without a mark to
    its end, quadratic in the run's length, which a CJK line without spaces makes long."""
    if "\ufffe" not in text and "\x02" not in text:
        return text
    out: list[str] = []
    done, size = 0, len(text)
    for mark in _MARK.finditer(text):
        at = mark.start()
        if at < done:
            continue
        start = at  # the run of non-space characters holding the mark, from where the last match ended
        while start > done and not text[start - 1].isspace():
            start -= 1
        end = at + 1
        while end < size and not text[end].isspace():
            end += 1
        last = max(text.rfind("\ufffe", at, end), text.rfind("\x02", at, end))
        left = text[start:last]
        out += (text[done:start], left + "-" if "-" in left else left)
        done = last + 1
        if done < size and text[done] == "\n":
            done += 1
    out.append(text[done:])
    return "".join(out)
