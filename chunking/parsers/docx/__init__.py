"""Word files (.docx): the body as Markdown-flavoured text, with tables as HTML ``<figure>`` blocks.

python-docx (MIT) opens the package and resolves paragraph styles; the body is walked through its XML
(``w:p`` and ``w:tbl`` in document order) because python-docx's ``paragraphs`` and ``tables`` lists lose the
order between the two, and its ``Paragraph.text`` skips runs inside insertions, fields and content controls.

Steps:
  1. Refuse what python-docx should not open: an OLE compound file (a password-protected or old ``.doc``
     file renamed), anything that is not a ZIP, and a ZIP whose members really inflate (whatever their headers
     declare) past ``MAX_DECOMPRESSED_BYTES``. Entities are never resolved; an entity reference is left out of
     the text, the text around it kept, and a DTD or an entity reference is noted in the ledger.
  2. Walk the body block by block as it is read (``chunking.parsers.docx.package``: one block in memory at a
     time, never the whole body's tree), also inside block-level content controls such as Word's table of
     contents; ``MAX_DOCUMENT_CHARS`` is checked after every block.
  3. Write blocks separated by a blank line: ``Title`` and ``Heading 1``–``9`` styles (or styles based on them)
     as ``#`` lines; numbered or bulleted paragraphs as ``- item`` lines, two spaces per list level, one block
     per run of items; code styles (``Source Code``, ``HTML Preformatted``, …) verbatim in a Markdown code
     fence, one per run of code paragraphs; tables as ``<figure><table>`` with ``rowspan``/``colspan`` from
     merged cells and ``<th>`` for rows marked as repeating header rows. Text boxes follow the paragraph that
     anchors them, footnotes and endnotes end the text, headers and footers are left out
     (``chunking.parsers.docx.parts``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

from docx.document import Document as _DocxDocument
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from docx.text.paragraph import Paragraph
from lxml import etree

from chunking.model import Page
from chunking.parsers._common import ParseError, ReadContext, figure_table, pages_from_texts, table_cell
from chunking.parsers.docx.package import open_docx
from chunking.parsers.docx.parts import NoteMarks, prepare_block

__all__ = ["parse"]

_HEADING_STYLE = re.compile(r"heading ([1-9])", re.IGNORECASE)
_CODE_STYLES = frozenset({"source code", "html preformatted", "code", "macro text"})
# CommonMark has six heading levels; Heading 7-9 stay headings at the deepest level.
_MAX_MARKDOWN_LEVEL = 6
_FALSE_VALUES = frozenset({"0", "false", "off"})

_P, _TBL, _SDT, _SDT_CONTENT = qn("w:p"), qn("w:tbl"), qn("w:sdt"), qn("w:sdtContent")
_R, _T, _TAB, _NO_BREAK_HYPHEN, _TXBX_CONTENT = qn("w:r"), qn("w:t"), qn("w:tab"), qn("w:noBreakHyphen"), qn("w:txbxContent")
_RUN_CONTENT_TAGS = (_T, _TAB, qn("w:br"), qn("w:cr"), _NO_BREAK_HYPHEN)  # what a run's text is made of
_VAL = qn("w:val")
# What chunking.parsers.docx.parts rewrites in a block: text boxes, drawings, note references.
_PREPARED = (qn("w:txbxContent"), qn("w:drawing"), qn("w:footnoteReference"), qn("w:endnoteReference"))
_P_PR, _P_STYLE, _NUM_PR, _NUM_ID, _ILVL = qn("w:pPr"), qn("w:pStyle"), qn("w:numPr"), qn("w:numId"), qn("w:ilvl")
_SPACES = re.compile(r"\s+")
_TR, _TC, _TR_PR, _TC_PR, _CUSTOM_XML = qn("w:tr"), qn("w:tc"), qn("w:trPr"), qn("w:tcPr"), qn("w:customXml")
_GRID_SPAN, _GRID_BEFORE = qn("w:gridSpan"), qn("w:gridBefore")
_V_MERGE, _TBL_HEADER = qn("w:vMerge"), qn("w:tblHeader")
_W_NAMESPACE = {"w": _P[1:_P.index("}")]}
_PARAGRAPHS_OUTSIDE_TEXT_BOXES = etree.XPath(".//w:p[not(ancestor::w:txbxContent)]", namespaces=_W_NAMESPACE)
# What a paragraph read by _PLAIN_RUN_TEXTS must not hold: run content other than w:t, a text box. (A w:t's
# text nodes are its text and the tails of its children, such as an entity reference never resolved.)
_NOT_PLAIN = (*_RUN_CONTENT_TAGS[1:], _TXBX_CONTENT)
_PLAIN_RUN_TEXTS = etree.XPath(".//w:r/w:t/text()", namespaces=_W_NAMESPACE, smart_strings=False)


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
        context: limits (``MAX_DECOMPRESSED_BYTES``, ``MAX_DOCUMENT_CHARS``) and the stage-1 deadline, checked
            while the body is read block by block; default limits when ``None``.

    Returns:
        One ``Page(0, 0, text)``; ``text`` is empty when the body holds no text.

    Raises:
        ParseError: ``not a valid DOCX: …`` for an OLE file, a non-ZIP or a package python-docx cannot open;
            ``expands past N MB when decompressed (MAX_DECOMPRESSED_BYTES)`` when the package's members inflate
            to more than that in total; ``more than N characters of text (MAX_DOCUMENT_CHARS)`` as soon as the
            body's text passes that; the ``STAGE1_MAX_SECONDS`` reason.
    """
    context = context if context is not None else ReadContext()
    opened = open_docx(data, source, context)
    for part in opened.dtd_parts:
        context.note(f"{part} holds a DTD (Word never writes one); its entities were not resolved")
    writer = _BodyWriter(opened.document)
    marks = _note_marks(opened, context)
    entities: set[str] = set()
    limit = context.limits.max_document_chars
    for count, element in enumerate(opened.blocks()):
        if next(element.iter(etree.Entity), None) is not None:  # (rare: only a part with a DTD holds them)
            entities.update(entity.text for entity in element.iter(etree.Entity))
        if next(element.iter(_PREPARED), None) is None:  # most blocks: nothing to prepare (one C-level scan)
            writer.walk_block(element)
        else:
            # Text boxes, figures and note marks (chunking.parsers.docx.parts) need the block's container: a
            # body of its own, holding this block and what is inserted after it.
            holder = _new_body()
            holder.append(element)
            prepare_block(holder, context, marks, opened, source)
            for block in list(holder):
                writer.walk_block(block)
        if writer.chars > limit:
            raise ParseError(source, context.limits.document_chars_reason())
        if count % 256 == 0:
            context.check_time(source)
    if entities:
        shown = ", ".join(sorted(entities)[:5]) + (" …" if len(entities) > 5 else "")
        context.note(f"entity references left out of the text, not resolved: {shown}")
    text = "\n\n".join(writer.finish() + marks.blocks())
    if not text.strip() and opened.dtd_parts:
        raise ParseError(source, f"no text found; the package holds a DTD in {', '.join(opened.dtd_parts)} (Word "
                                 "never writes one: a hand-made or hostile file?)")
    return pages_from_texts([text])


