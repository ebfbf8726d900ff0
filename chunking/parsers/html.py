"""HTML files: the page's content as Markdown-flavoured text, with tables as HTML ``<figure>`` blocks.

lxml (BSD) parses real-world tag soup the way browsers recover from it, and its own tree is walked directly:
building a BeautifulSoup tree from lxml's parse events, as this parser did before, cost about 22 times the
parse itself (docs/parsers.md#html-speed). The parse is the one BeautifulSoup's ``"lxml"`` builder ran (lxml's
feed parser given the whole text) and the rules are the ones applied to its tree, so the pages are the same.

Steps:
  1. Decode: BOM, then the encoding the page declares (``<meta charset>``, ``<?xml encoding?>``), then UTF-8,
     then charset-normalizer's guess.
  2. Parse and walk the tree in document order, skipping chrome and non-content: ``script``, ``style``,
     ``noscript``, ``template``, ``head``, comments, ``nav``, ``aside``, page-level ``header``/``footer``,
     ``role=navigation|banner|contentinfo``, ``hidden`` elements and DocBook's ``div.navheader``,
     ``div.navfooter`` and ``div.toc`` (a table of contents is navigation too, and repeats the headings).
  3. Write blocks separated by a blank line: ``h1``–``h6`` as ``#`` lines; paragraphs with whitespace collapsed
     as a browser would; list items as ``- item`` lines (two more spaces per nesting level); ``pre`` verbatim
     inside a Markdown code fence, so that a shell prompt such as ``# apt-get update`` is not read as a
     heading later; data tables as ``<figure><table>`` with one ``<tr>`` per line.
  4. Layout tables (``role=presentation``, DocBook admonitions: a table in ``div.note``/``tip``/``warning``/
     ``caution``/``important``) are not data: their cells are written as ordinary blocks.

In lxml's tree a text is the ``text`` of an element (before its first child) or the ``tail`` of a child (after
it); comments and processing instructions are children whose ``tag`` is not a string.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

from bs4.dammit import EncodingDetector
from lxml import etree

from chunking.model import Page
from chunking.parsers._common import (
    ParseError,
    ReadContext,
    decode_bounded,
    figure_table,
    normalize_newlines,
    pages_from_texts,
    table_cell,
)

__all__ = ["parse"]

_SKIPPED_TAGS = frozenset(
    "script style noscript template head title iframe object embed svg canvas button select textarea "
    "nav aside".split()
)
_SKIPPED_ROLES = frozenset({"navigation", "banner", "contentinfo"})
_SKIPPED_CLASSES = frozenset({"navheader", "navfooter", "toc"})
# A header/footer scoped to one of these is part of that content, not the page's banner or footer.
# Source: W3C HTML-AAM, mappings of `header` and `footer`.
_SECTIONING = ("article", "aside", "main", "nav", "section")
_ADMONITIONS = frozenset({"note", "tip", "warning", "caution", "important"})
# The text inside these is not the content of a ``pre`` around or inside them (ruby annotations, code, styles):
# the strings BeautifulSoup typed apart (``Script``, ``RubyTextString``, …) and left out of ``get_text``.
_NOT_PRE_TEXT = frozenset({"rt", "rp", "style", "script", "template"})

_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_LISTS = frozenset({"ul", "ol", "menu"})
_BLOCKS = frozenset(
    "address article blockquote body center dd details dialog div dl dt fieldset figcaption figure footer "
    "form header hgroup html legend li main p section summary tbody thead tfoot tr td th caption".split()
)

# Elements whose edges separate words when a cell or heading is flattened to one line; inline ones do not.
_BREAKS_TEXT = _BLOCKS | _LISTS | frozenset(_HEADINGS) | {"br", "hr", "pre", "table", "img"}

_BR = object()  # marks a <br> among the inline pieces of a paragraph
# No-break spaces count as spaces: "第&nbsp;2&nbsp;章" should match a search for "第 2 章".
_WHITESPACE = re.compile(r"[ \t\n\r\f\xa0]+")
# Decoding is done: an XML declaration is dropped before parsing (XHTML is read as HTML).
_XML_DECLARATION = re.compile(r"\A\s*<\?xml[^>]*\?>")
# East Asian wide characters (Han, kana, CJK punctuation, full-width forms).
_WIDE = r"[\u2e80-\u2fdf\u3000-\u30ff\u3190-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]"
# A whole whitespace run holding a line break, between two wide characters. Anchored on the character before and
# possessive, so that each run is tried once: linear in the text.
_BREAK_BETWEEN_WIDE = re.compile(rf"(?<={_WIDE})[ \t\r\f\xa0]*+\n[ \t\n\r\f\xa0]*+(?={_WIDE})")


def parse(data: bytes, *, source: str, context: ReadContext | None = None) -> Iterator[Page]:
    """Parse an HTML page into one page of text.

    Args:
        data: the raw HTML bytes.
        source: file name, used in errors.
        context: limits (``MAX_NESTING_DEPTH``, ``MAX_DOCUMENT_CHARS``); default limits when ``None``.

    Returns:
        One ``Page(0, 0, text)``; ``text`` is empty when the page has no content outside chrome.

    Raises:
        ParseError: ``not valid UTF-8 or any detected encoding`` for bytes that do not decode to text;
            ``HTML elements nested more than N levels deep (MAX_NESTING_DEPTH)`` (the walk below recurses
            once per level, so the depth is measured first, without recursion); the limits' reasons.
    """
    context = context if context is not None else ReadContext()
    declared = EncodingDetector.find_declared_encoding(data, is_html=True)
    text = normalize_newlines(decode_bounded(data, source=source, context=context, declared=declared))
    tops = _parse_tree(_XML_DECLARATION.sub("", text))
    if _deeper_than(tops, context.limits.max_nesting_depth):
        raise ParseError(source, context.limits.depth_reason("HTML elements"))
    writer = _BlockWriter()
    for top in tops:
        writer.visit(top)
    writer.flush()
    return pages_from_texts(["\n\n".join(block for _, block in writer.blocks)])


def _parse_tree(text: str) -> list[etree._Element]:
    """The top-level elements of lxml's tree of *text*: its ``html`` element, and one more ``html`` for each run
    of content after an ``</html>`` that libxml2 did not put back into the first; ``[]`` for an empty page.

    lxml's feed parser, given the whole text at once, with recovery on and libxml2's default depth and size
    limits: the parse BeautifulSoup's ``"lxml"`` builder runs, so the tree holds the elements and texts its tree
    held. The texts it held beside the top-level elements were whitespace (libxml2 puts any other text inside
    an ``html``), which never made a block.
    """
    parser = etree.HTMLParser(recover=True, collect_ids=False)
    parser.feed(text.removeprefix("\ufeff"))
    try:
        root = parser.close()
    except etree.XMLSyntaxError:  # no element at all
        root = None
    if root is None:
        return []
    return [root, *(node for node in root.itersiblings() if isinstance(node.tag, str))]


def _deeper_than(tops: list[etree._Element], limit: int) -> bool:
    """Whether elements nest more than *limit* levels deep, a top-level element (``html``) being level 1: level
    by level, no recursion."""
    if limit < 0:
        return True  # the document itself is level 0
    level, depth = tops, 1
    while level:
        if depth > limit:
            return True
        level = [child for node in level for child in node if isinstance(child.tag, str)]
        depth += 1
    return False


class _BlockWriter:
    """Collects blocks as ``(kind, text)``, kind ``"text"``, ``"list"`` or ``"verbatim"`` (fences, figures)."""

    def __init__(self, list_depth: int = 0) -> None:
        self.blocks: list[tuple[str, str]] = []
        self._inline: list[object] = []
        self._list_depth = list_depth

    def walk(self, node: etree._Element) -> None:
        """Visit the texts and elements inside *node*, in document order."""
        inline = self._inline
        if node.text:
            inline.append(node.text)
        for child in node:
            if isinstance(child.tag, str):  # comments and processing instructions are no text
                self.visit(child)
            if child.tail:
                inline.append(child.tail)

    def flush(self) -> None:
        lines = []
        for segment in _split_at_breaks(self._inline):
            line = _collapse_whitespace(segment)
            if line:
                lines.append(line)
        self._inline.clear()
        if lines:
            self.blocks.append(("text", "\n".join(lines)))

    def visit(self, node: etree._Element) -> None:
        """Write one element (not its tail)."""
        if _is_skipped(node):
            return
        name = node.tag
        if name == "br":
            self._inline.append(_BR)
        elif name in _HEADINGS:
            self._add(("text", _heading(node)))
        elif name == "pre":
            self._add(("verbatim", _fence(_pre_text(node))))
        elif name in _LISTS:
            self.flush()
            self.blocks.extend(_list_blocks(node, self._list_depth))
        elif name == "table" and _is_layout_table(node):
            self.flush()
            for cell in _cells_of(node):
                self.walk(cell)
                self.flush()
        elif name == "table":
            self._add(("verbatim", _figure(node)))
        elif name == "hr":
            self.flush()
        elif name in _BLOCKS:
            self.flush()
            self.walk(node)
            self.flush()
        elif name != "img":
            self.walk(node)

    def _add(self, block: tuple[str, str]) -> None:
        self.flush()
        if block[1].strip():
            self.blocks.append(block)


def _is_skipped(element: etree._Element) -> bool:
    name = element.tag
    if name in _SKIPPED_TAGS:
        return True
    if name in ("header", "footer") and next(element.iterancestors(*_SECTIONING), None) is None:
        return True
    attributes = element.attrib
    if not attributes:
        return False
    if attributes.get("role") in _SKIPPED_ROLES or "hidden" in attributes or attributes.get("aria-hidden") == "true":
        return True
    return not _SKIPPED_CLASSES.isdisjoint(_classes(element))


def _classes(element: etree._Element) -> list[str]:
    """The element's class names, split at whitespace."""
    return (element.get("class") or "").split()


