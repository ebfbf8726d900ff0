"""Turn a document's chunks into search-index records (``ChunkRecord``): keys, page citations, heading paths."""

from __future__ import annotations

import bisect
import re
from typing import Iterable, Sequence

from chunking.ids import chunk_id, content_hash
from chunking.model import Chunk, ChunkRecord, Page

__all__ = ["HeadingOutline", "build_records"]

_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.MULTILINE)


class HeadingOutline:
    """The Markdown ``#`` headings of a document text with their offsets, to answer "which heading path holds
    character *i*?" by binary search.

    Parsers render HTML and DOCX headings as ``#`` lines, so one outline serves Markdown, HTML and DOCX. Lines
    inside fenced code blocks (CommonMark ``````` / ``~~~`` fences) are not headings (a ``# comment`` in a shell
    snippet must not become a section).
    """

    def __init__(self, pages: Iterable[Page]) -> None:
        self._offsets: list[int] = []
        self._paths: list[tuple[str, ...]] = []
        path: list[tuple[int, str]] = []
        for page in pages:
            fenced = _fenced_ranges(page.text)
            for match in _HEADING.finditer(page.text):
                if any(a <= match.start() < b for a, b in fenced):
                    continue
                level = len(match.group(1))
                while path and path[-1][0] >= level:
                    path.pop()
                path.append((level, match.group(2).strip()))
                self._offsets.append(page.offset + match.start())
                self._paths.append(tuple(title for _, title in path))

    def offsets_in(self, page: Page) -> list[int]:
        """Document offsets of the headings that lie on *page*."""
        lo = bisect.bisect_left(self._offsets, page.offset)
        hi = bisect.bisect_left(self._offsets, page.offset + len(page.text))
        return self._offsets[lo:hi]

    def path_at(self, char_offset: int) -> tuple[str, ...]:
        """Heading path (outermost first) in force at document offset *char_offset*; ``()`` before any heading."""
        i = bisect.bisect_right(self._offsets, char_offset) - 1
        return self._paths[i] if i >= 0 else ()


def _fenced_ranges(text: str) -> list[tuple[int, int]]:
    ranges = []
    opening: re.Match[str] | None = None
    for match in _FENCE.finditer(text):
        if opening is None:
            opening = match
        elif match.group(1)[0] == opening.group(1)[0] and len(match.group(1)) >= len(opening.group(1)):
            ranges.append((opening.start(), match.end()))
            opening = None
    if opening is not None:  # an unclosed fence runs to the end (CommonMark)
        ranges.append((opening.start(), len(text)))
    return ranges


def build_records(
    chunks: Sequence[Chunk],
    *,
    doc_id: str,
    version: str,
    source: str,
    paginated: bool,
    outline: HeadingOutline | None = None,
) -> list[ChunkRecord]:
    """Index records for the chunks of one document version, in order (ordinal = position).

    ``sourcepage`` is ``source#page=N`` with N 1-based for paginated formats (PDF), else ``source``. A chunk's
    ``headings`` are its own (from the splitter) or, failing that, the outline's path at its ``char_start``.
    """
    records = []
    for ordinal, chunk in enumerate(chunks):
        headings = chunk.headings or (outline.path_at(chunk.char_start) if outline else ())
        records.append(
            ChunkRecord(
                id=chunk_id(doc_id, version, ordinal),
                doc_id=doc_id,
                version=version,
                source=source,
                sourcepage=f"{source}#page={chunk.page_start + 1}" if paginated else source,
                ordinal=ordinal,
                page_start=chunk.page_start,
                page_end=chunk.page_end,
                char_start=chunk.char_start,
                char_end=chunk.char_end,
                content=chunk.text,
                content_hash=content_hash(chunk.text),
                token_count=chunk.token_count,
                headings=tuple(headings),
            )
        )
    return records
