"""OpenDocument files (.odt, .ods, .odp): ``content.xml`` read with the standard library's ``zipfile`` and lxml.

What the body holds decides the pages (OpenDocument 1.3 Part 3, §3.3 "Document Body"):

- ``office:text`` (ODT): one page. ``text:h`` as ``#`` headings of its ``text:outline-level`` (at most 6),
  ``text:p`` as paragraphs, ``text:list`` as ``- item`` lines (two more spaces per level), ``table:table`` as a
  ``<figure><table>`` (first row a header row when it is in ``table:table-header-rows``), sections, text boxes
  and frames opened in document order. Footnotes and endnotes (``text:note``) are written after their paragraph
  as ``[^N]: text``; comments (``office:annotation``), change-tracked deletions and the table of contents are
  dropped.
- ``office:spreadsheet`` (ODS): one page per sheet, as the XLSX parser writes a sheet: the used range as a table
  captioned with the sheet's name, its first row the header row, fully empty rows left out. A cell shows its
  value (``office:value``, ``office:date-value``, ``office:boolean-value``; numbers as a spreadsheet shows them
  unformatted, ``chunking.parsers.office.render_value``), else its text; a formula's cached value is what the
  file stores, as XLSX's. ``table:number-rows-repeated``/``number-columns-repeated`` are expanded only for
  cells that hold something, so a sheet that declares a million empty rows costs nothing; spans become
  ``rowspan``/``colspan``.
- ``office:presentation`` (ODP): one page per slide (``draw:page``): its title frame as a ``#`` heading (``#
  Slide N`` without one), the other frames' text and tables in document order, images' titles and descriptions
  as ``<figure>`` lines, then the speaker notes after a ``Notes:`` line.

The package is checked first (``chunking.parsers.zipped``): ZIP, real inflated size, no encrypted member
(OpenDocument's own encryption, ``META-INF/manifest.xml``'s ``manifest:encryption-data``, is refused by name too,
since its ``content.xml`` is ciphertext). ``MAX_PAGES`` bounds sheets and slides, ``MAX_PAGE_CHARS`` each sheet
and slide, ``MAX_DOCUMENT_CHARS`` a text document, ``MAX_NESTING_DEPTH`` the XML.
"""

from __future__ import annotations

import datetime as _dt
import html as _html
import re
import zipfile
from collections.abc import Iterator

from chunking.model import Page
from chunking.parsers._common import ParseError, ReadContext, pages_from_texts
from chunking.parsers.office import html_table, render_value
from chunking.parsers.zipped import open_zip, read_member, read_xml

__all__ = ["parse"]

_NS = {
    "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
    "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
    "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
    "draw": "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0",
    "presentation": "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0",
    "svg": "urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0",
    "manifest": "urn:oasis:names:tc:opendocument:xmlns:manifest:1.0",
}


def _q(name: str) -> str:
    prefix, local = name.split(":")
    return f"{{{_NS[prefix]}}}{local}"


_KINDS = {"text": "ODT", "spreadsheet": "ODS", "presentation": "ODP"}
_SKIPPED = frozenset(_q(n) for n in (
    "office:annotation", "office:annotation-end", "text:tracked-changes", "text:table-of-content",
    "text:alphabetical-index", "text:illustration-index", "text:bibliography", "text:sequence-decls",
    "text:variable-decls", "text:user-field-decls", "office:forms", "table:named-expressions", "text:note-citation",
    "presentation:notes", "svg:title", "svg:desc",
))  # fmt: skip
_MAX_HEADING_LEVEL = 6
_SPACE = re.compile(r"[ \t\n\r]+")


