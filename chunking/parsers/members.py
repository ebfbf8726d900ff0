"""The members of a container, one at a time: a ZIP archive's files and a mail's attachments, each the bytes of a
document of its own (its name says its format), or a refusal with its reason. Stage 1 parses each member with its
own format's parser under an id below the container's (docs/architecture.md#containers); this module only opens
the container and hands the members out, never parsing them.

A ZIP member is refused, the others going on, when its name is unsafe (absolute, a drive letter, a ``..``
segment, a NUL: a path-traversal name), when a member of the same name came before, when it is encrypted (general
purpose bit 0, PKWARE APPNOTE.TXT §4.4.4), when it inflates past ``MAX_DECOMPRESSED_BYTES`` (inflated in pieces
of 1 MiB, never trusting the declared size, so a zip bomb costs at most that much), when its compression method
is one ``zipfile`` cannot read, when it is damaged (its data cut short, a CRC mismatch, a local header that is not
where the central directory says), or when the container's deadline has passed. Folders are skipped. Past
``MAX_ARCHIVE_MEMBERS`` members the rest are not read, and a note says how many.

A mail's attachments (RFC 5322 and MIME, RFC 2045-2046, read by the standard library's ``email`` package with
its default policy) are the parts ``EmailMessage.iter_attachments`` gives (of a signed mail, ``multipart/signed``,
those of its signed content), but for the signature of a signed mail (S/MIME ``application/pkcs7-signature``,
RFC 8551; OpenPGP ``application/pgp-signature``, RFC 3156), which holds no text and would fail as an unsupported
file in every signed mail. They are named by their ``filename`` (its last path segment; ``attachment-N`` with the
extension of their content type when unnamed; ``name (2).pdf`` for a second of the same name); an attached
message (``message/rfc822``) is a ``.eml`` member of its own.

An Outlook message's attachments ([MS-OXMSG], read by ``chunking.parsers.outlook``) are named the same way from
their long file name (else short file name, else display name) and MIME tag; but a clear-signed one (message
class ``IPM.Note.SMIME.MultipartSigned``, [MS-OXOSMMS] §2.1.3.1) keeps its whole MIME ``multipart/signed`` entity
in its one attachment (``smime.p7m``): its attachments are then those of that entity's signed content, as a signed
``.eml`` mail's are (``outlook_signed_content``). An attached message (attach method 5) is a ``.msg`` member of
its own, re-rooted as a compound file (``outlook.attachment_file``), and so a container nested one level deeper.
One is refused, the others going on, when its stream is damaged (a FAT cycle, a sector past the end of the file),
when it is an OLE object or a link to a file outside the mail, when the attachments read before it and it add up
past ``MAX_DECOMPRESSED_BYTES`` (its declared size is compared before anything is read),
or past the deadline; past ``MAX_ARCHIVE_MEMBERS`` the rest are not read, and a note says how many.
"""

from __future__ import annotations

import mimetypes
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser

from chunking.formats import extension_of, format_of
from chunking.parsers._common import ParseError, ReadContext
from chunking.parsers.cfb import CompoundError, CompoundFile
from chunking.parsers.outlook import Attachment, Message, attachment_file, open_message
from chunking.parsers.packages import ZIP_FAILURES, member_failure, open_package

__all__ = ["Member", "attachment_names", "iter_members", "mail_attachments", "zip_members"]
__all__ += ["SIGNATURE_TYPES", "mail_parts", "member_names", "outlook_attachment_names", "outlook_attachments",
            "outlook_signed_content"]

_PIECE_BYTES = 1 << 20
_ENCRYPTED = 0x1
_DRIVE = re.compile(r"^[A-Za-z]:")
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class Member:
    """One member of a container.

    Attributes:
        name: its path below the container, ``/``-separated (``"docs/a.pdf"``, ``"attachments/report.pdf"``).
        data: its bytes; empty when refused.
        reason: why it is refused (``""``: it is not).
    """

    name: str
    data: bytes = b""
    reason: str = ""


