"""Split HTML into sections at header tags, and tags styled with a large font (LangChain's ``HTMLSectionSplitter``).

Algorithm (own code, LangChain's behaviour):
1. Repair the tree as LangChain does, with lxml's HTML parser (``no_network=True``: nothing is fetched; libxml2's
   HTML parser defines no entity from the document): misplaced tags are moved, a fragment gets its ``body``, CR LF
   becomes LF. Elements whose inline style sets ``font-size`` above 20 px are renamed ``h1`` (LangChain does this
   with an XSLT stylesheet; here it is a tree walk, so no XSLT processor ever runs). The repaired tree is
   serialised as HTML and read again with the standard library parser through BeautifulSoup. A document nested
   deeper than lxml's limit (255) is read by the standard library parser alone, so nothing after the limit is
   lost (LangChain loses it).
2. The boundaries are ``body`` (the untitled first section) and every configured header tag, in document order.
   A section's text is every string from its boundary to the next one, joined by spaces; blank sections are
   dropped.
3. Each section is a Document whose metadata maps the header's key to its stripped text (the first section is
   titled ``#TITLE#``, replaced by the ``Title`` metadata of the source in :meth:`create_documents`).
"""

from __future__ import annotations

import copy
import re
from io import StringIO
from typing import Any, Iterable

from bs4 import BeautifulSoup, NavigableString
from lxml import etree

from chunking.model import Document
from chunking.splitters.character import RecursiveCharacterTextSplitter

__all__ = ["HTMLSectionSplitter"]

_FONT_SIZE = re.compile(r"font-size\s*:\s*([0-9.]+)\s*px", re.I)
_LARGE_FONT_PX = 20


class HTMLSectionSplitter:
    """Split HTML at ``h1``–``h6`` headers (and large-font elements, treated as ``h1``) into text sections.

    Args:
        headers_to_split_on: ``(tag, metadata key)`` pairs, e.g. ``[("h1", "Header 1"), ("h2", "Header 2")]``.
        **kwargs: options of the :class:`RecursiveCharacterTextSplitter` that :meth:`split_documents` applies to
            each section.

    Safe on hostile input: never fetches a URL, never reads a DTD or expands an entity the document defines
    (``&test;`` is not replaced), runs no XSLT.

    Differs from LangChain on purpose (named predicates in ``tests/scenarios/parity/html_differences.py``):
        - A section whose tag is not configured (the untitled first section without ``h1``, a second ``body``)
          gets no header metadata; LangChain raises ``KeyError``.
        - HTML in which lxml finds no document (blank, a lone CDATA section) gives no Document; LangChain raises
          ``ValueError``.
        - Whitespace between sections' strings is as lxml serialises the repaired tree; LangChain reads XSLT's
          output, which adds line breaks between block elements (the words and sections are the same).
        - A document nested deeper than lxml's limit is read without repair, so nothing after the limit is lost.
    """

    def __init__(self, headers_to_split_on: list[tuple[str, str]], **kwargs: Any) -> None:
        self.headers_to_split_on = dict(headers_to_split_on)
        self.kwargs = kwargs

    def split_text(self, text: str) -> list[Document]:
        """Split an HTML string into section Documents."""
        return self.split_text_from_file(StringIO(text))

    def split_text_from_file(self, file: Any) -> list[Document]:
        """Split the HTML held by a ``StringIO`` (or any object with ``getvalue()`` or ``read()``)."""
        html = file.getvalue() if hasattr(file, "getvalue") else file.read()
        documents = []
        for section in self.split_html_by_headers(self.convert_possible_tags_to_header(html)):
            key = self.headers_to_split_on.get(str(section["tag_name"]))
            metadata = {key: section["header"]} if key is not None else {}
            documents.append(Document(str(section["content"]), metadata))
        return documents

    def convert_possible_tags_to_header(self, html_content: str) -> str:
        """*html_content* repaired by lxml's HTML parser, every element styled ``font-size`` > 20 px renamed ``h1``
        (attributes kept), serialised as HTML; blank input is returned as it is."""
        if not html_content.strip():
            return html_content
        parser = etree.HTMLParser(no_network=True, huge_tree=False)
        root = etree.parse(StringIO(html_content), parser).getroot()
        if root is None:
            return html_content
        if any(error.type_name == "ERR_RESOURCE_LIMIT" for error in parser.error_log):
            return _renamed_without_repair(html_content)  # nested over 255 deep: lxml would drop the rest
        for element in root.iter():
            match = _FONT_SIZE.search(element.get("style", "")) if isinstance(element.tag, str) else None
            if match is not None and float(match.group(1)) > _LARGE_FONT_PX:
                element.tag = "h1"
        return etree.tostring(root, method="html", encoding="unicode")

    def split_html_by_headers(self, html_doc: str) -> list[dict[str, str | None]]:
        """Sections of *html_doc* as ``{"header", "content", "tag_name"}`` dicts (module docstring, step 2)."""
        soup = BeautifulSoup(html_doc, "html.parser")
        boundaries = soup.find_all(["body", *self.headers_to_split_on])
        sections: list[dict[str, str | None]] = []
        for index, boundary in enumerate(boundaries):
            following = boundaries[index + 1] if index + 1 < len(boundaries) else None
            parts: list[str] = []
            for element in boundary.next_elements:
                if element is following:
                    break
                if isinstance(element, NavigableString):
                    parts.append(str(element))
            content = " ".join(parts).strip()
            if not content:
                continue
            if boundary.name == "body":
                header, tag = "#TITLE#", "h1"
            else:
                header, tag = boundary.get_text().strip(), boundary.name
            sections.append({"header": header, "content": content, "tag_name": tag})
        return sections

    def create_documents(self, texts: list[str], metadatas: list[dict[Any, Any]] | None = None) -> list[Document]:
        """Section Documents of each text; metadata is the text's own (deep copy), then the section's header, with
        ``#TITLE#`` replaced by the text's ``Title`` metadata."""
        documents = []
        for index, text in enumerate(texts):
            base = metadatas[index] if metadatas else {}
            for section in self.split_text(text):
                metadata = copy.deepcopy(base)
                headers = {key: (metadata.get("Title") if value == "#TITLE#" else value)
                           for key, value in section.metadata.items()}
                documents.append(Document(section.page_content, {**metadata, **headers}))
        return documents

    def split_documents(self, documents: Iterable[Document]) -> list[Document]:
        """Sections of each Document, each then split by ``RecursiveCharacterTextSplitter(**kwargs)``."""
        documents = list(documents)
        sections = self.create_documents([d.page_content for d in documents], [d.metadata for d in documents])
        return RecursiveCharacterTextSplitter(**self.kwargs).split_documents(sections)


def _renamed_without_repair(html: str) -> str:
    """*html* read by the standard library parser (no depth limit), large-font elements renamed ``h1``."""
    soup = BeautifulSoup(html, "html.parser")
    for element in soup.find_all(style=_FONT_SIZE):
        match = _FONT_SIZE.search(element.get("style", ""))
        if match is not None and float(match.group(1)) > _LARGE_FONT_PX:
            element.name = "h1"
    return str(soup)
