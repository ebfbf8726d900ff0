"""A PDF's compressed streams inflated with a budget, before PDFium sees the file.

PDFium inflates a page's content stream whole, in memory, when it reads the page's text, so a 1 MB file whose
content stream inflates to 1 GB (a *flate bomb*) costs a gigabyte or two of memory at once. This scan finds
every ``stream … endstream`` whose dictionary names ``/FlateDecode`` (or its abbreviation ``/Fl``), inflates it
in pieces of at most 1 MiB without keeping the output, and stops as soon as the document's total passes the
budget (``MAX_DECOMPRESSED_BYTES``). Images (``/Subtype /Image``) are skipped: text extraction never decodes
them. Streams of encrypted files do not inflate (their bytes are ciphertext) and count for nothing; PDFium
reports those files as encrypted anyway.

The stream syntax is ISO 32000-1 §7.3.8 (a dictionary, ``stream``, an end-of-line, the data, ``endstream``);
``/Length`` is not trusted: the zlib stream ends where it ends.
"""

from __future__ import annotations

import re
import zlib

__all__ = ["inflated_bytes"]

# The dictionary of an indirect stream object: "N G obj << … >> stream" (dictionaries nest, so the dictionary
# is everything between "obj" and "stream"; bounded so that a file full of "obj" costs linear time).
_STREAM_START = re.compile(rb"\bobj\b(.{0,8192}?)\bstream(?:\r\n|\n|\r)", re.DOTALL)
_FLATE = re.compile(rb"/(?:FlateDecode|Fl)\b")
_IMAGE = re.compile(rb"/Subtype\s*/Image\b")
_PIECE_BYTES = 1 << 20  # compressed input per step, and the most inflated output held at once
_FIRST_PIECE_BYTES = 4096


def inflated_bytes(data: bytes, budget: int) -> int:
    """Bytes the Flate-compressed non-image streams of PDF *data* inflate to, counting stops past *budget*.

    Returns:
        The total, or a number greater than *budget* as soon as the total passes it. Memory: at most about
        ``2 * 1 MiB`` beyond *data*, whatever the streams hold. Time: linear in the bytes inflated (at most
        *budget* of them), about 0.3 s per 100 MB.
    """
    total = 0
    for match in _STREAM_START.finditer(data):
        dictionary = match.group(1)
        if not _FLATE.search(dictionary) or _IMAGE.search(dictionary):
            continue
        total += _inflate_counting(data, match.end(), budget - total)
        if total > budget:
            return total
    return total


def _inflate_counting(data: bytes, start: int, budget: int) -> int:
    inflater = zlib.decompressobj()
    count = 0
    position = start
    end = len(data)
    view = memoryview(data)  # slices without copies: a file of 100,000 small streams stays linear
    step = _FIRST_PIECE_BYTES  # most streams are small: what follows one is not fed to zlib (it would be copied)
    try:
        while position < end and not inflater.eof:
            piece = view[position : position + step]
            step = min(2 * step, _PIECE_BYTES)
            position += len(piece)
            out = inflater.decompress(piece, _PIECE_BYTES)
            count += len(out)
            while inflater.unconsumed_tail and count <= budget:
                out = inflater.decompress(inflater.unconsumed_tail, _PIECE_BYTES)
                count += len(out)
            if count > budget:
                return count
    except zlib.error:
        pass  # damaged or encrypted data: PDFium decides what it is; what inflated so far counts
    return count
