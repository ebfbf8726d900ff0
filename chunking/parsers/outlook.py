"""Outlook messages ([MS-OXMSG], the Outlook Item (.msg) File Format, Microsoft's open specification), read from
their compound file (``chunking.parsers.cfb``): the properties a mail's page and its attachments need.

How [MS-OXMSG] stores a message (§2.1-§2.4): each object (the message, a recipient, an attachment, an attached
message) is a storage; its fixed-size properties are 16-byte entries of its ``__properties_version1.0`` stream,
after a header of 32 bytes for the top-level message, 24 for an attached message and 8 for a recipient or an
attachment (§2.4.1); a property of variable size (a string, binary data) is the stream
``__substg1.0_<id><type>`` (hex, upper case: ``__substg1.0_0037001F`` is the subject in UTF-16). Recipients are the
storages ``__recip_version1.0_#<n>``, attachments ``__attach_version1.0_#<n>`` (eight hex digits); an attached
message is the storage ``__substg1.0_3701000D`` of its attachment.

What is read ([MS-OXPROPS] names and ids):

- subject ``PidTagSubject`` (0x0037); message class ``PidTagMessageClass`` (0x001A: ``IPM.Note``,
  ``IPM.Note.SMIME.MultipartSigned`` for a clear-signed mail, [MS-OXOSMMS] §2.1.3.1);
- sender: ``PidTagSenderName`` (0x0C1A) with ``PidTagSenderSmtpAddress`` (0x5D01), or ``PidTagSenderEmailAddress``
  (0x0C1F) when ``PidTagSenderAddressType`` (0x0C1E) is ``SMTP`` (an Exchange sender's address is an X.500 name,
  not a mail address: left out); else the ``PidTagSentRepresenting…`` set (0x0042, 0x5D02, 0x0065, 0x0064);
- recipients: each ``__recip`` storage's ``PidTagRecipientType`` (0x0C15: 1 To, 2 Cc, 3 Bcc, dropped),
  ``PidTagDisplayName`` (0x3001) and ``PidTagSmtpAddress`` (0x39FE) or ``PidTagEmailAddress`` (0x3003, when
  ``PidTagAddressType`` 0x3002 is ``SMTP``); without recipient storages, ``PidTagDisplayTo`` (0x0E04) and
  ``PidTagDisplayCc`` (0x0E03);
- date: ``PidTagClientSubmitTime`` (0x0039), else ``PidTagMessageDeliveryTime`` (0x0E06), FILETIMEs (100 ns
  since 1601-01-01 UTC);
- body: ``PidTagBody`` (0x1000), else ``PidTagHtml`` (0x1013, binary in the code page of
  ``PidTagInternetCodepage`` 0x3FDE, or a string), else ``PidTagRtfCompressed`` (0x1009, [MS-OXRTFCP]);
- attachments: ``PidTagAttachMethod`` (0x3705: 1 by value, 5 an attached message, 6 an OLE object, 2-4 and 7
  links), ``PidTagAttachLongFilename`` (0x3707), else ``PidTagAttachFilename`` (0x3704), else
  ``PidTagDisplayName`` (0x3001); ``PidTagAttachMimeTag`` (0x370E); ``PidTagAttachDataBinary`` (0x3701).

Strings: ``PtypString`` (type 0x001F) is UTF-16LE; ``PtypString8`` (0x001E) is in the message's code page
(``PidTagMessageCodepage`` 0x3FFD), else in ``PidTagInternetCodepage`` when the bytes are valid in it (Outlook
writes 65001, UTF-8, there above Windows-1252 strings), else in Windows-1252, undecodable bytes replaced.
"""

from __future__ import annotations

import codecs
import datetime as dt
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from chunking.parsers._common import ParseError
from chunking.parsers.cfb import CompoundError, CompoundFile, Entry, write_compound

__all__ = ["Attachment", "Message", "attachment_file", "decompress_rtf", "open_message"]

