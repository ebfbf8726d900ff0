"""The Markdown headings of a document's pages with their offsets: which heading path holds a character.

Used to give each chunk its heading path (``chunking.documents.records``) and by the strategies that cut by section.
"""

from __future__ import annotations

import bisect
import re
from typing import Iterable

from chunking.model import Page
from chunking.splitters.markdown.fences import scan_lines
from chunking.splitters.markdown.headings import find_headings

__all__ = ["HeadingOutline"]

_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*\r?$", re.M)  # a page without one or a "#" has no heading



class HeadingOutline:
    """The Markdown headings (ATX and setext) of a document text with their offsets, to answer "which heading path holds
    character *i*?" by binary search.

    Parsers render HTML and DOCX headings as ``#`` lines, so one outline serves Markdown, HTML and DOCX. Headings
    and fenced code follow CommonMark (``chunking.splitters.markdown.fences``): a ``# comment`` inside a fenced
    shell snippet is not a section, ``#tag`` is not a heading, closing ``#``s are not part of the title, and a
    ``Title`` line underlined by ``===`` or ``---`` is a heading of level 1 or 2 (``markdown/headings.py``). A YAML
    front matter block at the start of the document (the first page's text) holds no heading, and its closing
    ``---`` underlines nothing (``fences.py`` rule 6).
    """

    def __init__(self, pages: Iterable[Page]) -> None:
        self._offsets: list[int] = []
        self._paths: list[tuple[str, ...]] = []
        path: list[tuple[int, str]] = []
        first = True
        for page in pages:
            text = page.text
            at_start, first = first and page.offset == 0, False
            if "#" not in text and _SETEXT_UNDERLINE.search(text) is None:
                continue
            lines = scan_lines(text, front_matter=at_start)
            for heading in find_headings(text, lines):
                if not heading.title:
                    continue
                while path and path[-1][0] >= heading.level:
                    path.pop()
                path.append((heading.level, heading.title))
                self._offsets.append(page.offset + lines.spans[heading.first_line][0])
                self._paths.append(tuple(t for _, t in path))

    def offsets_in(self, page: Page) -> list[int]:
        """Document offsets of the headings that lie on *page*."""
        lo = bisect.bisect_left(self._offsets, page.offset)
        hi = bisect.bisect_left(self._offsets, page.offset + len(page.text))
        return self._offsets[lo:hi]

    def path_at(self, char_offset: int) -> tuple[str, ...]:
        """Heading path (outermost first) in force at document offset *char_offset*; ``()`` before any heading."""
        i = bisect.bisect_right(self._offsets, char_offset) - 1
        return self._paths[i] if i >= 0 else ()
