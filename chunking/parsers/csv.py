"""CSV files: the decoded CSV text, verbatim, as one page.

Only the standard library: the text stays CSV (header line, then rows) so that a splitter can keep rows
whole and repeat the header; quoting is not validated here because a stray quote should not make a
whole file fail.
"""

from __future__ import annotations

from collections.abc import Iterator

from chunking.model import Page
from chunking.parsers._common import decode_text, normalize_newlines, pages_from_texts

__all__ = ["parse"]


def parse(data: bytes, *, source: str) -> Iterator[Page]:
    """Parse a CSV file into one page of CSV text.

    Args:
        data: the raw file content, in any encoding (BOM, UTF-8 or a detected legacy encoding).
        source: file name, used in errors.

    Returns:
        One ``Page(0, 0, text)``: the decoded text without BOM, newlines normalised to ``\\n`` (also inside
        quoted fields), otherwise unchanged.

    Raises:
        ParseError: ``not valid UTF-8 or any detected encoding`` for bytes that do not decode to text.
    """
    text = normalize_newlines(decode_text(data, source=source))
    return pages_from_texts([text])