_PROPERTIES = "__properties_version1.0"
_NAMEID = "__nameid_version1.0"
_RECIPIENT = "__recip_version1.0_#"
_ATTACHMENT = "__attach_version1.0_#"
_EMBEDDED = "__substg1.0_3701000D"
_TOP_HEADER, _EMBEDDED_HEADER, _CHILD_HEADER = 32, 24, 8  # [MS-OXMSG] §2.4.1
_UNICODE, _STRING8, _BINARY, _LONG, _TIME = 0x001F, 0x001E, 0x0102, 0x0003, 0x0040
_BY_VALUE, _EMBEDDED_MESSAGE, _OLE = 1, 5, 6  # PidTagAttachMethod values ([MS-OXCMSG] §2.2.2.9)
_TO, _CC = 1, 2
_FILETIME_EPOCH = dt.datetime(1601, 1, 1, tzinfo=dt.timezone.utc)
#: Windows code pages whose Python codec is not ``cp<N>``.
_CODE_PAGES = {
    65001: "utf-8", 1200: "utf-16-le", 1201: "utf-16-be", 20127: "ascii", 20866: "koi8-r", 21866: "koi8-u",
    50220: "iso2022-jp", 50221: "iso2022-jp", 50222: "iso2022-jp", 51932: "euc-jp", 51949: "euc-kr",
    54936: "gb18030", 10000: "mac-roman", 52936: "hz", **{28590 + n: f"iso8859-{n}" for n in range(1, 16)},
}  # fmt: skip
_FALLBACK_CODEC = "cp1252"
#: Storages below an attached message's: a message attached to a message attached to … takes three per level
#: (attachment, message, its attachment), so this allows about 30 levels, more than ``MAX_ARCHIVE_DEPTH`` reads,
#: and keeps the recursion far from Python's stack limit.
_MAX_STORAGE_DEPTH = 100


@dataclass(frozen=True)
class Attachment:
    """One attachment of a message.

    Attributes:
        filename: its long file name, else its short one, else its display name (``""``: none).
        mime_type: ``PidTagAttachMimeTag`` (``""``: none).
        method: ``PidTagAttachMethod`` (1 by value, 5 an attached message, …; 0 when missing).
        size_bytes: the bytes it costs to hand out: its data stream, or every stream of an attached message.
        storage: its storage in the compound file.
        damage: why it cannot be read, found while listing it (``""``: nothing found).
    """

    filename: str
    mime_type: str
    method: int
    size_bytes: int
    storage: Entry = field(repr=False)
    damage: str = ""

    @property
    def is_message(self) -> bool:
        """An attached Outlook message (its own ``.msg``)."""
        return self.method == _EMBEDDED_MESSAGE


@dataclass
class Message:
    """What a mail's page needs of one message (module docstring)."""

    subject: str = ""
    message_class: str = ""
    sender: str = ""
    to: list[str] = field(default_factory=list)
    cc: list[str] = field(default_factory=list)
    date: dt.datetime | None = None
    body: str | None = None
    html: str | None = None
    rtf: bytes | None = None
    attachments: list[Attachment] = field(default_factory=list)


@contextmanager
def open_message(data: bytes, *, source: str) -> Iterator[tuple[CompoundFile, Message]]:
    """The compound file of *data* and its top-level message, while the ``with`` block runs.

    Raises:
        ParseError: ``not a valid MSG: not an OLE compound file``; ``not a valid MSG: damaged compound file: …``
            (``chunking.parsers.cfb``); ``not a valid MSG: no message properties (__properties_version1.0)``
            (a compound file that is no Outlook item: a ``.doc`` or ``.xls`` renamed).
    """
    try:
        compound = CompoundFile(data)
    except CompoundError as error:
        raise ParseError(source, f"not a valid MSG: {error}") from None
    try:
        try:
            message = _read_message(compound, compound.root(), header=_TOP_HEADER)
        except CompoundError as error:
            raise ParseError(source, f"not a valid MSG: {error}") from None
        if message is None:
            raise ParseError(source, f"not a valid MSG: no message properties ({_PROPERTIES})")
        yield compound, message
    finally:
        compound.close()


