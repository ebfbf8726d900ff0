"""The title a file declares in its own properties, read by the process that parses it: PDF ``/Title``
(document information), Office Open XML ``dc:title`` in ``docProps/core.xml`` (DOCX, PPTX, XLSX), HTML
``<title>``, Markdown front matter ``title:``, the ``dc:title`` of an EPUB's package document and of an
OpenDocument's ``meta.xml``, an RTF file's ``{\\info{\\title …}}``. ``chunking.documents.titles`` falls back to
the first heading and the file name (docs/architecture.md#document-fields).

A property that is blank, ``untitled``, or a file name (``Microsoft Word - report.docx``, ``main.tex``) is no
title. Reading a property never fails a document. Titles are one line of at most ``MAX_TITLE_CHARS`` characters.
"""

from __future__ import annotations

import html
import io
import re
import zipfile
from collections.abc import Callable

from chunking.formats import format_of
from chunking.parsers._common import ParseError, decode_text

__all__ = ["MAX_TITLE_CHARS", "clean_title", "property_title"]

MAX_TITLE_CHARS = 300
# docProps/core.xml is a few hundred bytes; a larger one is not read.
_MAX_CORE_BYTES = 1 << 20
_JUNK = re.compile(r"^(untitled|sans titre|ohne titel|document\d*|microsoft (word|powerpoint|excel) - .*)$", re.I)
_FILE_NAME = re.compile(r"\.(docx?|pptx?|xlsx?|pdf|tex|dvi|ps|html?|txt|md|rtf|odt|indd|qxd)$", re.I)


def clean_title(title: str) -> str:
    """*title* on one line, at most ``MAX_TITLE_CHARS`` characters; ``""`` for a placeholder or a file name."""
    one_line = " ".join(title.split())
    if not one_line or _JUNK.match(one_line) or _FILE_NAME.search(one_line):
        return ""
    return one_line[:MAX_TITLE_CHARS]


def _pdf_title(data: bytes) -> str:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(data)
    try:
        return document.get_metadata_value("Title")
    finally:
        document.close()


def _ooxml_title(data: bytes) -> str:
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        info = package.getinfo("docProps/core.xml")
        if info.file_size > _MAX_CORE_BYTES:
            return ""
        with package.open(info) as part:
            xml = part.read(_MAX_CORE_BYTES).decode("utf-8", "replace")
    # A regular expression, not an XML parser: no entity or DTD in this part is ever expanded.
    match = re.search(r"<dc:title>([^<]*)</dc:title>", xml)
    return html.unescape(match.group(1)) if match else ""


def _html_title(data: bytes) -> str:
    head = data[:65_536]
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        try:  # the body's own rules (chunking.parsers._common): cp1252 French is not read as cp1257
            text = decode_text(head, source="")
        except ParseError:
            text = head.decode("latin-1")
    match = re.search(r"<title[^>]*>(.*?)</title>", text, re.I | re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", match.group(1))) if match else ""


_FRONT_MATTER = re.compile(r"---\r?\n(?![ \t]*\r?\n)(.*?)\r?\n(?:---|\.\.\.)\r?(?:\n|\Z)", re.S)


def _front_matter_title(data: bytes) -> str:
    text = data[:65_536].decode("utf-8", "replace").lstrip("\ufeff")
    # The block as the Markdown splitter knows it (docs/splitters.md, front matter): ``---``, a non-blank line,
    # closed by a line ``---`` or ``...``.
    match = _FRONT_MATTER.match(text)
    if not match:
        return ""
    line = re.search(r"^title:[ \t]*(.+)$", match.group(1), re.M)
    return line.group(1).strip().strip("'\"") if line else ""


def _zip_part(package: zipfile.ZipFile, name: str) -> str:
    """The member *name* as text, ``""`` when it is missing or declares more than ``_MAX_CORE_BYTES`` (and at
    most that much is inflated, whatever it declares)."""
    try:
        info = package.getinfo(name)
    except KeyError:
        return ""
    if info.file_size > _MAX_CORE_BYTES:
        return ""
    with package.open(info) as part:
        return part.read(_MAX_CORE_BYTES).decode("utf-8", "replace")


_DC_TITLE = re.compile(r"<dc:title(?:\s[^>]*)?>([^<]*)</dc:title>")


def _epub_title(data: bytes) -> str:
    """The first ``dc:title`` of the package document that ``META-INF/container.xml`` names (EPUB 3.3 §5.5.3.2)."""
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        rootfile = re.search(r"<(?:\w+:)?rootfile\s[^>]*full-path=\"([^\"]+)\"",
                             _zip_part(package, "META-INF/container.xml"))
        match = _DC_TITLE.search(_zip_part(package, html.unescape(rootfile.group(1)))) if rootfile else None
    return html.unescape(match.group(1)) if match else ""


def _odf_title(data: bytes) -> str:
    """``dc:title`` of an OpenDocument package's ``meta.xml`` (ODF 1.3 Part 3 §4.3.2.4)."""
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        match = _DC_TITLE.search(_zip_part(package, "meta.xml"))
    return html.unescape(match.group(1)) if match else ""


def _rtf_title(data: bytes) -> str:
    """The ``{\\title …}`` group of an RTF file's ``{\\info …}`` group (RTF 1.9.1, "Information Group"), plain
    text only: a title with control words or ``\\'hh`` escapes inside is read without them. The repetition is
    possessive (``*+``): a control word's optional space is also text, and with backtracking a title that never
    reaches its ``}`` (a group inside it) was tried in 2^n ways for its n control words."""
    match = re.search(rb"\{\\title\s?((?:[^{}\\]|\\[{}\\]|\\'[0-9a-fA-F]{2}|\\[a-z]+-?\d* ?)*+)\}", data)
    if not match:
        return ""
    raw = re.sub(rb"\\'([0-9a-fA-F]{2})", lambda m: bytes([int(m.group(1), 16)]), match.group(1))
    raw = re.sub(rb"\\([{}\\])", rb"\1", re.sub(rb"\\[a-z]+-?\d* ?", b"", raw))
    return raw.decode("cp1252", "replace")


#: The reader of each title source of the format table (``chunking.formats.TITLE_SOURCES``, ``none`` aside).
_READERS: dict[str, Callable[[bytes], str]] = {"pdf-info": _pdf_title, "ooxml-core": _ooxml_title,
                                               "html-title": _html_title, "front-matter": _front_matter_title}
_READERS.update({"epub-opf": _epub_title, "odf-meta": _odf_title, "rtf-info": _rtf_title})


def property_title(data: bytes, source: str) -> str:
    """The title the file itself declares (step 1 of the module docstring), cleaned, or ``""``: read where the
    format table's ``title_source`` of *source*'s extension says (``""`` for ``none`` or an unsupported
    extension)."""
    fmt = format_of(source)
    reader = _READERS.get(fmt.title_source) if fmt is not None else None
    if reader is None:
        return ""
    try:
        return clean_title(reader(data))
    except Exception:  # a damaged property part is no reason to fail the document: the heading or name serves
        return ""
