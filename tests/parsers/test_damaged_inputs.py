"""Damaged ZIP packages, archives, images, sheets and mail headers that ``benchmarks/fuzz_parsers.py`` found
failing with a hang, a crash or a library's error: each is now refused with a reason naming the problem, or read
(a mail header the standard library cannot parse). Every input is built here, small, from a valid document with one
field or a few bytes changed."""

from __future__ import annotations

import io
import struct
import zipfile
import zlib

import openpyxl
import pytest
from PIL import Image

from chunking.parsers import ParseError, ReadContext, parse_document
from chunking.parsers.members import iter_members
from tests.parsers.made import epub, odf, zip_package

_LOCAL, _CENTRAL = b"PK\x03\x04", b"PK\x01\x02"


def _records(data: bytes, signature: bytes) -> list[int]:
    found, at = [], data.find(signature)
    while at != -1:
        found.append(at)
        at = data.find(signature, at + 1)
    return found


def _set(data: bytes, at: int, fmt: str, value: int) -> bytes:
    buf = bytearray(data)
    struct.pack_into(fmt, buf, at, value)
    return bytes(buf)


def _reason(data: bytes, source: str) -> str:
    with pytest.raises(ParseError) as caught:
        parse_document(data, source=source)
    return caught.value.reason


def _members(data: bytes, source: str) -> list[tuple[str, str]]:
    return [(m.name, m.reason) for m in iter_members(data, source=source, context=ReadContext())]


def _odt() -> bytes:
    return odf("text", "<text:p>Hello</text:p>")


def _content_xml(data: bytes) -> zipfile.ZipInfo:
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        return package.getinfo("content.xml")


def test_a_local_header_name_length_past_the_end_of_the_file_is_refused_not_looped_on():
    # The package scan used to inflate an empty slice for ever: the member's data started past the end of the file.
    data = _odt()
    name_length_at = _records(data, _LOCAL)[1] + 26  # content.xml, the first deflated member
    damaged = _set(data, name_length_at, "<H", 0xFFFF)
    size = _content_xml(data).compress_size
    assert _reason(damaged, "a.odt") == (f"not a valid OpenDocument: damaged ZIP member content.xml: its {size} "
                                         "bytes of data run past the end of the file")


@pytest.mark.parametrize(("build", "source", "kind"), [(_odt, "a.odt", "OpenDocument"),
                                                       (lambda: epub([("c1.xhtml", "<p>x</p>")]), "a.epub", "EPUB")])
def test_a_member_whose_crc_differs_from_the_central_directory_is_named(build, source, kind):
    data = build()
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        info = package.infolist()[1]
        crc = zlib.crc32(package.read(info))
    central = _records(data, _CENTRAL)[1]
    damaged = _set(data, central + 16, "<I", 0x12345678)
    assert _reason(damaged, source) == (f"not a valid {kind}: damaged ZIP member {info.filename}: CRC-32 is "
                                        f"{crc:#010x}, the central directory declares 0x12345678")


def test_a_version_needed_that_zipfile_does_not_know_is_a_reason_for_packages_and_archives():
    data = _odt()
    damaged = _set(data, _records(data, _CENTRAL)[0] + 6, "<H", 100)  # "version needed to extract": 10.0
    detail = "a member needs a ZIP version this reader does not know (zip file version 10.0)"
    assert _reason(damaged, "a.odt") == f"not a valid OpenDocument: not a ZIP package ({detail})"
    assert _reason(damaged, "a.zip") == f"not a valid ZIP: {detail}"
    with pytest.raises(ParseError, match=r"^a.zip: not a valid ZIP: a member needs a ZIP version"):
        _members(damaged, "a.zip")


def test_a_local_header_name_flagged_utf8_that_is_not_utf8_is_a_damaged_member():
    data = _odt()
    local = _records(data, _LOCAL)[1]
    damaged = bytearray(_set(data, local + 6, "<H", 0x800))  # general purpose bit 11: the name is UTF-8
    damaged[local + 30] = 0xFF
    damaged = bytes(damaged)
    assert _reason(damaged, "a.odt") == ("not a valid OpenDocument: damaged ZIP member content.xml: its local "
                                         "header's name is flagged UTF-8 but is not UTF-8")
    assert _members(damaged, "a.zip")[1] == (
        "content.xml", "damaged member: its local header's name is flagged UTF-8 but is not UTF-8")


