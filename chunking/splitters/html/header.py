"""Split HTML into sections at its headings, text in document order, heading path as metadata.

Algorithm (docs/splitters.md#htmlheadertextsplitter, after LangChain's ``HTMLHeaderTextSplitter`` interface):
1. Parse leniently and render the tree as units in document order (``_html_render``: scripts, styles and the
   head dropped; whitespace collapsed outside ``pre``; one line per block; table cells joined by ``" | "``).
2. A configured header starts a section: pop the stacked headers of level ≥ its own, push it; the stack is the
   section's metadata. With ``strip_headers=False`` the header text is the section's first line.
   A header applies inside its scope element (``_html_render.header_scope``: the nearest ancestor with text after
   the header's branch); the first unit outside it pops the header and starts a new section, so text after a
   ``<section>`` holding an ``h2`` is not under that ``h2``.
3. A section's text is its lines joined by ``\\n``. With ``max_chunk_size``, a longer section is split with
   :class:`RecursiveCharacterTextSplitter` around the preserved elements, which are atomic unless over
   8191 tokens (then a table is cut by rows, its header row repeated in every piece; other elements by lines).
"""

from __future__ import annotations

import copy
import os
from typing import Any, Callable

from chunking.model import Document
from chunking.splitters.base import DocumentSplitting
from chunking.splitters.character import RecursiveCharacterTextSplitter
from chunking.splitters.html._render import HtmlUnit, render_units
from chunking.tokens import get_encoding

__all__ = ["HTMLHeaderTextSplitter"]

#: Input limit of OpenAI's embedding models, in cl100k_base tokens: a preserved element above it is cut.
PRESERVED_MAX_TOKENS = 8191
_HEADER_TAGS = {f"h{level}": level for level in range(1, 7)}


