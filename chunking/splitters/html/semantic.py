"""Split HTML at headers into sections of flowing text, keeping chosen elements whole (LangChain's
``HTMLSemanticPreservingSplitter`` interface; own algorithm, docs/splitters.md#htmlsemanticpreservingsplitter).

1. Parse with the standard library parser through BeautifulSoup: nothing is fetched, no DTD is read, no entity the
   document defines is expanded.
2. Prepare the tree (``_html_semantic_dom.prepare_tree``): media and links become Markdown text, then the allow
   and deny lists remove elements.
3. Read it in document order (``_html_semantic_dom.read_events``): a configured header closes the current section
   and opens the next, whose metadata is the header path: every enclosing header still open (a header of a higher
   level, ``h1`` above ``h2``; tags that are not ``h1``-``h6`` rank in ``headers_to_split_on`` order after them)
   and this one, outermost first (LangChain keeps this header only); a preserved element is one atom; every other
   text string is cleaned (``normalize_text``, ``stopword_removal``) and added.
4. A section's content is its strings and atoms joined by one space, whitespace runs collapsed, stripped; each
   atom stands for one placeholder character (a private-use code point absent from the document).
5. Content within ``max_chunk_size`` (characters, an atom counting as its text's length) is one Document; longer
   content is split by :class:`RecursiveCharacterTextSplitter` (``separators``, ``chunk_overlap``,
   ``keep_separator``) measuring each atom by its text, so no atom is ever cut; a lone atom over the limit is a
   chunk of its own. Then atoms are put back, chunks stripped, blank ones dropped.
"""

from __future__ import annotations

import copy
import re
from typing import Any, Callable, Iterable, Literal, Sequence

from bs4 import BeautifulSoup, Tag

from chunking.model import Document
from chunking.splitters.base import in_executor
from chunking.splitters.character import RecursiveCharacterTextSplitter
from chunking.splitters.extras import import_extra
from chunking.splitters.html._dom import Event, ReadOptions, prepare_tree, read_events

__all__ = ["HTMLSemanticPreservingSplitter"]

_WHITESPACE = re.compile(r"\s+")
_PUNCTUATION = re.compile(r"[^\w\s]")
_PRIVATE_USE = re.compile("[\U000f0000-\U0010fffd]")
_PLACEHOLDERS = (range(0xF0000, 0xFFFFE), range(0x100000, 0x10FFFE))