def iter_members(data: bytes, *, source: str, context: ReadContext) -> Iterator[Member]:
    """The members of the container *source* (its format's parser: ``archive``, ``eml`` or ``msg``), one at a time.

    Raises:
        ParseError: the container itself cannot be opened (``not a valid ZIP: …``, ``not a valid MSG: …``).
    """
    fmt = format_of(source)
    if fmt is not None and fmt.parser == "archive":
        return zip_members(data, source=source, context=context)
    if fmt is not None and fmt.parser == "eml":
        return mail_attachments(data, source=source, context=context)
    if fmt is not None and fmt.parser == "msg":
        return outlook_attachments(data, source=source, context=context)
    return iter(())


def open_archive(data: bytes, *, source: str) -> zipfile.ZipFile:
    """*data* opened as a ZIP archive.

    Raises:
        ParseError: ``not a valid ZIP: …``.
    """
    try:
        return open_package(data)
    except zipfile.BadZipFile as error:
        raise ParseError(source, f"not a valid ZIP: {error}"[:300]) from None


def unsafe_name(name: str) -> bool:
    """A member name that could reach outside the archive's folder if extracted: absolute (``/x``, ``\\x``), a
    drive letter (``C:x``), a ``..`` segment (either separator), a NUL or other control character, or empty."""
    segments = name.replace("\\", "/").split("/")
    return (not name or name.startswith(("/", "\\")) or bool(_DRIVE.match(name)) or ".." in segments
            or bool(_UNPRINTABLE.search(name)))


def zip_members(data: bytes, *, source: str, context: ReadContext) -> Iterator[Member]:
    """The files of a ZIP archive, in the order of its central directory (module docstring)."""
    limits = context.limits
    with open_archive(data, source=source) as package:
        seen: set[str] = set()
        read = 0
        files = [info for info in package.infolist() if not info.filename.endswith("/")]  # folders (is_dir fails on "")
        for info in files:
            name = info.filename
            label = _UNPRINTABLE.sub("?", name.replace("\\", "/"))
            if read == limits.max_archive_members:
                context.note(f"{len(files) - read} members not read: {limits.archive_members_reason()}")
                return
            read += 1
            if unsafe_name(name):
                yield Member(_safe_label(label), reason=f"unsafe member name {label!r} (absolute, or a .. segment)")
                continue
            if label in seen:
                yield Member(label, reason="a member of the same name comes before it in the archive")
                continue
            seen.add(label)
            if info.flag_bits & _ENCRYPTED:
                yield Member(label, reason="encrypted member (password-protected)")
                continue
            if format_of(label) is None:  # refused without its bytes being inflated
                extension = extension_of(label)
                yield Member(label, reason=f"unsupported file type {extension}" if extension
                             else "unsupported file type (no extension)")
                continue
            if context.deadline is not None and context.deadline.expired():
                yield Member(label, reason=limits.seconds_reason())
                continue
            yield _inflated(package, info, label, limits)


def _safe_label(label: str) -> str:
    """A refused member's name below the container, without leading separators or ``..`` segments."""
    parts = [part for part in label.split("/") if part not in ("", ".", "..")]
    return "/".join(parts).lstrip(":") or "unnamed"


