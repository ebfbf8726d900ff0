"""Opening a .docx package without holding its body: python-docx for the small parts, the body streamed.

python-docx parses ``word/document.xml`` into one lxml tree, which takes four to five times the XML's size
(a 95 MB body: 435 MB peak). Here python-docx opens a copy of the package whose main document part has an
empty body (styles, numbering, headers and the other parts are as they were; images and other binary parts
are left empty, since text never needs them), and the real body is parsed incrementally: each top-level body
element (``w:p``, ``w:tbl``, ``w:sdt``, …) is handed over once it is complete and cleared afterwards, so memory
holds one block at a time. The elements are python-docx's own element classes (``CT_P``, ``CT_Tbl``), parsed with
python-docx's parser options (blank text removed, entities never resolved).

Package layout: ECMA-376 Part 2 (Open Packaging Conventions): the main part is the target of the package
relationship of type ``…/officeDocument`` in ``_rels/.rels``.
"""

from __future__ import annotations

import io
import posixpath
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field

import docx
from docx.document import Document as DocxDocument
from docx.oxml.ns import qn
from docx.oxml.parser import element_class_lookup
from lxml import etree

from chunking.parsers._common import ParseError, ReadContext
from chunking.parsers.office import scan_office_package

__all__ = ["OpenedDocx", "open_docx"]

_OFFICE_DOCUMENT = "/officeDocument"  # the end of the relationship type of the main part
_DEFAULT_MAIN = "word/document.xml"
_PIECE_BYTES = 1 << 20
_BODY, _SECT_PR = qn("w:body"), qn("w:sectPr")
_EVENT_TAGS = (_BODY, qn("w:p"), qn("w:tbl"), qn("w:sdt"), qn("w:customXml"), _SECT_PR)
_EMPTY_BODY = (b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:document xmlns:w='
               b'"http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body/></w:document>')


@dataclass
class OpenedDocx:
    """A package opened for reading: ``document`` (python-docx, its body empty until ``blocks`` has been
    consumed, then holding only the body's section properties), the parts holding a DTD, and the body."""

    document: DocxDocument
    dtd_parts: list[str]
    main_part: str
    _package: zipfile.ZipFile = field(repr=False)
    _source: str = field(repr=False)

    def related_bytes(self, rid: str) -> bytes:
        """The bytes of the part the main part's relationship *rid* points to (a picture), read from the package
        (the opened ``document`` holds binary parts empty); ``b""`` for an external or missing target.

        Its size was bounded with the package's (``MAX_DECOMPRESSED_BYTES``) when it was opened."""
        try:
            partname = self.document.part.related_parts[rid].partname
            return self._package.read(str(partname).lstrip("/"))
        except (KeyError, AttributeError, ValueError, zipfile.BadZipFile):
            return b""

    def blocks(self) -> Iterator[etree._Element]:
        """The body's top-level elements in document order, each complete when yielded and cleared (with
        everything before it) when the next is asked for.

        Raises:
            ParseError: ``not a valid DOCX: …`` when the body is not well-formed XML, is nested deeper than
                libxml2's 256 levels, or its member is damaged.
        """
        parser = etree.XMLPullParser(events=("start", "end"), tag=_EVENT_TAGS, remove_blank_text=True,
                                     resolve_entities=False, no_network=True)
        parser.set_element_class_lookup(element_class_lookup)
        sections: list[etree._Element] = []
        body: list[etree._Element] = []
        try:
            with self._package.open(self.main_part) as member:
                while piece := member.read(_PIECE_BYTES):
                    parser.feed(piece)
                    yield from _completed_blocks(parser, body, sections)
                    if body:  # what lies between blocks (bookmarks, unknown elements) is dropped as well
                        _drop_all_but_the_last(body[0])
                parser.close()
                yield from _completed_blocks(parser, body, sections)
        except etree.XMLSyntaxError as error:
            raise ParseError(self._source, _xml_reason(f"{self.main_part}: {error.msg}")) from None
        except (zipfile.BadZipFile, EOFError, OSError) as error:
            raise ParseError(self._source, f"not a valid DOCX: {self.main_part}: {error}") from None
        if not len(self.document.element.body):  # (a second reading of the body adds nothing)
            self.document.element.body.extend(sections)


