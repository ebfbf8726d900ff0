"""The PDF stream filters that can expand their input, as decoders over pieces of bounded size.

Each decoder takes an iterable of byte pieces and yields its output in pieces of at most ``PIECE_BYTES``
(``1 MiB``), so a chain of them (``/Filter [/ASCII85Decode /FlateDecode]``) holds a couple of pieces at a time
whatever the stream expands to; ``pdf_streams`` only counts what comes out of the last one. Algorithms from
ISO 32000-1 §7.4: ASCIIHexDecode (§7.4.2), ASCII85Decode (§7.4.3), LZWDecode (§7.4.4, with ``/EarlyChange``),
FlateDecode (§7.4.4, RFC 1950), RunLengthDecode (§7.4.5). Damaged data ends a decoder quietly: PDFium decides
what the file is; what decoded so far counts. Filters that never expand much or that text extraction never
runs (image codecs: DCT, JPX, CCITTFax, JBIG2) are not here.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Iterator

__all__ = ["DECODERS", "PIECE_BYTES"]

PIECE_BYTES = 1 << 20  # the most output one decoder yields (and its caller holds) at once

_Pieces = Iterable[bytes | memoryview]


def flate(pieces: _Pieces, _params: bytes = b"") -> Iterator[bytes]:
    """zlib-wrapped deflate; stops at the end of the zlib stream (``/Length`` is not needed)."""
    inflater = zlib.decompressobj()
    try:
        for piece in pieces:
            out = inflater.decompress(piece, PIECE_BYTES)
            while True:
                if out:
                    yield out
                if inflater.eof or not inflater.unconsumed_tail:  # past the end, the tail is the file's rest
                    break
                out = inflater.decompress(inflater.unconsumed_tail, PIECE_BYTES)
            if inflater.eof:
                return
    except zlib.error:
        return


def run_length(pieces: _Pieces, _params: bytes = b"") -> Iterator[bytes]:
    """A length byte L then L + 1 literal bytes (L < 128), or one byte repeated 257 - L times (L > 128);
    128 ends the data."""
    out = bytearray()
    pending = b""
    for piece in pieces:
        buffer = pending + bytes(piece)
        i, end = 0, len(buffer)
        while i < end:
            length = buffer[i]
            if length == 128:
                if out:
                    yield bytes(out)
                return
            need = length + 2 if length < 128 else 2
            if i + need > end:
                break
            if length < 128:
                out += buffer[i + 1 : i + need]
            else:
                out += buffer[i + 1 : i + 2] * (257 - length)
            i += need
            if len(out) >= PIECE_BYTES:
                yield bytes(out)
                out.clear()
        pending = buffer[i:]
    if out:
        yield bytes(out)


def lzw(pieces: _Pieces, params: bytes = b"") -> Iterator[bytes]:
    """Codes of 9 to 12 bits, most significant bit first; 256 clears the table, 257 ends the data. With
    ``/EarlyChange 1`` (the default) the code width grows one code early."""
    early = 0 if b"/EarlyChange 0" in params else 1
    table: list[bytes] = [bytes([i]) for i in range(256)] + [b"", b""]
    width, bits, held = 9, 0, 0
    previous: bytes | None = None
    out: list[bytes] = []
    size = 0
    for piece in pieces:
        for byte in bytes(piece):
            bits = (bits << 8) | byte
            held += 8
            while held >= width:
                held -= width
                code = (bits >> held) & ((1 << width) - 1)
                bits &= (1 << held) - 1
                if code == 256:
                    del table[258:]
                    width, previous = 9, None
                    continue
                if code == 257:
                    if out:
                        yield b"".join(out)
                    return
                if code < len(table):
                    entry = table[code]
                elif code == len(table) and previous is not None:
                    entry = previous + previous[:1]
                else:
                    return  # a code not yet defined: damaged
                if previous is not None and len(table) + early < 4096:
                    table.append(previous + entry[:1])
                    if len(table) + early >= 1 << width and width < 12:
                        width += 1
                previous = entry
                out.append(entry)
                size += len(entry)
                if size >= PIECE_BYTES:
                    yield b"".join(out)
                    out, size = [], 0
    if out:
        yield b"".join(out)


def ascii_hex(pieces: _Pieces, _params: bytes = b"") -> Iterator[bytes]:
    """Pairs of hexadecimal digits, white space ignored, ``>`` ends the data (an odd last digit is followed
    by 0)."""
    odd = b""
    for piece in pieces:
        chunk = bytes(piece)
        stop = chunk.find(b">")
        digits = odd + bytes(c for c in (chunk if stop < 0 else chunk[:stop]) if c in _HEX_DIGITS)
        if stop >= 0:
            if len(digits) % 2:
                digits += b"0"
            yield bytes.fromhex(digits.decode())
            return
        odd = digits[len(digits) & ~1 :]
        yield bytes.fromhex(digits[: len(digits) & ~1].decode())


_HEX_DIGITS = frozenset(b"0123456789abcdefABCDEF")


def ascii85(pieces: _Pieces, _params: bytes = b"") -> Iterator[bytes]:
    """Groups of five characters ``!``-``u`` for four bytes, ``z`` for four zero bytes, ``~>`` ends the data."""
    group: list[int] = []
    for piece in pieces:
        out = bytearray()
        for c in bytes(piece):
            if c == 0x7E:  # "~" of "~>"
                yield bytes(out) + _ascii85_tail(group)
                return
            if c == 0x7A and not group:  # "z"
                out += b"\0\0\0\0"
            elif 0x21 <= c <= 0x75:
                group.append(c - 33)
                if len(group) == 5:
                    value = 0
                    for digit in group:
                        value = value * 85 + digit
                    out += (value & 0xFFFFFFFF).to_bytes(4, "big")
                    group.clear()
        yield bytes(out)
    yield _ascii85_tail(group)


def _ascii85_tail(group: list[int]) -> bytes:
    if len(group) < 2:
        return b""
    value = 0
    for digit in group + [84] * (5 - len(group)):
        value = value * 85 + digit
    return (value & 0xFFFFFFFF).to_bytes(4, "big")[: len(group) - 1]


#: Filter name (and its abbreviation) → decoder of pieces, given the stream dictionary for its parameters.
DECODERS: dict[bytes, Callable[[_Pieces, bytes], Iterator[bytes]]] = {
    b"FlateDecode": flate, b"Fl": flate,
    b"LZWDecode": lzw, b"LZW": lzw,
    b"RunLengthDecode": run_length, b"RL": run_length,
    b"ASCIIHexDecode": ascii_hex, b"AHx": ascii_hex,
    b"ASCII85Decode": ascii85, b"A85": ascii85,
}
