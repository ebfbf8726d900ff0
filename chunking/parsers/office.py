"""What the Office parsers (PPTX, XLSX, XLS) share: the package checks made before a library opens the file, a
worksheet's used range, and the rendering of table cells and values.

The checks are those of the DOCX parser (``chunking.parsers.docx``): an OLE compound file (password-protected or
an old binary format renamed) is refused, so is anything that is not a ZIP, and so is a ZIP whose members really
inflate past ``MAX_DECOMPRESSED_BYTES`` (``chunking.parsers.packages`` inflates them to count). A part with a
document type declaration is refused: Office never writes one, and not every XML reader a library uses leaves
entities unresolved.
"""

from __future__ import annotations

import datetime as _dt
import html
import zipfile
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass

from chunking.parsers._common import ParseError, ReadContext
from chunking.parsers.packages import DamagedMember, PackageScan, open_package, scan_package

__all__ = ["UsedRange", "check_package", "html_table", "render_value", "scan_office_package", "used_range"]

_CONTENT_TYPES = "[Content_Types].xml"  # the package's part list, at its root
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # [MS-CFB] §2.2 compound file header signature
_MAX_EXACT_INT = 2**53  # floats above this are not exact integers any more
ROWS_PER_CHECK = 1000  # rows of a worksheet read between two checks of the stage-1 deadline


def scan_office_package(data: bytes, *, source: str, context: ReadContext, kind: str,
                        old_format: str) -> PackageScan:
    """The checks every Office Open XML parser makes before a library opens *data*: not an OLE compound file,
    a ZIP, and its members inflating within ``MAX_DECOMPRESSED_BYTES`` (declared sizes lie in a zip bomb, so the
    members are inflated, and the output dropped, to count). What to do with parts holding a DTD is the caller's.

    Args:
        kind: the format's name in reasons (``"DOCX"``); old_format: its binary predecessor (``".doc"``).

    Returns:
        the scan (``dtd_parts`` lists the parts with a document type declaration).

    Raises:
        ParseError: ``not a valid DOCX: password-protected, or an old .doc file (OLE compound file)``, ``not a
            valid DOCX: not a ZIP package (…)``, ``not a valid DOCX: damaged ZIP member word/document.xml: …``
            (``chunking.parsers.packages.DamagedMember``), the ``MAX_DECOMPRESSED_BYTES`` reason, ``not a valid DOCX:
            word/document.xml is encrypted``, or ``not a valid DOCX: a ZIP without [Content_Types].xml, so not an
            Office file``.
    """
    if data.startswith(_OLE_MAGIC):
        raise ParseError(source, f"not a valid {kind}: password-protected, or an old {old_format} file "
                                 "(OLE compound file)")
    try:
        with open_package(data) as package:
            scan = scan_package(package, data, context.limits.max_decompressed_bytes)
            typed = _CONTENT_TYPES in package.NameToInfo
    except DamagedMember as error:
        raise ParseError(source, f"not a valid {kind}: {error}"[:300]) from None
    except zipfile.BadZipFile as error:
        raise ParseError(source, f"not a valid {kind}: not a ZIP package ({error})"[:300]) from None
    if scan.over_budget:
        raise ParseError(source, context.limits.decompressed_reason())
    if scan.encrypted:  # Office encrypts a whole file as an OLE compound file, never a ZIP member
        raise ParseError(source, f"not a valid {kind}: {scan.encrypted[0]} is encrypted")
    if not typed:  # every Office Open XML package has it (ECMA-376 part 2, Open Packaging Conventions)
        raise ParseError(source, f"not a valid {kind}: a ZIP without {_CONTENT_TYPES}, so not an Office file")
    return scan


def check_package(data: bytes, *, source: str, context: ReadContext, kind: str, old_format: str) -> None:
    """Refuse what a library should not open (module docstring).

    Args:
        kind: the format's name in reasons (``"PPTX"``); old_format: its binary predecessor (``".ppt"``).

    Raises:
        ParseError: ``not a valid PPTX: password-protected, or an old .ppt file (OLE compound file)``, ``not a
            valid PPTX: not a ZIP package (…)``, the ``MAX_DECOMPRESSED_BYTES`` reason, or ``not a valid PPTX:
            ppt/slides/slide1.xml holds a DTD (Office never writes one)``.
    """
    scan = scan_office_package(data, source=source, context=context, kind=kind, old_format=old_format)
    if scan.dtd_parts:
        raise ParseError(source, f"not a valid {kind}: {scan.dtd_parts[0]} holds a DTD (Office never writes one)")


