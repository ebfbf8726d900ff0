"""EPUB e-books (.epub, EPUB 2 and 3): one page per chapter, read with the standard library's ``zipfile`` and lxml.

Layout (EPUB 3.3 §4 "Open Container Format"; EPUB 2's OPF 2.0.1 has the same parts): ``META-INF/container.xml``
names the package document (the OPF, its first ``rootfile``); the OPF's ``manifest`` lists the resources and its
``spine`` the reading order. Each spine item that is an XHTML or HTML document is a page, rendered by the HTML
parser (``chunking.parsers.html``): ``h1``–``h6`` as ``#`` headings, lists, ``pre`` blocks and tables as there,
navigation (``nav``, tables of contents) and scripts dropped. Items marked ``linear="no"`` (notes, answers reached
by links) are read too, in spine order; SVG, images and fonts are not. The OPF's ``dc:title`` is the document's
title (``chunking.parsers.titles``).

Refused with a reason: a package that fails the ZIP checks of ``chunking.parsers.zipped`` (zip bombs, encrypted
members), a chapter that ``META-INF/encryption.xml`` lists (DRM: its bytes are ciphertext), more spine items than
``MAX_PAGES``, a chapter over ``MAX_PAGE_CHARS`` characters or its HTML nested past ``MAX_NESTING_DEPTH``.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterator

from chunking.model import Page
from chunking.parsers import html
from chunking.parsers._common import ParseError, ReadContext, pages_from_texts
from chunking.parsers.zipped import member_path, open_zip, read_member, read_xml

__all__ = ["opf_path", "parse"]

_CONTAINER = "META-INF/container.xml"
_ENCRYPTION = "META-INF/encryption.xml"
_HTML_TYPES = frozenset({"application/xhtml+xml", "text/html"})
_OPF_NS = "{http://www.idpf.org/2007/opf}"
_CONTAINER_NS = "{urn:oasis:names:tc:opendocument:xmlns:container}"
_CIPHER_REFERENCE = "{http://www.w3.org/2001/04/xmlenc#}CipherReference"


def parse(data: bytes, *, source: str, context: ReadContext | None = None) -> Iterator[Page]:
    """Parse an EPUB into one page per spine document (module docstring).

    Returns:
        ``Page(n, offset, text)`` for the ``n + 1``-th chapter in reading order; a chapter without text (a
        cover image) has an empty text.

    Raises:
        ParseError: ``not a valid EPUB: …`` (not a ZIP, no container or package document, a spine item the
            manifest lacks or the package does not hold); ``not a valid EPUB: OEBPS/c1.xhtml is encrypted (DRM)``;
            ``N pages, more than M (MAX_PAGES)``; ``page N has more than … characters (MAX_PAGE_CHARS)``; the
            ``MAX_DECOMPRESSED_BYTES``, ``MAX_NESTING_DEPTH`` and ``STAGE1_MAX_SECONDS`` reasons.
    """
    context = context if context is not None else ReadContext()
    with open_zip(data, source=source, context=context, kind="EPUB") as package:
        opf = opf_path(package, source=source, context=context)
        chapters = _spine(package, opf, source=source, context=context)
        limits = context.limits
        if len(chapters) > limits.max_pages:
            raise ParseError(source, limits.pages_reason(len(chapters)))
        encrypted = _encrypted(package, source=source, context=context)
        texts = []
        for index, member in enumerate(chapters):
            context.check_time(source)
            if member in encrypted:
                raise ParseError(source, f"not a valid EPUB: {member} is encrypted (DRM)")
            if member not in package.NameToInfo:
                raise ParseError(source, f"not a valid EPUB: the spine names {member}, which the package "
                                         "does not hold")
            chapter = read_member(package, member, source=source, kind="EPUB")
            try:
                text = "".join(page.text for page in html.parse(chapter, source=source, context=context))
            except ParseError as error:
                raise ParseError(source, f"{member}: {error.reason}") from None
            if len(text) > limits.max_page_chars:
                raise ParseError(source, limits.page_chars_reason(index))
            texts.append(text + "\n" if text and not text.endswith("\n") else text)
    return pages_from_texts(texts)


def opf_path(package: zipfile.ZipFile, *, source: str, context: ReadContext) -> str:
    """The member holding the package document: the first ``rootfile`` of ``META-INF/container.xml``.

    Raises:
        ParseError: ``not a valid EPUB: META-INF/container.xml is missing`` (and the other ``read_xml``
            reasons); ``not a valid EPUB: META-INF/container.xml names no package document``.
    """
    root = read_xml(package, _CONTAINER, source=source, context=context, kind="EPUB")
    for rootfile in root.iter(f"{_CONTAINER_NS}rootfile", "rootfile"):
        path = rootfile.get("full-path", "").strip()
        if path:
            return member_path("", path)
    raise ParseError(source, f"not a valid EPUB: {_CONTAINER} names no package document")


def _spine(package: zipfile.ZipFile, opf: str, *, source: str, context: ReadContext) -> list[str]:
    """The members of the spine's (X)HTML documents, in reading order."""
    root = read_xml(package, opf, source=source, context=context, kind="EPUB")
    manifest = {}
    for item in root.iter(f"{_OPF_NS}item", "item"):
        if item.get("id") and item.get("href"):
            manifest[item.get("id")] = (item.get("href"), (item.get("media-type") or "").strip().lower())
    chapters = []
    for itemref in root.iter(f"{_OPF_NS}itemref", "itemref"):
        idref = itemref.get("idref", "")
        if idref not in manifest:
            raise ParseError(source, f"not a valid EPUB: the spine names item {idref!r}, which the manifest "
                                     "does not list")
        href, media_type = manifest[idref]
        if media_type in _HTML_TYPES:
            chapters.append(member_path(opf, href))
    return chapters


def _encrypted(package: zipfile.ZipFile, *, source: str, context: ReadContext) -> frozenset[str]:
    """Members ``META-INF/encryption.xml`` lists (OCF §4.2.6.3.2: their URIs are relative to the container's
    root). Font obfuscation lists fonts only, which are never read."""
    if _ENCRYPTION not in package.namelist():
        return frozenset()
    root = read_xml(package, _ENCRYPTION, source=source, context=context, kind="EPUB")
    return frozenset(member_path("", reference.get("URI", "")) for reference in root.iter(_CIPHER_REFERENCE))
