"""Word files (.docx): the body as Markdown-flavoured text, with tables as HTML ``<figure>`` blocks.

python-docx (MIT) opens the package and resolves paragraph styles; the body is walked through its XML
(``w:p`` and ``w:tbl`` in document order) because python-docx's ``paragraphs`` and ``tables`` lists lose the
order between the two, and its ``Paragraph.text`` skips runs inside insertions, fields and content controls.

Steps:
  1. Refuse what python-docx should not open: an OLE compound file (a password-protected or old ``.doc``
     file renamed), anything that is not a ZIP, and a ZIP whose members really inflate (whatever their headers
     declare) past ``MAX_DECOMPRESSED_BYTES``: lxml trees take several times their XML's size in memory.
     Entities are never resolved (python-docx's parser does not); an entity reference is left out of the text,
     the text around it kept, and a DTD or an entity reference is noted in the ledger.
  2. Walk the body (also inside block-level content controls, such as Word's table of contents).
  3. Write blocks separated by a blank line: ``Title`` and ``Heading 1``–``9`` styles (or styles based on them)
     as ``#`` lines; numbered or bulleted paragraphs as ``- item`` lines, two spaces per list level, one block
     per run of items; code styles (``Source Code``, ``HTML Preformatted``, …) verbatim in a Markdown code
     fence, one per run of code paragraphs; tables as ``<figure><table>`` with ``rowspan``/``colspan`` from
     merged cells and ``<th>`` for rows marked as repeating header rows. Text boxes follow the paragraph that
     anchors them, footnotes and endnotes end the text, headers and footers are left out
     (``chunking.parsers.docx_parts``).
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from dataclasses import dataclass

import docx
from lxml import etree
from docx.document import Document as _DocxDocument
from docx.oxml.ns import qn
from docx.text.paragraph import Paragraph

from chunking.model import Page
from chunking.parsers._common import ParseError, ReadContext, figure_table, pages_from_texts, table_cell
from chunking.parsers.docx_parts import prepare_body
from chunking.parsers.office import scan_office_package

__all__ = ["parse"]


_HEADING_STYLE = re.compile(r"heading ([1-9])", re.IGNORECASE)
_CODE_STYLES = frozenset({"source code", "html preformatted", "code", "macro text"})
# CommonMark has six heading levels; Heading 7-9 stay headings at the deepest level.
_MAX_MARKDOWN_LEVEL = 6
_FALSE_VALUES = frozenset({"0", "false", "off"})

_P, _TBL, _SDT, _SDT_CONTENT = qn("w:p"), qn("w:tbl"), qn("w:sdt"), qn("w:sdtContent")
_RUN_CONTENT = (
    ".//w:r[not(ancestor::w:txbxContent)]"
    "/*[self::w:t or self::w:tab or self::w:br or self::w:cr or self::w:noBreakHyphen]"
)
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class _StyleKind:
    heading_level: int = 0  # 0 for a paragraph that is not a heading
    is_list: bool = False
    is_code: bool = False


def parse(data: bytes, *, source: str, context: ReadContext | None = None) -> Iterator[Page]:
    """Parse a .docx file into one page of text.

    Args:
        data: the raw .docx bytes.
        source: file name, used in errors.

    Returns:
        One ``Page(0, 0, text)``; ``text`` is empty when the body holds no text.

    Raises:
        ParseError: ``not a valid DOCX: …`` for an OLE file, a non-ZIP or a package python-docx cannot open;
            ``expands past N MB when decompressed (MAX_DECOMPRESSED_BYTES)`` when the package's members inflate
            to more than that in total.
    """
    context = context if context is not None else ReadContext()
    document, dtd_parts = _open(data, source, context)
    for part in dtd_parts:
        context.note(f"{part} holds a DTD (Word never writes one); its entities were not resolved")
    body = document.element.body
    entities = sorted({entity.text for entity in body.iter(etree.Entity)})
    if entities:
        shown = ", ".join(entities[:5]) + (" …" if len(entities) > 5 else "")
        context.note(f"entity references left out of the text, not resolved: {shown}")
    note_blocks = prepare_body(document, body, context)  # text boxes, footnotes: chunking.parsers.docx_parts
    writer = _BodyWriter(document)
    writer.walk(body)
    text = "\n\n".join(writer.finish() + note_blocks)
    if not text.strip() and dtd_parts:
        raise ParseError(source, f"no text found; the package holds a DTD in {', '.join(dtd_parts)} (Word never "
                                 "writes one: a hand-made or hostile file?)")
    return pages_from_texts([text])


def _open(data: bytes, source: str, context: ReadContext) -> tuple[_DocxDocument, list[str]]:
    # A DTD is no reason to refuse a DOCX: its entities are never resolved, and the parts are noted instead.
    scan = scan_office_package(data, source=source, context=context, kind="DOCX", old_format=".doc")
    try:
        return docx.Document(io.BytesIO(data)), scan.dtd_parts
    except Exception as error:  # python-docx raises KeyError, ValueError, PackageNotFoundError, lxml errors
        detail = str(error)
        if "Excessive depth" in detail:  # libxml2's own bound (256 levels without XML_PARSE_HUGE)
            raise ParseError(source, "not a valid DOCX: XML nested deeper than 256 levels") from None
        raise ParseError(source, f"not a valid DOCX: {detail}") from None


class _BodyWriter:
    """Turns body elements into blocks, grouping runs of list items and of code paragraphs."""

    def __init__(self, document: _DocxDocument) -> None:
        self._document = document
        self._styles: dict[str | None, _StyleKind] = {}
        self._blocks: list[str] = []
        self._list_lines: list[str] = []
        self._code_lines: list[str] = []

    def walk(self, container) -> None:
        for element in container.iterchildren():
            if element.tag == _P:
                self._paragraph(element)
            elif element.tag == _TBL:
                self._end_groups()
                figure = _figure(element)
                if figure:
                    self._blocks.append(figure)
            elif element.tag == _SDT:
                for content in element.iterchildren(_SDT_CONTENT):
                    self.walk(content)

    def finish(self) -> list[str]:
        self._end_groups()
        return self._blocks

    def _paragraph(self, p) -> None:
        text = _paragraph_text(p)
        kind = self._kind(p)
        if kind.is_code and kind.heading_level == 0:
            self._end_list()
            if text.strip() or self._code_lines:
                self._code_lines.append(text.rstrip())
            return
        self._end_code()
        text = text.strip()
        if not text:
            return
        if kind.heading_level:
            self._end_list()
            self._blocks.append(f"{'#' * kind.heading_level} {_SPACES.sub(' ', text)}")
        elif kind.is_list or _numbering_level(p) is not None:
            level = _numbering_level(p) or 0
            indent = "  " * level
            self._list_lines.append(f"{indent}- " + text.replace("\n", f"\n{indent}  "))
        else:
            self._end_list()
            self._blocks.append(text)

    def _kind(self, p) -> _StyleKind:
        style_id = p.style  # CT_P.style: the w:pStyle value, None for the default paragraph style
        if style_id not in self._styles:
            self._styles[style_id] = _style_kind(Paragraph(p, self._document).style)
        return self._styles[style_id]

    def _end_groups(self) -> None:
        self._end_list()
        self._end_code()

    def _end_list(self) -> None:
        if self._list_lines:
            self._blocks.append("\n".join(self._list_lines))
            self._list_lines = []

    def _end_code(self) -> None:
        code = "\n".join(self._code_lines).strip("\n")
        self._code_lines = []
        if code.strip():
            longest_run = max((len(run) for run in re.findall(r"`+", code)), default=0)
            fence = "`" * max(3, longest_run + 1)
            self._blocks.append(f"{fence}\n{code}\n{fence}")


def _style_kind(style) -> _StyleKind:
    """Classify a paragraph style by its own name or the name of a style it is based on."""
    is_list = False
    seen = set()
    while style is not None and style.style_id not in seen:
        seen.add(style.style_id)
        name = (style.name or "").strip()
        lowered = name.lower()
        if lowered == "title":
            return _StyleKind(heading_level=1)
        if match := _HEADING_STYLE.fullmatch(name):
            return _StyleKind(heading_level=min(int(match.group(1)), _MAX_MARKDOWN_LEVEL))
        if lowered in _CODE_STYLES:
            return _StyleKind(is_code=True)
        p_pr = style.element.pPr
        numbered = p_pr is not None and p_pr.numPr is not None and _num_id(p_pr.numPr) != "0"
        is_list = is_list or lowered.startswith("list") or numbered
        style = style.base_style
    return _StyleKind(is_list=is_list)


def _num_id(num_pr) -> str | None:
    return None if num_pr.numId is None else str(num_pr.numId.val)


def _numbering_level(p) -> int | None:
    """The list level (0-based) of a paragraph with direct numbering, ``None`` without it (numId 0 is none)."""
    p_pr = p.pPr
    if p_pr is None or p_pr.numPr is None or _num_id(p_pr.numPr) in (None, "0"):
        return None
    ilvl = p_pr.numPr.ilvl
    return 0 if ilvl is None else int(ilvl.val)


def _paragraph_text(p) -> str:
    # Text boxes are anchored inside runs but are not part of the paragraph's reading order.
    pieces = []
    for element in p.xpath(_RUN_CONTENT):
        tag = element.tag
        if tag == qn("w:t"):
            # An entity reference (never resolved) is a child node; the text after it is that node's tail.
            pieces.append(element.text or "")
            pieces.extend(child.tail or "" for child in element)
        elif tag == qn("w:tab"):
            pieces.append("\t")
        elif tag == qn("w:noBreakHyphen"):
            pieces.append("-")
        else:  # w:br, w:cr
            pieces.append("\n")
    return "".join(pieces)


def _flat_text(element) -> str:
    """All paragraph text under ``element`` (nested tables included) on one line."""
    texts = (_paragraph_text(p) for p in element.xpath(".//w:p[not(ancestor::w:txbxContent)]"))
    return _SPACES.sub(" ", " ".join(texts)).strip()


def _figure(tbl) -> str:
    """Write a table as ``<figure><table>``, one ``<tr>`` per line; vertically merged cells become ``rowspan``."""
    grid_rows = [_row_cells(tr) for tr in tbl.xpath("./w:tr")]
    lines = []
    has_text = False
    for row_index, (tr, cells) in enumerate(zip(tbl.xpath("./w:tr"), grid_rows)):
        name = "th" if _is_header_row(tr) else "td"
        rendered = []
        for column, tc in cells:
            if tc.vMerge == "continue":
                continue
            attributes = ""
            rowspan = _rowspan(grid_rows, row_index, column) if tc.vMerge == "restart" else 1
            if rowspan > 1:
                attributes += f' rowspan="{rowspan}"'
            if tc.grid_span > 1:
                attributes += f' colspan="{tc.grid_span}"'
            text = _flat_text(tc)
            has_text = has_text or bool(text)
            rendered.append(table_cell(name, attributes, text))
        if rendered:
            lines.append("<tr>" + "".join(rendered) + "</tr>")
    if not has_text:
        return ""
    return figure_table(lines)


def _row_cells(tr) -> list[tuple[int, object]]:
    """The row's cells with the grid column each starts at."""
    column = tr.grid_before
    cells = []
    for tc in tr.xpath("./w:tc | ./w:sdt/w:sdtContent/w:tc | ./w:customXml/w:tc"):
        cells.append((column, tc))
        column += tc.grid_span
    return cells


def _rowspan(grid_rows: list[list[tuple[int, object]]], row_index: int, column: int) -> int:
    span = 1
    for cells in grid_rows[row_index + 1 :]:
        below = next((tc for start, tc in cells if start == column), None)
        if below is None or below.vMerge != "continue":
            break
        span += 1
    return span


def _is_header_row(tr) -> bool:
    for marker in tr.xpath("./w:trPr/w:tblHeader"):
        return marker.get(qn("w:val"), "true").lower() not in _FALSE_VALUES
    return False
