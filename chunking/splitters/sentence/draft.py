"""The chunk under construction: own text, where each of its characters comes from, and its estimate.

A draft's own text is a sequence of parts: slices of a page's text block (``(BlockTokens, start, end,
doc_offset, page_num)``, character indices in the page) and literal strings (join separators, figure parts).
The parts give the document offset and page of every own character (R10, R12 of
docs/splitters.md#departures-from-azure-search-openai-demo) and let the final
measurement reuse the block's tokens.
"""

from __future__ import annotations

from typing import Union

from chunking.model import Chunk

from .measure import BlockTokens

__all__ = ["Draft", "Part", "SlicePart"]

SlicePart = tuple[BlockTokens, int, int, int, int]
Part = Union[str, SlicePart]


class Draft:
    """A chunk being built (mutable); :meth:`to_chunk` freezes it.

    Attributes:
        text: own text (stripped); overlap: look-ahead appended after it (separator included).
        parts: where ``text`` comes from (see module docstring).
        start, end, page_start, page_end: own span in document offsets and its pages.
        est: token estimate of ``text`` (docs/splitters.md#token-counts-and-estimates); exact: exact tokens of
            ``text`` if known, else None.
        hard_left, hard_right: joined to the previous / next chunk by a hard cut (no look-ahead).
        covered: how many leading characters of ``text`` the previous chunk's look-ahead holds.
    """

    __slots__ = ("text", "parts", "start", "end", "page_start", "page_end", "est", "exact", "kind",
                 "part_index", "part_count", "hard_left", "hard_right", "overlap", "overlap_parts", "covered")

    def __init__(self, text: str, parts: list[Part], start: int, end: int, page_start: int, page_end: int,
                 est: int, kind: str = "text", exact: int | None = None) -> None:
        self.text, self.parts = text, parts
        self.start, self.end, self.page_start, self.page_end = start, end, page_start, page_end
        self.est, self.exact, self.kind = est, exact, kind
        self.part_index: int | None = None
        self.part_count: int | None = None
        self.hard_left = self.hard_right = False
        self.overlap = ""
        self.overlap_parts: list[Part] | None = None  # the look-ahead as parts, when known
        self.covered = 0  # leading characters of text that the previous chunk's look-ahead holds

    def locate(self, index: int) -> tuple[int, int]:
        """Document offset and page of own character ``index`` (which must come from a page slice)."""
        pos = 0
        for part in self.parts:
            if isinstance(part, str):
                pos += len(part)
                continue
            _, s, e, doc, page = part
            if index < pos + (e - s):
                return doc + index - pos, page
            pos += e - s
        raise IndexError(index)

    def sub_parts(self, i: int, j: int) -> list[Part]:
        """Parts of ``text[i:j]``."""
        out: list[Part] = []
        pos = 0
        for part in self.parts:
            n = len(part) if isinstance(part, str) else part[2] - part[1]
            lo, hi = max(i, pos), min(j, pos + n)
            if lo < hi:
                if isinstance(part, str):
                    out.append(part[lo - pos:hi - pos])
                else:
                    block, s, _, doc, page = part
                    out.append((block, s + lo - pos, s + hi - pos, doc + lo - pos, page))
            pos += n
            if pos >= j:
                break
        return out

    def measure_parts(self) -> tuple[list[Part], str]:
        """Parts and literal suffix whose concatenation is ``text + overlap``, for the final measurement."""
        if not self.overlap:
            return self.parts, ""
        if self.overlap_parts is None:
            return self.parts, self.overlap
        first, last = self.overlap_parts[0], self.parts[-1]
        if not isinstance(first, str) and not isinstance(last, str) and first[0] is last[0] and first[1] == last[2]:
            # Contiguous slices of one block are measured as one.
            return self.parts[:-1] + [(last[0], last[1], first[2], last[3], last[4])] + self.overlap_parts[1:], ""
        return self.parts + self.overlap_parts, ""

    def is_single_slice(self) -> bool:
        return len(self.parts) == 1 and not isinstance(self.parts[0], str)

    def to_chunk(self, token_count: int) -> Chunk:
        # Positional (Chunk's field order: text, char_start, char_end, page_start, page_end, token_count,
        # overlap_chars, kind, part_index, part_count): one of these is built per chunk, and keywords cost more.
        return Chunk(self.text + self.overlap, self.start, self.end, self.page_start, self.page_end, token_count,
                     len(self.overlap), self.kind, self.part_index, self.part_count)  # type: ignore[arg-type]
