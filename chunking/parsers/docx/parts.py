"""Word content outside the body's main flow: text boxes, footnotes and endnotes, headers and footers.

``prepare_body`` edits the parsed body tree (the parser's own copy, never the file) before the DOCX parser walks
it, so that the walker of ``chunking.parsers.docx`` reads these parts with its usual rules:

* **Text boxes** (``w:txbxContent``, in DrawingML shapes and legacy VML) are read after the paragraph that
  anchors them, as paragraphs and tables of their own. Word writes a shape twice, as DrawingML in
  ``mc:Choice`` and as VML in ``mc:Fallback`` (ECMA-376 Part 3, markup compatibility); only the first copy is
  read. A text box inside a text box follows its container's content, up to ``MAX_NESTING_DEPTH`` levels.
* **Footnotes and endnotes** are kept: each reference in the text becomes a Markdown footnote mark ``[^1]``
  (numbered in order of first reference, footnotes first then endnotes, as ``[^1]``…``[^n]``), and the notes'
  texts are returned as ``[^1]: text`` blocks that end the document. Separator "notes" (Word's footnote
  lines) and notes never referenced are left out.
* **Pictures and charts** with alternative text (Word's "Alt Text", ``wp:docPr/@descr``) are read after the
  paragraph that anchors them as ``<figure>description</figure>``, so that what an image shows can be found; a
  description that is only a file name (what tools write when inserting a picture) says nothing and is skipped.
* **Headers and footers** live in parts of their own (``header1.xml``…) that the walker never reads: they are
  page furniture and stay out of the text, like the running headers cut from PDF pages.
"""

from __future__ import annotations

import copy
import re

from docx.opc.constants import RELATIONSHIP_TYPE as RT
from docx.oxml.ns import qn
from lxml import etree

from chunking.parsers._common import ReadContext
from chunking.parsers.pictures import figure_block, read_picture, take_kept

__all__ = ["NoteMarks", "prepare_block", "prepare_body"]

_TXBX = qn("w:txbxContent")
_NS = {
    "w": "http://schemas.openxmlformats.org/wordprocessingml/2006/main",
    "mc": "http://schemas.openxmlformats.org/markup-compatibility/2006",
    "wp": "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing",
    "a": "http://schemas.openxmlformats.org/drawingml/2006/main",
    "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
}
# Outermost text boxes only, and never the VML copy Word keeps for older readers.
_TEXT_BOXES = etree.XPath(".//w:txbxContent[not(ancestor::mc:Fallback)][not(ancestor::w:txbxContent)]",
                          namespaces=_NS)
_DRAWINGS = etree.XPath(".//w:drawing[not(ancestor::mc:Fallback)][not(.//w:txbxContent)]", namespaces=_NS)
_BLIPS = etree.XPath(".//a:blip/@r:embed", namespaces=_NS)
_DESCRIPTIONS = etree.XPath("./*/wp:docPr/@descr | ./*/wp:docPr/@title", namespaces=_NS)
_FILE_NAME = re.compile(r"\S+\.(?:png|jpe?g|gif|bmp|tiff?|emf|wmf|svg|heif)", re.IGNORECASE)
_FALLBACK_TEXT_BOXES = etree.XPath(".//mc:Fallback//w:txbxContent", namespaces=_NS)
_REFERENCES = {kind: etree.XPath(f".//w:{kind}Reference", namespaces=_NS) for kind in ("footnote", "endnote")}
_BLOCKS = frozenset({qn("w:p"), qn("w:tbl")})
_CONTAINERS = frozenset({qn("w:body"), qn("w:tc"), qn("w:sdtContent"), _TXBX})
_NOTE_KINDS = (("footnote", RT.FOOTNOTES), ("endnote", RT.ENDNOTES))
_SAFE_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)


