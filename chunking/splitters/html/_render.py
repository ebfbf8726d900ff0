"""Render an HTML tree as lines of text in document order (for :class:`HTMLHeaderTextSplitter`).

Rules (docs/splitters.md#htmlheadertextsplitter, steps 1–2):
1. ``script``, ``style``, ``noscript``, ``template``, the whole ``head`` and comments are dropped.
2. Text nodes keep their document order whatever inline tags surround them; runs of HTML whitespace (space, tab,
   CR, LF, FF; not the no-break space) collapse to one space, except inside ``pre``.
3. Block elements start a new line. Cells of a table row are joined by ``" | "``; a list item starts with
   ``"- "``.
4. Configured headers and preserved elements become units of their own; a header without text is skipped.
5. Each unit remembers the element it came from, for header scope (``HtmlUnit.in_scope_of``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from bs4 import BeautifulSoup, CData, NavigableString, Tag

__all__ = ["HtmlUnit", "parse_html", "render_units"]

REMOVED_TAGS = frozenset({"script", "style", "noscript", "template", "head"})
BLOCK_TAGS = frozenset({
    "address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details", "div", "dl", "dt",
    "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr",
    "html", "li", "main", "nav", "ol", "p", "pre", "section", "summary", "table", "tbody", "tfoot", "thead", "tr",
    "ul", "br",
})
_HTML_WHITESPACE = re.compile(r"[ \t\n\r\f]+")
_XML_DECLARATION = re.compile(r"\A\s*<\?xml[^>]*\?>")


@dataclass(frozen=True, slots=True)
class HtmlUnit:
    """One rendered unit.

    Attributes:
        kind: ``"text"`` (one block's line, or a ``pre``'s verbatim text), ``"header"`` or ``"preserved"``.
        text: the rendered text (a preserved element's lines joined by ``\\n``).
        level: 1–6 for a header, else 0.
        tag: the element name for headers and preserved elements.
        rows: a preserved element's lines (a table's rows).
        header_rows: how many leading *rows* are a table's header row (0 or 1).
        node: the element the unit came from (for a text line, the parent of its first text), or ``None``.
        scope: for a header, the element it applies to (:func:`header_scope`).
    """

    kind: Literal["text", "header", "preserved"]
    text: str
    level: int = 0
    tag: str = ""
    rows: tuple[str, ...] = ()
    header_rows: int = 0
    node: Any = field(default=None, compare=False, repr=False)
    scope: Any = field(default=None, compare=False, repr=False)

    def in_scope_of(self, header: "HtmlUnit") -> bool:
        """Whether *header* still applies to this unit: the unit lies inside the header's scope element
        (:func:`header_scope`)."""
        if self.node is None or header.scope is None:
            return True
        scope, node = header.scope, self.node
        while node is not None:
            if node is scope:
                return True
            node = node.parent
        return False


def _has_text_after(node: Any) -> bool:
    for sibling in node.next_siblings:
        if isinstance(sibling, Tag):
            if sibling.name not in REMOVED_TAGS and next(sibling.stripped_strings, None) is not None:
                return True
        elif type(sibling) in (NavigableString, CData) and sibling.strip():
            return True
    return False


def header_scope(header: Any) -> Any:
    """The element a header applies to: climb from the header while nothing with text follows it in its parent;
    the first parent with text after the header's branch is the scope. ``<section><h2>B</h2><p>…</section>`` →
    the section; DocBook's ``<div class="section"><div class="titlepage"><div><h3>…</h3></div></div><p>…`` → the
    outer div; ``<header><h1>T</h1></header><main>…`` → the body."""
    node = header
    while node.parent is not None and node.parent.parent is not None and not _has_text_after(node):
        node = node.parent
    return node.parent


def parse_html(html: str) -> BeautifulSoup:
    """Parse *html* leniently (documents and fragments) with lxml, or the standard library parser without it."""
    html = _XML_DECLARATION.sub("", html, count=1)  # XHTML pages: parse as HTML without bs4's XML warning
    try:
        return BeautifulSoup(html, "lxml")
    except Exception:  # bs4.FeatureNotFound when lxml is missing
        return BeautifulSoup(html, "html.parser")


def _collapse(text: str) -> str:
    return _HTML_WHITESPACE.sub(" ", text).strip()


def _inline_parts(node: Tag, parts: list[str]) -> None:
    for child in node.children:
        if isinstance(child, NavigableString):
            if type(child) in (NavigableString, CData):
                parts.append(str(child))
        elif isinstance(child, Tag) and child.name not in REMOVED_TAGS:
            block = child.name in BLOCK_TAGS or child.name in ("td", "th")
            if block:
                parts.append(" ")
            _inline_parts(child, parts)
            if block:
                parts.append(" ")


def inline_text(node: Tag) -> str:
    """All text under *node* on one line, whitespace collapsed, block boundaries as spaces."""
    parts: list[str] = []
    _inline_parts(node, parts)
    return _collapse("".join(parts))


def _pre_text(node: Tag) -> str:
    parts: list[str] = []
    for child in node.descendants:
        if type(child) in (NavigableString, CData) and not any(p.name in REMOVED_TAGS for p in child.parents):
            parts.append(str(child))
        elif isinstance(child, Tag) and child.name == "br":
            parts.append("\n")
    return "".join(parts).removeprefix("\n").rstrip()


class _Renderer:
    def __init__(self, header_levels: dict[str, int], preserve: frozenset[str]) -> None:
        self.units: list[HtmlUnit] = []
        self._header_levels = header_levels
        self._preserve = preserve
        self._inline: list[str] = []
        self._inline_node: Any = None  # the parent of the first non-blank text of the pending line
        self._prefix = ""

    def flush(self) -> None:
        line = _collapse("".join(self._inline))
        self._inline.clear()
        node, self._inline_node = self._inline_node, None
        if line:
            self._add(line, node)

    def _add(self, text: str, node: Any) -> None:
        self.units.append(HtmlUnit("text", self._prefix + text, node=node))
        self._prefix = ""

    def visit_children(self, node: Tag) -> None:
        for child in node.children:
            self.visit(child)

    def visit(self, node: object) -> None:
        if isinstance(node, NavigableString):
            if type(node) in (NavigableString, CData):
                self._inline.append(str(node))
                if self._inline_node is None and node.strip():
                    self._inline_node = node.parent
            return
        if not isinstance(node, Tag):
            return
        name = node.name.lower()
        if name in REMOVED_TAGS:
            return
        if name in self._header_levels:
            text = inline_text(node)
            if not text:  # a header without text names no section (as LangChain): nothing to render either
                return
            self.flush()
            self.units.append(HtmlUnit("header", text, level=self._header_levels[name], tag=name,
                                       node=node, scope=header_scope(node)))
        elif name in self._preserve:
            self.flush()
            self.units.append(_preserved(node, name))
        elif name == "pre":
            self.flush()
            text = _pre_text(node)
            if text.strip():
                self._add(text, node)
        elif name == "tr":
            self.flush()
            cells = node.find_all(["td", "th"], recursive=False)
            line = " | ".join(inline_text(cell) for cell in cells) if cells else inline_text(node)
            if line.strip(" |"):
                self._add(line, node)
        elif name == "li":
            self.flush()
            self._prefix = "- "
            self.visit_children(node)
            self.flush()
            self._prefix = ""
        elif name in BLOCK_TAGS:
            self.flush()
            self.visit_children(node)
            self.flush()
        else:
            self.visit_children(node)


def _preserved(node: Tag, name: str) -> HtmlUnit:
    renderer = _Renderer({}, frozenset())
    renderer.visit(node)  # the element itself, so a preserved <pre> keeps its whitespace
    renderer.flush()
    rows = tuple(unit.text for unit in renderer.units)
    header_rows = 0
    if name == "table":
        first_row = node.find("tr")
        if first_row is not None and first_row.find("th") is not None and first_row.find("td") is None:
            header_rows = 1 if rows else 0
    return HtmlUnit("preserved", "\n".join(rows), tag=name, rows=rows, header_rows=header_rows, node=node)


def render_units(html: str, header_levels: dict[str, int], preserve: frozenset[str]) -> list[HtmlUnit]:
    """Render *html* into units in document order (module docstring).

    Args:
        html: a document or fragment.
        header_levels: tag name → level for the headers that split (``{"h1": 1, "h2": 2}``).
        preserve: tag names rendered as atomic ``"preserved"`` units.
    """
    soup = parse_html(html)
    renderer = _Renderer(header_levels, preserve)
    renderer.visit_children(soup)
    renderer.flush()
    return renderer.units