def _note_marks(opened, context: ReadContext) -> NoteMarks:
    marks = NoteMarks(opened.document, context)
    if marks.has_notes("footnote") and marks.has_notes("endnote"):
        # Endnotes are numbered after every footnote: a first pass over the body counts those.
        footnotes: set[str] = set()
        for element in opened.blocks():
            holder = _new_body()
            holder.append(element)
            footnotes |= marks.count_footnotes(holder)
        marks = NoteMarks(opened.document, context, footnotes_first=len(footnotes))
    return marks


def _new_body():
    return OxmlElement("w:body")


class _BodyWriter:
    """Turns body elements into blocks, grouping runs of list items and of code paragraphs."""

    def __init__(self, document: _DocxDocument) -> None:
        self._document = document
        self._styles: dict[str | None, _StyleKind] = {}
        self._blocks: list[str] = []
        self._list_lines: list[str] = []
        self._code_lines: list[str] = []
        #: characters of text read so far (without the Markdown marks added): never more than the final text
        self.chars = 0

    def walk(self, container) -> None:
        for element in container.iterchildren():
            self.walk_block(element)

    def walk_block(self, element) -> None:
        """One block-level element: a paragraph, a table, or a content control holding more of them."""
        if element.tag == _P:
            self._paragraph(element)
        elif element.tag == _TBL:
            self._end_groups()
            figure = _figure(element)
            if figure:
                self.chars += len(figure)
                self._blocks.append(figure)
        elif element.tag == _SDT:
            for content in element.iterchildren(_SDT_CONTENT):
                self.walk(content)

    def finish(self) -> list[str]:
        self._end_groups()
        return self._blocks

    def _paragraph(self, p) -> None:
        text = _paragraph_text(p)
        self.chars += len(text.strip())
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
            return
        level = _numbering_level(p)
        if kind.is_list or level is not None:
            indent = "  " * (level or 0)
            self._list_lines.append(f"{indent}- " + text.replace("\n", f"\n{indent}  "))
        else:
            self._end_list()
            self._blocks.append(text)

    def _kind(self, p) -> _StyleKind:
        style = _grandchild(p, _P_PR, _P_STYLE)  # its w:val; None for the default style (as CT_P.style, faster)
        style_id = None if style is None else style.get(_VAL)
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
        if not self._code_lines:  # (every paragraph ends a run of code paragraphs: most end none)
            return
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
    # Plain lxml finds: python-docx's property chain costs about 50 µs a paragraph, a third of the parse.
    num_pr = _grandchild(p, _P_PR, _NUM_PR)
    num_id = None if num_pr is None else next(num_pr.iterchildren(_NUM_ID), None)
    if num_id is None or _decimal(num_id.get(_VAL)) in (None, 0):
        return None
    ilvl = next(num_pr.iterchildren(_ILVL), None)
    return (_decimal(ilvl.get(_VAL)) or 0) if ilvl is not None else 0


