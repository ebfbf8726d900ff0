"""ZIP packages that are not Office Open XML (EPUB, OpenDocument): opened only after their members were
measured by inflating them, and read member by member with a safe XML parser.

The checks are those of ``chunking.parsers.office`` without the Office-only parts: anything that is not a ZIP is
refused, so is a package whose members really inflate past ``MAX_DECOMPRESSED_BYTES`` (``chunking.parsers.packages``
inflates them to count; declared sizes lie in a zip bomb), and so is a member encrypted with ZIP's own
encryption (general purpose bit 0, PKWARE APPNOTE.TXT §4.4.4): neither format uses it for its text. A damaged
member (cut short, a wrong CRC-32, a local header that disagrees with the central directory) refuses the package
only when the parser reads it (``read_member``: ``damaged ZIP member content.xml: …``), so a broken thumbnail or
font costs nothing.

XML is parsed by lxml with entities never resolved, no DTD loaded and no network (``SAFE_XML``).
"""

from __future__ import annotations

import posixpath
import zipfile
from urllib.parse import unquote

from lxml import etree

from chunking.parsers._common import ParseError, ReadContext
from chunking.parsers.packages import ZIP_FAILURES, member_failure, open_package, scan_package

__all__ = ["SAFE_XML", "Package", "member_path", "open_zip", "read_member", "read_xml", "xml_depth"]

#: lxml parser options for every XML part: no entity resolved, no DTD loaded, nothing fetched.
SAFE_XML = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, remove_comments=True)


class Package(zipfile.ZipFile):
    """A package ``open_zip`` opened, with what its scan found damaged: member name → what is wrong with it."""

    damaged: dict[str, str] = {}  # noqa: RUF012 (replaced per package by open_zip, never changed in place)


def open_zip(data: bytes, *, source: str, context: ReadContext, kind: str) -> Package:
    """*data* opened as a ZIP package after the checks of the module docstring.

    Args:
        kind: the format's name in reasons (``"EPUB"``).

    Raises:
        ParseError: ``not a valid EPUB: not a ZIP package (…)``; the ``MAX_DECOMPRESSED_BYTES`` reason; ``not a
            valid EPUB: OEBPS/ch1.xhtml is encrypted``.
    """
    try:
        package = open_package(data, Package)
        scan = scan_package(package, data, context.limits.max_decompressed_bytes, strict=False)
        package.damaged = scan.damaged
    except zipfile.BadZipFile as error:
        raise ParseError(source, f"not a valid {kind}: not a ZIP package ({error})"[:300]) from None
    if scan.over_budget:
        raise ParseError(source, context.limits.decompressed_reason())
    if scan.encrypted:
        raise ParseError(source, f"not a valid {kind}: {scan.encrypted[0]} is encrypted")
    return package


def read_member(package: zipfile.ZipFile, name: str, *, source: str, kind: str) -> bytes:
    """The bytes of the member *name* of a package ``open_zip`` opened (its size within ``MAX_DECOMPRESSED_BYTES``).

    Raises:
        ParseError: ``not a valid ODT: content.xml is missing``; ``not a valid ODT: damaged ZIP member
            content.xml: …`` with what the scan found (``CRC-32 is 0x…, the central directory declares 0x…``), or
            else ``zipfile``'s words.
    """
    damage = getattr(package, "damaged", {}).get(name)
    if damage:
        raise ParseError(source, f"not a valid {kind}: damaged ZIP member {name}: {damage}"[:300])
    try:
        return package.read(name)
    except KeyError:
        raise ParseError(source, f"not a valid {kind}: {name} is missing") from None
    except ZIP_FAILURES as error:
        reason = f"not a valid {kind}: damaged ZIP member {name}: {member_failure(error)}"
        raise ParseError(source, reason[:300]) from None


def read_xml(package: zipfile.ZipFile, name: str, *, source: str, context: ReadContext, kind: str):
    """The root element of the XML member *name*, its nesting checked against ``MAX_NESTING_DEPTH``.

    Raises:
        ParseError: the ``read_member`` reasons; ``… content.xml is not well-formed XML (…)``;
            ``… content.xml holds a DTD``; the ``MAX_NESTING_DEPTH`` reason.
    """
    data = read_member(package, name, source=source, kind=kind)
    if b"<!DOCTYPE" in data[:4096]:
        raise ParseError(source, f"not a valid {kind}: {name} holds a DTD (never written for this format)")
    try:
        root = etree.fromstring(data, SAFE_XML)
    except etree.XMLSyntaxError as error:
        raise ParseError(source, f"not a valid {kind}: {name} is not well-formed XML ({error})"[:300]) from None
    if xml_depth(root, stop_above=context.limits.max_nesting_depth) > context.limits.max_nesting_depth:
        raise ParseError(source, context.limits.depth_reason(f"{kind} XML elements"))
    return root


def xml_depth(root, *, stop_above: int) -> int:
    """How deep elements nest below *root* (``root`` alone is 1), measured without recursion; stops counting
    once past *stop_above*."""
    deepest = 0
    stack = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > deepest:
            deepest = depth
            if deepest > stop_above:
                return deepest
        stack.extend((child, depth + 1) for child in node if isinstance(child.tag, str))
    return deepest


def member_path(base: str, href: str) -> str:
    """The member a relative *href* in the member *base* points to: URL-decoded, fragment dropped, resolved
    against *base*'s folder (``member_path("OEBPS/content.opf", "text/ch%201.xhtml#s")`` →
    ``"OEBPS/text/ch 1.xhtml"``)."""
    target = unquote(href.split("#", 1)[0])
    return posixpath.normpath(posixpath.join(posixpath.dirname(base), target)).lstrip("/")
