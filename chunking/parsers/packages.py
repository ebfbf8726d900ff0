"""ZIP packages (DOCX) measured by inflating them, never by trusting their headers.

A ZIP's central directory *declares* each member's size; a zip bomb can declare 1 KB for a member that inflates
to gigabytes, and ``zipfile`` (CPython 3.11) inflates the whole member before it notices the CRC mismatch. This
scan inflates every member in pieces of at most 1 MiB without keeping the output, and stops as soon as the
package's total passes the budget (``MAX_DECOMPRESSED_BYTES``). On the way it looks at the start of every XML
part for a document type declaration (DTD): Word never writes one, and its entities must never be resolved.

Within the budget, it also makes sure that ``zipfile`` can read every member later, so that a damaged Office
package is refused here with the member's name instead of failing inside a library (which reads every part when it
opens the package): the member's local header opens (its signature, its name equal to the central directory's, no
unsupported feature flag), its data lies inside the file, inflates without error to the size the central
directory declares, and has the declared CRC-32. Without ``strict`` (EPUB, OpenDocument: their parsers read only
the members they need, and name a damaged one when they read it) a damaged member only ends its own count, so a
broken thumbnail does not cost the text. A member encrypted with ZIP's own encryption (general purpose bit 0) is
only counted: the callers refuse it by name.
``open_package`` opens the central directory and turns every way ``zipfile`` fails on a damaged one
(``NotImplementedError`` for a version needed it does not know, ``UnicodeDecodeError`` for a name flagged UTF-8
that is not, ``ValueError`` for an offset before the file's start) into ``zipfile.BadZipFile``.

Member layout: PKWARE APPNOTE.TXT §4.3.7 (local file header: 30 bytes, then the name and the extra field, then
the data); only *stored* (0) and *deflated* (8) members occur in Office packages (ECMA-376 Part 2 §8.2).
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from dataclasses import dataclass, field

__all__ = ["DamagedMember", "PackageScan", "ZIP_FAILURES", "member_failure", "open_package", "scan_package"]

_PIECE_BYTES = 1 << 20
_LOCAL_HEADER = struct.Struct("<IHHHHHIIIHH")
_LOCAL_SIGNATURE = 0x04034B50
_HEAD_BYTES = 4096  # how much of each XML part is searched for a DTD
_DOCTYPE = b"<!DOCTYPE"
_ENCRYPTED = 0x1  # general purpose bit flag 0 (PKWARE APPNOTE.TXT §4.4.4): the member is encrypted
#: What ``zipfile`` raises on a damaged central directory or member (``UnicodeDecodeError``, for a name flagged
#: UTF-8 that is not, is a ``ValueError``).
ZIP_FAILURES = (zipfile.BadZipFile, NotImplementedError, ValueError, OSError, EOFError, struct.error, zlib.error)


class DamagedMember(zipfile.BadZipFile):
    """A member of the package that ``zipfile`` could not read; ``str()`` says which and why.

    Attributes:
        member: its name in the central directory; detail: what is wrong (``"CRC-32 is 0x1234abcd, the
            central directory declares 0x00000000"``).
    """

    def __init__(self, member: str, detail: str) -> None:
        super().__init__(f"damaged ZIP member {member}: {detail}")
        self.member = member
        self.detail = detail


def open_package(data: bytes, cls: type[zipfile.ZipFile] = zipfile.ZipFile) -> zipfile.ZipFile:
    """*data* opened with ``zipfile`` (as a *cls*, ``zipfile.ZipFile`` or a subclass), its central directory read.

    Raises:
        zipfile.BadZipFile: not a ZIP, or a damaged central directory (``zipfile``'s message, or ``a member
            needs a ZIP version this reader does not know (zip file version 10.0)``, ``a member name flagged
            UTF-8 is not UTF-8``, ``damaged central directory (…)``).
    """
    try:
        return cls(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise
    except NotImplementedError as error:
        raise zipfile.BadZipFile(f"a member needs a ZIP version this reader does not know ({error})") from None
    except UnicodeDecodeError:
        raise zipfile.BadZipFile("a member name flagged UTF-8 is not UTF-8") from None
    except ZIP_FAILURES as error:
        raise zipfile.BadZipFile(f"damaged central directory ({type(error).__name__}: {error})") from None


@dataclass
class PackageScan:
    """What the scan found: the inflated bytes (past the budget: stopped there), the parts with a DTD, the members
    encrypted with ZIP's own encryption (the callers refuse the package for the first), and (a scan that is not
    strict) the damaged members, each with what is wrong with it."""

    inflated_bytes: int = 0
    over_budget: bool = False
    dtd_parts: list[str] = field(default_factory=list)
    damaged: dict[str, str] = field(default_factory=dict)
    encrypted: list[str] = field(default_factory=list)


def scan_package(package: zipfile.ZipFile, data: bytes, budget: int, *, strict: bool = True) -> PackageScan:
    """Inflate every member of *package* (opened on *data*) counting bytes, up to *budget* in total, and check
    that ``zipfile`` can read each (module docstring).

    Args:
        strict: refuse the package for a damaged member; ``False``: note it in ``PackageScan.damaged`` and go on.

    Raises:
        DamagedMember: (*strict*) a member whose local header, data or CRC-32 is damaged (``damaged ZIP member
            content.xml: …``).
        zipfile.BadZipFile: a member uses a compression method other than stored or deflated.
    """
    scan = PackageScan()
    for info in package.infolist():
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise zipfile.BadZipFile(f"{info.filename}: compression method {info.compress_type} is not used by Office")
        count, head, damage = _scan_member(package, info, data, budget - scan.inflated_bytes)
        if damage and strict:
            raise DamagedMember(info.filename, damage)
        if damage:
            scan.damaged[info.filename] = damage
        scan.inflated_bytes += count
        if info.flag_bits & _ENCRYPTED:
            scan.encrypted.append(info.filename)
        if _DOCTYPE in head and info.filename.lower().endswith((".xml", ".rels")):
            scan.dtd_parts.append(info.filename)
        if scan.inflated_bytes > budget:
            scan.over_budget = True
            return scan
    return scan


def _scan_member(package: zipfile.ZipFile, info: zipfile.ZipInfo, data: bytes, budget: int) -> tuple[int, bytes, str]:
    """The bytes the member inflates to (stopped once past *budget*, or where its deflate data breaks: a reader
    inflates no further either), its first ``_HEAD_BYTES``, and what is damaged in it (``""``: nothing; checked as
    the module docstring says). A member whose data lies outside the file counts nothing: reading it fails at once."""
    try:
        start = _data_start(data, info)
    except DamagedMember as error:
        return 0, b"", error.detail
    encrypted = bool(info.flag_bits & _ENCRYPTED)
    damage = "" if encrypted else _local_header_damage(package, info)
    if info.compress_type == zipfile.ZIP_STORED:
        head = data[start : start + min(info.compress_size, _HEAD_BYTES)]
        count, crc = info.compress_size, zlib.crc32(memoryview(data)[start : start + info.compress_size])
    else:
        count, head, crc, broken = _inflate_counting(data, start, start + info.compress_size, budget)
        damage = damage or broken
    if not damage and not encrypted and count <= budget:
        if count != info.file_size:
            damage = f"holds {count} bytes, the central directory declares {info.file_size}"
        elif crc != info.CRC:
            damage = f"CRC-32 is {crc:#010x}, the central directory declares {info.CRC:#010x}"
    return count, head, damage


def _data_start(data: bytes, info: zipfile.ZipInfo) -> int:
    offset = info.header_offset
    if offset < 0 or offset + _LOCAL_HEADER.size > len(data):
        raise DamagedMember(info.filename, f"its local header offset {offset} lies outside the file")
    fields = _LOCAL_HEADER.unpack_from(data, offset)
    if fields[0] != _LOCAL_SIGNATURE:
        raise DamagedMember(info.filename, "no local header where the central directory points")
    name_length, extra_length = fields[9], fields[10]
    start = offset + _LOCAL_HEADER.size + name_length + extra_length
    if start + info.compress_size > len(data):
        raise DamagedMember(info.filename, f"its {info.compress_size} bytes of data run past the end of the file")
    return start


def _local_header_damage(package: zipfile.ZipFile, info: zipfile.ZipInfo) -> str:
    """What is wrong when the member is opened as ``zipfile`` will (its local header read and compared with the
    central directory); ``""``: nothing."""
    try:
        package.open(info).close()
    except ZIP_FAILURES as error:
        return member_failure(error)[:200]
    return ""


def member_failure(error: BaseException) -> str:
    """What is wrong with a member that ``zipfile`` failed to open or read with *error* (one of ``ZIP_FAILURES``),
    in words: ``zipfile``'s own message, but for a ``UnicodeDecodeError`` (its local header's name is flagged
    UTF-8 and is not), whose message names only the bytes."""
    if isinstance(error, UnicodeDecodeError):
        return "its local header's name is flagged UTF-8 but is not UTF-8"
    return str(error)


def _inflate_counting(data: bytes, start: int, end: int, budget: int) -> tuple[int, bytes, int, str]:
    """The inflated size of the raw deflate data ``data[start:end]`` (stopped once past *budget*, or where the
    data is damaged), its first ``_HEAD_BYTES`` bytes, its CRC-32, and what is damaged (``""``: nothing)."""
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)  # raw deflate, as ZIP stores it
    count = 0
    crc = 0
    head = b""
    position = start
    view = memoryview(data)  # slices without copies
    try:
        while position < end and not inflater.eof:
            piece = view[position : min(end, position + _PIECE_BYTES)]
            position += len(piece)
            out = inflater.decompress(piece, _PIECE_BYTES)
            while True:
                count += len(out)
                crc = zlib.crc32(out, crc)
                if len(head) < _HEAD_BYTES:
                    head += out[: _HEAD_BYTES - len(head)]
                if count > budget or not inflater.unconsumed_tail:
                    break
                out = inflater.decompress(inflater.unconsumed_tail, _PIECE_BYTES)
            if count > budget:
                break
    except zlib.error as error:
        return count, head, crc, f"damaged deflate data ({error})"
    return count, head, crc, ""
