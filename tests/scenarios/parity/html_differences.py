"""Documented differences of the HTML splitters from LangChain 1.1.3, each a named predicate of the input.

A predicate says whether the input can show the difference (same contract as ``differences.py``); the reasons
repeat the class docstrings and the table of docs/splitters.md#coming-from-langchain in short. Predicates read
the input with BeautifulSoup's ``html.parser``, the parser both libraries' semantic splitters use.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from bs4 import BeautifulSoup, NavigableString, Tag

from chunking.splitters.html._dom import spaced_text
from tests.scenarios.parity.differences import Difference

_NON_TEXT = re.compile(r"<!|<\?|<script|<style|<template", re.I)
_MEDIA_TAGS = {"img": "preserve_images", "video": "preserve_videos", "audio": "preserve_audio"}


def _soup(case: dict[str, Any]) -> BeautifulSoup:
    return BeautifulSoup(case["text"], "html.parser")


def _header_tags(case: dict[str, Any]) -> set[str]:
    return {tag for tag, _ in case["options"].get("headers_to_split_on", [])}


def _child_tags(element: Tag, case: dict[str, Any]) -> list[Tag]:
    """Child elements as LangChain sees them: links made Markdown are text there, media are wrapper tags."""
    links = case["options"].get("preserve_links", False)
    return [c for c in element.children if isinstance(c, Tag) and not (links and c.name == "a")]


def _reordered(case: dict[str, Any]) -> bool:
    """Some element outside a header or preserved element (or a custom-handled one) has text of its own before
    a child element: LangChain emits the element's own text after its children's."""
    options = case["options"]
    stop = _header_tags(case) | set(options.get("elements_to_preserve") or [])
    handlers = set(options.get("custom_handlers") or {})
    stack = [c for c in _soup(case).children if isinstance(c, Tag)]
    while stack:
        element = stack.pop()
        if element.name in stop:
            continue
        children = _child_tags(element, case)
        if not children:
            continue
        if element.name in handlers:
            return True  # LangChain ignores the handler of a tag with child tags
        seen_text = False
        for child in element.children:
            if (isinstance(child, NavigableString) and str(child).strip()) or (isinstance(child, Tag)
                                                                                 and child not in children):
                seen_text = True  # a string, or a link that LangChain has made a string
            elif child in children and seen_text:
                return True
        stack.extend(children)
    return False


def _text_outside_elements(case: dict[str, Any]) -> bool:
    """Text directly under the document root (a link made Markdown is text there too)."""
    links = case["options"].get("preserve_links", False)
    return any((isinstance(c, NavigableString) and str(c).strip("\ufeff \t\r\n\f"))
               or (links and isinstance(c, Tag) and c.name == "a") for c in _soup(case).children)


def _non_text_nodes(case: dict[str, Any]) -> bool:
    return _NON_TEXT.search(case["text"]) is not None


def _spaced(case: dict[str, Any]) -> bool:
    """A header (or, with preserve_links, a link) whose text LangChain renders otherwise: it joins the stripped
    strings without a space and keeps whitespace runs inside them."""
    names = _header_tags(case) | ({"a"} if case["options"].get("preserve_links") else set())
    for element in _soup(case).find_all(list(names)) if names else []:
        if element.get_text(strip=True) != spaced_text(element):
            return True
    return False


def _preserved_measured(case: dict[str, Any]) -> bool:
    """A preserved element is present and the outputs are long enough (placeholders counted) for a section to be
    split further; or the page holds text that looks like LangChain's placeholder."""
    preserve = case["options"].get("elements_to_preserve") or []
    if "PRESERVED_" in case["text"]:
        return True
    if not preserve:
        return False
    found = _soup(case).find_all(preserve)
    longest = max(sum(len(content) for content, _ in case[side]) for side in ("ours", "theirs"))
    return bool(found) and longest + 12 * len(found) > case["options"].get("max_chunk_size", 1000)


