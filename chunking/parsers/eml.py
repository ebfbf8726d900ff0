"""Mails (.eml, RFC 5322 with MIME): the mail's own page, read with the standard library's ``email`` package (its
default policy, which decodes encoded words and charsets). Its attachments are documents of their own, handed out
by ``chunking.parsers.members`` (docs/architecture.md#containers).

The page holds:
  1. the subject as a ``#`` heading (``# (no subject)`` without one);
  2. ``From:``, ``To:``, ``Cc:`` and ``Date:`` lines, as the mail has them (display names and addresses), and an
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
from collections.abc import Iterator
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser

from chunking.model import Page
from chunking.parsers import html
from chunking.parsers._common import ParseError, ReadContext, decode_text, normalize_newlines, pages_from_texts
from chunking.parsers.members import attachment_names

__all__ = ["parse"]

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
    subject = " ".join(str(message.get("Subject", "") or "").split()) or "(no subject)"
    lines = []
    for name in _HEADERS:
        value = message.get(name)
        if value:
            lines.append(f"{name}: {' '.join(str(value).split())}")
    attachments = list(message.iter_attachments())
    if attachments:
        lines.append("Attachments: " + ", ".join(attachment_names(attachments)))
    body = _body(message, source=source, context=context)
    text = f"# {subject}\n" + ("\n" + "\n".join(lines) + "\n" if lines else "")
    if body:
        text += "\n" + body + "\n"
    return pages_from_texts([text])


def _body(message: EmailMessage, *, source: str, context: ReadContext) -> str:
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    raw = part.get_payload(decode=True) or b""
    charset = part.get_content_charset()
    if part.get_content_type() == "text/html":
        text = "".join(page.text for page in html.parse(raw, source=source, context=context))
    else:
        text = normalize_newlines(decode_text(raw, source=source, declared=charset, note=context.note))
        text = _HASH_LINE.sub(r"\1\\#", text)
    return _BLANK_LINES.sub("\n\n", "\n".join(line.rstrip() for line in text.strip("\n").split("\n")))