def prepare_body(document, body, context: ReadContext) -> list[str]:
    """Move text boxes into the reading order and mark note references in *body* (module docstring).

    Args:
        document: the python-docx ``Document`` (its package holds the notes parts).
        body: its ``w:body`` element, edited in place.
        context: limits (``MAX_NESTING_DEPTH`` bounds nested text boxes) and notes for the ledger.

    Returns:
        The note blocks, ``["[^1]: First note.", …]``, in mark order; ``[]`` without referenced notes.
    """
    _inline_text_boxes(body, context)
    _inline_figures(body)
    return _mark_notes(document, body, context)


def prepare_block(body, context: ReadContext, marks: "NoteMarks", document=None, source: str = "") -> None:
    """``prepare_body`` for a body read block by block (``chunking.parsers.docx.package``): *body* holds one
    block; *marks* numbers the note references across all of them, as ``prepare_body`` would. With the opened
    package *document* (``OpenedDocx``), the text of its pictures is read by local OCR
    (``chunking.parsers.pictures``)."""
    _inline_text_boxes(body, context)
    _inline_figures(body, _picture_reader(document, context, source) if document is not None else None)
    marks.mark(body)


class NoteMarks:
    """Footnote and endnote marks for a body read block by block, numbered as ``_mark_notes`` numbers them:
    footnotes ``[^1]``…``[^F]`` in order of first reference, then endnotes from ``F + 1``. *footnotes_first*
    is F, the number of distinct footnotes referenced in the whole body (counted by a first pass; only needed
    when the document has endnotes too)."""

    def __init__(self, document, context: ReadContext, footnotes_first: int = 0) -> None:
        self._texts = {kind: _note_texts(document, kind, relationship, context)
                       for kind, relationship in _NOTE_KINDS}
        self._offsets = {"footnote": 0, "endnote": footnotes_first}
        self._numbers: dict[tuple[str, str], int] = {}
        self._blocks: dict[str, list[str]] = {"footnote": [], "endnote": []}

    def has_notes(self, kind: str) -> bool:
        return bool(self._texts[kind])

    def mark(self, body) -> None:
        for kind, _ in _NOTE_KINDS:
            texts = self._texts[kind]
            for reference in _REFERENCES[kind](body):
                note_id = reference.get(qn("w:id"))
                if note_id not in texts:
                    reference.getparent().remove(reference)
                    continue
                if (kind, note_id) not in self._numbers:
                    self._numbers[(kind, note_id)] = self._offsets[kind] + len(self._blocks[kind]) + 1
                    self._blocks[kind].append(f"[^{self._numbers[(kind, note_id)]}]: {texts[note_id]}")
                mark = etree.SubElement(reference.getparent(), qn("w:t"))
                mark.text = f"[^{self._numbers[(kind, note_id)]}]"
                reference.addprevious(mark)
                reference.getparent().remove(reference)

    def blocks(self) -> list[str]:
        """The note blocks in number order."""
        return self._blocks["footnote"] + self._blocks["endnote"]

    def count_footnotes(self, body) -> set[str]:
        """The ids of referenced footnotes with text in *body* (one block), for the first pass."""
        for box in _FALLBACK_TEXT_BOXES(body):
            _clear(box)
        return {r.get(qn("w:id")) for r in _REFERENCES["footnote"](body)} & set(self._texts["footnote"])


def _inline_text_boxes(body, context: ReadContext) -> None:
    for box in _FALLBACK_TEXT_BOXES(body):
        _clear(box)
    for _ in range(context.limits.max_nesting_depth):
        boxes = [box for box in _TEXT_BOXES(body) if len(box)]
        if not boxes:
            return
        for box in boxes:
            anchor = _anchor_block(box)
            if anchor is None:
                continue
            position = anchor
            for block in [child for child in box if child.tag in _BLOCKS]:
                moved = copy.deepcopy(block)
                position.addnext(moved)
                position = moved
        for box in boxes:
            _clear(box)  # read once: the copies above are what the walker sees
    context.note(f"text boxes nested more than {context.limits.max_nesting_depth} levels deep left out")