def _our_recursive_splitter(case: dict[str, Any]) -> bool:
    """LangChain's own class with its further split done by our RecursiveCharacterTextSplitter gives our output."""
    import langchain_text_splitters as langchain

    from chunking import splitters as ours

    options = dict(case["options"])
    theirs = langchain.HTMLSemanticPreservingSplitter(**options)
    recursive = {"separators": options.get("separators") or None,
                 "chunk_size": options.get("max_chunk_size", 1000), "chunk_overlap": options.get("chunk_overlap", 0),
                 "keep_separator": options.get("keep_separator", True)}
    theirs._recursive_splitter = ours.RecursiveCharacterTextSplitter(**recursive)
    redone = [(d.page_content, d.metadata) for d in theirs.split_text(case["text"])]
    return redone == case["ours"]


def _media_with_allowlist(case: dict[str, Any]) -> bool:
    options = case["options"]
    if not options.get("allowlist_tags"):
        return False
    names = [tag for tag, option in _MEDIA_TAGS.items() if options.get(option)]
    return bool(names) and bool(_soup(case).find_all(names))


def _blank_or_padded(case: dict[str, Any]) -> bool:
    return any(not content.strip() or content != content.strip() for content, _ in case["theirs"])


ORDER = Difference(
    "text_in_document_order", "text keeps document order; LangChain puts an element's own text after its children's "
    "and ignores a custom handler on a tag with child tags", _reordered)
OUTSIDE = Difference(
    "text_outside_elements_kept", "text not inside any element is kept; LangChain drops it",
    _text_outside_elements)
NON_TEXT = Difference(
    "comments_and_scripts_are_not_text", "comments, doctypes, CDATA-like declarations and script, style, template "
    "content are not text; LangChain keeps their text", _non_text_nodes)
SPACED = Difference(
    "header_and_link_text_spaced", "header and link texts keep a space between their inline parts; LangChain joins "
    "them without one", _spaced)
PRESERVED = Difference(
    "preserved_elements_measured_by_text", "a preserved element counts as its text's length and is never cut or "
    "confused with look-alike text; LangChain measures a 'PRESERVED_n' placeholder", _preserved_measured)
RECURSIVE = Difference(
    "further_split_by_our_recursive_splitter", "a section over max_chunk_size is split by our "
    "RecursiveCharacterTextSplitter, whose documented differences apply (oversize pieces cut, punctuation kept "
    "with its sentence, CJK sentence ends)", _our_recursive_splitter)
MEDIA = Difference(
    "media_text_survives_allowlist", "media converted to Markdown survive an allowlist; LangChain removes them with "
    "their wrapper tag", _media_with_allowlist)
BLANK = Difference(
    "no_blank_or_padded_chunks", "no blank Document and no chunk with leading or trailing whitespace; LangChain emits "
    "them around empty sections and empty preserved elements", _blank_or_padded)



def _nested_headers(case: dict[str, Any]) -> bool:
    """A configured header follows a configured header of a higher level (``h1`` then ``h2``): our section
    metadata keeps the enclosing header too; LangChain keeps the last header only."""
    from chunking.splitters.html.semantic import _header_level

    pairs = case["options"].get("headers_to_split_on", [])
    levels = {tag: _header_level(tag, n) for n, (tag, _) in enumerate(pairs)}
    seen: list[int] = []
    for header in _soup(case).find_all(list(levels)) if levels else []:
        level = levels[header.name]
        if any(other < level for other in seen):
            return True
        seen.append(level)
    return False


NESTED = Difference(
    "enclosing_headers_kept", "a section's metadata holds every enclosing header (h1 and h2, as "
    "HTMLHeaderTextSplitter); LangChain's semantic splitter keeps the last header only", _nested_headers)

SEMANTIC = [ORDER, OUTSIDE, NON_TEXT, SPACED, PRESERVED, RECURSIVE, MEDIA, BLANK, NESTED]


def _no_whitespace(documents: Any) -> Any:
    if not isinstance(documents, list):
        return documents
    return [("".join(content.split()), {k: "".join(str(v).split()) for k, v in metadata.items()})
            for content, metadata in documents]