def test_bytes_missing_before_the_central_directory_refuse_only_the_member_whose_offset_turns_negative():
    # zipfile shifts every local header offset by the bytes missing, so the first member's becomes -10: reading it
    # raised ValueError ("negative seek value") out of the archive's member reader.
    data = bytearray(zip_package({"a.txt": "hello " * 20, "b.txt": "world"}))
    del data[40:50]  # inside a.txt's deflated data
    assert _members(bytes(data), "a.zip") == [("a.txt", "damaged member: negative seek value -10"),
                                              ("b.txt", "damaged member: Bad magic number for file header")]
    odt = bytearray(_odt())
    del odt[40:50]  # inside the stored mimetype member, which the parser never reads: the text is all there
    assert [page.text for page in parse_document(bytes(odt), source="a.odt")] == ["Hello\n"]


def _tiff_second_frame_without_dimensions() -> bytes:
    """A little-endian TIFF: a 1×1 grey frame, then a second IFD holding only BitsPerSample (TIFF 6.0 §2)."""

    def ifd(entries: list[tuple[int, int, int, int]], next_ifd: int) -> bytes:
        return (struct.pack("<H", len(entries)) + b"".join(struct.pack("<HHII", *entry) for entry in entries)
                + struct.pack("<I", next_ifd))

    second_at = 8 + 2 + 12 * 7 + 4
    pixels_at = second_at + 2 + 12 + 4
    first = ifd([(256, 3, 1, 1), (257, 3, 1, 1), (258, 3, 1, 8), (262, 3, 1, 1), (273, 4, 1, pixels_at),
                 (278, 3, 1, 1), (279, 4, 1, 1)], second_at)
    return b"II*\x00" + struct.pack("<I", 8) + first + ifd([(258, 3, 1, 8)], 0) + b"\x80"


def test_a_tiff_frame_without_dimensions_is_not_a_valid_image():
    # Pillow raised TypeError from counting the frames, which only "could not parse" explained.
    assert _reason(_tiff_second_frame_without_dimensions(), "scan.tif") == "not a valid image: Missing dimensions"


def test_a_gif_declaring_a_huge_canvas_is_refused_by_its_size():
    # Pillow raised DecompressionBombError while opening it, which only "could not parse" explained.
    buffer = io.BytesIO()
    Image.new("L", (1, 1), 255).save(buffer, "GIF")
    data = _set(buffer.getvalue(), 6, "<I", 0xFFFF_FFFF)  # logical screen: 65535 × 65535
    descriptor = data.find(b",")
    data = _set(data, descriptor + 5, "<I", 0xFFFF_FFFF)  # the frame too
    assert _reason(data, "a.gif") == "image of more than 64000000 pixels"


def test_a_worksheet_cut_short_names_its_part():
    # openpyxl reads a sheet's XML only when its rows are read: the XML error came out of the parser unexplained.
    book = openpyxl.Workbook()
    book.active["A1"] = "Region"
    written = io.BytesIO()
    book.save(written)
    rebuilt = io.BytesIO()
    with zipfile.ZipFile(written) as source, zipfile.ZipFile(rebuilt, "w", zipfile.ZIP_DEFLATED) as package:
        for info in source.infolist():
            member = source.read(info)
            package.writestr(info.filename, member[:-40] if info.filename == "xl/worksheets/sheet1.xml" else member)
    assert _reason(rebuilt.getvalue(), "a.xlsx") == (
        "not a valid XLSX: xl/worksheets/sheet1.xml is not well-formed XML (unclosed token: line 1, column 431)")


def test_a_mail_address_cut_short_is_shown_as_written():
    # The standard library's address parser raised IndexError on "Alex <", which only "could not parse" explained.
    data = b"From: Alex <\nTo: ops@example.com\nSubject: Keys\n\nThe keys are at the desk.\n"
    pages = parse_document(data, source="keys.eml")
    assert [page.text for page in pages] == [
        "# Keys\n\nFrom: Alex <\nTo: ops@example.com\n\nThe keys are at the desk.\n"]