def attachment_file(compound: CompoundFile, attachment: Attachment) -> bytes:
    """The bytes of *attachment* as a file: its data, or an attached message as a ``.msg`` of its own (its storage
    as the root, its property header widened from 24 to 32 bytes as a top-level message's is, the named-property
    map of the outer message copied beside it, [MS-OXMSG] §2.2.3).

    Raises:
        CompoundError: a stream of it is damaged (``chunking.parsers.cfb``).
        ValueError: an attachment of another method (an OLE object, a link), with the reason it is not read.
    """
    if attachment.damage:
        raise CompoundError(attachment.damage)
    if attachment.is_message:
        inner = compound.child(attachment.storage, _EMBEDDED)
        if inner is None or not inner.is_storage:
            raise ValueError("an attached message without its message storage")
        tree = _tree(compound, inner)
        properties = tree.get(_PROPERTIES)
        if isinstance(properties, bytes):
            tree[_PROPERTIES] = properties[:_EMBEDDED_HEADER] + b"\0" * (_TOP_HEADER - _EMBEDDED_HEADER) + \
                properties[_EMBEDDED_HEADER:]
        nameid = compound.child(compound.root(), _NAMEID)
        if nameid is not None and nameid.is_storage:
            tree[_NAMEID] = _tree(compound, nameid)
        return write_compound(tree)
    if attachment.method == _OLE:
        raise ValueError("an embedded OLE object (attach method 6), not read")
    if attachment.method not in (_BY_VALUE, 0):
        raise ValueError(f"a link to a file outside the mail (attach method {attachment.method}), not read")
    stream = compound.child(attachment.storage, "__substg1.0_37010102")
    return compound.read(stream) if stream is not None and not stream.is_storage else b""


def decompress_rtf(data: bytes, *, max_bytes: int) -> bytes:
    """Compressed RTF ([MS-OXRTFCP] §2.1.3.1): ``MELA`` data as it is, ``LZFu`` data decompressed with the 4,096-byte
    dictionary primed by the spec's 207 initial bytes. Stops at *max_bytes* of output.

    Raises:
        ValueError: a header that is neither, or output past *max_bytes*.
    """
    if len(data) < 16:
        raise ValueError("compressed RTF shorter than its header")
    compressed_size, raw_size, kind = struct.unpack_from("<III", data)
    body = data[16:4 + compressed_size]
    if kind == 0x414C454D:  # "MELA": not compressed
        return body[:raw_size]
    if kind != 0x75465A4C:  # "LZFu"
        raise ValueError("not compressed RTF (neither LZFu nor MELA)")
    window = bytearray(_RTF_PREBUF.ljust(4096, b"\0"))
    position = len(_RTF_PREBUF)
    out = bytearray()
    index = 0
    while index < len(body):
        control = body[index]
        index += 1
        for bit in range(8):
            if index >= len(body):
                break
            if control & (1 << bit):
                if index + 1 >= len(body):
                    return bytes(out)
                reference = (body[index] << 8) | body[index + 1]
                index += 2
                offset, length = reference >> 4, (reference & 0xF) + 2
                if offset == position:  # the reference to the write position ends the data
                    return bytes(out)
                for step in range(length):
                    byte = window[(offset + step) % 4096]
                    out.append(byte)
                    window[position] = byte
                    position = (position + 1) % 4096
            else:
                byte = body[index]
                index += 1
                out.append(byte)
                window[position] = byte
                position = (position + 1) % 4096
            if len(out) > max_bytes:
                raise ValueError("compressed RTF expands past its budget")
    return bytes(out)


#: The initial dictionary of compressed RTF ([MS-OXRTFCP] §3.1.4.1.1, 207 bytes).
_RTF_PREBUF = (
    b"{\\rtf1\\ansi\\mac\\deff0\\deftab720{\\fonttbl;}{\\f0\\fnil \\froman \\fswiss \\fmodern \\fscript "
    b"\\fdecor MS Sans SerifSymbolArialTimes New RomanCourier{\\colortbl\\red0\\green0\\blue0\r\n\\par "
    b"\\pard\\plain\\f0\\fs20\\b\\i\\u\\tab\\tx"
)