def _drop_all_but_the_last(body: etree._Element) -> None:
    # Element by element from the end (len() and indexing of lxml children walk the list: quadratic here).
    for last in body.iterchildren(reversed=True):
        while (previous := last.getprevious()) is not None:
            body.remove(previous)
        return


def _completed_blocks(parser: etree.XMLPullParser, body: list, sections: list) -> Iterator[etree._Element]:
    # Every paragraph of every table cell comes by here twice: each ``.tag`` builds a new string, so the tests
    # are ordered to read as few as they can (docs/parsers.md#docx-speed).
    for event, element in parser.read_events():
        if event == "start":
            if not body and element.tag == _BODY:
                body.append(element)
            continue
        parent = element.getparent()
        if parent is None or parent.tag != _BODY:
            continue  # a paragraph inside a table cell, or anything deeper: part of its block
        tag = element.tag
        if tag == _BODY:
            continue
        if tag == _SECT_PR:
            sections.append(element)
            parent.remove(element)
            continue
        while element.getprevious() is not None:
            del parent[0]  # blocks already handed over, and anything between them
        yield element
        element.clear()


def open_docx(data: bytes, source: str, context: ReadContext) -> OpenedDocx:
    """Check and open a .docx package (not yet reading its body).

    Raises:
        ParseError: ``not a valid DOCX: …`` for an OLE file (password-protected or old ``.doc``), a non-ZIP,
            a package python-docx cannot open; ``expands past N MB when decompressed (MAX_DECOMPRESSED_BYTES)``
            when its members really inflate (whatever their headers declare) to more than that in total.
    """
    scan = scan_office_package(data, source=source, context=context, kind="DOCX", old_format=".doc")
    try:
        package = zipfile.ZipFile(io.BytesIO(data))
        main_part = _main_part(package)
        stub = _without_body(package, main_part)
    except zipfile.BadZipFile as error:
        raise ParseError(source, f"not a valid DOCX: not a ZIP package ({error})") from None
    except etree.XMLSyntaxError as error:
        raise ParseError(source, _xml_reason(str(error))) from None
    try:
        document = docx.Document(io.BytesIO(stub))
    except Exception as error:  # python-docx raises KeyError, ValueError, PackageNotFoundError, lxml errors
        raise ParseError(source, _xml_reason(str(error))) from None
    return OpenedDocx(document, scan.dtd_parts, main_part, package, source)


def _main_part(package: zipfile.ZipFile) -> str:
    try:
        rels = package.read("_rels/.rels")
    except KeyError:
        return _DEFAULT_MAIN  # python-docx then says what is missing
    root = etree.fromstring(rels, etree.XMLParser(resolve_entities=False, no_network=True))
    for rel in root:
        if str(rel.get("Type", "")).endswith(_OFFICE_DOCUMENT) and rel.get("TargetMode") != "External":
            target = posixpath.normpath(str(rel.get("Target", "")).lstrip("/"))
            return target if target in package.NameToInfo else _DEFAULT_MAIN
    return _DEFAULT_MAIN


def _without_body(package: zipfile.ZipFile, main_part: str) -> bytes:
    """The package again, stored uncompressed, with the main part's body empty and binary parts empty."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as stub:
        for info in package.infolist():
            name = info.filename
            if name == main_part:
                stub.writestr(name, _EMPTY_BODY)
            elif name.lower().endswith((".xml", ".rels")):
                stub.writestr(name, package.read(info))
            else:
                stub.writestr(name, b"")
    return out.getvalue()


def _xml_reason(detail: str) -> str:
    if "Excessive depth" in detail:  # libxml2's own bound (256 levels without XML_PARSE_HUGE)
        return "not a valid DOCX: XML nested deeper than 256 levels"
    return f"not a valid DOCX: {detail}"
