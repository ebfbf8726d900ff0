"""A PDF's compressed streams decoded with a budget, before PDFium sees the file.

PDFium decodes a page's content stream whole, in memory, when it reads the page's text, so a 1 MB file whose
content stream inflates to 1 GB (a *flate bomb*; LZW reaches 1,300:1 and RunLength 64:1 too) costs a gigabyte
or two of memory at once. This scan finds every ``stream … endstream`` whose ``/Filter`` names a filter that
expands (``chunking.parsers.pdf.filters``: Flate, LZW, RunLength, ASCIIHex, ASCII85, alone or chained), decodes
it in pieces of at most 1 MiB without keeping the output, and stops as soon as the document's total passes the
budget (``MAX_DECOMPRESSED_BYTES``). Images (``/Subtype /Image``) are skipped: text extraction never decodes
them. Streams of encrypted files do not decode (their bytes are ciphertext) and count for little; PDFium
reports those files as encrypted anyway.

The stream syntax is ISO 32000-1 §7.3.8 (a dictionary, ``stream``, an end-of-line, the data, ``endstream``).
A chain that starts with Flate is fed until the zlib stream ends (``/Length`` is not trusted); other chains end
at ``/Length`` (direct, or an indirect integer object) when ``endstream`` follows it there, else at the first
``endstream``, else at their end-of-data marker.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from chunking.parsers.pdf.filters import DECODERS, PIECE_BYTES

__all__ = ["inflated_bytes"]

# The dictionary of an indirect stream object: "N G obj << … >> stream" (dictionaries nest, so the dictionary
# is everything between "obj" and "stream"; bounded so that a file full of "obj" costs linear time).
_STREAM_START = re.compile(rb"\bobj\b(.{0,8192}?)\bstream(?:\r\n|\n|\r)", re.DOTALL)
_FILTER = re.compile(rb"/Filter\s*(\[[^\]]{0,512}\]|/[^\s/\[\]<>()]+)")
_NAME = re.compile(rb"/([^\s/\[\]<>()]+)")
_LENGTH = re.compile(rb"/Length\s+(\d{1,12})(?:\s+(\d{1,6})\s+R)?")
_INTEGER_OBJECT = re.compile(rb"\b(\d{1,10})\s+(\d{1,6})\s+obj\s*(\d{1,12})\s*endobj")
_ENDSTREAM = re.compile(rb"\s*endstream")
_IMAGE = re.compile(rb"/Subtype\s*/Image\b")
_FIRST_PIECE_BYTES = 4096


def inflated_bytes(data: bytes, budget: int) -> int:
    """Bytes the expanding non-image streams of PDF *data* decode to, counting stops past *budget*.

    Returns:
        The total, or a number greater than *budget* as soon as the total passes it. Memory: a few MiB beyond
        *data*, whatever the streams hold. Time: linear in the bytes decoded (at most *budget* of them), about
        0.3 s per 100 MB of Flate output (LZW and RunLength are decoded in Python, about 10 times slower).
    """
    total = 0
    integers: dict[tuple[int, int], int] = {}  # indirect /Length values, found once when first needed
    view = memoryview(data)  # slices without copies: a file of 100,000 small streams stays linear
    for match in _STREAM_START.finditer(data):
        dictionary = match.group(1)
        chain = _filters(dictionary)
        if not chain or _IMAGE.search(dictionary):
            continue
        pieces: Iterator = _raw_pieces(view, match.end(), _end_of(data, dictionary, match.end(), chain, integers))
        for name in chain:
            pieces = DECODERS[name](pieces, dictionary)
        for piece in pieces:
            total += len(piece)
            if total > budget:
                return total
    return total


def _filters(dictionary: bytes) -> list[bytes]:
    """The stream's filter names in order, up to the last one that expands (``[]`` when none does)."""
    found = _FILTER.search(dictionary)
    if found is None:
        return []
    names = _NAME.findall(found.group(1))
    known = [i for i, name in enumerate(names) if name in DECODERS]
    if not known:
        return []
    # A filter we do not decode (an image codec) before one we do: what follows it cannot be measured.
    return names[: known[-1] + 1] if all(name in DECODERS for name in names[: known[-1] + 1]) else []


def _end_of(data: bytes, dictionary: bytes, start: int, chain: list[bytes], integers: dict) -> int:
    if chain[0] in (b"FlateDecode", b"Fl"):
        return len(data)
    length = _LENGTH.search(dictionary)
    if length is not None:
        value: int | None = int(length.group(1))
        if length.group(2) is not None:
            if not integers:
                integers.update(((int(m[1]), int(m[2])), int(m[3])) for m in _INTEGER_OBJECT.finditer(data))
                integers.setdefault((-1, -1), 0)  # searched, even if nothing was found
            value = integers.get((int(length.group(1)), int(length.group(2))))
        if value is not None and _ENDSTREAM.match(data, start + value):
            return start + value
    end = data.find(b"endstream", start)
    return len(data) if end < 0 else end


def _raw_pieces(view: memoryview, start: int, end: int) -> Iterator[memoryview]:
    # Most streams are small: the data after one is not fed to a decoder (it would be copied).
    step = _FIRST_PIECE_BYTES
    position = start
    while position < end:
        piece = view[position : min(end, position + step)]
        position += len(piece)
        step = min(2 * step, PIECE_BYTES)
        yield piece