def _tree(compound: CompoundFile, storage: Entry, depth: int = 0) -> dict:
    """*storage*'s streams and storages read into a ``chunking.parsers.cfb.Tree``.

    Raises:
        CompoundError: storages nested deeper than ``_MAX_STORAGE_DEPTH``, or a damaged stream.
    """
    if depth > _MAX_STORAGE_DEPTH:
        raise CompoundError(f"damaged compound file: storages nested more than {_MAX_STORAGE_DEPTH} deep")
    tree: dict = {}
    for entry in compound.children(storage):
        tree[entry.name] = _tree(compound, entry, depth + 1) if entry.is_storage else compound.read(entry)
    return tree


def _tree_size(compound: CompoundFile, storage: Entry, depth: int = 0) -> int:
    """The bytes of every stream below *storage* (``_tree``'s bound on depth)."""
    if depth > _MAX_STORAGE_DEPTH:
        raise CompoundError(f"damaged compound file: storages nested more than {_MAX_STORAGE_DEPTH} deep")
    return sum(_tree_size(compound, entry, depth + 1) if entry.is_storage else entry.size_bytes
               for entry in compound.children(storage))


class _Properties:
    """The properties of one object (message, recipient, attachment): fixed values from its property stream,
    variable ones from their streams."""

    def __init__(self, compound: CompoundFile, storage: Entry, *, header: int,
                 codecs_8bit: tuple[str, ...] = (_FALLBACK_CODEC,)):
        self.compound, self.storage, self.codecs_8bit = compound, storage, codecs_8bit
        self.streams = {entry.name.upper(): entry for entry in compound.children(storage)}
        self.fixed: dict[int, bytes] = {}
        stream = self.streams.get(_PROPERTIES.upper())
        self.present = stream is not None and not stream.is_storage
        if self.present:
            raw = compound.read(stream)
            for start in range(header, len(raw) - 15, 16):
                tag = struct.unpack_from("<I", raw, start)[0]
                self.fixed[tag] = raw[start + 8:start + 16]

    def long(self, property_id: int) -> int | None:
        value = self.fixed.get((property_id << 16) | _LONG)
        return struct.unpack("<i", value[:4])[0] if value is not None else None

    def time(self, property_id: int) -> dt.datetime | None:
        value = self.fixed.get((property_id << 16) | _TIME)
        if value is None:
            return None
        ticks = struct.unpack("<Q", value)[0]
        try:
            return _FILETIME_EPOCH + dt.timedelta(microseconds=ticks // 10)
        except OverflowError:
            return None

    def stream(self, property_id: int, kind: int) -> bytes | None:
        entry = self.streams.get(f"__SUBSTG1.0_{property_id:04X}{kind:04X}")
        return self.compound.read(entry) if entry is not None and not entry.is_storage else None

    def string(self, property_id: int) -> str:
        """A string property, ``PtypString`` or ``PtypString8``; ``""`` when missing. Cut at its first NUL."""
        raw = self.stream(property_id, _UNICODE)
        if raw is not None:
            return raw.decode("utf-16-le", errors="replace").split("\0", 1)[0].strip()
        raw = self.stream(property_id, _STRING8)
        if raw is not None:
            return self.decode_8bit(raw).split("\0", 1)[0].strip()
        return ""

    def decode_8bit(self, raw: bytes) -> str:
        """*raw* in the first of ``codecs_8bit`` that decodes it; else in the last, undecodable bytes replaced."""
        for codec in self.codecs_8bit:
            try:
                return raw.decode(codec)
            except UnicodeDecodeError:
                continue
        return raw.decode(self.codecs_8bit[-1], errors="replace")


def codec_of(code_page: int | None) -> str | None:
    """The Python codec of a Windows code page (1252 → ``cp1252``, 65001 → ``utf-8``); ``None`` for one Python
    does not know."""
    if code_page is None or code_page <= 0:
        return None
    name = _CODE_PAGES.get(code_page, f"cp{code_page}")
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def _read_message(compound: CompoundFile, storage: Entry, *, header: int) -> Message | None:
    properties = _Properties(compound, storage, header=header)
    if not properties.present:
        return None
    # 8-bit strings: the message's code page; else the internet code page, unless the bytes are not valid in it
    # (Outlook writes UTF-8 as the internet code page above Windows-1252 strings); else Windows-1252.
    found = [codec_of(properties.long(0x3FFD)), codec_of(properties.long(0x3FDE)), _FALLBACK_CODEC]
    codec_list = tuple(dict.fromkeys(codec for codec in found if codec))
    properties.codecs_8bit = codec_list
    message = Message(subject=" ".join(properties.string(0x0037).split()), message_class=properties.string(0x001A),
                      sender=_sender(properties))
    recipients = sorted((entry for entry in compound.children(storage)
                         if entry.is_storage and entry.name.startswith(_RECIPIENT)), key=lambda e: e.name)
    for entry in recipients:
        recipient = _Properties(compound, entry, header=_CHILD_HEADER, codecs_8bit=codec_list)
        kind = recipient.long(0x0C15)
        address = _address(recipient.string(0x3001), recipient.string(0x39FE)
                           or _smtp(recipient.string(0x3002), recipient.string(0x3003)))
        if address and kind in (_TO, _CC):
            (message.to if kind == _TO else message.cc).append(address)
    if not recipients:
        message.to = _names(properties.string(0x0E04))
        message.cc = _names(properties.string(0x0E03))
    message.date = properties.time(0x0039) or properties.time(0x0E06)
    body = properties.stream(0x1000, _UNICODE)
    if body is not None:
        message.body = body.decode("utf-16-le", errors="replace").split("\0", 1)[0]
    elif (body := properties.stream(0x1000, _STRING8)) is not None:
        message.body = properties.decode_8bit(body).split("\0", 1)[0]
    if not (message.body or "").strip():
        message.body = None
        html = properties.stream(0x1013, _BINARY)
        if html is not None:
            message.html = html.decode(codec_of(properties.long(0x3FDE)) or codec_list[0], errors="replace")
        else:
            message.html = properties.string(0x1013) or None
        if message.html is None:
            message.rtf = properties.stream(0x1009, _BINARY)
    attachments = sorted((entry for entry in compound.children(storage)
                          if entry.is_storage and entry.name.startswith(_ATTACHMENT)), key=lambda e: e.name)
    for entry in attachments:
        attached = _Properties(compound, entry, header=_CHILD_HEADER, codecs_8bit=codec_list)
        method = attached.long(0x3705) or 0
        inner = compound.child(entry, _EMBEDDED)
        if method == 0 and inner is not None and inner.is_storage:  # no method: the storage says which
            method = _EMBEDDED_MESSAGE
        data = compound.child(entry, "__substg1.0_37010102")
        size, damage = (data.size_bytes if data is not None else 0), ""
        if method == _EMBEDDED_MESSAGE and inner is not None:
            try:
                size = _tree_size(compound, inner)
            except CompoundError as error:  # refused when handed out; the mail's page still names it
                damage = str(error)
        message.attachments.append(Attachment(
            filename=attached.string(0x3707) or attached.string(0x3704) or attached.string(0x3001),
            mime_type=attached.string(0x370E), method=method, size_bytes=size, storage=entry, damage=damage))
    return message


def _sender(properties: _Properties) -> str:
    for name, smtp, address_type, address in ((0x0C1A, 0x5D01, 0x0C1E, 0x0C1F), (0x0042, 0x5D02, 0x0064, 0x0065)):
        text = _address(properties.string(name),
                        properties.string(smtp) or _smtp(properties.string(address_type), properties.string(address)))
        if text:
            return text
    return ""


def _smtp(address_type: str, address: str) -> str:
    return address if address_type.upper() == "SMTP" or (not address_type and "@" in address) else ""


def _address(name: str, address: str) -> str:
    """``Name <address>`` as a mail header writes it; either alone when the other is missing or the same."""
    name, address = " ".join(name.split()), address.strip()
    if name and address:
        return address if name.strip("'\"") == address else f"{name} <{address}>"
    return name or address


def _names(display: str) -> list[str]:
    return [name.strip() for name in display.split(";") if name.strip()]