def test_a_damaged_member_the_opendocument_parser_never_reads_costs_nothing():
    members = {**_members_of(_odt()), "Thumbnails/thumbnail.png": b"\x89PNG not read"}
    data = zip_package(members, stored_first="mimetype")
    central = _records(data, _CENTRAL)[-1]  # the thumbnail's entry
    damaged = _set(data, central + 16, "<I", 0x12345678)
    assert [page.text for page in parse_document(damaged, source="a.odt")] == ["Hello\n"]


def test_a_damaged_member_of_an_office_package_refuses_it_by_name():
    # python-docx reads every part when it opens the package, so the check is made for all of them first.
    from docx import Document

    written = io.BytesIO()
    document = Document()
    document.add_paragraph("Hello")
    document.save(written)
    data = written.getvalue()
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        names = [info.filename for info in package.infolist()]
        crc = package.getinfo("word/styles.xml").CRC
    central = _records(data, _CENTRAL)[names.index("word/styles.xml")]
    damaged = _set(data, central + 16, "<I", crc ^ 1)
    assert _reason(damaged, "a.docx") == (f"not a valid DOCX: damaged ZIP member word/styles.xml: CRC-32 is "
                                          f"{crc:#010x}, the central directory declares {crc ^ 1:#010x}")


def _members_of(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        return {info.filename: package.read(info) for info in package.infolist()}


def test_a_presentation_naming_a_slide_the_package_lacks_is_refused():
    # python-pptx follows the slide relationships only when the slides are listed: its KeyError came out unexplained.
    import pptx

    written = io.BytesIO()
    deck = pptx.Presentation()
    deck.slides.add_slide(deck.slide_layouts[5]).shapes.title.text = "Depot"
    deck.save(written)
    rebuilt = io.BytesIO()
    with zipfile.ZipFile(written) as source, zipfile.ZipFile(rebuilt, "w", zipfile.ZIP_DEFLATED) as package:
        for info in source.infolist():
            member = source.read(info)
            if info.filename == "ppt/_rels/presentation.xml.rels":  # the slide's relationship dropped
                member = member.replace(b'Target="slides/slide1.xml"', b'Target="slides/missing.xml"')
            package.writestr(info.filename, member)
    assert _reason(rebuilt.getvalue(), "a.pptx") == (
        "not a valid PPTX: its list of slides is damaged (KeyError: \"no relationship with key 'rId7'\")")


def test_a_pdf_page_pdfium_cannot_load_a_second_time_for_ocr_is_named():
    # The first page's dictionary loses its closing ">>": PDFium loads the page once (no text layer) and fails
    # when it is loaded again to be rendered for OCR; that PdfiumError came out unexplained.
    from tests.pixel_documents import paragraph_image, pdf_of

    data = pdf_of(["A page with text.", paragraph_image(["Depot map", "North gate"], width_px=400)])
    at = data.index(b"/Type /Page\n>>\n") + len(b"/Type /Page\n>")
    damaged = data[:at] + b"\xd3\xe2" + data[at + 2 :]
    assert _reason(damaged, "scan.pdf") == ("could not read page 1: PDFium could not load it (damaged page tree, or "
                                            "the page object is missing)")


def test_an_rtf_title_cut_by_a_group_is_given_up_at_once():
    # The title pattern tried each control word's optional space both ways: 2^40 tries for this title, which never
    # reaches its "}" (the "{8" group inside it), hung the title reader.
    from chunking.parsers.titles import property_title

    data = b"{\\rtf1{\\info{\\title " + b"Order l\\title " * 40 + b"{8}}}Dear customer,\\par}"
    assert property_title(data, "letter.rtf") == ""
    styled = b"{\\rtf1{\\info{\\title Order \\b letter\\b0  \\'e9t\\'e9}}}"
    assert property_title(styled, "letter.rtf") == "Order letter été"
