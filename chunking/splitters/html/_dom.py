"""Tree preparation and reading for :class:`HTMLSemanticPreservingSplitter`.

docs/splitters.md#htmlsemanticpreservingsplitter describes the steps.

Preparation, in this order (LangChain's order, so the options combine as they do there):
1. Media: each ``img``, ``video``, ``audio`` (when asked) is replaced by the text ``![image:SRC](SRC)``
   (``video:``, ``audio:``), SRC being its ``src`` attribute or ``""``.
2. Links: each ``a`` becomes the text ``[TEXT](HREF)``, TEXT its visible text.
3. Filters: with an allowlist, an element survives only if it and every ancestor are listed (headers always
   are); with a denylist, listed elements are removed with their content (headers never are).

Reading (:func:`read_events`) walks the tree in document order with an explicit stack (deep nesting cannot
overflow Python's stack) and yields section events: a configured header, a text string, or a preserved element's
text as one atom. Comments, doctypes, processing instructions and the content of ``script``, ``style`` and
``template`` are not text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterator, Literal

from bs4 import BeautifulSoup, CData, NavigableString, Tag
from bs4.element import PreformattedString, Script, Stylesheet, TemplateString

__all__ = ["Event", "ReadOptions", "element_text", "prepare_tree", "read_events", "spaced_text"]

_SKIPPED_TAGS = frozenset({"script", "style", "template"})
_MEDIA = (("img", "image"), ("video", "video"), ("audio", "audio"))
_WHITESPACE = re.compile(r"\s+")


def is_text(node: object) -> bool:
    """Whether *node* is a text string of the page (CDATA counts; comments, doctypes and script text do not)."""
    if not isinstance(node, NavigableString) or isinstance(node, (Script, Stylesheet, TemplateString)):
        return False
    return type(node) is CData or not isinstance(node, PreformattedString)


def spaced_text(node: Tag) -> str:
    """The text strings under *node*, each stripped, joined by one space, whitespace runs collapsed
    (``<h1>Hello <b>world</b></h1>`` → ``"Hello world"``)."""
    parts = (str(s).strip() for s in node.descendants if is_text(s) and not _in_skipped(s, node))
    return _WHITESPACE.sub(" ", " ".join(p for p in parts if p))


def _in_skipped(node: NavigableString, root: Tag) -> bool:
    parent = node.parent
    while parent is not None and parent is not root:
        if parent.name in _SKIPPED_TAGS:
            return True
        parent = parent.parent
    return root.name in _SKIPPED_TAGS


def prepare_tree(soup: BeautifulSoup, media: dict[str, bool], links: bool, allow: frozenset[str] | None,
                 deny: frozenset[str]) -> None:
    """Apply steps 1–3 of the module docstring to *soup* in place.

    Args:
        media: ``{"img": bool, "video": bool, "audio": bool}``: which media become Markdown text.
        links: turn ``a`` elements into Markdown links.
        allow: tag names kept (headers included by the caller), or ``None`` for no allowlist.
        deny: tag names removed (headers excluded by the caller).
    """
    for tag_name, label in _MEDIA:
        if media.get(tag_name):
            for element in soup.find_all(tag_name):
                source = element.get("src", "")
                element.replace_with(NavigableString(f"![{label}:{source}]({source})"))
    if links:
        for element in soup.find_all("a"):
            if element.parent is None:  # inside a link replaced before it
                continue
            element.replace_with(NavigableString(f"[{spaced_text(element)}]({element.get('href', '')})"))
    if allow is not None:
        for element in soup.find_all(True):
            if element.parent is not None and element.name not in allow:
                element.extract()
    if deny:
        for element in soup.find_all(list(deny)):
            if element.parent is not None:
                element.extract()


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """What :func:`read_events` looks for: header tag → metadata key, preserved tags, custom handlers, and the
    cleaning applied to every text string (normalisation, stop words)."""

    headers: dict[str, str]
    preserve: frozenset[str]
    handlers: dict[str, Callable[[Tag], str]]
    clean: Callable[[str], str]


@dataclass(frozen=True, slots=True)
class Event:
    """One reading event: ``"header"`` (*key* and header *text*), ``"text"`` or ``"atom"`` (a preserved element)."""

    kind: Literal["header", "text", "atom"]
    text: str
    key: str = ""


def element_text(element: Tag, options: ReadOptions) -> str:
    """A preserved element's text: its text strings and custom-handler outputs in document order, each stripped,
    joined by one space (inner line breaks of a single string are kept), then cleaned as a whole."""
    if element.name in options.handlers:
        return options.handlers[element.name](element)
    parts: list[str] = []
    stack: list[Iterator[object]] = [iter(element.children)]
    while stack:
        child = next(stack[-1], None)
        if child is None:
            stack.pop()
            continue
        if isinstance(child, Tag):
            if child.name in options.handlers:
                parts.append(options.handlers[child.name](child).strip())
            elif child.name not in _SKIPPED_TAGS:
                stack.append(iter(child.children))
        elif is_text(child):
            parts.append(options.clean(str(child)).strip())
    return options.clean(" ".join(part for part in parts if part))


def read_events(soup: BeautifulSoup, options: ReadOptions) -> Iterator[Event]:
    """The section events of *soup* in document order (module docstring)."""
    stack: list[Iterator[object]] = [iter(soup.children)]
    while stack:
        child = next(stack[-1], None)
        if child is None:
            stack.pop()
            continue
        if isinstance(child, Tag):
            name = child.name
            if name in options.headers:
                yield Event("header", spaced_text(child), options.headers[name])
            elif name in options.preserve:
                yield Event("atom", element_text(child, options))
            elif name in options.handlers:
                yield Event("text", options.handlers[name](child))
            elif name not in _SKIPPED_TAGS:
                stack.append(iter(child.children))
        elif is_text(child):
            yield Event("text", options.clean(str(child)))
