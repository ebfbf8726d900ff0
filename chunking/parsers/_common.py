"""What every parser shares: the error type, text decoding and turning page texts into ``Page`` objects.

Decoding uses the standard library's codecs first and charset-normalizer (MIT, pure Python, already a
dependency of the Azure SDKs) only as the last resort, because guessing is slow and can be wrong; European
single-byte text is then decided by ``chunking.parsers.charsets`` (which letters each reading holds).
"""

from __future__ import annotations

import codecs
import html
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from charset_normalizer import from_bytes
from charset_normalizer.utils import is_multi_byte_encoding

from chunking.model import Page
from chunking.parsers.charsets import choose_single_byte
from chunking.parsers.limits import Deadline, Limits

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


@dataclass
class ReadContext:
    """What one parse may use, and what it found worth telling: passed to every parser.

    Attributes:
        limits: the per-document limits (``chunking.parsers.limits``).
        deadline: the end of the stage-1 invocation; ``None`` for no time limit.
        notes: things a person should know about a document that was read anyway (``"entity reference
            skipped"``); stored in the ledger with the version.
        title: the title the file declares (``chunking.parsers.titles.property_title``), once stage 1 has read it where
            the parse ran (in the child process under process isolation); ``None`` if not read.
    """

    limits: Limits = field(default_factory=Limits)
    deadline: Deadline | None = None
    notes: list[str] = field(default_factory=list)
    title: str | None = None
    #: the pictures of the document met so far (``chunking.parsers.pictures.PictureLog``), once one was met.
    pictures: object | None = field(default=None, repr=False)
    #: the read is of a PDF's first pages for its title and language only
    #: (``chunking.parsers.sandbox.reads.read_head``): pictures are not read, at most
    #: ``chunking.parsers.scans.HEAD_OCR_PAGES`` scanned pages are, uncounted.
    head: bool = False
    #: the pictures kept for a vision describer (``Limits.keep_pictures``): SHA-256 hex of the bytes → the bytes
    #: (PNG, JPEG, GIF, BMP, TIFF as the document holds them); a parse child sends them back with its pages.
    images: dict[str, bytes] = field(default_factory=dict, repr=False)

    def check_time(self, source: str) -> None:
        """Raise ``ParseError`` (reason naming ``STAGE1_MAX_SECONDS``) once the deadline has passed."""
        if self.deadline is not None and self.deadline.expired():
            raise ParseError(source, self.limits.seconds_reason())

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


