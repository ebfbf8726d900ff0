"""Small documents of the formats without a writer among the dependencies (EPUB, OpenDocument, RTF), made by the
tests from their specifications' minimal layouts, .xls workbooks made with xlwt, and Outlook messages (.msg)
written as compound files by ``chunking.parsers.cfb``."""

from __future__ import annotations

import datetime
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


# Outlook messages ([MS-OXMSG]): a message's storages and streams, written as a compound file by
# chunking.parsers.cfb.write_compound (read back by olefile in the tests of tests/parsers/test_cfb.py).

_PT_LONG, _PT_TIME, _PT_STRING8, _PT_UNICODE, _PT_BINARY = 0x0003, 0x0040, 0x001E, 0x001F, 0x0102


def msg_tree(*, subject: str | None = None, sender: tuple[str, str] | None = None,
             recipients: list[tuple[int, str, str]] = (), date=None, body: str | None = None,
             html: bytes | str | None = None, rtf: bytes | None = None, unicode: bool = True,
             code_page: int | None = None, internet_code_page: int | None = None,
             attachments: list[dict] = (), display_to: str | None = None, embedded: bool = False,
             message_class: str | None = None) -> dict:
    """The storage tree of one message ([MS-OXMSG] §2.1-§2.4): its property stream (a 32-byte header, 24 when
    *embedded*), its strings as ``__substg1.0_<id><type>`` streams (``PtypString`` when *unicode*, else
    ``PtypString8`` in *code_page*, default Windows-1252), recipients ``(type, name, smtp address)`` (1 To, 2 Cc,
    3 Bcc) and attachments: ``{"filename", "data", "mime", "method"}``, or ``{"name", "message": msg_tree(…,
    embedded=True)}`` for an attached message; *message_class*: ``PidTagMessageClass`` (none when ``None``)."""
    codec = f"cp{code_page}" if code_page else "cp1252"
    tree: dict = {}
    fixed: list[tuple[int, int, bytes]] = []

    def string(prop: int, value: str, into: dict, props: list) -> None:
        kind = _PT_UNICODE if unicode else _PT_STRING8
        data = (value + "\0").encode("utf-16-le") if unicode else value.encode(codec) + b"\0"
        into[f"__substg1.0_{prop:04X}{kind:04X}"] = data
        props.append((prop, kind, struct.pack("<II", len(data), 0)))

    if subject is not None:
        string(0x0037, subject, tree, fixed)
    if message_class is not None:
        string(0x001A, message_class, tree, fixed)
    if sender is not None:
        string(0x0C1A, sender[0], tree, fixed)
        string(0x5D01, sender[1], tree, fixed)
    if display_to is not None:
        string(0x0E04, display_to, tree, fixed)
    if date is not None:
        ticks = int((date - _FILETIME_EPOCH).total_seconds() * 10_000_000)
        fixed.append((0x0039, _PT_TIME, struct.pack("<Q", ticks)))
    if code_page is not None:
        fixed.append((0x3FFD, _PT_LONG, struct.pack("<iI", code_page, 0)))
    if internet_code_page is not None:
        fixed.append((0x3FDE, _PT_LONG, struct.pack("<iI", internet_code_page, 0)))
    if body is not None:
        string(0x1000, body, tree, fixed)
    if isinstance(html, bytes):
        tree["__substg1.0_10130102"] = html
        fixed.append((0x1013, _PT_BINARY, struct.pack("<II", len(html), 0)))
    elif isinstance(html, str):
        string(0x1013, html, tree, fixed)
    if rtf is not None:
        tree["__substg1.0_10090102"] = rtf
        fixed.append((0x1009, _PT_BINARY, struct.pack("<II", len(rtf), 0)))
    for number, (kind, name, address) in enumerate(recipients):
        storage: dict = {}
        props = [(0x0C15, _PT_LONG, struct.pack("<iI", kind, 0))]
        string(0x3001, name, storage, props)
        string(0x39FE, address, storage, props)
        storage["__properties_version1.0"] = _property_stream(props, header=8)
        tree[f"__recip_version1.0_#{number:08X}"] = storage
    for number, attachment in enumerate(attachments):
        storage = {}
        if "message" in attachment:
            props = [(0x3705, _PT_LONG, struct.pack("<iI", 5, 0))]
            string(0x3001, attachment["name"], storage, props)
            storage["__substg1.0_3701000D"] = attachment["message"]
        else:
            props = [(0x3705, _PT_LONG, struct.pack("<iI", attachment.get("method", 1), 0))]
            if attachment.get("filename"):
                string(0x3707, attachment["filename"], storage, props)
            if attachment.get("mime"):
                string(0x370E, attachment["mime"], storage, props)
            if "data" in attachment:
                storage["__substg1.0_37010102"] = attachment["data"]
                props.append((0x3701, _PT_BINARY, struct.pack("<II", len(attachment["data"]), 0)))
        storage["__properties_version1.0"] = _property_stream(props, header=8)
        tree[f"__attach_version1.0_#{number:08X}"] = storage
    header = struct.pack("<8xIIII", len(recipients), len(attachments), len(recipients), len(attachments))
    tree["__properties_version1.0"] = _property_stream(fixed, header=24 if embedded else 32, prefix=header)
    if not embedded:
        tree["__nameid_version1.0"] = {"__substg1.0_00020102": b"", "__substg1.0_00030102": b"",
                                       "__substg1.0_00040102": b""}
    return tree


def outlook_message(**fields) -> bytes:
    """A ``.msg`` file of ``msg_tree(**fields)``."""
    from chunking.parsers.cfb import write_compound

    return write_compound(msg_tree(**fields))


def _property_stream(props: list[tuple[int, int, bytes]], *, header: int, prefix: bytes = b"") -> bytes:
    """A property stream: *header* bytes (*prefix*, zero-padded), then one 16-byte entry per property (tag, flags
    2 = readable, the 8-byte value; [MS-OXMSG] §2.4.2)."""
    head = prefix[:header].ljust(header, b"\0")
    return head + b"".join(struct.pack("<II", (prop << 16) | kind, 2) + value.ljust(8, b"\0")
                           for prop, kind, value in props)


_FILETIME_EPOCH = datetime.datetime(1601, 1, 1, tzinfo=datetime.timezone.utc)


def signed_mime_entity(body: str = "The plan is attached.\n", *, subtype: str = "pkcs7-signature",
                       signature_name: str = "smime.p7s") -> bytes:
    """A MIME multipart/signed entity as Outlook keeps it in a clear-signed message's attachment: the signed
    content (multipart/mixed: a text body and plan.txt), then the signature, ``application/<subtype>`` named
    *signature_name* (S/MIME by default; ``pgp-signature`` for OpenPGP)."""
    from email.mime.application import MIMEApplication
    from email.mime.multipart import MIMEMultipart
    from email.mime.text import MIMEText

    signed = MIMEMultipart("signed", protocol=f"application/{subtype}", micalg="sha-256")
    mixed = MIMEMultipart("mixed")
    mixed.attach(MIMEText(body))
    plan = MIMEApplication(b"Pallets of pumice.", Name="plan.txt")
    plan.add_header("Content-Disposition", "attachment", filename="plan.txt")
    mixed.attach(plan)
    signature = MIMEApplication(b"0\x82\x01\x00not really a signature", subtype, Name=signature_name)
    signature.add_header("Content-Disposition", "attachment", filename=signature_name)
    signed.attach(mixed)
    signed.attach(signature)
    return signed.as_bytes()
