"""Split Markdown at its headings into verbatim sections with the heading path as metadata.

Algorithm (docs/splitters.md#markdownheadertextsplitter, after LangChain's ``MarkdownHeaderTextSplitter`` interface):
1. Cut the text into lines and find the fenced code blocks (``fences.scan_lines``, CommonMark rules). A YAML
   front matter block at the start (``---`` … ``---`` or ``...``, ``fences.py`` rule 6) is metadata: it holds no
   header and is in no section, so the first section starts after it (offsets still count it).
2. Outside fences, a splitting header is an ATX or setext heading of a configured level (``markdown/headings.py``;
   a leading U+FEFF is ignored), or a line matching a configured custom delimiter (``**Title**``).
3. A header pops every stacked header of level ≥ its own and pushes itself; a section's metadata is
   ``{key: text}`` for the stack, outermost first.
4. A section is the original lines between two splitting headers (the header lines first when
   ``strip_headers=False``), with leading and trailing blank lines removed; blank sections are dropped.
5. With ``strip_headers=False``, a section made only of heading lines (of any level, configured or not) is joined
   to the next section when that one's header path is deeper (LangChain's rule), so ``# A`` directly followed by
   ``## B`` is not a chunk alone.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any, Iterable

from chunking.model import Document
from chunking.splitters.base import DocumentSplitting
from chunking.splitters.markdown.fences import MarkdownLines, scan_lines, trim_blank_lines
from chunking.splitters.markdown.headings import find_headings

__all__ = ["HeaderSection", "MarkdownHeaderTextSplitter", "header_sections"]

_HASHES = re.compile(r"#{1,6}")


@dataclass(frozen=True, slots=True)
class HeaderSection:
    """A section: the half-open span ``[start, end)`` of its text and its header path (metadata key → text)."""

    start: int
    end: int
    headers: dict[str, str]


def _header_levels(
    headers_to_split_on: Iterable[tuple[str, str]], custom_header_patterns: dict[str, int] | None
) -> tuple[dict[int, str], dict[str, tuple[int, str]]]:
    """(ATX level → metadata key, custom delimiter → (level, key)).

    Raises:
        ValueError: a prefix is neither 1–6 ``#`` nor a key of *custom_header_patterns*.
    """
    custom_levels = dict(custom_header_patterns or {})
    atx: dict[int, str] = {}
    custom: dict[str, tuple[int, str]] = {}
    for prefix, key in headers_to_split_on:
        if prefix in custom_levels:
            custom[prefix] = (int(custom_levels[prefix]), key)
        elif _HASHES.fullmatch(prefix):
            atx[len(prefix)] = key
        else:
            raise ValueError(
                f"header prefix {prefix!r} must be 1 to 6 '#' characters or a key of custom_header_patterns"
            )
    return atx, custom


def _custom_header(line: str, custom: dict[str, tuple[int, str]]) -> tuple[int, str, str] | None:
    stripped = line.strip()
    for delimiter, (level, key) in custom.items():
        inner = stripped[len(delimiter) : len(stripped) - len(delimiter)]
        if (
            len(stripped) > 2 * len(delimiter)
            and stripped.startswith(delimiter)
            and stripped.endswith(delimiter)
            and inner.strip()
            and inner[0] != delimiter[0]
            and inner[-1] != delimiter[-1]
        ):
            return level, key, inner.strip()
    return None


def header_sections(
    text: str,
    lines: MarkdownLines,
    atx: dict[int, str],
    custom: dict[str, tuple[int, str]],
    strip_headers: bool,
    join_heading_only: bool = False,
) -> list[HeaderSection]:
    """Cut *text* into header sections (module docstring, steps 2–5; step 5 only with *join_heading_only*).

    Args:
        text: the Markdown text; *lines* is ``scan_lines(text)``.
        atx, custom: the splitting headers, from ``_header_levels``; *atx* levels apply to ATX and setext headings.
        strip_headers: leave the header lines out of their section.
        join_heading_only: with *strip_headers* false, apply step 5 (LangChain's header splitter does).

    Returns:
        Non-blank sections in document order, spans trimmed of blank lines.
    """
    hits: dict[int, tuple[int, int, str, str]] = {}  # first line -> (last line, level, key, text)
    heading_lines: set[int] = set()  # lines of any heading, configured or not
    for heading in find_headings(text, lines):
        heading_lines.update(range(heading.first_line, heading.last_line + 1))
        if heading.level in atx:
            hits[heading.first_line] = (heading.last_line, heading.level, atx[heading.level], heading.title)
    if custom:
        for index in range(lines.front_matter_lines, len(lines.spans)):
            if lines.block_of_line[index] < 0 and index not in hits:
                found = _custom_header(lines.line(text, index).removeprefix("\ufeff"), custom)
                if found is not None:
                    hits[index] = (index, *found)
    sections: list[HeaderSection] = []
    heading_only: list[bool] = []  # per section: nothing but header lines (strip_headers=False)
    stack: list[tuple[int, str, str]] = []  # (level, key, text)
    content_line = lines.front_matter_lines  # the first line of the section's own content (after its header lines)
    section_start = min(lines.spans[content_line - 1][1] + 1, len(text)) if content_line else 0

    def close(end: int, end_line: int) -> None:
        span = trim_blank_lines(text, section_start, end)
        if span is not None:
            sections.append(HeaderSection(span[0], span[1], {key: value for _, key, value in stack}))
            heading_only.append(all(index in heading_lines or not lines.line(text, index).strip()
                                    for index in range(content_line, end_line)))

    for first in sorted(hits):
        last, level, key, value = hits[first]
        start, end = lines.spans[first][0], lines.spans[last][1]
        close(start, first)
        stack = [entry for entry in stack if entry[0] < level] + [(level, key, value)]
        content_line = last + 1
        section_start = min(end + 1, len(text)) if strip_headers else start
    close(len(text), len(lines.spans))
    if strip_headers or not join_heading_only:
        return sections
    return _merge_heading_only(text, sections, heading_only)


def _merge_heading_only(text: str, sections: list[HeaderSection], heading_only: list[bool]) -> list[HeaderSection]:
    """With the headers kept, a section made only of header lines joins the section after it when that one's header
    path is deeper (``# A`` then ``## B`` and its text make one section under ``A``/``B``), as LangChain does."""
    out: list[HeaderSection] = []
    pending = False
    for section, only in zip(sections, heading_only):
        if out and pending and len(section.headers) > len(out[-1].headers):
            out[-1] = HeaderSection(out[-1].start, section.end, section.headers)
        else:
            out.append(section)
        pending = only
    return out


def _section_units(text: str, lines: MarkdownLines, section: HeaderSection) -> list[tuple[int, int]]:
    """One span per non-blank line outside fences and one per fenced block, inside *section*."""
    units: list[tuple[int, int]] = []
    current_block = -1
    for index, (start, end) in enumerate(lines.spans):
        if end < section.start or start >= section.end:
            continue
        block = lines.block_of_line[index]
        if block >= 0:
            if block == current_block:
                units[-1] = (units[-1][0], min(end, section.end))
            else:
                units.append((start, min(end, section.end)))
                current_block = block
            continue
        current_block = -1
        line_end = end - 1 if text[start:end].endswith("\r") else end
        if text[start:line_end].strip():
            units.append((start, line_end))
    trimmed = [trim_blank_lines(text, s, e) for s, e in units]
    return [span for span in trimmed if span is not None]


class MarkdownHeaderTextSplitter(DocumentSplitting):
    """Split Markdown into sections at the configured headings; each section keeps its heading path as metadata.

    Algorithm: module docstring (docs/splitters.md#markdownheadertextsplitter). Fences follow CommonMark: a ``#`` line
    inside a fenced code block is never a header, a fence closes only on a run of the same character at least as long,
    and an unclosed fence runs to the end of the document.

    Args:
        headers_to_split_on: ``(prefix, metadata key)`` pairs, e.g. ``[("#", "Header 1"), ("##", "Header 2")]``;
            a prefix is 1–6 ``#`` or a delimiter of *custom_header_patterns*.
        return_each_line: return one Document per non-blank line outside fences and one per fenced block.
        strip_headers: leave header lines out of the content (default ``True``).
        custom_header_patterns: delimiter → level, e.g. ``{"**": 1}`` makes a line that is exactly ``**Intro**``
            a level-1 header with text ``Intro``.
        add_start_index: add ``metadata["start_index"]``, the section's (or line's) offset in the text.

    Raises:
        ValueError: a prefix that is neither ``#``s nor a custom delimiter.

    Example (keys ``Header 1``/``Header 2``): ``"# Guide\\nIntro.\\n## Install ##\\n\\tpip install x"`` →
    ``Document("Intro.", {"Header 1": "Guide"})``,
    ``Document("\\tpip install x", {"Header 1": "Guide", "Header 2": "Install"})``.

    Differs from LangChain on purpose:
        - Sections are verbatim: indentation, tabs, non-breaking spaces and blank lines stay; LangChain strips
          every line, drops non-printable characters and joins paragraphs with ``"  \\n"``, which mangles code.
        - Fences follow CommonMark (``~~~`` does not close ``~~~~``; an unclosed fence keeps the rest); LangChain
          closes a fence on any line starting with three backticks or tildes.
        - A closing ``##`` sequence is removed from the header text (``## Install ##`` → ``Install``) and ``#tag``
          is not a heading; LangChain keeps the closers.
        - Headings follow CommonMark: setext headings (``Title`` over ``=====`` or ``-----``) split like ``#`` and
          ``##``, and a ``## Bar`` indented by four or more spaces is indented code, not a heading; LangChain
          strips every line first, so it sees the indented heading and not the setext one.
        - Sections under equal header paths are not merged with each other, and ``return_each_line=True`` gives
          one Document per line (LangChain: one per run of lines between blank lines and headers).
    """

    def __init__(
        self,
        headers_to_split_on: list[tuple[str, str]],
        return_each_line: bool = False,
        strip_headers: bool = True,
        custom_header_patterns: dict[str, int] | None = None,
        add_start_index: bool = False,
    ) -> None:
        self._atx, self._custom = _header_levels(headers_to_split_on, custom_header_patterns)
        self.headers_to_split_on = list(headers_to_split_on)
        self.return_each_line = return_each_line
        self.strip_headers = strip_headers
        self.add_start_index = add_start_index

    def aggregate_lines_to_chunks(self, lines: list[dict[str, Any]]) -> list[Document]:
        """Join ``{"content": str, "metadata": dict}`` lines into Documents, as LangChain's method of this name.

        A line joins the previous chunk (with ``"  \\n"``) when their metadata are equal, or, with
        ``strip_headers=False``, when the chunk ends with a ``#`` line and the line's header path is deeper (it then
        takes the line's metadata). This is LangChain's line-level aggregation, kept for callers of the method;
        :meth:`split_text` cuts sections from the text itself and never calls it.
        """
        chunks: list[dict[str, Any]] = []
        for line in lines:
            content, metadata = line["content"], line["metadata"]
            if chunks and chunks[-1]["metadata"] == metadata:
                chunks[-1]["content"] += "  \n" + content
            elif (chunks and not self.strip_headers and len(chunks[-1]["metadata"]) < len(metadata)
                  and chunks[-1]["content"].split("\n")[-1].startswith("#")):
                chunks[-1] = {"content": chunks[-1]["content"] + "  \n" + content, "metadata": metadata}
            else:
                chunks.append({"content": content, "metadata": metadata})
        return [Document(chunk["content"], chunk["metadata"]) for chunk in chunks]

    def split_text(self, text: str) -> list[Document]:
        """Split Markdown *text*; metadata is the header path (plus ``start_index`` if asked)."""
        return self._split(text, {})

    def _split(self, text: str, base: dict[str, Any]) -> list[Document]:
        lines = scan_lines(text)
        out: list[Document] = []
        for section in header_sections(text, lines, self._atx, self._custom, self.strip_headers,
                                       not self.return_each_line):
            spans = _section_units(text, lines, section) if self.return_each_line else [(section.start, section.end)]
            for start, end in spans:
                metadata = copy.deepcopy(base)
                metadata.update(section.headers)
                if self.add_start_index:
                    metadata["start_index"] = start
                out.append(Document(text[start:end], metadata))
        return out
