"""Small documents of the formats without a writer among the dependencies (EPUB, OpenDocument, RTF), made by the
tests from their specifications' minimal layouts, and .xls workbooks made with xlwt."""

from __future__ import annotations

import io
import struct
import zipfile

ODF_NS = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
    'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
    'xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0" '
    'xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" '
    'xmlns:dc="http://purl.org/dc/elements/1.1/" '
    'xmlns:meta="urn:oasis:names:tc:opendocument:xmlns:meta:1.0"'
)
_MIMETYPES = {"text": "application/vnd.oasis.opendocument.text",
              "spreadsheet": "application/vnd.oasis.opendocument.spreadsheet",
              "presentation": "application/vnd.oasis.opendocument.presentation"}


def zip_package(members: dict[str, bytes | str], *, stored_first: str | None = None) -> bytes:
    """A ZIP of *members* (deflated; *stored_first* stored and first, as OCF and ODF want their ``mimetype``)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as package:
        if stored_first is not None:
            package.writestr(stored_first, members[stored_first], compress_type=zipfile.ZIP_STORED)
        for name, data in members.items():
            if name != stored_first:
                package.writestr(name, data)
    return buffer.getvalue()


def odf(kind: str, body: str, *, title: str = "", manifest_extra: str = "") -> bytes:
    """An OpenDocument package whose ``office:body`` holds ``<office:{kind}>{body}</office:{kind}>``."""
    content = (f'<?xml version="1.0" encoding="UTF-8"?>\n<office:document-content {ODF_NS} office:version="1.3">'
               f"<office:body><office:{kind}>{body}</office:{kind}></office:body></office:document-content>")
    meta = (f'<?xml version="1.0" encoding="UTF-8"?>\n<office:document-meta {ODF_NS}><office:meta>'
            f"<dc:title>{title}</dc:title></office:meta></office:document-meta>")
    mimetype = _MIMETYPES.get(kind, "application/vnd.oasis.opendocument.chart")
    manifest = ('<?xml version="1.0" encoding="UTF-8"?>\n<manifest:manifest xmlns:manifest='
                '"urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.3">'
                f'<manifest:file-entry manifest:full-path="/" manifest:media-type="{mimetype}"/>'
                f'<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml">{manifest_extra}'
                "</manifest:file-entry></manifest:manifest>")
    return zip_package({"mimetype": mimetype, "content.xml": content, "meta.xml": meta,
                        "META-INF/manifest.xml": manifest}, stored_first="mimetype")


def xhtml(title: str, body: str) -> str:
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE html>\n<html xmlns="http://www.w3.org/1999/xhtml">'
            f"<head><title>{title}</title></head><body>{body}</body></html>")


def epub(chapters: list[tuple[str, str]], *, title: str = "A Book", extra: dict[str, bytes | str] | None = None,
         spine_extra: str = "", manifest_extra: str = "", hrefs: dict[str, str] | None = None,
         idrefs: dict[str, str] | None = None) -> bytes:
    """An EPUB 3 with one XHTML chapter per ``(file name, body)`` under ``OEBPS/text/``, in spine order; *hrefs*
    gives a chapter's manifest href another value than its name, *idrefs* an itemref another idref."""
    hrefs, idrefs = hrefs or {}, idrefs or {}
    items = "".join(f'<item id="c{i}" href="text/{hrefs.get(name, name)}" media-type="application/xhtml+xml"/>'
                    for i, (name, _) in enumerate(chapters))
    refs = "".join(f'<itemref idref="{idrefs.get(f"c{i}", f"c{i}")}"/>' for i in range(len(chapters)))
    opf = ('<?xml version="1.0" encoding="UTF-8"?>\n<package xmlns="http://www.idpf.org/2007/opf" version="3.0" '
           'unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
           f'<dc:identifier id="id">urn:uuid:0</dc:identifier><dc:title>{title}</dc:title><dc:language>en</dc:language>'
           f'</metadata><manifest>{items}{manifest_extra}<item id="css" href="style.css" media-type="text/css"/>'
           f"</manifest><spine>{refs}{spine_extra}</spine></package>")
    container = ('<?xml version="1.0"?>\n<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:'
                 'container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-'
                 'package+xml"/></rootfiles></container>')
    members: dict[str, bytes | str] = {"mimetype": "application/epub+zip", "META-INF/container.xml": container,
                                       "OEBPS/content.opf": opf, "OEBPS/style.css": "p { margin: 0 }"}
    for name, body in chapters:
        members[f"OEBPS/text/{name}"] = xhtml(name, body)
    members.update(extra or {})
    return zip_package(members, stored_first="mimetype")


def rtf(body: str, *, title: str = "") -> bytes:
    """An RTF document: a font table, an ``{\\info}`` group with *title*, then *body* (RTF already)."""
    info = f"{{\\info{{\\title {title}}}}}" if title else ""
    head = "{\\rtf1\\ansi\\ansicpg1252\\deff0{\\fonttbl{\\f0\\fswiss Helvetica;}}"
    return (head + info + body + "}").encode("latin-1")


def xls(sheets: dict[str, list[list[object]]], *, formulas: dict[tuple[str, int, int], str] | None = None) -> bytes:
    """A BIFF8 workbook written by xlwt; *formulas* maps ``(sheet, row, column)`` to a formula (xlwt stores no
    cached value: its cells read as empty)."""
    import xlwt

    book = xlwt.Workbook()
    date_style = xlwt.easyxf(num_format_str="yyyy-mm-dd")
    for name, rows in sheets.items():
        sheet = book.add_sheet(name)
        for r, row in enumerate(rows):
            for c, value in enumerate(row):
                if value is None:
                    continue
                import datetime

                if isinstance(value, datetime.date):
                    sheet.write(r, c, value, date_style)
                else:
                    sheet.write(r, c, value)
        for (sheet_name, r, c), formula in (formulas or {}).items():
            if sheet_name == name:
                sheet.write(r, c, xlwt.Formula(formula))
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def flag_encrypted(data: bytes, name: str) -> bytes:
    """*data* (a ZIP) with member *name* flagged as encrypted (general purpose bit 0) in its local header and its
    central directory entry (PKWARE APPNOTE.TXT §4.3.7, §4.3.12); its bytes stay as they are."""
    out = bytearray(data)
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        info = package.getinfo(name)
    struct.pack_into("<H", out, info.header_offset + 6, info.flag_bits | 1)
    central = out.find(b"PK\x01\x02")
    while central != -1:
        name_length = struct.unpack_from("<H", out, central + 28)[0]
        if out[central + 46 : central + 46 + name_length] == name.encode():
            struct.pack_into("<H", out, central + 8, info.flag_bits | 1)
            return bytes(out)
        central = out.find(b"PK\x01\x02", central + 4)
    raise ValueError(name)
