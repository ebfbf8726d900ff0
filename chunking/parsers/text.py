"""Plain-text formats (.txt, .md, source code, logs, YAML, …): the decoded file, verbatim, as one page.

No library beyond the shared decoder: these files already are the text we index. Markdown stays Markdown,
so the Markdown splitter can still see its headings and code fences; a Markdown file whose lists or block
quotes nest deeper than ``MAX_NESTING_DEPTH`` is refused, as that depth only comes from generated input and
costs the splitter time per level.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from chunking.formats import format_of
from chunking.model import Page
from chunking.parsers._common import ParseError, ReadContext, decode_bounded, normalize_newlines, pages_from_texts

__all__ = ["markdown_depth", "parse"]

# A list item's start: indentation, then a bullet or an ordered marker, then a space (CommonMark §5.2).
_LIST_ITEM = re.compile(r"^([ \t]*)(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)", re.MULTILINE)
_QUOTE_RUN = re.compile(r"^[ \t]*((?:>[ \t]?)+)", re.MULTILINE)


def parse(data: bytes, *, source: str, context: ReadContext | None = None) -> Iterator[Page]:
    """Parse a plain-text file into one page.

    Args:
        data: the raw file content, in any encoding (BOM, UTF-8 or a detected legacy encoding).
        source: file name, used in errors; a Markdown extension (default splitter ``markdown`` in
            ``chunking.formats``) adds the nesting check.
        context: limits (``MAX_DOCUMENT_CHARS``, ``MAX_NESTING_DEPTH``); default limits when ``None``.

    Returns:
        One ``Page(0, 0, text)``: the decoded text without BOM, newlines normalised to ``\\n``, otherwise
        unchanged.

    Raises:
        ParseError: ``not valid UTF-8 or any detected encoding`` for bytes that do not decode to text;
            ``Markdown lists nested more than N levels deep (MAX_NESTING_DEPTH)``; the limits' reasons.
    """
    context = context if context is not None else ReadContext()
    text = normalize_newlines(decode_bounded(data, source=source, context=context))
    if _is_markdown(source):
        limit = context.limits.max_nesting_depth
        if markdown_depth(text, stop_above=limit) > limit:
            raise ParseError(source, context.limits.depth_reason("Markdown lists or block quotes"))
    return pages_from_texts([text])


def _is_markdown(source: str) -> bool:
    fmt = format_of(source)
    return fmt is not None and fmt.splitter == "markdown"


def markdown_depth(text: str, *, stop_above: int | None = None) -> int:
    """The deepest nesting of Markdown list items or block quotes in *text*, measured without recursion.

    A list item is nested in the items above it that start less indented (tabs count as 4 columns), so
    ``"- a\\n  - b\\n    - c"`` is 3 deep; ``"> > > x"`` is 3 deep. Lines inside code fences are not told
    apart: a count that can only overstate, and only for generated input near the limit.
    """
    deepest = 0
    indents: list[int] = []  # indentation of the open items, increasing
    for match in _LIST_ITEM.finditer(text):
        indent = len(match.group(1).expandtabs(4))
        while indents and indents[-1] >= indent:
            indents.pop()
        indents.append(indent)
        if len(indents) > deepest:
            deepest = len(indents)
            if stop_above is not None and deepest > stop_above:
                return deepest
    for match in _QUOTE_RUN.finditer(text):
        deepest = max(deepest, match.group(1).count(">"))
    return deepest
