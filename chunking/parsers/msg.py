"""Outlook messages (.msg, [MS-OXMSG]): the mail's own page, laid out as a ``.eml`` mail's is
(``chunking.parsers.eml.mail_text``), from the properties ``chunking.parsers.outlook`` reads out of the compound
file. Its attachments are documents of their own, handed out by ``chunking.parsers.members``
(docs/architecture.md#containers); an attached message is a ``.msg`` of its own.

The page holds:
  1. the subject as a ``#`` heading (``# (no subject)`` without one);
  2. ``From:`` (sender name and SMTP address), ``To:`` and ``Cc:`` (the recipients, ``Name <address>``),
     ``Date:`` (the client submit time, else the delivery time, in UTC, written as RFC 5322 writes dates) and an
     ``Attachments:`` line naming the attachments as their documents are named;
  3. the body: the plain-text body when there is one, else the HTML body rendered by the HTML parser, else the
     compressed RTF body ([MS-OXRTFCP], decompressed here) read by the RTF parser (an RTF body that
     encapsulates HTML gives its text, without the HTML's headings or tables). Quoted replies are kept and stay
     marked as in ``.eml`` (the ``>`` of quoted lines, the ``From: … Sent: …`` block Outlook writes above a
     reply are the text's own); a body line opening with ``#`` gets a ``\\`` before it.

A clear-signed message (S/MIME, message class ``IPM.Note.SMIME.MultipartSigned``) keeps its MIME
``multipart/signed`` entity in its one attachment, ``smime.p7m`` (``chunking.parsers.members.outlook_signed_content``):
its body and ``Attachments:`` line are then those of that entity's signed content, read as a signed ``.eml``
mail's are (the body as ``chunking.parsers.eml`` reads it, the message's own body when that has none; the
signature is no attachment); the headers stay the message's.

Dropped: Bcc recipients, every other property (categories, flags, named properties, the transport headers), the
RTF formatting, inline images (they are attachments: documents of their own). Refused with a reason: a file that
is no compound file or whose compound file is damaged, a compound file without message properties
(``chunking.parsers.outlook.open_message``).
"""

from __future__ import annotations

from collections.abc import Iterator
from email.utils import format_datetime

from chunking.model import Page
from chunking.parsers import rtf
from chunking.parsers._common import ParseError, ReadContext, pages_from_texts
from chunking.parsers.eml import html_body, mail_text, mime_body, plain_body
from chunking.parsers.members import attachment_names, mail_parts, outlook_attachment_names, outlook_signed_content
from chunking.parsers.outlook import Message, decompress_rtf, open_message

__all__ = ["parse"]


def parse(data: bytes, *, source: str, context: ReadContext | None = None) -> Iterator[Page]:
    """The message's page (module docstring).

    Raises:
        ParseError: the reasons of ``chunking.parsers.outlook.open_message`` (``not a valid MSG: …``).
    """
    context = context if context is not None else ReadContext()
    with open_message(data, source=source) as (compound, message):
        headers = [("From", message.sender), ("To", ", ".join(message.to)), ("Cc", ", ".join(message.cc)),
                   ("Date", format_datetime(message.date) if message.date else "")]
        signed = outlook_signed_content(compound, message, max_bytes=context.limits.max_decompressed_bytes)
        if signed is None:
            names, body = outlook_attachment_names(message.attachments), ""
        else:  # clear-signed: the signed content's body and attachments (module docstring)
            names, body = attachment_names(mail_parts(signed)), mime_body(signed, source=source, context=context)
        text = mail_text(message.subject, headers, names, body or _body(message, source=source, context=context))
    return pages_from_texts([text])


def _body(message: Message, *, source: str, context: ReadContext) -> str:
    if message.body is not None:
        return plain_body(message.body)
    if message.html is not None:
        # Decoded already (its code page is the message's): a byte order mark tells the HTML parser so.
        return html_body(message.html.encode("utf-8-sig"), source=source, context=context)
    if message.rtf:
        try:
            raw = decompress_rtf(message.rtf, max_bytes=context.limits.max_decompressed_bytes)
        except ValueError as error:
            context.note(f"RTF body not read: {error}")
            return ""
        try:
            return plain_body("".join(page.text for page in rtf.parse(raw, source=source, context=context)))
        except ParseError as error:
            context.note(f"RTF body not read: {error.reason}")
    return ""