def _inflated(package: zipfile.ZipFile, info: zipfile.ZipInfo, label: str, limits) -> Member:
    """The member's bytes, inflated in pieces and stopped past ``MAX_DECOMPRESSED_BYTES``. A member declaring more
    is refused without inflating it; one declaring less than it inflates to stops at its declared size (``zipfile``
    reads no further) and fails its CRC check, so no member costs more than the budget."""
    budget = limits.max_decompressed_bytes
    if info.file_size > budget:
        return Member(label, reason=limits.decompressed_reason())
    pieces: list[bytes] = []
    size = 0
    try:
        with package.open(info) as stream:
            while piece := stream.read(_PIECE_BYTES):
                size += len(piece)
                if size > budget:
                    return Member(label, reason=limits.decompressed_reason())
                pieces.append(piece)
    except NotImplementedError as error:  # a compression method zipfile does not read
        return Member(label, reason=f"cannot be read: {error}")
    except ZIP_FAILURES as error:
        # damaged data, a CRC mismatch, a local header offset before the file's start ("negative seek value"), a
        # local header's name flagged UTF-8 that is not
        return Member(label, reason=f"damaged member: {member_failure(error)}"[:300])
    return Member(label, b"".join(pieces))


def mail_attachments(data: bytes, *, source: str, context: ReadContext) -> Iterator[Member]:
    """The attachments of a mail, in the order of its parts (module docstring)."""
    message = BytesParser(policy=policy.default).parsebytes(data)
    yield from _part_members(mail_parts(message) if isinstance(message, EmailMessage) else [], context)


def _part_members(parts: list, context: ReadContext) -> Iterator[Member]:
    """A member for each attachment part of a MIME mail (``mail_parts``), within ``MAX_ARCHIVE_MEMBERS`` and the
    deadline."""
    limits = context.limits
    for number, (name, part) in enumerate(zip(attachment_names(parts), parts), start=1):
        if number > limits.max_archive_members:
            context.note(f"{len(parts) - limits.max_archive_members} attachments not read: "
                         f"{limits.archive_members_reason()}")
            return
        label = f"attachments/{name}"
        if context.deadline is not None and context.deadline.expired():
            yield Member(label, reason=limits.seconds_reason())
            continue
        yield Member(label, _part_bytes(part))


#: The content types of a signed mail's signature part (module docstring).
SIGNATURE_TYPES = frozenset({"application/pkcs7-signature", "application/x-pkcs7-signature",
                             "application/pgp-signature"})


def mail_parts(message: EmailMessage) -> list:
    """The attachment parts of *message* (``iter_attachments``), without a signed mail's signature. A signed mail
    (``multipart/signed``, RFC 1847: the signed content, then the signature) has those of its signed content, which
    ``iter_attachments`` would give as one unnamed part."""
    if message.get_content_type() == "multipart/signed":
        content = message.get_payload(0) if message.is_multipart() and message.get_payload() else None
        return mail_parts(content) if isinstance(content, EmailMessage) else []
    return [part for part in message.iter_attachments() if part.get_content_type() not in SIGNATURE_TYPES]


def attachment_names(parts: list) -> list[str]:
    """A name for each attachment part of a MIME mail (``member_names``); an attached message is a ``.eml``."""
    return member_names([(part.get_filename() or "", part.get_content_type(),
                          ".eml" if part.get_content_type() == "message/rfc822" else "") for part in parts])


def member_names(attachments: list[tuple[str, str, str]]) -> list[str]:
    """A name for each attachment of a mail, given as (its file name, its content type, the extension of an
    attached message or ``""``): its file name's last segment, else ``attachment-N`` with the extension of its
    content type (or of an attached message); an attached message whose name does not end in that extension gets
    it appended (its bytes are a mail, whatever its name says); a repeated name gets `` (2)``, `` (3)``… before its extension."""
    names: list[str] = []
    taken: set[str] = set()
    for number, (raw, content_type, message_extension) in enumerate(attachments, start=1):
        name = _UNPRINTABLE.sub("", raw.replace("\\", "/").split("/")[-1]).strip().strip(".") if raw else ""
        if not name:
            extension = message_extension or (mimetypes.guess_extension(content_type) if content_type else None)
            name = f"attachment-{number}{extension or '.bin'}"
        elif message_extension and extension_of(name) != message_extension:
            name += message_extension
        stem, dot, extension = name.rpartition(".") if "." in name else (name, "", "")
        candidate, copy = name, 2
        while candidate.lower() in taken:
            candidate = f"{stem} ({copy}){dot}{extension}" if dot else f"{name} ({copy})"
            copy += 1
        taken.add(candidate.lower())
        names.append(candidate)
    return names


