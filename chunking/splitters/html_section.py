"""Split HTML into sections at header tags, and tags styled with a large font (LangChain's ``HTMLSectionSplitter``).

Algorithm (own code, LangChain's behaviour):
1. Parse with the standard library HTML parser through BeautifulSoup: no DTD is read, no entity is defined by the
   document, nothing is fetched; elements whose inline style sets ``font-size`` above 20 px are renamed ``h1``
   (LangChain does this with an XSLT stylesheet; here it is a tree walk, so no XSLT processor ever runs).
2. The boundaries are ``body`` (the untitled first section) and every configured header tag, in document order.
   A section's text is every text node from its boundary to the next one, joined by spaces, a whitespace-only
   node counting as one newline; blank sections are dropped.
3. Each section is a Document whose metadata maps the header's key to its stripped text (the first section is
   titled ``#TITLE#``, replaced by the ``Title`` metadata of the source in :meth:`create_documents`).
"""

from __future__ import annotations

import copy
import re
from io import StringIO
from typing import Any, Iterable

from bs4 import BeautifulSoup, NavigableString, Tag

from chunking.model import Document
from chunking.splitters.character import RecursiveCharacterTextSplitter

__all__ = ["HTMLSectionSplitter"]

_FONT_SIZE = re.compile(r"font-size\s*:\s*([0-9.]+)\s*px", re.I)
_LARGE_FONT_PX = 20
_TEXT_TYPES = (NavigableString,)


class HTMLSectionSplitter:
    """Split HTML at ``h1``–``h6`` headers (and large-font elements, treated as ``h1``) into text sections.

    Args:
        headers_to_split_on: ``(tag, metadata key)`` pairs, e.g. ``[("h1", "Header 1"), ("h2", "Header 2")]``.
        **kwargs: options of the :class:`RecursiveCharacterTextSplitter` that :meth:`split_documents` applies to
            each section.

    Safe on hostile input: never fetches a URL, never reads a DTD or expands an entity the document defines
    (``&test;`` is not replaced), runs no XSLT. Differs from LangChain on purpose: an untitled first section is
    kept under the ``h1`` key only when ``h1`` is configured (LangChain raises ``KeyError`` otherwise), and in a
    fragment without ``<body>`` the first header keeps its own title (LangChain titles it ``#TITLE#``).
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
        """*html_content* with every element styled ``font-size`` > 20 px renamed ``h1`` (attributes kept)."""
        soup = BeautifulSoup(html_content, "html.parser")
        for element in soup.find_all(style=_FONT_SIZE):
            match = _FONT_SIZE.search(element.get("style", ""))
            if match is not None and float(match.group(1)) > _LARGE_FONT_PX:
                element.name = "h1"
        return str(soup)

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
                if isinstance(element, NavigableString) and not isinstance(element, Tag):
                    if type(element) is NavigableString:
                        parts.append(str(element) if str(element).strip() else "\n")
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
