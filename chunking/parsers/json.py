"""JSON files: the decoded JSON text, verbatim, as one page, after checking that it is valid JSON.

Only the standard library's ``json``: the file is parsed once to reject broken input early, with the line
and column a person needs to fix it; the page keeps the original text (its layout and key order), which the
JSON splitter parses again.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from chunking.model import Page
from chunking.parsers._common import ParseError, decode_text, normalize_newlines, pages_from_texts

__all__ = ["parse"]


def parse(data: bytes, *, source: str) -> Iterator[Page]:
    """Parse a JSON file into one page of JSON text.

    Args:
        data: the raw file content (UTF-8, UTF-16 or UTF-32 per RFC 8259 §8.1; a legacy encoding is detected).
        source: file name, used in errors.

    Returns:
        One ``Page(0, 0, text)``: the decoded text without BOM, newlines normalised to ``\\n``.

    Raises:
        ParseError: ``invalid JSON: line L column C: message`` (1-based) when the text is not JSON;
            ``not valid UTF-8 or any detected encoding`` for bytes that do not decode to text.
    """
    text = normalize_newlines(decode_text(data, source=source))
    try:
        json.loads(text)
    except json.JSONDecodeError as error:
        raise ParseError(source, f"invalid JSON: line {error.lineno} column {error.colno}: {error.msg}") from None
    except RecursionError:
        raise ParseError(source, "invalid JSON: nested too deeply") from None
    return pages_from_texts([text])
