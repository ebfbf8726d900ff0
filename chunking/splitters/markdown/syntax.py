"""Split Markdown by its syntax, keeping content byte for byte: headings, fenced code blocks, thematic breaks.

Algorithm (docs/splitters.md#experimentalmarkdownsyntaxtextsplitter, after LangChain's
``ExperimentalMarkdownSyntaxTextSplitter`` interface), one pass over the lines, linear time:
1. Find the fenced code blocks (``fences.scan_lines``, CommonMark rules). YAML front matter is not set apart
   here (as in LangChain's splitter): its ``---`` lines are thematic breaks and its body is a chunk.
2. A chunk ends at each splitting header (which starts the next chunk unless ``strip_headers``), at each thematic
   break (the break line itself is dropped) and around each fenced block (the block is a chunk of its own with
   ``metadata["Code"]`` = the first word of its info string).
3. A chunk is the source text from its first line to its last, newlines included; blank chunks are dropped.
"""

from __future__ import annotations

import copy
from typing import Any

from chunking.model import Document
from chunking.splitters.base import DocumentSplitting
from chunking.splitters.markdown.fences import is_thematic_break, parse_atx_heading, scan_lines

__all__ = ["ExperimentalMarkdownSyntaxTextSplitter"]

_DEFAULT_HEADERS = [("#" * level, f"Header {level}") for level in range(1, 7)]


class ExperimentalMarkdownSyntaxTextSplitter(DocumentSplitting):
    """Split Markdown at headings, fenced code blocks and thematic breaks, keeping the text byte for byte.

    Algorithm: module docstring (docs/splitters.md#experimentalmarkdownsyntaxtextsplitter). Stateless between calls
    (safe to share).

    Args:
        headers_to_split_on: ``(prefix, metadata key)`` pairs; default all six levels, ``("#", "Header 1")`` …
            ``("######", "Header 6")``.
        return_each_line: return one Document per non-blank line of each chunk (line terminator removed).
        strip_headers: leave header lines out of the content (default ``True``).
        add_start_index: add ``metadata["start_index"]``, the chunk's (or line's) offset in the text.

    Raises:
        ValueError: a prefix that is not 1–6 ``#`` characters.

    Example: ``"# A\\ntext\\n```py\\nx = 1\\n```\\n"`` → ``Document("text\\n", {"Header 1": "A"})``,
    ``Document("```py\\nx = 1\\n```\\n", {"Header 1": "A", "Code": "py"})``.

    Differs from LangChain on purpose:
        - An unclosed fence keeps its content to the end of the document; LangChain silently drops everything
          after it.
        - Fences close by CommonMark rules (same character, at least as long).
        - One linear pass with no per-instance state; LangChain's is quadratic and stores the chunk being built on
          the instance, so one instance cannot be shared between concurrent calls.
    """

    def __init__(
        self,
        headers_to_split_on: list[tuple[str, str]] | None = None,
        return_each_line: bool = False,
        strip_headers: bool = True,
        add_start_index: bool = False,
    ) -> None:
        pairs = list(headers_to_split_on) if headers_to_split_on is not None else list(_DEFAULT_HEADERS)
        self._levels: dict[int, str] = {}
        for prefix, key in pairs:
            if not (1 <= len(prefix) <= 6 and set(prefix) == {"#"}):
                raise ValueError(f"header prefix {prefix!r} must be 1 to 6 '#' characters")
            self._levels[len(prefix)] = key
        self.headers_to_split_on = pairs
        self.return_each_line = return_each_line
        self.strip_headers = strip_headers
        self.add_start_index = add_start_index

    def split_text(self, text: str) -> list[Document]:
        """Split Markdown *text*; metadata is the header path (plus ``Code`` for code blocks)."""
        return self._split(text, {})

    def _chunks(self, text: str) -> list[tuple[int, int, dict[str, str]]]:
        lines = scan_lines(text, front_matter=False)
        chunks: list[tuple[int, int, dict[str, str]]] = []
        stack: list[tuple[int, str, str]] = []
        chunk_start = 0

        def close(end: int, extra: dict[str, str] | None = None) -> None:
            if text[chunk_start:end].strip():
                headers = {key: value for _, key, value in stack}
                chunks.append((chunk_start, end, {**headers, **(extra or {})}))

        def after(line_index: int) -> int:  # offset just past line *line_index*, its newline included
            return min(lines.spans[line_index][1] + 1, len(text))

        index = 0
        while index < len(lines.spans):
            start = lines.spans[index][0]
            block = lines.block_of_line[index]
            if block >= 0:
                close(start)
                fenced = lines.blocks[block]
                chunk_start = start
                close(after(fenced.last_line), {"Code": fenced.language})
                index = fenced.last_line + 1
                chunk_start = after(fenced.last_line)
                continue
            line = lines.line(text, index)
            heading = parse_atx_heading(line)
            if heading is not None and heading[0] in self._levels:
                close(start)
                stack = [entry for entry in stack if entry[0] < heading[0]]
                stack.append((heading[0], self._levels[heading[0]], heading[1]))
                chunk_start = after(index) if self.strip_headers else start
            elif is_thematic_break(line):
                close(start)
                chunk_start = after(index)
            index += 1
        close(len(text))
        return chunks

    def _split(self, text: str, base: dict[str, Any]) -> list[Document]:
        out: list[Document] = []
        for start, end, headers in self._chunks(text):
            pieces = [(start, end)]
            if self.return_each_line:
                pieces = []
                offset = start
                for line in text[start:end].split("\n"):
                    content = line.removesuffix("\r")
                    if content.strip():
                        pieces.append((offset, offset + len(content)))
                    offset += len(line) + 1
            for piece_start, piece_end in pieces:
                metadata = copy.deepcopy(base)
                metadata.update(headers)
                if self.add_start_index:
                    metadata["start_index"] = piece_start
                out.append(Document(text[piece_start:piece_end], metadata))
        return out
