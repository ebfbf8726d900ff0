"""Mails (.eml, RFC 5322 with MIME): the mail's own page, read with the standard library's ``email`` package (its
default policy, which decodes encoded words and charsets). Its attachments are documents of their own, handed out
by ``chunking.parsers.members`` (docs/architecture.md#containers).

The page holds:
  1. the subject as a ``#`` heading (``# (no subject)`` without one);
  2. ``From:``, ``To:``, ``Cc:`` and ``Date:`` lines, as the mail has them (display names and addresses; a value
     the standard library's header parser fails on, such as an address cut short, as it is written), and an
     ``Attachments:`` line naming the attachments as their documents are named;
  3. the body: the ``text/plain`` part when there is one, else the ``text/html`` part rendered by the HTML
     parser (``chunking.parsers.html``). Quoted replies are kept, and stay marked: the ``>`` of quoted lines and
     the ``On … wrote:`` line before them are the text's own. A body line opening with ``#`` gets a ``\\`` before
     it, so only the subject is a heading.

Dropped: every other header (``Received``, ``Message-ID``, ``Bcc`` when a sender's copy keeps it), inline images,
and the body of an encrypted or signed-only mail (S/MIME, PGP: its parts are not text). A body over
``MAX_DOCUMENT_CHARS`` is refused by the shared check of ``chunking.parsers.read_pages``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from email import policy
from email.errors import HeaderParseError
from email.message import EmailMessage
from email.parser import BytesParser

from chunking.model import Page
from chunking.parsers import html
from chunking.parsers._common import ParseError, ReadContext, decode_text, normalize_newlines, pages_from_texts
from chunking.parsers.members import attachment_names, mail_parts

__all__ = ["header_text", "html_body", "mail_text", "mime_body", "parse", "plain_body"]

_HEADERS = ("From", "To", "Cc", "Date")
_HASH_LINE = re.compile(r"^([ \t]*)#", re.MULTILINE)
_BLANK_LINES = re.compile(r"\n{3,}")


def parse(data: bytes, *, source: str, context: ReadContext | None = None) -> Iterator[Page]:
    """The mail's page (module docstring).

    Raises:
        ParseError: ``not a mail: no header lines`` for bytes without an RFC 5322 header block.
    """
    context = context if context is not None else ReadContext()
    message = BytesParser(policy=policy.default).parsebytes(data)
    if not isinstance(message, EmailMessage) or not message.keys():
        raise ParseError(source, "not a mail: no header lines")
    headers = [(name, header_text(message, name)) for name in _HEADERS]
    attachments = attachment_names(mail_parts(message))
    body = mime_body(message, source=source, context=context)
    return pages_from_texts([mail_text(header_text(message, "Subject"), headers, attachments, body)])


def header_text(message: EmailMessage, name: str) -> str:
    """The value of the header *name* as the default policy reads it (encoded words decoded), ``""`` without one;
    the value as written when that policy's parser fails on it (the standard library's address parser raises
    ``IndexError`` on ``From: Alex <``, an address cut short)."""
    try:
        return str(message.get(name) or "")
    except (LookupError, ValueError, TypeError, AttributeError, HeaderParseError):
        raw = next((value for key, value in message.raw_items() if key.lower() == name.lower()), "")
        return " ".join(str(raw).split())


def mail_text(subject: str, headers: Iterable[tuple[str, str]], attachments: list[str], body: str) -> str:
    """A mail's page, for every mail format (``.eml``, ``.msg``): ``# <subject>`` (``# (no subject)``), a blank
    line, the non-empty *headers* as ``Name: value`` lines (blanks of a value made single spaces), an
    ``Attachments:`` line naming *attachments* when there are any, a blank line and the *body* (``plain_body`` or
    ``html_body``)."""
    subject = " ".join(subject.split()) or "(no subject)"
    lines = [f"{name}: {' '.join(value.split())}" for name, value in headers if value and value.strip()]
    if attachments:
        lines.append("Attachments: " + ", ".join(attachments))
    text = f"# {subject}\n" + ("\n" + "\n".join(lines) + "\n" if lines else "")
    if body:
        text += "\n" + body + "\n"
    return text


def plain_body(text: str) -> str:
    """A plain-text body as a mail's page holds it: newlines normalised, a line opening with ``#`` escaped
    (``\\#``: only the subject is a heading), quoted lines kept with their ``>``, trailing blanks of lines and
    runs of blank lines removed."""
    return _tidy(_HASH_LINE.sub(r"\1\\#", normalize_newlines(text)))


def html_body(raw: bytes, *, source: str, context: ReadContext) -> str:
    """An HTML body rendered by the HTML parser (``chunking.parsers.html``: headings, lists, tables, quotes).

    Raises:
        ParseError: as ``chunking.parsers.html.parse`` raises (bytes that decode to no text, nesting past
            ``MAX_NESTING_DEPTH``, the limits' reasons).
    """
    return _tidy("".join(page.text for page in html.parse(raw, source=source, context=context)))


def _tidy(text: str) -> str:
    return _BLANK_LINES.sub("\n\n", "\n".join(line.rstrip() for line in text.strip("\n").split("\n")))


def mime_body(message: EmailMessage, *, source: str, context: ReadContext) -> str:
    """The body of a MIME *message* as its page holds it (module docstring, item 3): its ``text/plain`` part
    (``plain_body``), else its ``text/html`` part (``html_body``), else ``""``; of a signed mail, its signed
    content's.

    Raises:
        ParseError: a body that decodes to no text (``not valid UTF-8 or any detected encoding``), or the
            ``html_body`` reasons.
    """
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    raw = part.get_payload(decode=True) or b""
    if part.get_content_type() == "text/html":
        return html_body(raw, source=source, context=context)
    return plain_body(decode_text(raw, source=source, declared=part.get_content_charset(), note=context.note))