def _split_at_breaks(pieces: list[object]) -> Iterator[str]:
    segment: list[str] = []
    for piece in pieces:
        if piece is _BR:
            yield "".join(segment)
            segment = []
        else:
            segment.append(piece)  # type: ignore[arg-type]
    yield "".join(segment)


def _collapse_whitespace(text: str) -> str:
    """Collapse whitespace runs (no-break spaces too) to one space, or to nothing at a line break between wide
    characters, as CSS does.

    Source: CSS Text Module Level 3, §4.1.3 "Segment Break Transformation Rules". Example:
    ``"日本\\n語  and\\n text"`` → ``"日本語 and text"``.
    """
    if "\n" in text:
        text = _BREAK_BETWEEN_WIDE.sub("", text)
    return _WHITESPACE.sub(" ", text).strip()


def _flat_text(node: etree._Element) -> str:
    """The text of ``node`` on one line: blocks, cells and line breaks become spaces, chrome is skipped."""
    pieces: list[str] = []

    def collect(element: etree._Element) -> None:
        if element.text:
            pieces.append(element.text)
        for child in element:
            if isinstance(child.tag, str) and not _is_skipped(child):
                boundary = child.tag in _BREAKS_TEXT
                if boundary:
                    pieces.append(" ")
                collect(child)
                if boundary:
                    pieces.append(" ")
            if child.tail:
                pieces.append(child.tail)

    collect(node)
    return _collapse_whitespace("".join(pieces))


