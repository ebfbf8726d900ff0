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
