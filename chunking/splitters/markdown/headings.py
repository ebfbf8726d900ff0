"""Markdown headings, ATX (``## Title``) and setext (``Title`` underlined by ``===`` or ``---``), by CommonMark's rules.

Source: CommonMark spec 0.31, §4.2 (ATX headings), §4.3 (setext headings), §4.4 (indented code), §4.8 (paragraphs).

One forward pass over the lines outside fenced code blocks and after YAML front matter (``fences.scan_lines``,
rules 5 and 6: a front matter block's closing ``---`` is no setext underline):
1. A line may start with U+FEFF (a byte-order mark kept by ``open(encoding="utf-8")``, or one left between
   concatenated files); it is ignored for detection.
2. An ATX heading line (``fences.parse_atx_heading``) is a heading of its level; a line indented by 4 or more
   columns is not (it is indented code unless it continues a paragraph).
3. A paragraph is a run of non-blank lines that starts at a line that is not a heading, thematic break, list
   item, block quote or indented code. A blank line, heading, break or fence ends it; a list item or block quote
   line ends it too, and the lines after one (up to a blank line) are its lazy continuation, never a paragraph.
4. A line of 0–3 spaces, then only ``=`` (level 1) or only ``-`` (level 2), then optional spaces or tabs, that
   follows a paragraph, turns the paragraph into a heading: its lines, stripped and joined by a space, are the
   title. ``---`` with no paragraph before it is a thematic break.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from chunking.splitters.markdown.fences import MarkdownLines, is_thematic_break, parse_atx_heading

__all__ = ["Heading", "find_headings"]

_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*")
_CONTAINER = re.compile(r"[ \t]*(?:[*+-]|\d{1,9}[.)])(?:[ \t]+|$)| {0,3}>")
_BOM = "\ufeff"


@dataclass(frozen=True, slots=True)
class Heading:
    """A heading: lines ``first_line``…``last_line`` (inclusive; a setext heading spans its paragraph and its
    underline), its level (1–6) and its title (``""`` for an empty ATX heading)."""

    first_line: int
    last_line: int
    level: int
    title: str


def _indent(line: str) -> int:
    column = 0
    for char in line:
        if char == " ":
            column += 1
        elif char == "\t":
            column += 4 - column % 4
        else:
            break
    return column


def find_headings(text: str, lines: MarkdownLines) -> list[Heading]:
    """The headings of *text* in document order (module docstring, rules 1–4); *lines* is ``scan_lines(text)``."""
    headings: list[Heading] = []
    paragraph: int | None = None  # first line of the open paragraph
    lazy = False  # inside the lazy continuation of a list item or block quote
    for index in range(lines.front_matter_lines, len(lines.spans)):
        if lines.block_of_line[index] >= 0:
            paragraph, lazy = None, False
            continue
        line = lines.line(text, index).removeprefix(_BOM)
        if not line.strip(" \t"):
            paragraph, lazy = None, False
            continue
        if paragraph is not None and _SETEXT.fullmatch(line):
            title = " ".join(lines.line(text, k).removeprefix(_BOM).strip(" \t") for k in range(paragraph, index))
            headings.append(Heading(paragraph, index, 1 if line.lstrip(" ")[0] == "=" else 2, title))
            paragraph = None
            continue
        atx = parse_atx_heading(line)
        if atx is not None:
            headings.append(Heading(index, index, atx[0], atx[1]))
            paragraph, lazy = None, False
        elif is_thematic_break(line):
            paragraph, lazy = None, False
        elif _CONTAINER.match(line):
            paragraph, lazy = None, True
        elif paragraph is None and not lazy and _indent(line) < 4:
            paragraph = index
    return headings
