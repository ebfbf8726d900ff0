"""HTML files: the page's content as Markdown-flavoured text, with tables as HTML ``<figure>`` blocks.

BeautifulSoup over lxml (both MIT/BSD): lxml parses real-world tag soup the way browsers recover from it and
is fast on large pages; BeautifulSoup gives a tree that is simple to walk in document order.

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
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

from bs4 import BeautifulSoup, Comment, Declaration, Doctype, NavigableString, ProcessingInstruction, Tag
from bs4.dammit import EncodingDetector

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
_SECTIONING = ["article", "aside", "main", "nav", "section"]
_ADMONITIONS = frozenset({"note", "tip", "warning", "caution", "important"})
_NON_TEXT = (Comment, Declaration, Doctype, ProcessingInstruction)

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
# Decoding is done; the declaration would only make BeautifulSoup warn that XHTML looks like XML.
_XML_DECLARATION = re.compile(r"\A\s*<\?xml[^>]*\?>")
# East Asian wide characters (Han, kana, CJK punctuation, full-width forms).
_WIDE = re.compile(r"[\u2e80-\u2fdf\u3000-\u30ff\u3190-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")


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
    soup = BeautifulSoup(_XML_DECLARATION.sub("", text), "lxml")
    if _deeper_than(soup, context.limits.max_nesting_depth):
        raise ParseError(source, context.limits.depth_reason("HTML elements"))
    writer = _BlockWriter()
    writer.walk(soup)
    writer.flush()
    return pages_from_texts(["\n\n".join(block for _, block in writer.blocks)])


def _deeper_than(root: Tag, limit: int) -> bool:
    """Whether elements nest more than *limit* levels below *root*; an explicit stack, no recursion."""
    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in node.contents if isinstance(child, Tag))
    return False


class _BlockWriter:
    """Collects blocks as ``(kind, text)``, kind ``"text"``, ``"list"`` or ``"verbatim"`` (fences, figures)."""

    def __init__(self, list_depth: int = 0) -> None:
        self.blocks: list[tuple[str, str]] = []
        self._inline: list[object] = []
        self._list_depth = list_depth

    def walk(self, node: Tag) -> None:
        for child in node.children:
            self.visit(child)

    def flush(self) -> None:
        lines = []
        for segment in _split_at_breaks(self._inline):
            line = _collapse_whitespace(segment)
            if line:
                lines.append(line)
        self._inline.clear()
        if lines:
            self.blocks.append(("text", "\n".join(lines)))

    def visit(self, node: object) -> None:
        if isinstance(node, NavigableString):
            if not isinstance(node, _NON_TEXT):
                self._inline.append(str(node))
            return
        if not isinstance(node, Tag) or _is_skipped(node):
            return
        name = node.name
        if name == "br":
            self._inline.append(_BR)
        elif name in _HEADINGS:
            self._add(("text", _heading(node)))
        elif name == "pre":
            self._add(("verbatim", _fence(node.get_text())))
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


def _is_skipped(tag: Tag) -> bool:
    if tag.name in _SKIPPED_TAGS:
        return True
    if tag.name in ("header", "footer") and tag.find_parent(_SECTIONING) is None:
        return True
    if tag.get("role") in _SKIPPED_ROLES or tag.has_attr("hidden") or tag.get("aria-hidden") == "true":
        return True
    return not _SKIPPED_CLASSES.isdisjoint(tag.get("class") or ())


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

    def replace(match: re.Match[str]) -> str:
        if "\n" in match.group():
            before, after = text[match.start() - 1 : match.start()], text[match.end() : match.end() + 1]
            if _WIDE.match(before) and _WIDE.match(after):
                return ""
        return " "

    return _WHITESPACE.sub(replace, text).strip()


def _flat_text(node: Tag) -> str:
    """The text of ``node`` on one line: blocks, cells and line breaks become spaces, chrome is skipped."""
    pieces: list[str] = []

    def collect(element: object) -> None:
        if isinstance(element, NavigableString):
            if not isinstance(element, _NON_TEXT):
                pieces.append(str(element))
        elif isinstance(element, Tag) and not _is_skipped(element):
            boundary = element.name in _BREAKS_TEXT
            if boundary:
                pieces.append(" ")
            for child in element.children:
                collect(child)
            if boundary:
                pieces.append(" ")

    for child in node.children:
        collect(child)
    return _collapse_whitespace("".join(pieces))


def _heading(tag: Tag) -> str:
    text = _flat_text(tag)
    return f"{'#' * _HEADINGS[tag.name]} {text}" if text else ""


def _fence(code: str) -> str:
    # The HTML parser keeps the newline that follows <pre>; browsers do not show it (HTML §13.2.6.4.7).
    code = code.removeprefix("\n").rstrip()
    longest_run = max((len(run) for run in re.findall(r"`+", code)), default=0)
    fence = "`" * max(3, longest_run + 1)
    return f"{fence}\n{code}\n{fence}" if code.strip() else ""


def _list_blocks(list_tag: Tag, depth: int) -> list[tuple[str, str]]:
    """Write a list as ``- item`` lines; code and tables inside items break the list into separate blocks."""
    indent = "  " * depth
    blocks: list[tuple[str, str]] = []
    lines: list[str] = []
    for item in list_tag.children:
        if isinstance(item, NavigableString) and not str(item).strip():
            continue
        writer = _BlockWriter(list_depth=depth + 1)
        if isinstance(item, Tag) and item.name == "li":
            writer.walk(item)
        else:
            writer.visit(item)  # stray text or a list nested without its <li>
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


def _rows_of(table: Tag) -> list[Tag]:
    return [row for row in table.find_all("tr") if row.find_parent("table") is table]


def _cells_of(table: Tag) -> Iterator[Tag]:
    for row in _rows_of(table):
        yield from row.find_all(("td", "th"), recursive=False)


def _is_layout_table(table: Tag) -> bool:
    if table.get("role") in ("presentation", "none"):
        return True
    parent = table.parent
    return isinstance(parent, Tag) and not _ADMONITIONS.isdisjoint(parent.get("class") or ())


def _figure(table: Tag) -> str:
    """Write a data table as ``<figure><table>`` with escaped cell text, ``<th>`` for header cells.

    Nested tables are flattened into the text of their cell. Example: ``<table><tr><th>a</th><td>b &amp;
    c</td></tr></table>`` → ``"<figure><table>\\n<tr><th>a</th><td>b &amp; c</td></tr>\\n</table></figure>"``.
    """
    lines = []
    has_text = False
    caption = table.find("caption", recursive=False)
    if caption is not None and (caption_text := _flat_text(caption)):
        lines.append(f"<caption>{html.escape(caption_text, quote=False)}</caption>")
        has_text = True
    for row in _rows_of(table):
        in_head = isinstance(row.parent, Tag) and row.parent.name == "thead"
        cells = []
        for cell in row.find_all(("td", "th"), recursive=False):
            name = "th" if cell.name == "th" or in_head else "td"
            text = _flat_text(cell)
            has_text = has_text or bool(text)
            cells.append(table_cell(name, _span_attributes(cell), text))
        if cells:
            lines.append("<tr>" + "".join(cells) + "</tr>")
    if not has_text:
        return ""
    return figure_table(lines)


def _span_attributes(cell: Tag) -> str:
    attributes = ""
    for name in ("rowspan", "colspan"):
        value = str(cell.get(name) or "").strip()
        if value.isdigit() and int(value) > 1:
            attributes += f' {name}="{int(value)}"'
    return attributes
