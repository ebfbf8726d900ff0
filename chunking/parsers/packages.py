"""ZIP packages (DOCX) measured by inflating them, never by trusting their headers.

A ZIP's central directory *declares* each member's size; a zip bomb can declare 1 KB for a member that inflates
to gigabytes, and ``zipfile`` (CPython 3.11) inflates the whole member before it notices the CRC mismatch. This
scan inflates every member in pieces of at most 1 MiB without keeping the output, and stops as soon as the
package's total passes the budget (``MAX_DECOMPRESSED_BYTES``). On the way it looks at the start of every XML
part for a document type declaration (DTD): Word never writes one, and its entities must never be resolved.

Member layout: PKWARE APPNOTE.TXT §4.3.7 (local file header: 30 bytes, then the name and the extra field, then
the data); only *stored* (0) and *deflated* (8) members occur in Office packages (ECMA-376 Part 2 §8.2).
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from dataclasses import dataclass, field

__all__ = ["PackageScan", "scan_package"]

_PIECE_BYTES = 1 << 20
_LOCAL_HEADER = struct.Struct("<IHHHHHIIIHH")
_LOCAL_SIGNATURE = 0x04034B50
_HEAD_BYTES = 4096  # how much of each XML part is searched for a DTD
_DOCTYPE = b"<!DOCTYPE"


@dataclass
class PackageScan:
    """What the scan found: the inflated bytes (past the budget: stopped there), and the parts with a DTD."""

    inflated_bytes: int = 0
    over_budget: bool = False
    dtd_parts: list[str] = field(default_factory=list)


def scan_package(package: zipfile.ZipFile, data: bytes, budget: int) -> PackageScan:
    """Inflate every member of *package* (opened on *data*) counting bytes, up to *budget* in total.

    Raises:
        zipfile.BadZipFile: a member's local header is not where the central directory says, or a member uses
            a compression method other than stored or deflated.
    """
    scan = PackageScan()
    for info in package.infolist():
        start = _data_start(data, info)
        if info.compress_type == zipfile.ZIP_STORED:
            head = data[start : start + min(info.compress_size, _HEAD_BYTES)]
            scan.inflated_bytes += info.compress_size
        elif info.compress_type == zipfile.ZIP_DEFLATED:
            count, head = _inflate_counting(data, start, start + info.compress_size, budget - scan.inflated_bytes)
            scan.inflated_bytes += count
        else:
            raise zipfile.BadZipFile(f"{info.filename}: compression method {info.compress_type} is not used by Office")
        if _DOCTYPE in head and info.filename.lower().endswith((".xml", ".rels")):
            scan.dtd_parts.append(info.filename)
        if scan.inflated_bytes > budget:
            scan.over_budget = True
            return scan
    return scan


def _data_start(data: bytes, info: zipfile.ZipInfo) -> int:
    offset = info.header_offset
    if offset + _LOCAL_HEADER.size > len(data):
        raise zipfile.BadZipFile(f"{info.filename}: local header past the end of the file")
    fields = _LOCAL_HEADER.unpack_from(data, offset)
    if fields[0] != _LOCAL_SIGNATURE:
        raise zipfile.BadZipFile(f"{info.filename}: no local header where the central directory points")
    name_length, extra_length = fields[9], fields[10]
    return offset + _LOCAL_HEADER.size + name_length + extra_length


def _inflate_counting(data: bytes, start: int, end: int, budget: int) -> tuple[int, bytes]:
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)  # raw deflate, as ZIP stores it
    count = 0
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
                if len(head) < _HEAD_BYTES:
                    head += out[: _HEAD_BYTES - len(head)]
                if count > budget or not inflater.unconsumed_tail:
                    break
                out = inflater.decompress(inflater.unconsumed_tail, _PIECE_BYTES)
            if count > budget:
                break
    except zlib.error as error:
        raise zipfile.BadZipFile(f"damaged deflate data ({error})") from None
    return count, head
