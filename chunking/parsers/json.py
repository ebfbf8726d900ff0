"""JSON files: the decoded JSON text, verbatim, as one page, after checking that it is valid JSON.

Only the standard library's ``json``: the file is parsed once to reject broken input early, with the line
and column a person needs to fix it; the page keeps the original text (its layout and key order), which the
JSON splitter parses again. Before parsing, the nesting depth is measured without recursion: the standard
parser, and the JSON splitter after it, recurse once per level.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from chunking.model import Page
from chunking.parsers._common import ParseError, ReadContext, decode_bounded, normalize_newlines, pages_from_texts

__all__ = ["nesting_depth", "parse"]

# A string (escapes included) or one bracket; strings are matched only to skip the brackets inside them.
_STRING_OR_BRACKET = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]')


def parse(data: bytes, *, source: str, context: ReadContext | None = None) -> Iterator[Page]:
    """Parse a JSON file into one page of JSON text.

    Args:
        data: the raw file content (UTF-8, UTF-16 or UTF-32 per RFC 8259 §8.1; a legacy encoding is detected).
        source: file name, used in errors.
        context: limits (``MAX_NESTING_DEPTH``, ``MAX_DOCUMENT_CHARS``); default limits when ``None``.

    Returns:
        One ``Page(0, 0, text)``: the decoded text without BOM, newlines normalised to ``\\n``.

    Raises:
        ParseError: ``invalid JSON: line L column C: message`` (1-based) when the text is not JSON;
            ``JSON nested more than N levels deep (MAX_NESTING_DEPTH)``; the limits' and decoding's reasons.
    """
    context = context if context is not None else ReadContext()
    text = normalize_newlines(decode_bounded(data, source=source, context=context))
    if nesting_depth(text, stop_above=context.limits.max_nesting_depth) > context.limits.max_nesting_depth:
        raise ParseError(source, context.limits.depth_reason("JSON"))
    try:
        json.loads(text)
    except json.JSONDecodeError as error:
        raise ParseError(source, f"invalid JSON: line {error.lineno} column {error.colno}: {error.msg}") from None
    except RecursionError:
        raise ParseError(source, context.limits.depth_reason("JSON")) from None
    return pages_from_texts([text])


def nesting_depth(text: str, *, stop_above: int | None = None) -> int:
    """The deepest nesting of arrays and objects in JSON *text* (``0`` for a scalar, ``1`` for ``[1, 2]``),
    brackets inside strings ignored; iterative, one pass. Stops counting at ``stop_above + 1`` when given.
    Unbalanced input is measured as far as it goes (the JSON parser reports it afterwards)."""
    depth = deepest = 0
    for match in _STRING_OR_BRACKET.finditer(text):
        char = match.group()[0]
        if char in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if stop_above is not None and deepest > stop_above:
                    break
        elif char in "]}":
            depth -= 1
    return deepest