def _inline_figures(body, read=None) -> None:
    """A paragraph ``<figure>description</figure>`` after the block anchoring each described drawing; with
    *read* (relationship id → the text OCR reads on that picture and the picture's hash when kept,
    ``_picture_reader``), the text read inside it, marked as generated (``chunking.parsers.pictures.figure_block``)."""
    for drawing in _DRAWINGS(body):
        description = next((" ".join(d.split()) for d in _DESCRIPTIONS(drawing) if d.strip()), "")
        anchor = _anchor_block(drawing)
        if anchor is None:
            continue
        if _FILE_NAME.fullmatch(description):
            description = ""
        generated, picture = read(_BLIPS(drawing)[0]) if read is not None and _BLIPS(drawing) else ("", "")
        block = figure_block(description, generated, picture)
        if not block:
            continue
        paragraph = etree.Element(qn("w:p"))
        text = etree.SubElement(etree.SubElement(paragraph, qn("w:r")), qn("w:t"))
        text.text = block
        anchor.addnext(paragraph)


def _picture_reader(document, context: ReadContext, source: str = ""):
    """Relationship id of a picture of the main part of *document* (a ``chunking.parsers.docx.package.OpenedDocx``)
    → ``(the text local OCR reads on it, the SHA-256 of the picture when it was kept for a describer)`` (``""``
    when the relationship is external, missing or not a picture Pillow opens)."""
    def read(rid: str) -> tuple[str, str]:
        blob = document.related_bytes(rid)
        text = read_picture(blob, source=source, context=context) if blob else ""
        return text, take_kept(context)

    return read


def _clear(box) -> None:
    for child in list(box):
        box.remove(child)


def _anchor_block(box):
    """The paragraph or table the text box is anchored in: its outermost block under a body, cell or content
    control (the walker reads those), ``None`` when there is none."""
    element = box.getparent()
    while element is not None:
        parent = element.getparent()
        if element.tag in _BLOCKS and parent is not None and parent.tag in _CONTAINERS:
            return element
        element = parent
    return None


def _mark_notes(document, body, context: ReadContext) -> list[str]:
    blocks: list[str] = []
    number = 0
    for kind, relationship in _NOTE_KINDS:
        references = _REFERENCES[kind](body)
        if not references:
            continue
        texts = _note_texts(document, kind, relationship, context)
        numbers: dict[str, int] = {}
        for reference in references:
            note_id = reference.get(qn("w:id"))
            if note_id not in texts:
                reference.getparent().remove(reference)  # a reference to no note: nothing to point to
                continue
            if note_id not in numbers:
                number += 1
                numbers[note_id] = number
                blocks.append(f"[^{number}]: {texts[note_id]}")
            mark = etree.SubElement(reference.getparent(), qn("w:t"))
            mark.text = f"[^{numbers[note_id]}]"
            reference.addprevious(mark)
            reference.getparent().remove(reference)
    return blocks


def _note_texts(document, kind: str, relationship: str, context: ReadContext) -> dict[str, str]:
    """Note id → its text on one line, for the notes of *kind* that hold text."""
    try:
        part = document.part.part_related_by(relationship)
    except KeyError:
        return {}
    try:
        root = etree.fromstring(part.blob, _SAFE_PARSER)
    except etree.XMLSyntaxError as error:
        context.note(f"{kind}s not read: {error}")
        return {}
    texts = {}
    for note in root.iterchildren(qn(f"w:{kind}")):
        if note.get(qn("w:type")) in ("separator", "continuationSeparator", "continuationNotice"):
            continue
        text = " ".join(" ".join(_run_text(p) for p in note.iter(qn("w:p"))).split())
        if text:
            texts[note.get(qn("w:id"))] = text
    return texts


def _run_text(paragraph) -> str:
    pieces = []
    for element in paragraph.iter(qn("w:t"), qn("w:tab"), qn("w:br")):
        pieces.append(element.text or "" if element.tag == qn("w:t") else " ")
    return "".join(pieces)
