"""Markdown lines, fenced code blocks, ATX headings and thematic breaks, by CommonMark's rules.

Source: CommonMark spec 0.31, §4.1 (thematic breaks), §4.2 (ATX headings), §4.5 (fenced code blocks), §5.2 (list
items, for the indentation of fences nested in them).

Rules applied (docs/splitters.md#markdownheadertextsplitter):
1. Lines are split on ``\\n``; a trailing ``\\r`` is ignored for detection and kept in content.
2. An opening fence is a line with 0–3 spaces of indentation, then 3+ backticks or 3+ tildes, then an info
   string (a backtick fence's info string may not contain a backtick).
3. It is closed only by a line with 0–3 spaces of indentation and a run of the same character at least as long,
   followed only by spaces or tabs. A fence never closed runs to the end of the document.
4. Inside a list item the allowed indentation is counted from the item's content column (CommonMark's container
   rule), so a fence indented under ``1. step`` is recognised too. A non-blank line indented less than the item's
   content column ends the item, unless it is a lazy continuation of a paragraph. Block quotes are not tracked.
5. Lines inside a fence, fence lines included, are content: never headings, breaks or list items.
6. YAML front matter at the very start of the text is metadata, not Markdown: the first line is exactly ``---``
   (after an optional U+FEFF), the line after it is not blank, and a later line exactly ``---`` or ``...`` closes
   it within the first ``FRONT_MATTER_MAX_CHARS`` characters. Its lines, both delimiters included, are never
   headings, breaks, fences or list items (``MarkdownLines.front_matter_lines`` counts them); without a closing
   line in reach, the ``---`` is an ordinary line. Sources: Jekyll's "Front Matter" page (the ``---`` delimiters
   on the first lines), Pandoc's User's Guide, extension ``yaml_metadata_block`` (the ``...`` closer and the
   non-blank line after the opening, which keeps a leading thematic break a break).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

__all__ = [
    "FenceIndex",
    "FRONT_MATTER_MAX_CHARS",
    "FencedBlock",
    "MarkdownLines",
    "find_fenced_blocks",
    "is_thematic_break",
    "parse_atx_heading",
    "scan_lines",
    "trim_blank_lines",
]

_OPEN = re.compile(r"(`{3,}|~{3,})(.*)")
_LIST_MARKER = re.compile(r"[ \t]*(?:[*+-]|\d{1,9}[.)])(?:[ \t]+|$)")
_THEMATIC = re.compile(r" {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})")
_ATX = re.compile(r" {0,3}(#{1,6})(?=[ \t]|$)(.*)")
_CLOSING_SEQUENCE = re.compile(r"(?:^|[ \t]+)#+$")

#: The span of text, from its start, in which a front matter block must close (rule 6), in characters; the same
#: bound as the front matter ``title:`` read by ``chunking.parsers.titles`` (64 KiB).
FRONT_MATTER_MAX_CHARS = 65_536


@dataclass(frozen=True, slots=True)
class FencedBlock:
    """One fenced code block.

    Attributes:
        start: offset of the opening fence line's first character.
        end: offset just past the closing fence line (its newline excluded), or ``len(text)`` if never closed.
        first_line, last_line: indices of the opening line and of the block's last line (inclusive).
        char: ``"`"`` or ``"~"``; length: the opening run's length (≥ 3).
        info: the info string, stripped (``"python"`` for `````` ```python ``````).
        opening: the opening fence line as written (``\\r`` removed), reused when a block must be re-wrapped.
        closed: whether a closing fence was found.
    """

    start: int
    end: int
    first_line: int
    last_line: int
    char: str
    length: int
    info: str
    opening: str
    closed: bool

    @property
    def language(self) -> str:
        """The first word of the info string, ``""`` if none."""
        return self.info.split()[0] if self.info.split() else ""


@dataclass(frozen=True, slots=True)
class MarkdownLines:
    """A text cut into lines, with the fenced block each line belongs to.

    Attributes:
        spans: ``(start, end)`` of every line, ``end`` excluding the ``\\n``; a text ending in ``\\n`` has a last,
            empty line at ``len(text)``.
        block_of_line: index into *blocks* for lines inside a fence (fence lines included), else ``-1``.
        blocks: the fenced blocks in document order.
        front_matter_lines: how many lines at the start form a YAML front matter block (rule 6), delimiters
            included; ``0`` when there is none. Those lines are outside every fence (``block_of_line`` ``-1``).
    """

    spans: list[tuple[int, int]]
    block_of_line: list[int]
    blocks: list[FencedBlock]
    front_matter_lines: int = 0

    def line(self, text: str, index: int) -> str:
        """Line *index* of *text* without its ``\\n`` and without a trailing ``\\r``."""
        start, end = self.spans[index]
        return text[start:end].removesuffix("\r")


def _indent_width(line: str) -> tuple[int, int]:
    """(column of the first non-blank character, its index), tabs advancing to the next multiple of 4."""
    column = 0
    for index, char in enumerate(line):
        if char == " ":
            column += 1
        elif char == "\t":
            column += 4 - column % 4
        else:
            return column, index
    return column, len(line)


def _column_after(prefix: str) -> int:
    """The column just after *prefix*, tabs advancing to the next multiple of 4."""
    column = 0
    for char in prefix:
        column += 4 - column % 4 if char == "\t" else 1
    return column


def _opening(rest: str) -> tuple[str, int, str] | None:
    match = _OPEN.fullmatch(rest)
    if match is None:
        return None
    run, info = match.group(1), match.group(2)
    if run[0] == "`" and "`" in info:
        return None
    return run[0], len(run), info.strip()


def _closes(line: str, char: str, length: int, base: int) -> bool:
    column, index = _indent_width(line)
    if column > base + 3:
        return False
    rest = line[index:]
    run = len(rest) - len(rest.lstrip(char))
    return run >= length and rest[run:].strip(" \t") == ""


def _front_matter_lines(text: str, spans: list[tuple[int, int]]) -> int:
    """The number of lines of the YAML front matter block that opens *text* (rule 6), ``0`` if none."""
    if not text.startswith(("---", "\ufeff---")) or len(spans) < 3:
        return 0

    def line(index: int) -> str:
        return text[spans[index][0] : spans[index][1]].removesuffix("\r")

    if line(0).removeprefix("\ufeff") != "---" or not line(1).strip(" \t"):
        return 0
    for index in range(1, len(spans)):
        if spans[index][1] > FRONT_MATTER_MAX_CHARS:
            return 0
        if line(index) in ("---", "..."):
            return index + 1
    return 0


def scan_lines(text: str, front_matter: bool = True) -> MarkdownLines:
    """Cut *text* into lines and find its fenced code blocks (module docstring, rules 1–6). Linear time.

    *front_matter*: recognise a YAML front matter block at the start of *text* (rule 6); pass ``False`` for a
    text that is not the start of its document (a later page).
    """
    spans: list[tuple[int, int]] = []
    pos = 0
    while True:
        newline = text.find("\n", pos)
        if newline < 0:
            spans.append((pos, len(text)))
            break
        spans.append((pos, newline))
        pos = newline + 1
    skipped = _front_matter_lines(text, spans) if front_matter else 0
    block_of_line = [-1] * len(spans)
    blocks: list[FencedBlock] = []
    columns: list[int] = []  # content columns of the open list items
    current: tuple[int, str, int, str, int, str] | None = None  # first line, char, length, info, base, opening
    after_paragraph = False  # the previous line was paragraph text (so a less indented line may be lazy)
    for index, (start, end) in enumerate(spans):
        if index < skipped:
            continue
        line = text[start:end].removesuffix("\r")
        if current is not None:
            block_of_line[index] = len(blocks)
            first, char, length, info, base, opening = current
            if _closes(line, char, length, base):
                blocks.append(FencedBlock(spans[first][0], end, first, index, char, length, info, opening, True))
                current = None
                after_paragraph = False
            continue
        if not line.strip(" \t"):
            after_paragraph = False
            continue
        column, offset = _indent_width(line)
        lazy = after_paragraph and not (
            _LIST_MARKER.match(line) or _ATX.fullmatch(line) or _THEMATIC.fullmatch(line)
            or (column <= 3 and _opening(line[offset:]))
        )
        after_paragraph = True
        while columns and column < columns[-1] and not lazy:  # a lazy continuation line keeps the item open
            columns.pop()
        base = columns[-1] if columns else 0
        fence = _opening(line[offset:]) if 0 <= column - base <= 3 else None
        if fence is None and not _THEMATIC.fullmatch(line):
            marker = _LIST_MARKER.match(line)
            if marker is not None:
                content_column = _column_after(line[: marker.end()])
                if marker.end() == len(line):  # an empty item: content starts one column after the marker
                    content_column += 1
                columns.append(content_column)
                base = content_column
                fence = _opening(line[marker.end() :])
        if fence is not None:
            char, length, info = fence
            current = (index, char, length, info, base, line)
            block_of_line[index] = len(blocks)
    if current is not None:
        first, char, length, info, _, opening = current
        blocks.append(FencedBlock(spans[first][0], len(text), first, len(spans) - 1, char, length, info, opening, False))
    return MarkdownLines(spans, block_of_line, blocks, skipped)


def find_fenced_blocks(text: str) -> list[FencedBlock]:
    """The fenced code blocks of *text*, in order."""
    return scan_lines(text).blocks


class FenceIndex:
    """Answers "is offset *pos* inside a fenced code block?" in O(log blocks)."""

    def __init__(self, blocks: list[FencedBlock]) -> None:
        self._starts = [block.start for block in blocks]
        self._ends = [block.end for block in blocks]

    def __contains__(self, pos: int) -> bool:
        index = bisect.bisect_right(self._starts, pos) - 1
        return index >= 0 and pos < self._ends[index]

    def outside(self, pos: int) -> bool:
        """``True`` when *pos* is outside every fenced block (a filter for separator matches)."""
        return pos not in self


def parse_atx_heading(line: str) -> tuple[int, str] | None:
    """``(level, text)`` of an ATX heading line (``\\r`` already removed), else ``None``.

    The text is stripped of spaces and tabs and of an optional closing sequence (trailing ``#``s preceded by a
    space or tab, or a text made only of ``#``s). Examples: ``"## Install ##"`` → ``(2, "Install")``;
    ``"# C#"`` → ``(1, "C#")``; ``"#tag"`` → ``None``; ``"    # code"`` → ``None``.
    """
    match = _ATX.fullmatch(line)
    if match is None:
        return None
    rest = match.group(2).strip(" \t")
    rest = _CLOSING_SEQUENCE.sub("", rest).rstrip(" \t")
    return len(match.group(1)), rest


def is_thematic_break(line: str) -> bool:
    """Whether *line* (``\\r`` removed) is a thematic break: 0–3 spaces, then 3+ ``*``, ``-`` or ``_`` with optional
    spaces or tabs between them."""
    return _THEMATIC.fullmatch(line) is not None


def trim_blank_lines(text: str, start: int, end: int) -> tuple[int, int] | None:
    """Narrow ``[start, end)`` by removing leading and trailing blank (whitespace-only) lines.

    The new start is the start of the line holding the first non-whitespace character (never before *start*); the
    new end is the end of the line holding the last one (its ``\\n`` or ``\\r\\n`` excluded, trailing spaces kept).

    Returns:
        The narrowed span, or ``None`` if the span is blank.
    """
    first = start
    while first < end and text[first].isspace():
        first += 1
    if first == end:
        return None
    last = end
    while text[last - 1].isspace():
        last -= 1
    new_start = max(start, text.rfind("\n", start, first) + 1)
    newline = text.find("\n", last, end)
    new_end = end if newline < 0 else newline
    if new_end > last and text[new_end - 1] == "\r":  # the line terminator is not content
        new_end -= 1
    return new_start, new_end