def _pre_text(pre: etree._Element) -> str:
    """The text of a ``pre`` as written, ``br`` and comments adding nothing, without the text of ``script``,
    ``style``, ``template``, ``rt`` and ``rp`` elements (none at all inside one of them)."""
    if next(pre.iterancestors(*_NOT_PRE_TEXT), None) is not None:
        return ""
    pieces: list[str] = []

    def collect(element: etree._Element) -> None:
        if element.text:
            pieces.append(element.text)
        for child in element:
            if isinstance(child.tag, str) and child.tag not in _NOT_PRE_TEXT:
                collect(child)
            if child.tail:
                pieces.append(child.tail)

    collect(pre)
    return "".join(pieces)


def _heading(element: etree._Element) -> str:
    text = _flat_text(element)
    return f"{'#' * _HEADINGS[element.tag]} {text}" if text else ""


def _fence(code: str) -> str:
    # The HTML parser keeps the newline that follows <pre>; browsers do not show it (HTML §13.2.6.4.7).
    code = code.removeprefix("\n").rstrip()
    longest_run = max((len(run) for run in re.findall(r"`+", code)), default=0)
    fence = "`" * max(3, longest_run + 1)
    return f"{fence}\n{code}\n{fence}" if code.strip() else ""


def _list_blocks(list_element: etree._Element, depth: int) -> list[tuple[str, str]]:
    """Write a list as ``- item`` lines; code and tables inside items break the list into separate blocks."""
    indent = "  " * depth
    blocks: list[tuple[str, str]] = []
    lines: list[str] = []
    for item in _children(list_element):
        writer = _BlockWriter(list_depth=depth + 1)
        if isinstance(item, str):  # stray text
            if not item.strip():
                continue
            writer._inline.append(item)
        elif item.tag == "li":
            writer.walk(item)
        else:
            writer.visit(item)  # a list nested without its <li>, or another element
        writer.flush()
        marker = f"{indent}- "
        for kind, text in writer.blocks:
            if kind == "verbatim":
                if lines:
                    blocks.append(("list", "\n".join(lines)))
                    lines = []
                blocks.append((kind, text))
            elif kind == "list":
                lines.append(text)
            else:
                lines.append(marker + text.replace("\n", f"\n{indent}  "))
                marker = f"{indent}  "
    if lines:
        blocks.append(("list", "\n".join(lines)))
    return blocks