def _grandchild(element, child_tag: str, tag: str):
    """``element.find(f"{child_tag}/{tag}")`` (the first *tag* under any *child_tag* child, in document order)
    without ElementPath, which parses the path again on every call (a third of the cost of a short paragraph)."""
    for child in element.iterchildren(child_tag):
        for found in child.iterchildren(tag):
            return found
    return None


def _decimal(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _paragraph_text(p, boxed: bool | None = None) -> str:
    """The text of paragraph *p*'s runs; *boxed* says whether a text box may lie under it (``None``: look)."""
    # Text boxes are anchored inside runs but are not part of the paragraph's reading order. Most paragraphs
    # hold only w:t runs: one C-level scan finds that, and one precompiled XPath reads their text nodes in
    # document order (python-docx's per-call ``xpath`` compiles its expression every time: about 100 µs a
    # paragraph). The others are walked by hand, walking up from a run only when a text box lies under *p*.
    if next(p.iter(_NOT_PLAIN), None) is None:
        return "".join(_PLAIN_RUN_TEXTS(p))
    if boxed is None:
        boxed = next(p.iter(_TXBX_CONTENT), None) is not None
    pieces = []
    append = pieces.append
    for element in p.iter(_RUN_CONTENT_TAGS):
        run = element.getparent()
        if run.tag != _R or (boxed and _in_text_box(run, p)):
            continue
        tag = element.tag
        if tag == _T:
            append(element.text or "")
            if len(element):
                # An entity reference (never resolved) is a child node; the text after it is that node's tail.
                pieces.extend(child.tail or "" for child in element)
        elif tag == _TAB:
            append("\t")
        elif tag == _NO_BREAK_HYPHEN:
            append("-")
        else:  # w:br, w:cr
            append("\n")
    return "".join(pieces)


def _in_text_box(run, p) -> bool:
    for ancestor in run.iterancestors():
        if ancestor is p:
            return False
        if ancestor.tag == _TXBX_CONTENT:
            return True
    return False


def _flat_text(element, boxed: bool, plain: bool = False) -> str:
    """All paragraph text under ``element`` (nested tables included) on one line; *boxed*: a text box may lie
    under it or above it (else every paragraph under it is read, as the XPath would find them); *plain*: no
    run content but w:t and no text box lies under it (each paragraph is then read as ``_paragraph_text``
    would find it plain, without scanning it again)."""
    if plain:
        texts = ("".join(_PLAIN_RUN_TEXTS(p)) for p in element.iter(_P))
    else:
        paragraphs = _PARAGRAPHS_OUTSIDE_TEXT_BOXES(element) if boxed else element.iter(_P)
        texts = (_paragraph_text(p, boxed) for p in paragraphs)
    return _SPACES.sub(" ", " ".join(texts)).strip()


class _Cell(NamedTuple):
    """A table cell: the grid column it starts at, its ``w:tc``, its ``gridSpan`` and its ``vMerge`` value."""

    column: int
    tc: object
    span: int
    v_merge: str | None


def _figure(tbl) -> str:
    """Write a table as ``<figure><table>``, one ``<tr>`` per line; vertically merged cells become ``rowspan``."""
    # Table properties are read with lxml (tags compared, attributes read) rather than through python-docx's
    # element properties, which cost a child lookup and a ``qn`` per property (docs/parsers.md#docx-speed);
    # python-docx still reads any attribute value that is not a plain number, so that it raises as before.
    boxed = (next(tbl.iter(_TXBX_CONTENT), None) is not None
             or any(ancestor.tag == _TXBX_CONTENT for ancestor in tbl.iterancestors()))
    plain = not boxed and next(tbl.iter(_NOT_PLAIN), None) is None  # one scan, not one per paragraph
    rows = list(tbl.iterchildren(_TR))
    grid_rows = [_row_cells(tr) for tr in rows]
    lines = []
    has_text = False
    for row_index, (tr, cells) in enumerate(zip(rows, grid_rows)):
        name = "th" if _is_header_row(tr) else "td"
        rendered = []
        for cell in cells:
            if cell.v_merge == "continue":
                continue
            attributes = ""
            rowspan = _rowspan(grid_rows, row_index, cell.column) if cell.v_merge == "restart" else 1
            if rowspan > 1:
                attributes += f' rowspan="{rowspan}"'
            if cell.span > 1:
                attributes += f' colspan="{cell.span}"'
            text = _flat_text(cell.tc, boxed, plain)
            has_text = has_text or bool(text)
            rendered.append(table_cell(name, attributes, text))
        if rendered:
            lines.append("<tr>" + "".join(rendered) + "</tr>")
    if not has_text:
        return ""
    return figure_table(lines)


def _row_cells(tr) -> list[_Cell]:
    """The row's cells (``w:tc``, and those in a content control or custom XML) with the grid column each
    starts at."""
    column = _grid_before(tr)
    cells = []
    for child in tr.iterchildren(_TC, _SDT, _CUSTOM_XML):
        tag = child.tag
        if tag == _TC:
            tcs = (child,)
        elif tag == _SDT:
            tcs = [tc for content in child.iterchildren(_SDT_CONTENT) for tc in content.iterchildren(_TC)]
        else:
            tcs = child.iterchildren(_TC)
        for tc in tcs:
            tc_pr = next(tc.iterchildren(_TC_PR), None)
            span = 1 if tc_pr is None else _decimal_value(next(tc_pr.iterchildren(_GRID_SPAN), None), tc,
                                                          "grid_span", 1)
            v_merge = None if tc_pr is None else next(tc_pr.iterchildren(_V_MERGE), None)
            cells.append(_Cell(column, tc, span, None if v_merge is None else v_merge.get(_VAL, "continue")))
            column += span
    return cells


def _grid_before(tr) -> int:
    tr_pr = next(tr.iterchildren(_TR_PR), None)
    return 0 if tr_pr is None else _decimal_value(next(tr_pr.iterchildren(_GRID_BEFORE), None), tr, "grid_before", 0)


def _decimal_value(element, owner, attribute: str, default: int) -> int:
    """The ``w:val`` of a ``CT_DecimalNumber`` child *element* of *owner* (*default* when it is absent), read
    by python-docx's property *attribute* of *owner* when it is not plain ASCII digits: python-docx raises its own
    errors for a missing or unreadable value, and the parse reports them as it always did."""
    if element is None:
        return default
    value = element.get(_VAL)
    if value is not None and value.isascii() and value.isdigit():
        return int(value)
    return getattr(owner, attribute)


def _rowspan(grid_rows: list[list[_Cell]], row_index: int, column: int) -> int:
    span = 1
    for cells in grid_rows[row_index + 1 :]:
        below = next((cell for cell in cells if cell.column == column), None)
        if below is None or below.v_merge != "continue":
            break
        span += 1
    return span


def _is_header_row(tr) -> bool:
    for tr_pr in tr.iterchildren(_TR_PR):  # the first w:trPr/w:tblHeader in document order
        for marker in tr_pr.iterchildren(_TBL_HEADER):
            return marker.get(_VAL, "true").lower() not in _FALSE_VALUES
    return False
