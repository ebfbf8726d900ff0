"""Hybrid Markdown splitter: header sections first, then size refinement that never cuts a fenced code block.

Algorithm (docs/splitters.md#markdownsectionsplitter: the hybrid of headers first, then size):
1. Header split exactly as :class:`MarkdownHeaderTextSplitter` (sections verbatim); metadata is the caller's base
   metadata, then the header path.
2. Length without code, ``L_nc(x)``: the sum of ``length_function`` over the maximal parts of ``x`` outside fenced
   code blocks (fence lines count as code). A section with ``L_nc ≤ chunk_size`` and at most ``max_total_tokens``
   tokens is one chunk.
3. Units: each fenced block of an oversized section is one atomic unit of ``L_nc`` 0; the prose between blocks is
   cut recursively with the separators (each match stays at the end of the piece before it) until every piece
   fits, with a character-level cut as the last resort.
4. Pack units greedily in order: a unit joins the current chunk while the chunk's ``L_nc`` stays ≤ ``chunk_size``
   and its tokens ≤ ``max_total_tokens``; otherwise it starts a new chunk. A code block whose own tokens exceed
   ``max_total_tokens`` is the only thing ever cut: at line boundaries, each piece re-wrapped in the original
   opening fence line and a closing fence of the same character and length.
5. Chunks are verbatim slices of their section (except re-wrapped pieces), without leading blank lines and
   without trailing whitespace.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from chunking.model import Document
from chunking.splitters._spans import Span, compile_separator, cut_to_fit, has_match, separator_pieces
from chunking.splitters.markdown.fences import FencedBlock, scan_lines, trim_blank_lines
from chunking.splitters.markdown.front_matter import render_front_matter
from chunking.splitters.markdown.header import _header_levels, header_sections
from chunking.tokens import get_backend

__all__ = ["DEFAULT_SECTION_SEPARATORS", "MarkdownChunk", "MarkdownSectionSplitter"]

#: Prose separators, most significant first: paragraph, line, CJK sentence end, Latin sentence end followed by
#: whitespace, semicolon, comma (regular expressions).
DEFAULT_SECTION_SEPARATORS: tuple[str, ...] = (r"\n\n", r"\n", r"。|！|？", r"\.\s|!\s|\?\s", r"；|;\s", r"，|,\s")
#: Input limit of OpenAI's embedding models (text-embedding-3-small/-large, ada-002), in tokens.
EMBEDDING_MAX_TOKENS = 8191


@dataclass(frozen=True, slots=True)
class MarkdownChunk:
    """One chunk of :class:`MarkdownSectionSplitter`.

    Attributes:
        page_content: the chunk's Markdown (a verbatim slice of the source, except pieces of a re-wrapped code
            block).
        metadata: base metadata, then the header path (its own copy).
        start_index, end_index: half-open character offsets in the source of the text the chunk came from.
    """

    page_content: str
    metadata: dict[str, Any] = field(default_factory=dict)
    start_index: int = 0
    end_index: int = 0

    def to_markdown(self, include_metadata: bool = False) -> str:
        """The content; with *include_metadata* and non-empty metadata, preceded by YAML front matter
        (``"---\\n" + YAML + "---\\n\\n" + content``, YAML as ``safe_dump(allow_unicode=True, sort_keys=False)``)."""
        if not include_metadata or not self.metadata:
            return self.page_content
        return render_front_matter(self.metadata) + "\n" + self.page_content

    def to_document(self) -> Document:
        """A :class:`Document` with the content and a copy of the metadata."""
        return Document(self.page_content, copy.deepcopy(self.metadata))


def _trim(text: str, start: int, end: int) -> tuple[int, int] | None:
    """Remove leading blank lines and all trailing whitespace (a cut after ``". "`` leaves a space)."""
    span = trim_blank_lines(text, start, end)
    if span is None:
        return None
    start, end = span
    while text[end - 1].isspace():
        end -= 1
    return start, end


@dataclass(frozen=True, slots=True)
class _Unit:
    start: int
    end: int
    block: FencedBlock | None  # set for a fenced code block


class MarkdownSectionSplitter:
    """Split Markdown by headings, then cut oversized sections by size without ever cutting a fenced code block.

    Algorithm: module docstring (docs/splitters.md#markdownsectionsplitter); fences follow CommonMark fenced code rules.
    Guarantees: a fence is never split except when the block alone exceeds *max_total_tokens*; no chunk has
    ``L_nc > chunk_size`` when a cut can prevent it; every chunk has at most *max_total_tokens* tokens. No overlap
    is added (overlap brings unrelated text into a chunk and lowers its similarity). Unlike the strategies
    article's version, which refines by lines only and keeps an oversized last piece as it is, prose is refined
    down to sentences and clauses, then characters.

    Args:
        headers_to_split_on: ``(prefix, key)`` pairs; default ``("#", "h1")`` … ``("######", "h6")``.
        strip_headers: leave header lines out of the content (default ``False``: the header line stays at the
            top of its section's first chunk).
        chunk_size: maximum length of a chunk's text outside code blocks, in units of *length_function*
            (characters by default); ``None`` disables size refinement.
        length_function: measures prose; default ``len`` (code points).
        separators: prose separators, most significant first; default :data:`DEFAULT_SECTION_SEPARATORS`.
        is_separator_regex: treat *separators* as regular expressions (default ``True``).
        max_total_tokens: cap on a whole chunk's tokens, code included (default 8191, the embedding input limit).
        encoding: tiktoken encoding counting those tokens (shipped with ``chunking.tokens``).

    Raises:
        ValueError: ``chunk_size <= 0``, ``max_total_tokens <= 0``, a bad header prefix, or an unknown encoding.

    Example (``chunk_size=30``): ``"# Setup\\nRun this first.\\n```sh\\nmake install-everything\\n```\\nThen test."`` →
    ``"# Setup\\nRun this first.\\n```sh\\nmake install-everything\\n```"`` and ``"Then test."``, both with
    ``{"h1": "Setup"}``: the code block stays whole with the text before it and does not count toward the size.
    """

    def __init__(
        self,
        headers_to_split_on: list[tuple[str, str]] | None = None,
        strip_headers: bool = False,
        chunk_size: int | None = None,
        length_function: Callable[[str], int] = len,
        separators: list[str] | None = None,
        is_separator_regex: bool = True,
        max_total_tokens: int = EMBEDDING_MAX_TOKENS,
        encoding: str = "cl100k_base",
    ) -> None:
        if chunk_size is not None and chunk_size <= 0:
            raise ValueError(f"chunk_size must be > 0, got {chunk_size}")
        if max_total_tokens <= 0:
            raise ValueError(f"max_total_tokens must be > 0, got {max_total_tokens}")
        pairs = headers_to_split_on if headers_to_split_on is not None else [
            ("#" * level, f"h{level}") for level in range(1, 7)
        ]
        self._atx, self._custom = _header_levels(pairs, None)
        self.strip_headers = strip_headers
        self.chunk_size = chunk_size
        self.max_total_tokens = max_total_tokens
        self._length = length_function
        self._separators = list(separators) if separators is not None else list(DEFAULT_SECTION_SEPARATORS)
        self._patterns = [compile_separator(s, is_separator_regex) for s in self._separators]
        backend = get_backend(encoding)  # exact counts, by the fastest tokenizer installed (chunking.tokens)
        self._tokens: Callable[[str], int] = backend.count
        till = backend.count_till_limit  # stops counting at the cap where only "within it?" is asked
        self._within_total: Callable[[str], bool] = lambda text: till(text, max_total_tokens) is not None

    def split_text(self, text: str, metadata: dict[str, Any] | None = None) -> list[MarkdownChunk]:
        """Split Markdown *text*; each chunk's metadata is a copy of *metadata*, then the header path."""
        lines = scan_lines(text)
        chunks: list[MarkdownChunk] = []
        for section in header_sections(text, lines, self._atx, {}, self.strip_headers):
            section_metadata = {**copy.deepcopy(metadata or {}), **section.headers}
            blocks = [b for b in lines.blocks if section.start <= b.start < section.end]
            for start, end, content in self._split_section(text, section.start, section.end, blocks):
                chunks.append(MarkdownChunk(content, copy.deepcopy(section_metadata), start, end))
        return chunks

    def create_documents(
        self, texts: Iterable[str], metadatas: list[dict[str, Any]] | None = None
    ) -> list[Document]:
        """Documents for the chunks of each text; metadata as in :meth:`split_text`, plus ``start_index``."""
        texts = list(texts)
        if metadatas is not None and len(metadatas) != len(texts):
            raise ValueError(f"got {len(metadatas)} metadatas for {len(texts)} texts")
        out: list[Document] = []
        for index, text in enumerate(texts):
            for chunk in self.split_text(text, metadatas[index] if metadatas is not None else None):
                out.append(Document(chunk.page_content, {**chunk.metadata, "start_index": chunk.start_index}))
        return out

    def split_documents(self, documents: Iterable[Document]) -> list[Document]:
        """Split each Document's content; metadata is a copy of its own, the header path, then ``start_index``."""
        documents = list(documents)
        return self.create_documents([d.page_content for d in documents], [d.metadata for d in documents])

    # -- steps 2-5 ---------------------------------------------------------------------------------------------

    def _prose_length(self, text: str, start: int, end: int, blocks: list[FencedBlock]) -> int:
        """``L_nc`` of ``text[start:end]``: *length_function* summed over the parts outside *blocks*."""
        total = 0
        for block in blocks:
            if block.end <= start or block.start >= end:
                continue
            if block.start > start:
                total += self._length(text[start : block.start])
            start = max(start, block.end)
        if end > start:
            total += self._length(text[start:end])
        return total

    def _fits(self, text: str, start: int, end: int, blocks: list[FencedBlock]) -> bool:
        if self.chunk_size is not None and self._prose_length(text, start, end, blocks) > self.chunk_size:
            return False
        return self._within_total(text[start:end])

    def _split_section(self, text: str, start: int, end: int, blocks: list[FencedBlock]) -> list[tuple[int, int, str]]:
        if self._fits(text, start, end, blocks):
            span = _trim(text, start, end)
            return [] if span is None else [(span[0], span[1], text[span[0] : span[1]])]
        units: list[_Unit] = []
        cursor = start
        for block in blocks:
            units.extend(_Unit(s, e, None) for s, e in self._prose_pieces(text, cursor, block.start, 0))
            units.append(_Unit(block.start, min(block.end, end), block))
            cursor = block.end
        units.extend(_Unit(s, e, None) for s, e in self._prose_pieces(text, cursor, end, 0))
        return self._pack(text, units, blocks)

    def _prose_pieces(self, text: str, start: int, end: int, level: int) -> list[Span]:
        """Cut prose ``[start, end)`` until every piece fits (step 3); matches stay at the end of their piece."""
        if start >= end:
            return []
        if self._fits(text, start, end, []):
            return [(start, end)]
        for index in range(level, len(self._patterns)):
            if has_match(text, self._patterns[index], start, end):
                pieces: list[Span] = []
                for s, e in separator_pieces(text, self._patterns[index], start, end, "end"):
                    pieces.extend(self._prose_pieces(text, s, e, index + 1))
                return pieces
        limit = self.chunk_size if self.chunk_size is not None else self.max_total_tokens
        measure = self._length if self.chunk_size is not None else self._tokens
        pieces = cut_to_fit(text, start, end, measure, limit)
        if self.chunk_size is not None:  # the token cap applies as well
            pieces = [p for s, e in pieces for p in cut_to_fit(text, s, e, self._tokens, self.max_total_tokens)]
        return pieces

    def _pack(self, text: str, units: list[_Unit], blocks: list[FencedBlock]) -> list[tuple[int, int, str]]:
        """Greedy packing (step 4) with estimates summed per unit, each emitted chunk then checked exactly."""
        out: list[tuple[int, int, str]] = []
        index = 0
        while index < len(units):
            unit = units[index]
            if unit.block is not None and self._tokens(text[unit.start : unit.end]) > self.max_total_tokens:
                out.extend(self._rewrap(text, unit))
                index += 1
                continue
            last = index + 1
            prose = self._prose_length(text, unit.start, unit.end, blocks)
            tokens = self._tokens(text[unit.start : unit.end])
            while last < len(units):
                nxt = units[last]
                if nxt.block is not None and self._tokens(text[nxt.start : nxt.end]) > self.max_total_tokens:
                    break
                next_prose = 0 if nxt.block is not None else self._length(text[nxt.start : nxt.end])
                next_tokens = self._tokens(text[nxt.start : nxt.end])
                if (self.chunk_size is not None and prose + next_prose > self.chunk_size) or (
                    tokens + next_tokens > self.max_total_tokens
                ):
                    break
                prose, tokens, last = prose + next_prose, tokens + next_tokens, last + 1
            while last - index > 1 and not self._fits(text, unit.start, units[last - 1].end, blocks):
                last -= 1  # the estimate was optimistic: move the last unit to the next chunk
            span = _trim(text, unit.start, units[last - 1].end)
            if span is not None:
                out.append((span[0], span[1], text[span[0] : span[1]]))
            index = last
        return out

    def _rewrap(self, text: str, unit: _Unit) -> list[tuple[int, int, str]]:
        """Cut an over-limit code block at line boundaries, re-wrapping each piece in its fences."""
        block = unit.block
        assert block is not None
        closing = block.char * block.length
        body_start = text.find("\n", unit.start, unit.end) + 1 or unit.end
        body_end = unit.end
        if block.closed:
            body_end = text.rfind("\n", body_start, unit.end)
            body_end = body_start if body_end < 0 else body_end
        overhead = self._tokens(f"{block.opening}\n\n{closing}")
        limit = max(1, self.max_total_tokens - overhead - 4)  # a margin: token counts are not additive
        lines = separator_pieces(text, compile_separator("\n", False), body_start, body_end, "end")
        pieces: list[Span] = []
        for s, e in lines:  # lines too long on their own are cut at character level
            pieces.extend(cut_to_fit(text, s, e, self._tokens, limit))
        sizes = [self._tokens(text[s:e]) for s, e in pieces]

        def wrapped(first: int, last: int) -> str:
            return f"{block.opening}\n{text[pieces[first][0] : pieces[last - 1][1]].removesuffix(chr(10))}\n{closing}"

        out: list[tuple[int, int, str]] = []
        index = 0
        while index < len(pieces):
            last, total = index + 1, overhead + sizes[index]
            while last < len(pieces) and total + sizes[last] <= self.max_total_tokens:
                total += sizes[last]
                last += 1
            while last - index > 1 and self._tokens(wrapped(index, last)) > self.max_total_tokens:
                last -= 1
            start = unit.start if index == 0 else pieces[index][0]
            end = unit.end if last == len(pieces) else pieces[last - 1][1]
            out.append((start, end, wrapped(index, last)))
            index = last
        return out
