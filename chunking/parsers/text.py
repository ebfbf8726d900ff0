"""Plain-text formats (.txt, .md, source code, logs, YAML, …): the decoded file, verbatim, as one page.

No library beyond the shared decoder: these files already are the text we index. Markdown stays Markdown,
so the Markdown splitter can still see its headings and code fences.
"""

from __future__ import annotations

from collections.abc import Iterator

from chunking.model import Page
from chunking.parsers._common import decode_text, normalize_newlines, pages_from_texts

__all__ = ["parse"]


def parse(data: bytes, *, source: str) -> Iterator[Page]:
    """Parse a plain-text file into one page.

    Args:
        data: the raw file content, in any encoding (BOM, UTF-8 or a detected legacy encoding).
        source: file name, used in errors.

    Returns:
        One ``Page(0, 0, text)``: the decoded text without BOM, newlines normalised to ``\\n``, otherwise
        unchanged.

    Raises:
        ParseError: ``not valid UTF-8 or any detected encoding`` for bytes that do not decode to text.
    """
    text = normalize_newlines(decode_text(data, source=source))
    return pages_from_texts([text])
