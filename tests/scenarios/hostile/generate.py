"""Hostile documents written by the tests: hand-made PDFs (so streams and page counts are ours to choose) and
ZIP packages whose headers can lie about their members' sizes."""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterable

import docx

_MiB = 1024 * 1024


# ----------------------------------------------------------------------------------------------------- PDF


def pdf(objects: list[bytes]) -> bytes:
    """A PDF of *objects* (bodies of objects 1…n; object 1 the catalog) with a correct cross-reference table."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def stream(data: bytes, extra: bytes = b"") -> bytes:
    return b"<< /Length %d %s>>\nstream\n" % (len(data), extra) + data + b"\nendstream"


def text_line(text: bytes) -> bytes:
    return b"BT /F1 12 Tf 72 712 Td (" + text + b") Tj ET\n"


def text_pdf(contents: list[bytes], *, compress: bool = True) -> bytes:
    """One page per content stream of *contents*, Helvetica as /F1."""
    count = len(contents)
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>",
               b"<< /Type /Pages /Kids [" + b" ".join(b"%d 0 R" % (4 + 2 * i) for i in range(count))
               + b"] /Count %d >>" % count,
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    for i, content in enumerate(contents):
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> "
                       b">> /Contents %d 0 R >>" % (5 + 2 * i))
        objects.append(stream(zlib.compress(content, 9), b"/Filter /FlateDecode ") if compress else stream(content))
    return pdf(objects)


def flate_bomb_pdf(inflated_mib: int) -> bytes:
    """One page whose content stream is a text line and then *inflated_mib* MiB of spaces (about 1 KB of
    deflate per MiB)."""
    compressor = zlib.compressobj(9)
    parts = [compressor.compress(text_line(b"Hello bomb"))]
    spaces = b" " * _MiB
    parts.extend(compressor.compress(spaces) for _ in range(inflated_mib))
    parts.append(compressor.flush())
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
               b"/Contents 5 0 R >>",
               stream(b"".join(parts), b"/Filter /FlateDecode ")]
    return pdf(objects)


# ---------------------------------------------------------------------------------------------------- DOCX

DOCUMENT_HEAD = (b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:document xmlns:w='
                 b'"http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>')
DOCUMENT_TAIL = b"</w:body></w:document>"
_PARAGRAPH = b"<w:p><w:r><w:t>" + b"lorem ipsum dolor sit amet " * 20 + b"</w:t></w:r></w:p>"


def small_docx(text: str = "Hello from a small document.") -> bytes:
    document = docx.Document()
    document.add_paragraph(text)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def paragraphs(total_bytes: int, paragraph: bytes = _PARAGRAPH) -> Callable[[], Iterable[bytes]]:
    """A ``word/document.xml`` of about *total_bytes*, produced in 1,000-paragraph pieces."""

    def pieces() -> Iterable[bytes]:
        yield DOCUMENT_HEAD
        block = paragraph * 1000
        for _ in range(max(1, total_bytes // len(block))):
            yield block
        yield DOCUMENT_TAIL

    return pieces


def package(members: list[tuple[str, bytes | Callable[[], Iterable[bytes]], int | None]]) -> bytes:
    """A ZIP written by hand: each member ``(name, data or a function giving its pieces, declared size)``,
    deflated; a declared size that is not ``None`` is written instead of the real one (a lying header)."""
    out, central = bytearray(), bytearray()
    for name, content, declared in members:
        name_bytes = name.encode()
        compressor = zlib.compressobj(6, zlib.DEFLATED, -15)
        crc = size = 0
        compressed = bytearray()
        for piece in (content() if callable(content) else [content]):
            crc = zlib.crc32(piece, crc)
            size += len(piece)
            compressed += compressor.compress(piece)
        compressed += compressor.flush()
        stated = size if declared is None else declared
        offset = len(out)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0, crc, len(compressed), stated,
                           len(name_bytes), 0) + name_bytes + compressed
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 8, 0, 0, crc, len(compressed), stated,
                               len(name_bytes), 0, 0, 0, 0, 0, offset) + name_bytes
    directory = len(out)
    out += central + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(central),
                                 directory, 0)
    return bytes(out)


def docx_with(document_xml: bytes | Callable[[], Iterable[bytes]], *, declared: int | None = None,
              replace: dict[str, bytes] | None = None) -> bytes:
    """A real python-docx package with ``word/document.xml`` replaced (its size declared as *declared*), and
    any other member replaced by *replace*."""
    source = zipfile.ZipFile(io.BytesIO(small_docx()))
    members = []
    for info in source.infolist():
        if info.filename == "word/document.xml":
            members.append((info.filename, document_xml, declared))
        else:
            members.append((info.filename, (replace or {}).get(info.filename, source.read(info)), None))
    return package(members)


def lzw_bytes(codes: Iterable[int], early_change: int = 1) -> bytes:
    """*codes* (a ``256`` clear code first) packed as a PDF LZW stream (ISO 32000-1 §7.4.4): 9 to 12 bits per
    code, most significant bit first, the width growing as the decoder's table does."""
    bits = length = 0
    out = bytearray()
    width, next_code, first = 9, 258, True
    for code in codes:
        bits = (bits << width) | code
        length += width
        while length >= 8:
            length -= 8
            out.append((bits >> length) & 0xFF)
        bits &= (1 << length) - 1
        if code == 256:
            width, next_code, first = 9, 258, True
            continue
        if not first and next_code + early_change < 4096:
            next_code += 1  # the decoder adds an entry for every code but the first after a clear
            if next_code + early_change >= 1 << width and width < 12:
                width += 1
        first = False
    if length:
        out.append((bits << (8 - length)) & 0xFF)
    return bytes(out)


def lzw_literal(data: bytes) -> bytes:
    """*data* as an LZW stream of one code per byte (valid, if not compressed), ended by the EOD code 257."""
    return lzw_bytes([256, *data, 257])


def lzw_bomb(cycles: int) -> bytes:
    """An LZW stream of spaces in which every code is the previous one plus a space (1 + 2 + … + 3,837 spaces,
    about 7.4 MB from 5.8 KB, per cycle between clear codes)."""
    codes: list[int] = []
    for _ in range(cycles):
        codes += [256, 32, *range(258, 4094)]
    return lzw_bytes([*codes, 257])


def run_length(data: bytes) -> bytes:
    """*data* RunLength-encoded (ISO 32000-1 §7.4.5), runs of up to 128 equal bytes, then the EOD byte 128."""
    out = bytearray()
    i = 0
    while i < len(data):
        run = 1
        while i + run < len(data) and run < 128 and data[i + run] == data[i]:
            run += 1
        if run > 1:
            out += bytes([257 - run, data[i]])
        else:
            out += bytes([0, data[i]])
        i += run
    return bytes(out + b"\x80")


def filtered_pdf(content: bytes, filters: bytes) -> bytes:
    """One page whose content stream is *content*, already encoded, with ``/Filter`` *filters*."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
               b"/Contents 5 0 R >>",
               stream(content, b"/Filter " + filters + b" ")]
    return pdf(objects)


def run_length_bomb(mib: int) -> bytes:
    """RunLength data of 2-byte runs of 128 spaces: *mib* MiB from 16 KiB per MiB, then EOD."""
    return b"\x81 " * (mib * 8192) + b"\x80"