class HTMLSemanticPreservingSplitter:
    """Split HTML by headers into sections of text, keeping tables, lists and other chosen elements whole.

    Algorithm: module docstring (docs/splitters.md#htmlsemanticpreservingsplitter). Signature and defaults are
    LangChain's.

    Args:
        headers_to_split_on: ``(tag, metadata key)`` pairs, e.g. ``[("h1", "Header 1"), ("h2", "Header 2")]``.
        max_chunk_size: longest chunk in characters (default 1000); a preserved element longer than that is a
            chunk of its own, over the limit.
        chunk_overlap: characters of overlap between the chunks of one section (default 0).
        separators: separators for the further split (default: :class:`RecursiveCharacterTextSplitter`'s).
        elements_to_preserve: tag names kept whole, e.g. ``["table", "ul", "code"]``.
        preserve_links: ``<a href="U">T</a>`` becomes ``[T](U)``.
        preserve_images, preserve_videos, preserve_audio: ``<img src="S">`` becomes ``![image:S](S)`` (``video:``,
            ``audio:``).
        custom_handlers: tag name → function of the ``bs4.Tag`` returning its text (e.g. an ``iframe``'s link).
        stopword_removal: drop the stop words of *stopword_lang* (NLTK's list; NLTK and its ``stopwords`` corpus
            must be installed, nothing is downloaded).
        stopword_lang: NLTK stop-word list name (default ``"english"``).
        normalize_text: lowercase, drop punctuation, collapse whitespace in every text string.
        external_metadata: added to every Document's metadata.
        allowlist_tags: only these tags (and the headers) are kept, with their content.
        denylist_tags: these tags (headers excepted) are removed with their content.
        preserve_parent_metadata: :meth:`transform_documents` puts each source Document's metadata first.
        keep_separator: as :class:`RecursiveCharacterTextSplitter` (default ``True``).

    Raises:
        ValueError: ``chunk_overlap > max_chunk_size`` or a non-positive size (from the recursive splitter).
        ImportError: ``stopword_removal=True`` without NLTK (``pip install chunking[nltk]``).
        LookupError: ``stopword_removal=True`` without NLTK's ``stopwords`` corpus installed.

    Example (``[("h1", "Header 1")]``, ``elements_to_preserve=["table"]``):
    ``"<h1>Prices</h1><p>They <b>rose</b>.</p><table><tr><td>a</td><td>1</td></tr></table>"`` →
    ``[Document("They rose . a 1", {"Header 1": "Prices"})]``.

    Differs from LangChain on purpose (each a named predicate in ``tests/scenarios/parity/html_differences.py``):
        - Text keeps document order: LangChain puts an element's own text after its children's
          (``<p>before <b>bold</b> after</p>`` gives ``"bold before after"`` there), and drops text that is not
          inside any element.
        - Comments, doctypes and the content of ``script``, ``style`` and ``template`` are not text.
        - A preserved element counts as its text's length, not as its placeholder's, and can never be cut or
          confused with document text that looks like a placeholder (LangChain replaces ``PRESERVED_1`` anywhere).
        - A section over ``max_chunk_size`` is split by our recursive splitter, so its documented differences
          apply (an oversized piece is cut at whitespace, sentence punctuation ends its chunk, CJK sentence ends).
        - Header and link texts keep the spaces between their inline parts (``Hello <b>world</b>`` →
          ``"Hello world"``; LangChain: ``"Helloworld"``).
        - A custom handler applies to its tag wherever it is (LangChain: only when the tag has no child tags),
          and its output is never normalised outside preserved elements.
        - Media text survives an allowlist (LangChain removes it with its wrapper tag).
        - No blank Document, no chunk with leading or trailing whitespace; Documents do not share metadata.
        - A section's metadata holds every enclosing header, not only its own (``<h1>A</h1>…<h2>B</h2>…`` gives
          the second section ``{"Header 1": "A", "Header 2": "B"}``; LangChain gives ``{"Header 2": "B"}``), as
          :class:`HTMLHeaderTextSplitter` does in both libraries.
        - Stop words are never downloaded (LangChain calls ``nltk.download``).
    """

    def __init__(
        self,
        headers_to_split_on: list[tuple[str, str]],
        *,
        max_chunk_size: int = 1000,
        chunk_overlap: int = 0,
        separators: list[str] | None = None,
        elements_to_preserve: list[str] | None = None,
        preserve_links: bool = False,
        preserve_images: bool = False,
        preserve_videos: bool = False,
        preserve_audio: bool = False,
        custom_handlers: dict[str, Callable[[Tag], str]] | None = None,
        stopword_removal: bool = False,
        stopword_lang: str = "english",
        normalize_text: bool = False,
        external_metadata: dict[str, str] | None = None,
        allowlist_tags: list[str] | None = None,
        denylist_tags: list[str] | None = None,
        preserve_parent_metadata: bool = False,
        keep_separator: bool | Literal["start", "end"] = True,
    ) -> None:
        self._recursive_options: dict[str, Any] = dict(
            separators=separators or None, keep_separator=keep_separator, chunk_size=max_chunk_size,
            chunk_overlap=chunk_overlap)
        self._recursive = RecursiveCharacterTextSplitter(**self._recursive_options)  # validates the sizes
        self._headers = dict(headers_to_split_on)
        # The level of each metadata key: h1-h6 by their number, other tags after them in list order.
        self._levels = {key: _header_level(tag, n) for n, (tag, key) in enumerate(headers_to_split_on)}
        self._max_chunk_size = max_chunk_size
        self._preserve = frozenset(elements_to_preserve or ())
        self._media = {"img": preserve_images, "video": preserve_videos, "audio": preserve_audio}
        self._links = preserve_links
        self._handlers = dict(custom_handlers or {})
        self._normalize = normalize_text
        self._external_metadata = dict(external_metadata or {})
        self._allow = frozenset(allowlist_tags) | frozenset(self._headers) if allowlist_tags else None
        self._deny = frozenset(denylist_tags or ()) - frozenset(self._headers)
        self._preserve_parent_metadata = preserve_parent_metadata
        self._stopwords: frozenset[str] = frozenset()
        if stopword_removal:
            self._stopwords = _load_stopwords(stopword_lang)
        self._stopword_removal = stopword_removal

    def split_text(self, text: str) -> list[Document]:
        """Split one HTML document or fragment into Documents (module docstring)."""
        soup = BeautifulSoup(text.removeprefix("\ufeff"), "html.parser")  # a BOM read with the text is no text
        prepare_tree(soup, self._media, self._links, self._allow, self._deny)
        options = ReadOptions(self._headers, self._preserve, self._handlers, self._clean)
        taken = set(_PRIVATE_USE.findall(text))
        documents: list[Document] = []
        headers: dict[str, str] = {}
        section: list[Event] = []
        for event in read_events(soup, options):
            if event.kind == "header":
                documents.extend(self._section_documents(section, headers, taken))
                level = self._levels[event.key]
                section = []
                headers = {k: v for k, v in headers.items() if self._levels[k] < level and k != event.key}
                headers[event.key] = event.text
            else:
                section.append(event)
        documents.extend(self._section_documents(section, headers, taken))
        return documents

    def transform_documents(self, documents: Sequence[Document], **kwargs: Any) -> list[Document]:
        """The Documents of each source Document's text; with ``preserve_parent_metadata`` the source's metadata
        comes first in each (a deep copy)."""
        out: list[Document] = []
        for source in documents:
            for part in self.split_text(source.page_content):
                if self._preserve_parent_metadata:
                    part = Document(part.page_content, {**copy.deepcopy(source.metadata), **part.metadata})
                out.append(part)
        return out

    async def atransform_documents(self, documents: Sequence[Document], **kwargs: Any) -> list[Document]:
        """:meth:`transform_documents` in the event loop's default executor."""
        return await in_executor(self.transform_documents, list(documents), **kwargs)

    def _clean(self, text: str) -> str:
        if self._normalize:
            text = _WHITESPACE.sub(" ", _PUNCTUATION.sub("", text.lower())).strip()
        if self._stopword_removal:
            text = " ".join(word for word in text.split() if word not in self._stopwords)
        return text

    def _section_documents(self, events: list[Event], headers: dict[str, str], taken: set[str]) -> list[Document]:
        atoms: dict[str, str] = {}
        free = _free_placeholders(taken)
        parts: list[str] = []
        for event in events:
            if event.kind == "atom":
                placeholder = next(free)
                atoms[placeholder] = event.text.strip()
                parts.append(placeholder)
            else:
                parts.append(event.text)
        content = _WHITESPACE.sub(" ", " ".join(parts)).strip()
        if not content:
            return []
        pattern = re.compile("|".join(map(re.escape, atoms))) if atoms else None
        out = []
        for chunk in self._split_content(content, atoms, pattern):
            if pattern is not None:
                chunk = pattern.sub(lambda found: atoms[found.group()], chunk)
            chunk = chunk.strip()
            if chunk:
                out.append(Document(chunk, {**copy.deepcopy(headers), **copy.deepcopy(self._external_metadata)}))
        return out

    def _split_content(self, content: str, atoms: dict[str, str], pattern: re.Pattern[str] | None) -> list[str]:
        if pattern is None:
            return [content] if len(content) <= self._max_chunk_size else self._recursive.split_text(content)
        extra = {placeholder: len(atom) - 1 for placeholder, atom in atoms.items()}

        def length(piece: str) -> int:
            return len(piece) + sum(extra[found] for found in pattern.findall(piece))

        if length(content) <= self._max_chunk_size:
            return [content]
        return RecursiveCharacterTextSplitter(length_function=length, **self._recursive_options).split_text(content)


def _header_level(tag: str, position: int) -> int:
    """``h1``-``h6`` → 1-6; any other header tag ranks after them, in its ``headers_to_split_on`` *position*."""
    name = tag.lower()
    if len(name) == 2 and name[0] == "h" and name[1] in "123456":
        return int(name[1])
    return 7 + position


def _free_placeholders(taken: set[str]) -> Iterable[str]:
    """Private-use characters (planes 15 and 16) that do not occur in the document, in order."""
    for block in _PLACEHOLDERS:
        for code in block:
            char = chr(code)
            if char not in taken:
                yield char
    raise ValueError("more preserved elements in one section than free placeholder characters (131,068)")


def _load_stopwords(language: str) -> frozenset[str]:
    """NLTK's stop-word list for *language*, from an installed ``stopwords`` corpus (never downloaded)."""
    nltk = import_extra("nltk", "nltk", "nltk")
    try:
        return frozenset(nltk.corpus.stopwords.words(language))
    except LookupError as error:
        raise LookupError(
            f"NLTK's stopwords corpus ({language}) is not installed and is never downloaded here: install it with "
            "`python -m nltk.downloader stopwords`"
        ) from error
