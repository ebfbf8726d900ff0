"""What every parser shares: the error type, text decoding and turning page texts into ``Page`` objects.

Decoding uses the standard library's codecs first and charset-normalizer (MIT, pure Python, already a
dependency of the Azure SDKs) only as the last resort, because guessing is slow and can be wrong.
"""

from __future__ import annotations

import codecs
import html
import re
from collections.abc import Iterable, Iterator

from charset_normalizer import from_bytes

from chunking.model import Page

# Longest BOM first: the UTF-32-LE mark begins with the UTF-16-LE one.
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

# cp1252 is what browsers use for the labels latin1, iso-8859-1 and ascii (WHATWG Encoding Standard §4.2),
# and it is the most common legacy single-byte encoding in Western text.
_PREFERRED_SINGLE_BYTE = "cp1252"

_UNDECODABLE = "not valid UTF-8 or any detected encoding"

_NEWLINES = re.compile(r"\r\n?")


class ParseError(ValueError):
    """A file that cannot be turned into text, with a reason a person understands.

    Attributes:
        source: the file's path or blob name, as given to the parser.
        reason: what is wrong, e.g. ``"encrypted PDF"``; ``str(error)`` is ``f"{source}: {reason}"``.
    """

    def __init__(self, source: str, reason: str) -> None:
        super().__init__(f"{source}: {reason}")
        self.source = source
        self.reason = reason

    def __reduce__(self):  # keeps the two-argument constructor picklable (queues, process pools)
        return (type(self), (self.source, self.reason))


class UnsupportedFileType(ParseError):
    """The file's extension has no parser (reason ``unsupported file type .xyz``)."""


def decode_text(data: bytes, *, source: str, declared: str | None = None) -> str:
    """Decode bytes to text: BOM, then the declared encoding, then UTF-8, then a detected encoding.

    Args:
        data: the raw file content.
        source: file name, used in the error.
        declared: an encoding named by the document itself (HTML ``<meta charset>``), tried after the BOM.

    Returns:
        The text, without BOM; newlines are left as they are.

    Raises:
        ParseError: ``not valid UTF-8 or any detected encoding`` when nothing decodes the bytes to text
            without NUL characters (binary files end here).
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return data[len(bom) :].decode(encoding)
            except UnicodeDecodeError:
                raise ParseError(source, f"{_UNDECODABLE} (bad {encoding} after its byte order mark)") from None

    for encoding in (_html_codec(declared), "utf-8"):
        if encoding is None:
            continue
        try:
            text = data.decode(encoding)
        except (UnicodeDecodeError, LookupError):
            continue
        # UTF-16 without a BOM is valid UTF-8 full of NULs; let detection look at it instead.
        if "\x00" not in text:
            return text

    text = _detect(data)
    if text is None or "\x00" in text:
        raise ParseError(source, _UNDECODABLE)
    return text


def normalize_newlines(text: str) -> str:
    """Turn ``\\r\\n`` and lone ``\\r`` into ``\\n``."""
    return _NEWLINES.sub("\n", text)


def pages_from_texts(texts: Iterable[str]) -> Iterator[Page]:
    """Number page texts from 0 and give each the offset where it starts in their concatenation.

    Example: ``["ab", "", "cd"]`` gives ``Page(0, 0, "ab")``, ``Page(1, 2, "")``, ``Page(2, 2, "cd")``.
    """
    offset = 0
    for page_num, text in enumerate(texts):
        yield Page(page_num, offset, text)
        offset += len(text)


def table_cell(tag: str, attributes: str, text: str) -> str:
    """One ``<th>``/``<td>`` cell with its attributes (e.g. ``' rowspan="2"'``) and HTML-escaped text."""
    return f"<{tag}{attributes}>{html.escape(text, quote=False)}</{tag}>"


def figure_table(lines: list[str]) -> str:
    """Table rows (and caption) as one ``<figure><table>`` block, a line per row: how every parser renders a
    table, so that the sentence splitter keeps it whole and splits it by rows only when it must."""
    return "<figure><table>\n" + "\n".join(lines) + "\n</table></figure>"


def _html_codec(label: str | None) -> str | None:
    if not label:
        return None
    try:
        name = codecs.lookup(label).name
    except LookupError:
        return None
    if name.startswith("utf-16"):
        return "utf-8"  # a page that could read its own <meta> is not UTF-16 (WHATWG HTML §13.2.3.3)
    return _PREFERRED_SINGLE_BYTE if name in ("latin-1", "iso8859-1", "ascii") else name


def _detect(data: bytes) -> str | None:
    matches = list(from_bytes(data))
    if not matches:
        return None
    least_chaos = min(m.chaos for m in matches)
    candidates = [m for m in matches if m.chaos <= least_chaos]
    # NOTE: on short Western texts charset-normalizer ranks cp1250 or even cp1006 above cp1252 with the
    # same (zero) chaos, turning "crème" into "crčme"; among equally clean readings, prefer cp1252.
    for match in candidates:
        if _PREFERRED_SINGLE_BYTE in match.could_be_from_charset:
            try:
                return data.decode(_PREFERRED_SINGLE_BYTE)
            except UnicodeDecodeError:
                break
    return str(candidates[0])