def render_value(value: object) -> str:
    """A cell value as text: ``None`` → ``""``; whole floats without ``.0`` (``3.0`` → ``"3"``), other floats by
    ``repr`` (shortest exact form); booleans as ``TRUE``/``FALSE`` (as a spreadsheet shows them); a datetime at
    midnight as its date (``2024-05-01``), others in ISO 8601; a time as ``HH:MM[:SS]``."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < _MAX_EXACT_INT:
            return str(int(value))
        return repr(value)
    if isinstance(value, _dt.datetime):
        if value.time() == _dt.time(0, 0):
            return value.date().isoformat()
        return value.isoformat(sep=" ", timespec="seconds" if value.microsecond == 0 else "auto")
    if isinstance(value, _dt.time):
        return value.isoformat(timespec="seconds" if value.second else "minutes")
    if isinstance(value, (_dt.date, _dt.timedelta)):
        return value.isoformat() if isinstance(value, _dt.date) else str(value)
    return str(value)


@dataclass
class UsedRange:
    """A worksheet's used range: its rows as ``(1-based row number, cell texts)`` in sheet order, and the 0-based
    first and last columns holding a value."""

    rows: list[tuple[int, list[str]]]
    first_col: int
    last_col: int


def used_range(rows: Iterable[list[str]], *, source: str, index: int, caption: str, context: ReadContext,
               keep: Container[int] = ()) -> UsedRange | None:
    """The used range of a worksheet whose rows (cell texts, row 1 first, empty rows included) are *rows*: the rows
    holding a value, and the empty ones whose number is in *keep* (rows taking part in a merged range); ``None``
    when no cell holds a value.

    Raises:
        ParseError: ``page N has more than … characters (MAX_PAGE_CHARS)`` (sheet *index*), counted row by row with
            the *caption* and the ``<td></td>`` around each cell, so a huge sheet is refused without being held;
            the ``STAGE1_MAX_SECONDS`` reason, checked every ``ROWS_PER_CHECK`` rows.
    """
    limits = context.limits
    kept: list[tuple[int, list[str]]] = []
    chars = len(caption)
    first_col, last_col = None, -1
    for number, cells in enumerate(rows, start=1):
        if number % ROWS_PER_CHECK == 0:
            context.check_time(source)
        filled = [i for i, text in enumerate(cells) if text.strip()]
        if not filled:
            if number in keep:
                kept.append((number, cells))
            continue
        first_col = filled[0] if first_col is None else min(first_col, filled[0])
        last_col = max(last_col, filled[-1])
        chars += sum(len(text) + 9 for text in cells)  # "<td></td>" around each cell
        if chars > limits.max_page_chars:
            raise ParseError(source, limits.page_chars_reason(index))
        kept.append((number, cells))
    return None if first_col is None else UsedRange(kept, first_col, last_col)


def _cell(tag: str, text: str, rowspan: int = 1, colspan: int = 1) -> str:
    attributes = (f' rowspan="{rowspan}"' if rowspan > 1 else "") + (f' colspan="{colspan}"' if colspan > 1 else "")
    return f"<{tag}{attributes}>{html.escape(text, quote=False)}</{tag}>"


def html_table(rows: Sequence[Sequence[tuple[str, int, int]]], *, header_rows: int = 0,
               caption: str = "") -> str:
    """Rows of ``(text, rowspan, colspan)`` cells as one ``<figure><table>`` block, a line per row.

    The first *header_rows* rows are ``<th>`` cells inside ``<thead>`` (on one line), which the sentence splitter
    repeats in every part of a table it has to split (docs/splitters.md). Cell text is HTML-escaped and its
    whitespace runs made single spaces, so a row stays on its line.

    Example: ``html_table([[("a", 1, 2)], [("b", 1, 1), ("c", 1, 1)]], header_rows=1)`` →
    ``<figure><table>\\n<thead><tr><th colspan="2">a</th></tr></thead>\\n<tr><td>b</td><td>c</td></tr>\\n``
    ``</table></figure>``.
    """
    lines = [f"<caption>{html.escape(' '.join(caption.split()), quote=False)}</caption>"] if caption.strip() else []
    head = []
    for index, row in enumerate(rows):
        tag = "th" if index < header_rows else "td"
        line = "<tr>" + "".join(_cell(tag, " ".join(text.split()), rs, cs) for text, rs, cs in row) + "</tr>"
        (head if index < header_rows else lines).append(line)
    if head:
        lines.insert(1 if caption.strip() else 0, "<thead>" + "".join(head) + "</thead>")
    return "<figure><table>\n" + "\n".join(lines) + "\n</table></figure>"
