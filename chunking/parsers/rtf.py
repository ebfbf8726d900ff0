"""Rich Text Format files (.rtf): the text, read with striprtf (BSD-3-Clause), as one page.

striprtf walks the control words with an explicit stack (no recursion), skips the destinations that hold no body
text (font and colour tables, style sheets, the ``{\\info}`` group, pictures, objects, headers and footers,
footnotes, field instructions) and decodes ``\\'hh`` bytes with the code page of the file (``\\ansicpgN``) or of
the current font (``\\fcharsetN``), ``\\uN`` as Unicode. What it gives is kept: paragraphs as lines, table cells
separated by ``|``, field results (a hyperlink's text). Lost: character formatting, headings (RTF marks them only
by style), footnotes, comments, images.

Refused with a reason: bytes that do not start with ``{\\rtf`` (a renamed file), groups nested deeper than
``MAX_NESTING_DEPTH`` (counted before striprtf runs), more than ``MAX_DOCUMENT_CHARS`` characters. The title is the
``{\\title}`` of the ``{\\info}`` group (``chunking.parsers.titles``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from chunking.model import Page
from chunking.parsers._common import ParseError, ReadContext, normalize_newlines, pages_from_texts

__all__ = ["group_depth", "parse"]

_MAGIC = b"{\\rtf"
_BRACES = re.compile(rb"\\[\\{}]|[{}]")  # an escaped brace or backslash is text, not a group
_BLANK_LINES = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")


def parse(data: bytes, *, source: str, context: ReadContext | None = None) -> Iterator[Page]:
    """Parse an RTF file into one page (module docstring).

    Returns:
        One ``Page(0, 0, text)``: paragraphs on their lines, runs of blank lines made one, trailing spaces of
        lines removed.

    Raises:
        ParseError: ``not a valid RTF: it does not start with {\\rtf``; ``RTF groups nested more than N levels
            deep (MAX_NESTING_DEPTH)``; ``more than N characters of text (MAX_DOCUMENT_CHARS)``.
    """
    from striprtf.striprtf import rtf_to_text

    context = context if context is not None else ReadContext()
    if not data.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(_MAGIC):
        raise ParseError(source, "not a valid RTF: it does not start with {\\rtf")
    limits = context.limits
    if group_depth(data, stop_above=limits.max_nesting_depth) > limits.max_nesting_depth:
        raise ParseError(source, limits.depth_reason("RTF groups"))
    # RTF is 7-bit text (RTF 1.9.1, "RTF syntax"): other bytes are taken as Latin-1 so that none is lost before
    # striprtf decodes the \'hh escapes with the document's code page.
    text = rtf_to_text(data.decode("latin-1"), errors="replace")
    text = "\n".join(line.rstrip() for line in normalize_newlines(text).split("\n"))
    text = _BLANK_LINES.sub("\n\n", text).strip("\n")
    if len(text) > limits.max_document_chars:
        raise ParseError(source, limits.document_chars_reason())
    return pages_from_texts([text + "\n" if text else ""])


def group_depth(data: bytes, *, stop_above: int) -> int:
    """The deepest nesting of ``{…}`` groups in *data* (``b"{\\\\rtf1{a}}"`` → 2), escaped braces aside; stops
    counting once past *stop_above*. Unbalanced braces are striprtf's to forgive."""
    depth = deepest = 0
    for match in _BRACES.finditer(data):
        token = match.group()
        if token == b"{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > stop_above:
                    return deepest
        elif token == b"}":
            depth = max(depth - 1, 0)
    return deepest