def outlook_attachments(data: bytes, *, source: str, context: ReadContext) -> Iterator[Member]:
    """The attachments of an Outlook message, in the order of their storages (module docstring).

    Raises:
        ParseError: the message cannot be opened (``not a valid MSG: …``, ``chunking.parsers.outlook``).
    """
    limits = context.limits
    with open_message(data, source=source) as (compound, message):
        signed = outlook_signed_content(compound, message, max_bytes=limits.max_decompressed_bytes)
        if signed is not None:  # a clear-signed mail: the attachments of its signed content
            yield from _part_members(mail_parts(signed), context)
            return
        attachments = message.attachments
        budget = limits.max_decompressed_bytes
        for number, (name, attachment) in enumerate(zip(outlook_attachment_names(attachments), attachments),
                                                    start=1):
            if number > limits.max_archive_members:
                context.note(f"{len(attachments) - limits.max_archive_members} attachments not read: "
                             f"{limits.archive_members_reason()}")
                return
            label = f"attachments/{name}"
            if context.deadline is not None and context.deadline.expired():
                yield Member(label, reason=limits.seconds_reason())
                continue
            if attachment.size_bytes > budget:
                yield Member(label, reason=limits.attachments_reason())
                continue
            try:
                payload = attachment_file(compound, attachment)
            except CompoundError as error:
                yield Member(label, reason=f"damaged attachment: {error}")
                continue
            except ValueError as error:
                yield Member(label, reason=str(error))
                continue
            budget -= len(payload)
            yield Member(label, payload)


#: The message class of a clear-signed Outlook mail ([MS-OXOSMMS] §2.1.3.1), compared without regard to case.
_CLEAR_SIGNED_CLASS = "ipm.note.smime.multipartsigned"


def outlook_signed_content(compound: CompoundFile, message: Message, *, max_bytes: int) -> EmailMessage | None:
    """The MIME ``multipart/signed`` entity a clear-signed Outlook *message* (of *compound*) keeps in its
    attachment (``smime.p7m``), parsed by the standard library's ``email`` package: its body and attachments are
    the mail's (``mail_parts``, ``chunking.parsers.eml.mime_body``). ``None`` for a message of another class
    (an opaque-signed or encrypted one, ``IPM.Note.SMIME``, holds no MIME there but CMS data), or when no
    attachment of at most *max_bytes* holds a ``multipart/signed`` entity (the message is then read as any other,
    that attachment a member)."""
    if not message.message_class.lower().startswith(_CLEAR_SIGNED_CLASS):
        return None
    for attachment in message.attachments:
        if attachment.is_message or attachment.damage or attachment.size_bytes > max_bytes:
            continue
        try:
            data = attachment_file(compound, attachment)
        except (CompoundError, ValueError):
            continue
        content = BytesParser(policy=policy.default).parsebytes(data)
        if isinstance(content, EmailMessage) and content.get_content_type() == "multipart/signed":
            return content
    return None


def outlook_attachment_names(attachments: list[Attachment]) -> list[str]:
    """A name for each attachment of an Outlook message (``member_names``); an attached message is a ``.msg``."""
    return member_names([(attachment.filename, attachment.mime_type, ".msg" if attachment.is_message else "")
                         for attachment in attachments])


def _part_bytes(part) -> bytes:
    """An attachment's bytes: the transfer encoding undone; an attached message as it was sent."""
    if part.get_content_type() == "message/rfc822":
        inner = part.get_payload()
        inner = inner[0] if isinstance(inner, list) and inner else inner
        return inner.as_bytes() if hasattr(inner, "as_bytes") else b""
    payload = part.get_payload(decode=True)
    return payload if isinstance(payload, bytes) else b""