def parse(data: bytes, *, source: str, context: ReadContext | None = None) -> Iterator[Page]:
    """Parse an OpenDocument text, spreadsheet or presentation (module docstring).

    Returns:
        ODT: one page; ODS: ``Page(n, …)`` for the ``n + 1``-th sheet (``""`` without values); ODP: one page per
        slide, each text ending with a newline.

    Raises:
        ParseError: ``not a valid OpenDocument: …`` (not a ZIP, no ``content.xml``, not well-formed, no document
            body); ``not a valid OpenDocument: password-protected (content.xml is encrypted)``; ``N pages, more than
            M (MAX_PAGES)``;
            ``page N has more than … characters (MAX_PAGE_CHARS)``; the ``MAX_DECOMPRESSED_BYTES``,
            ``MAX_NESTING_DEPTH`` and ``STAGE1_MAX_SECONDS`` reasons.
    """
    context = context if context is not None else ReadContext()
    kind = "OpenDocument"
    with open_zip(data, source=source, context=context, kind=kind) as package:
        _refuse_encrypted(package, source=source)
        root = read_xml(package, "content.xml", source=source, context=context, kind=kind)
    body = root.find(_q("office:body"))
    element = next((child for child in body if isinstance(child.tag, str)), None) if body is not None else None
    local = element.tag.rpartition("}")[2] if element is not None else ""
    if local not in _KINDS:
        raise ParseError(source, f"not a valid {kind}: content.xml has no text, spreadsheet or presentation body")
    limits = context.limits
    if local == "text":
        writer = _Writer(context, source, whole=True)
        writer.blocks_of(element)
        texts = [writer.text()]
    else:
        page_tag = _q("table:table") if local == "spreadsheet" else _q("draw:page")
        pages = [child for child in element if child.tag == page_tag]
        if len(pages) > limits.max_pages:
            raise ParseError(source, limits.pages_reason(len(pages)))
        texts = []
        for index, page in enumerate(pages):
            context.check_time(source)
            if local == "spreadsheet":
                texts.append(_sheet_text(page, source=source, index=index, context=context))
            else:
                texts.append(_slide_text(page, index, context, source))
    for index, text in enumerate(texts):
        if local != "text" and len(text) > limits.max_page_chars:
            raise ParseError(source, limits.page_chars_reason(index))
    return pages_from_texts(texts)


def _refuse_encrypted(package: zipfile.ZipFile, *, source: str) -> None:
    """ODF 1.3 Part 2 §3.8: an encrypted member has a ``manifest:encryption-data`` child in the manifest."""
    if "META-INF/manifest.xml" not in package.NameToInfo:
        return
    manifest = read_member(package, "META-INF/manifest.xml", source=source, kind="OpenDocument")
    if b"encryption-data" in manifest:
        raise ParseError(source, "not a valid OpenDocument: password-protected (content.xml is encrypted)")


def _inline(element, notes: list[str] | None = None) -> str:
    """The text of a paragraph-like element as one line: ``text:s`` spaces, tabs and line breaks as spaces,
    spans and links opened, notes' bodies moved to *notes*, skipped elements left out. Iterative."""
    parts: list[str] = [element.text or ""]
    stack: list[tuple[object, bool]] = [(child, True) for child in reversed(element)]
    while stack:
        node, opening = stack.pop()
        if not opening:
            parts.append(node.tail or "")  # type: ignore[attr-defined]
            continue
        tag = node.tag  # type: ignore[attr-defined]
        stack.append((node, False))
        if not isinstance(tag, str) or tag in _SKIPPED or tag == _q("draw:frame"):
            continue  # a frame anchored in a paragraph is a block of its own (``_Writer._frames``)
        if tag == _q("text:s"):
            parts.append(" " * min(int(node.get(_q("text:c"), "1") or 1), 100))  # type: ignore[attr-defined]
        elif tag in (_q("text:tab"), _q("text:line-break")):
            parts.append(" ")
        elif tag == _q("text:note"):
            if notes is not None:
                body = node.find(_q("text:note-body"))  # type: ignore[attr-defined]
                text = " ".join(_inline(p) for p in body.iter(_q("text:p"), _q("text:h"))) if body is not None else ""
                notes.append(" ".join(text.split()))
                parts.append(f"[^{len(notes)}]")
        else:
            parts.append(node.text or "")  # type: ignore[attr-defined]
            stack.extend((child, True) for child in reversed(node))  # type: ignore[call-overload]
    return _SPACE.sub(" ", "".join(parts)).strip()