def _serialisation_whitespace(case: dict[str, Any]) -> bool:
    """Equal once whitespace is removed: LangChain reads the repaired tree back from XSLT's HTML output, which adds
    line breaks between block elements."""
    return _no_whitespace(case["ours"]) == _no_whitespace(case["theirs"])


def _blank_document(case: dict[str, Any]) -> bool:
    return isinstance(case["theirs"], str) and case["theirs"].startswith("ValueError") and case["ours"] == []


SECTION_WHITESPACE = Difference(
    "section_whitespace_as_serialised_by_lxml", "the repaired tree is serialised by lxml, which adds no line breaks; "
    "LangChain's XSLT output adds them between block elements", _serialisation_whitespace)
SECTION_BLANK = Difference(
    "blank_html_gives_no_sections", "HTML in which lxml finds no document (blank, a lone CDATA) gives no "
    "Document; LangChain raises ValueError",
    _blank_document)
SECTION_KEY = Difference(
    "section_without_configured_tag_kept", "a section whose tag is not configured (the untitled first section "
    "without h1, a second body) gets no header metadata; LangChain raises KeyError",
    lambda case: isinstance(case["theirs"], str) and case["theirs"].startswith("KeyError"))
SECTION = [SECTION_WHITESPACE, SECTION_BLANK, SECTION_KEY]


def _rendered(documents: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, str]]]:
    """(word, header path) pairs in order, list and cell marks and BOMs left out, whitespace collapsed in the paths."""
    words = ((word.replace("\ufeff", ""), metadata) for content, metadata in documents for word in content.split())
    return [(word, {k: " ".join(str(v).split()) for k, v in metadata.items()})
            for word, metadata in words if word not in ("", "-", "|")]


def _header_rendering(case: dict[str, Any]) -> bool:
    """The same words under the same header paths: the header opens its section instead of being a Document of
    its own, lines are joined by newlines, whitespace collapses, list items get '- ' and cells ' | '."""
    return _rendered(case["ours"]) == _rendered(case["theirs"])


_DROPPED = re.compile(r"<!|<script|<style|<head|<title|<noscript|<template", re.I)


def _mixed_content(case: dict[str, Any]) -> bool:
    """The same words in another order (text LangChain moves can land in another section), and some element holds
    both text of its own and child elements (LangChain can emit its own text after its children's); or script,
    style, head text or other non-text nodes, which are dropped here."""
    if _DROPPED.search(case["text"]):
        return True
    if Counter(word for word, _ in _rendered(case["ours"])) != Counter(word for word, _ in _rendered(case["theirs"])):
        return False  # not the same words in another order (moved text can change sections)
    soup = _soup(case)
    for element in [soup, *soup.find_all(True)]:
        if any(isinstance(c, Tag) for c in element.children) and any(
                isinstance(c, NavigableString) and str(c).strip() for c in element.children):
            return True
    return False


def _header_scope(case: dict[str, Any]) -> bool:
    """A configured header is nested in an element (it applies inside its enclosing element; LangChain compares DOM
    depths) or in another configured header."""
    from chunking.splitters.html._render import header_scope, parse_html

    names = _header_tags(case)
    soup = parse_html(case["text"])
    for header in soup.find_all(list(names)) if names else []:
        if header.find_parent(list(names)) is not None or header.find(list(names)) is not None:
            return True
        top = ("body", "html", "[document]")
        if header.parent.name not in top or header_scope(header).name not in top:
            return True
    return False


HEADER_RENDERING = Difference("html_header_opens_its_section", _header_rendering.__doc__ or "", _header_rendering)
HEADER_ORDER = Difference("html_text_in_document_order", _mixed_content.__doc__ or "", _mixed_content)
HEADER_SCOPE = Difference("html_header_applies_inside_its_element", _header_scope.__doc__ or "", _header_scope)
HEADER = [HEADER_RENDERING, HEADER_ORDER, HEADER_SCOPE]