class HTMLHeaderTextSplitter(DocumentSplitting):
    """Split HTML at the configured ``h1``–``h6`` headers into sections of plain text in document order.

    Algorithm: module docstring (docs/splitters.md#htmlheadertextsplitter).

    Args:
        headers_to_split_on: ``(tag, metadata key)`` pairs, tags ``h1``…``h6``, e.g. ``[("h1", "Header 1")]``.
        return_each_element: return one Document per block element (line) or preserved element.
        strip_headers: leave the header text out of the section (default ``False``: it is the first line).
        elements_to_preserve: tags kept as atomic units, e.g. ``["table", "ul", "ol", "dl", "pre"]``.
        max_chunk_size: split sections longer than this (in units of *length_function*, characters by default);
            ``None`` keeps each section whole.
        length_function: measures text for *max_chunk_size*; default ``len``.

    Raises:
        ValueError: a tag in *headers_to_split_on* that is not ``h1``…``h6``; ``max_chunk_size <= 0``.

    Example (``[("h1", "Header 1"), ("h2", "Header 2")]``):
    ``"<h1>Intro</h1><p>Prices <em>rose</em> sharply.</p><h2>Detail</h2><ul><li>one</li></ul>"`` →
    ``Document("Intro\\nPrices rose sharply.", {"Header 1": "Intro"})``,
    ``Document("Detail\\n- one", {"Header 1": "Intro", "Header 2": "Detail"})``.

    Differs from LangChain on purpose:
        - Text keeps document order across inline tags (LangChain can move an element's own text after its
          children's), and script, style and head text is removed.
        - A header is the first line of its own section (``strip_headers=False``) instead of a Document of its
          own; the parent headers stay in the metadata.
        - No method fetches a URL (this package never uses the network).
    """

    def __init__(
        self,
        headers_to_split_on: list[tuple[str, str]],
        return_each_element: bool = False,
        strip_headers: bool = False,
        elements_to_preserve: list[str] | None = None,
        max_chunk_size: int | None = None,
        length_function: Callable[[str], int] = len,
    ) -> None:
        self._levels: dict[str, int] = {}
        self._keys: dict[str, str] = {}
        for tag, key in headers_to_split_on:
            name = tag.lower()
            if name not in _HEADER_TAGS:
                raise ValueError(f"header tag {tag!r} is not one of h1…h6")
            self._levels[name] = _HEADER_TAGS[name]
            self._keys[name] = key
        if max_chunk_size is not None and max_chunk_size <= 0:
            raise ValueError(f"max_chunk_size must be > 0, got {max_chunk_size}")
        self.headers_to_split_on = list(headers_to_split_on)
        self.return_each_element = return_each_element
        self.strip_headers = strip_headers
        self.elements_to_preserve = [tag.lower() for tag in (elements_to_preserve or [])]
        self.max_chunk_size = max_chunk_size
        self._length = length_function

    def split_text(self, text: str) -> list[Document]:
        """Split an HTML document or fragment; metadata is the header path."""
        return self._split(text, {})

    def split_text_from_file(self, file: Any) -> list[Document]:
        """Split the HTML in *file*: a path, or an open text or binary file (bytes are decoded as UTF-8)."""
        if isinstance(file, (str, os.PathLike)):
            with open(file, encoding="utf-8") as handle:
                return self.split_text(handle.read())
        data = file.read()
        return self.split_text(data.decode("utf-8") if isinstance(data, bytes) else data)

    def _split(self, html: str, base: dict[str, Any]) -> list[Document]:
        units = render_units(html, self._levels, frozenset(self.elements_to_preserve))
        out: list[Document] = []
        stack: list[HtmlUnit] = []
        section: list[HtmlUnit] = []

        def close() -> None:
            headers = {self._keys[h.tag]: h.text for h in stack}
            for text in self._section_texts(section):
                metadata = copy.deepcopy(base)
                metadata.update(headers)
                out.append(Document(text, metadata))

        for unit in units:
            if unit.kind != "header":
                in_scope = [h for h in stack if unit.in_scope_of(h)]
                if len(in_scope) < len(stack):  # left the element holding a header: a new section
                    close()
                    stack, section = in_scope, []
                section.append(unit)
                continue
            close()
            stack = [h for h in stack if h.level < unit.level] + [unit]
            section = [] if self.strip_headers or not unit.text else [HtmlUnit("text", unit.text)]
        close()
        return out

    def _section_texts(self, units: list[HtmlUnit]) -> list[str]:
        if self.return_each_element:
            return [unit.text for unit in units if unit.text.strip()]
        text = "\n".join(unit.text for unit in units if unit.text)
        if not text.strip():
            return []
        if self.max_chunk_size is None or self._length(text) <= self.max_chunk_size:
            return [text]
        return self._pack(self._pieces(units))

    def _pieces(self, units: list[HtmlUnit]) -> list[str]:
        """Text runs cut by the recursive splitter; preserved elements whole (or cut if over the token cap)."""
        splitter = RecursiveCharacterTextSplitter(
            chunk_size=self.max_chunk_size, chunk_overlap=0, length_function=self._length
        )
        pieces: list[str] = []
        run: list[str] = []
        for unit in units + [HtmlUnit("preserved", "")]:
            if unit.kind != "preserved":
                run.append(unit.text)
                continue
            if run:
                pieces.extend(splitter.split_text("\n".join(run)))
                run = []
            if unit.text.strip():
                pieces.extend(_cut_preserved(unit))
        return pieces

    def _pack(self, pieces: list[str]) -> list[str]:
        """Join consecutive pieces with ``\\n`` while the result is within ``max_chunk_size``."""
        assert self.max_chunk_size is not None
        chunks: list[str] = []
        for piece in pieces:
            if chunks and self._length(chunks[-1] + "\n" + piece) <= self.max_chunk_size:
                chunks[-1] += "\n" + piece
            else:
                chunks.append(piece)
        return chunks


def _cut_preserved(unit: HtmlUnit) -> list[str]:
    """*unit* whole if within :data:`PRESERVED_MAX_TOKENS` tokens, else its rows (lines) grouped under that cap, a
    table's header row repeated at the top of every group. A single row over the cap stays whole."""
    encode = get_encoding().encode_ordinary  # cl100k_base, the shipped BPE file
    if len(encode(unit.text)) <= PRESERVED_MAX_TOKENS:
        return [unit.text]
    header = list(unit.rows[: unit.header_rows])
    rows = list(unit.rows[unit.header_rows :])
    sizes = [len(encode(row)) + 1 for row in rows]  # + 1 for the newline joining rows
    header_size = len(encode("\n".join(header))) + 1 if header else 0
    out: list[str] = []
    first = 0
    while first < len(rows):
        last, total = first + 1, header_size + sizes[first]
        while last < len(rows) and total + sizes[last] <= PRESERVED_MAX_TOKENS:
            total += sizes[last]
            last += 1
        while last - first > 1 and len(encode("\n".join(header + rows[first:last]))) > PRESERVED_MAX_TOKENS:
            last -= 1  # the per-row estimate was low: give the last row to the next group
        out.append("\n".join(header + rows[first:last]))
        first = last
    return out