class _Writer:
    """Blocks of a text body (or a frame's text box, a slide's frame) joined by blank lines."""

    def __init__(self, context: ReadContext, source: str, index: int = 0, *, whole: bool = False) -> None:
        self.blocks: list[str] = []
        self.notes: list[str] = []
        self._context = context
        self._source = source
        self._index = index  # the page, in reasons
        self._whole = whole  # the whole document (ODT), not one slide
        self._chars = 0

    def text(self) -> str:
        return "\n\n".join(self.blocks) + "\n" if self.blocks else ""

    def add(self, block: str) -> None:
        """Add *block*, counted against ``MAX_PAGE_CHARS`` for a slide, ``MAX_DOCUMENT_CHARS`` for a text document
        (its one page is the whole document, as a DOCX's is)."""
        if block:
            self._chars += len(block) + 2
            limits = self._context.limits
            if self._whole and self._chars > limits.max_document_chars:
                raise ParseError(self._source, limits.document_chars_reason())
            if not self._whole and self._chars > limits.max_page_chars:
                raise ParseError(self._source, limits.page_chars_reason(self._index))
            self.blocks.append(block)

    def blocks_of(self, container, list_depth: int = 0) -> None:
        """Write the block children of *container* (recursion bounded by the checked XML depth)."""
        for child in container:
            tag = child.tag
            if not isinstance(tag, str) or tag in _SKIPPED:
                continue
            if tag == _q("text:h"):
                level = min(max(int(child.get(_q("text:outline-level"), "1") or 1), 1), _MAX_HEADING_LEVEL)
                self._paragraph(child, "#" * level + " ")
            elif tag == _q("text:p"):
                self._paragraph(child, "")
                self._frames(child)
            elif tag == _q("text:list"):
                lines = self._list_lines(child, list_depth)
                self.add("\n".join(lines))
            elif tag == _q("table:table"):
                self.add(_table(child, self._context, self._source, caption=""))
            elif tag in (_q("draw:frame"), _q("draw:text-box"), _q("text:section"), _q("draw:g")):
                self.frame(child)
            elif tag == _q("table:table-header-rows"):
                continue
            else:
                self.blocks_of(child, list_depth)

    def _paragraph(self, element, prefix: str) -> None:
        notes: list[str] = []
        text = _inline(element, notes)
        if notes:  # numbered across the document
            first = len(self.notes)
            for i in range(len(notes), 0, -1):
                text = text.replace(f"[^{i}]", f"[^{first + i}]")
            self.notes.extend(notes)
        if text:
            self.add(prefix + text)
        for number, note in enumerate(notes, start=len(self.notes) - len(notes) + 1):
            self.add(f"[^{number}]: {note}")

    def _frames(self, paragraph) -> None:
        """Frames anchored in a paragraph (text boxes, images with titles) are blocks after it."""
        for frame in paragraph.iter(_q("draw:frame")):
            self.frame(frame)

    def frame(self, frame) -> None:
        """A frame: an image's title and description as a ``<figure>`` line, then the frame's text."""
        if frame.tag == _q("draw:frame"):
            alt = " ".join(" ".join((e.text or "").split()) for e in frame
                           if e.tag in (_q("svg:title"), _q("svg:desc")))
            if alt.strip() and frame.find(_q("draw:image")) is not None:
                self.add(f"<figure>{_html.escape(alt.strip(), quote=False)}</figure>")
        self.blocks_of(frame)

    def _list_lines(self, element, depth: int) -> list[str]:
        lines = []
        for item in element:
            if item.tag not in (_q("text:list-item"), _q("text:list-header")):
                continue
            for child in item:
                if child.tag == _q("text:list"):
                    lines.extend(self._list_lines(child, depth + 1))
                elif child.tag in (_q("text:p"), _q("text:h")):
                    text = _inline(child)
                    if text:
                        lines.append("  " * depth + "- " + text)
        return lines


def _cell_text(cell) -> str:
    """A spreadsheet or table cell as a spreadsheet shows it unformatted (module docstring)."""
    value_type = cell.get(_q("office:value-type"), "")
    if value_type in ("float", "percentage", "currency") and cell.get(_q("office:value")) is not None:
        try:
            return render_value(float(cell.get(_q("office:value"))))
        except ValueError:
            pass
    elif value_type == "date" and cell.get(_q("office:date-value")):
        value = cell.get(_q("office:date-value"))
        try:
            return render_value(_dt.datetime.fromisoformat(value))
        except ValueError:
            return value
    elif value_type == "boolean" and cell.get(_q("office:boolean-value")):
        return render_value(cell.get(_q("office:boolean-value")) == "true")
    parts = []
    for child in cell:
        if child.tag in (_q("text:p"), _q("text:h")):
            parts.append(_inline(child))
        elif child.tag in (_q("table:table"), _q("text:list")):  # flattened into the cell's line
            parts.extend(_inline(p) for p in child.iter(_q("text:p"), _q("text:h")))
    return " ".join(part for part in parts if part).strip()