def _children(element: etree._Element) -> Iterator[str | etree._Element]:
    """The texts and child elements of *element* in document order (comments and their like left out, their
    tails kept)."""
    if element.text:
        yield element.text
    for child in element:
        if isinstance(child.tag, str):
            yield child
        if child.tail:
            yield child.tail


def _rows_of(table: etree._Element) -> list[etree._Element]:
    """The ``tr`` elements of *table*, at any depth, outside the tables nested in it."""
    return [row for row in table.iter("tr") if next(row.iterancestors("table"), None) is table]


def _cells_of(table: etree._Element) -> Iterator[etree._Element]:
    for row in _rows_of(table):
        yield from _cells_of_row(row)


def _cells_of_row(row: etree._Element) -> list[etree._Element]:
    return [cell for cell in row if cell.tag == "td" or cell.tag == "th"]


def _is_layout_table(table: etree._Element) -> bool:
    if table.get("role") in ("presentation", "none"):
        return True
    parent = table.getparent()
    return parent is not None and not _ADMONITIONS.isdisjoint(_classes(parent))


def _figure(table: etree._Element) -> str:
    """Write a data table as ``<figure><table>`` with escaped cell text, ``<th>`` for header cells.

    Nested tables are flattened into the text of their cell. Example: ``<table><tr><th>a</th><td>b &amp;
    c</td></tr></table>`` → ``"<figure><table>\\n<tr><th>a</th><td>b &amp; c</td></tr>\\n</table></figure>"``.
    """
    lines = []
    has_text = False
    caption = next((child for child in table if child.tag == "caption"), None)
    if caption is not None and (caption_text := _flat_text(caption)):
        lines.append(f"<caption>{html.escape(caption_text, quote=False)}</caption>")
        has_text = True
    for row in _rows_of(table):
        parent = row.getparent()
        in_head = parent is not None and parent.tag == "thead"
        cells = []
        for cell in _cells_of_row(row):
            name = "th" if cell.tag == "th" or in_head else "td"
            text = _flat_text(cell)
            has_text = has_text or bool(text)
            cells.append(table_cell(name, _span_attributes(cell), text))
        if cells:
            lines.append("<tr>" + "".join(cells) + "</tr>")
    if not has_text:
        return ""
    return figure_table(lines)


def _span_attributes(cell: etree._Element) -> str:
    attributes = ""
    for name in ("rowspan", "colspan"):
        value = str(cell.get(name) or "").strip()
        if value.isdigit() and int(value) > 1:
            attributes += f' {name}="{int(value)}"'
    return attributes