def decode_text(data: bytes, *, source: str, declared: str | None = None,
                note: Callable[[str], None] | None = None) -> str:
    """Decode bytes to text: BOM, then the declared encoding, then UTF-8, then a detected encoding.

    Args:
        data: the raw file content.
        source: file name, used in the error.
        declared: an encoding named by the document itself (HTML ``<meta charset>``), tried after the BOM.
        note: called with one line when the declared encoding is wrong for the bytes (they do not decode with
            it, or they are valid UTF-8 with non-ASCII characters under another label), and the text was read
            otherwise; and when undeclared single-byte text was read in a guessed encoding that another one
            reads nearly as well (``chunking.parsers.charsets``).

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

    codec = _html_codec(declared)
    if codec is not None and codec != "utf-8":
        text = _decoded(data, codec)
        if text is not None and (data.isascii() or _decoded(data, "utf-8") is None):
            return text
        # Legacy text with non-ASCII characters is almost never valid UTF-8 by chance, so bytes that are valid
        # UTF-8 under a legacy label ("cafÃ©" in cp1252, "cafﾃｩ" in Shift_JIS) are read as UTF-8.
        read_as = "utf-8" if _decoded(data, "utf-8") is not None else "a detected encoding"
        if note is not None:
            note(f"declared charset {declared} does not fit the bytes; read as {read_as}")
    text = _decoded(data, "utf-8")
    if text is not None:
        return text
    text = _mostly_utf8(data)
    if text is not None:
        if note is not None:
            note(f"{_replaced_count(data, text)} bytes that are not valid UTF-8 replaced by U+FFFD")
        return text
    if codec == "utf-8" and note is not None:
        note(f"declared charset {declared} does not fit the bytes; read as a detected encoding")
    text = _detect(data, note)
    if text is None or "\x00" in text:
        raise ParseError(source, _UNDECODABLE)
    return text


_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_REPLACEMENT = "\ufffd"


def _mostly_utf8(data: bytes) -> str | None:
    """*data* as UTF-8 with its few invalid bytes replaced, when it is UTF-8 with damage: at least ten valid
    multi-byte characters per invalid byte. Legacy single-byte text has no valid multi-byte sequences at all
    (an accented letter in cp1252 is one invalid byte), so it is left to detection."""
    text = data.decode("utf-8", errors="replace")
    bad = _replaced_count(data, text)
    good = len(_NON_ASCII.findall(text)) - text.count(_REPLACEMENT)
    return text if 0 < bad and good >= 10 * bad and "\x00" not in text else None


def _replaced_count(data: bytes, text: str) -> int:
    return text.count(_REPLACEMENT) - data.count(_REPLACEMENT.encode())


def _decoded(data: bytes, codec: str) -> str | None:
    """*data* decoded with *codec*, or ``None`` when it does not decode or holds NUL (UTF-16 without a BOM
    is valid UTF-8 full of NULs: detection looks at it instead)."""
    try:
        text = data.decode(codec)
    except (UnicodeDecodeError, LookupError):
        return None
    return None if "\x00" in text else text


def decode_bounded(data: bytes, *, source: str, context: ReadContext, declared: str | None = None) -> str:
    """``decode_text`` within ``MAX_DOCUMENT_CHARS``: bytes that cannot fit (more than 4 bytes, UTF-32's
    width, per allowed character) are refused before decoding, the decoded text is counted after.

    Raises:
        ParseError: the reasons of ``decode_text``, or ``more than N characters of text (MAX_DOCUMENT_CHARS)``.
    """
    limit = context.limits.max_document_chars
    if len(data) > 4 * limit + 4:
        raise ParseError(source, context.limits.document_chars_reason())
    text = decode_text(data, source=source, declared=declared, note=context.note)
    if len(text) > limit:
        raise ParseError(source, context.limits.document_chars_reason())
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


# Single-byte encodings of scripts other than the European ones ``chunking.parsers.charsets`` decides (Greek,
# Hebrew, Arabic, Thai, Turkish, Vietnamese, the KOI8 and DOS Cyrillic pages): when the detector's cleanest
# reading is in one of these, it stands.
_OTHER_SCRIPTS = ("1253", "8859_7", "greek", "737", "869", "1255", "8859_8", "hebrew", "862", "1256", "8859_6",
                  "arabic", "720", "864", "874", "tis", "thai", "1254", "8859_9", "turkish", "857", "1258", "koi8",
                  "866", "855", "mac_cyrillic", "8859_5", "kz1048", "ptcp154")


def _detect(data: bytes, note: Callable[[str], None] | None = None) -> str | None:
    matches = list(from_bytes(data))
    candidates: list = []
    if matches:
        least_chaos = min(m.chaos for m in matches)
        candidates = [m for m in matches if m.chaos <= least_chaos]
        first = candidates[0].encoding.lower()
        if is_multi_byte_encoding(first) or any(mark in first for mark in _OTHER_SCRIPTS):
            return str(candidates[0])
    # European single-byte text: the detector's chaos cannot tell cp1252 French from cp1257 ("crème" →
    # "crčme"), so the reading whose letters a language writes wins (chunking.parsers.charsets).
    choice = choose_single_byte(data)
    if choice is not None:
        if choice.close and note is not None:
            note(f"no charset declared: read as {choice.encoding}, a guess ({choice.close} reads nearly as "
                 "well); declare the charset if the text looks wrong")
        return choice.text
    if not candidates:
        return None
    for match in candidates:  # among equally clean readings of an unknown kind, cp1252 first
        if _PREFERRED_SINGLE_BYTE in match.could_be_from_charset:
            try:
                return data.decode(_PREFERRED_SINGLE_BYTE)
            except UnicodeDecodeError:
                break
    return str(candidates[0])