def _rows(table, context: ReadContext, source: str, index: int) -> tuple[list[list[tuple[str, int, int]]], int]:
    """``(rows, header_rows)`` of a table: ``html_table`` cells with spans, covered cells left out, repeats
    expanded only where they hold something, empty rows and trailing empty cells dropped."""
    limits = context.limits
    rows: list[list[tuple[str, int, int]]] = []
    header_rows = 0
    chars = 0
    row_elements = list(_table_rows(table))
    for row_number, (row, in_header) in enumerate(row_elements, start=1):
        if row_number % 1000 == 0:
            context.check_time(source)
        cells: list[tuple[str, int, int]] = []
        pending_empty = 0  # empty cells not yet written: only written when a filled one follows
        for cell in row:
            covered = cell.tag == _q("table:covered-table-cell")
            if cell.tag not in (_q("table:table-cell"), _q("table:covered-table-cell")):
                continue
            repeat = max(int(cell.get(_q("table:number-columns-repeated"), "1") or 1), 1)
            if covered:
                continue
            text = _cell_text(cell)
            rowspan = max(int(cell.get(_q("table:number-rows-spanned"), "1") or 1), 1)
            colspan = max(int(cell.get(_q("table:number-columns-spanned"), "1") or 1), 1)
            if not text and rowspan == colspan == 1:
                pending_empty += repeat
                continue
            chars += 9 * (pending_empty + repeat) + repeat * len(text)
            if chars > limits.max_page_chars:
                raise ParseError(source, limits.page_chars_reason(index))
            cells.extend([("", 1, 1)] * pending_empty)
            pending_empty = 0
            cells.extend([(text, rowspan, colspan)] * repeat)
        if not any(text for text, _, _ in cells):
            continue
        repeat_rows = max(int(row.get(_q("table:number-rows-repeated"), "1") or 1), 1)
        chars += (repeat_rows - 1) * sum(9 + len(text) for text, _, _ in cells)
        if chars > limits.max_page_chars:
            raise ParseError(source, limits.page_chars_reason(index))
        rows.extend([list(cells) for _ in range(repeat_rows)])
        if in_header and len(rows) == header_rows + repeat_rows:
            header_rows += repeat_rows
    # The used range: columns empty in every row on the left are not part of it.
    lead = min((next((i for i, (text, _, _) in enumerate(r) if text), len(r)) for r in rows), default=0)
    return [r[lead:] for r in rows], header_rows


_ROW_GROUPS = frozenset(_q(n) for n in ("table:table-header-rows", "table:table-rows", "table:table-row-group"))


def _table_rows(table) -> Iterator[tuple[object, bool]]:
    """``(row, in a header-rows group)`` of a table's own rows, through its row groups (OpenDocument 1.3 Part 3,
    §9.1.3-9.1.9), never those of a table nested in one of its cells. Iterative."""
    stack: list[tuple[object, bool]] = [(child, False) for child in reversed(table)]
    while stack:
        node, in_header = stack.pop()
        tag = node.tag  # type: ignore[attr-defined]
        if tag == _q("table:table-row"):
            yield node, in_header
        elif tag in _ROW_GROUPS:
            header = in_header or tag == _q("table:table-header-rows")
            stack.extend((child, header) for child in reversed(node))  # type: ignore[call-overload]


def _table(table, context: ReadContext, source: str, *, caption: str, index: int = 0) -> str:
    rows, header_rows = _rows(table, context, source, index)
    if not rows:
        return ""
    return html_table(_clipped(rows), header_rows=header_rows, caption=caption)


def _clipped(rows: list[list[tuple[str, int, int]]]) -> list[list[tuple[str, int, int]]]:
    """Row spans clipped to the rows that follow (empty rows were left out)."""
    return [[(text, min(rowspan, len(rows) - i), colspan) for text, rowspan, colspan in row]
            for i, row in enumerate(rows)]


def _sheet_text(sheet, *, source: str, index: int, context: ReadContext) -> str:
    rows, _ = _rows(sheet, context, source, index)
    if not rows:
        return ""
    name = sheet.get(_q("table:name"), f"Sheet{index + 1}")
    return html_table(_clipped(rows), header_rows=1, caption=name) + "\n"


def _slide_text(slide, index: int, context: ReadContext, source: str) -> str:
    title = ""
    writer = _Writer(context, source, index)
    for frame in slide:
        if not isinstance(frame.tag, str) or frame.tag in _SKIPPED:
            continue
        kind = frame.get(_q("presentation:class"), "")
        if kind == "title" and not title and frame.tag == _q("draw:frame"):
            title = " ".join(_inline(p) for p in frame.iter(_q("text:p"))).strip()
            if title:
                continue
        if kind in ("date-time", "footer", "header", "page-number"):
            continue  # slide furniture, not content
        if frame.tag == _q("draw:frame") and frame.find(_q("table:table")) is not None:
            writer.add(_table(frame.find(_q("table:table")), context, source, caption="", index=index))
            continue
        if frame.tag == _q("draw:frame"):
            writer.frame(frame)
        else:
            writer.blocks_of(frame)
    heading = f"# {title}" if title else f"# Slide {index + 1}"
    text = heading + "\n\n" + writer.text() if writer.blocks else heading + "\n"
    notes = slide.find(_q("presentation:notes"))
    if notes is not None:
        note_writer = _Writer(context, source, index)
        for frame in notes.iter(_q("draw:text-box")):
            note_writer.blocks_of(frame)
        if note_writer.blocks:
            text += "\nNotes:\n\n" + note_writer.text()
    return text
