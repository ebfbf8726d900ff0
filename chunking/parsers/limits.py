"""Per-document limits: how much one document may make the pipeline read, hold and compute.

Every limit is checked *while* reading (the PDF's streams are inflated with a bounded budget before PDFium sees
them, ZIP members are inflated in pieces, pages and characters are counted as they come), so nothing beyond a
limit is ever held. An exceeded limit is a ``ParseError`` whose reason names the limit and its setting, e.g.
``more than 5000 pages (MAX_PAGES)``; the document is ``failed`` in the ledger and its previous version stays
searchable.

Defaults keep one document under about 500 MB of peak memory on a 1.5 GB Flex Consumption worker (figures in
``docs/``, measured by the tests in ``tests/scenarios/hostile/``), while leaving real documents alone: a 1,000-page
manual has about 3 million characters; real JSON and HTML rarely nest beyond 30 levels.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Deadline", "LIMIT_SETTINGS", "Limits"]

_MiB = 1024 * 1024

#: Setting name → ``Limits`` field (``chunking.settings.Settings`` reads them, with the same defaults).
LIMIT_SETTINGS: dict[str, str] = {
    "MAX_DECOMPRESSED_BYTES": "max_decompressed_bytes",
    "MAX_PAGES": "max_pages",
    "MAX_PAGE_CHARS": "max_page_chars",
    "MAX_DOCUMENT_CHARS": "max_document_chars",
    "MAX_NESTING_DEPTH": "max_nesting_depth",
    "STAGE1_MAX_SECONDS": "stage1_max_seconds",
    "FIGURES_MAX_PER_DOCUMENT": "figures_max_per_document",
}
LIMIT_SETTINGS.update({"MAX_ARCHIVE_DEPTH": "max_archive_depth", "MAX_ARCHIVE_MEMBERS": "max_archive_members"})


@dataclass(frozen=True)
class Limits:
    """Per-document limits (their settings in ``LIMIT_SETTINGS``).

    Attributes:
        max_decompressed_bytes: bytes one document may inflate to: the members of a ZIP package (DOCX) added
            up, or a PDF's compressed non-image streams added up; an Outlook message's attachments added up.
        max_pages: PDF pages.
        max_page_chars: characters of one PDF page's text.
        max_document_chars: characters of the document's text (all pages).
        max_nesting_depth: levels of JSON arrays/objects, HTML elements, Markdown lists and block quotes.
        max_archive_depth: containers (a ZIP, a mail) a document may lie in: 1 reads the members of an archive
            but not those of an archive inside it.
        max_archive_members: members (attachments, archive entries) of one container that are read; the
            others are refused.
        stage1_max_seconds: wall-clock seconds of one stage-1 invocation (parsing and splitting one document).
        figures_max_per_document: pictures inside one document (one page range of a long PDF) read by local OCR
            (``chunking.parsers.pictures``); 0 reads none.
        keep_pictures: the pictures that pass the skip rules are kept (``ReadContext.images``, passed back from
            the parse child) and their ``<figure>`` blocks name them, for a vision describer to describe after
            parsing (``chunking.parsers.pictures``, docs/parsers.md#figure-descriptions); set by stage 1 when
            ``FIGURES_DESCRIBER`` calls a model, not a setting of its own.
    """

    max_decompressed_bytes: int = 100 * _MiB
    max_pages: int = 5_000
    max_page_chars: int = 1_000_000
    max_document_chars: int = 10_000_000
    max_nesting_depth: int = 100
    max_archive_depth: int = 2
    max_archive_members: int = 1_000
    stage1_max_seconds: int = 300
    figures_max_per_document: int = 50
    keep_pictures: bool = False

    @classmethod
    def from_settings(cls, settings: Any) -> "Limits":
        """The limits of a ``chunking.settings.Settings`` (fields of the same names)."""
        return cls(**{field_name: getattr(settings, field_name) for field_name in LIMIT_SETTINGS.values()})

    # The reasons, one place, so tests and docs quote them exactly.

    def decompressed_reason(self) -> str:
        return f"expands past {_size(self.max_decompressed_bytes)} when decompressed (MAX_DECOMPRESSED_BYTES)"

    def pages_reason(self, pages: int) -> str:
        return f"{pages} pages, more than {self.max_pages} (MAX_PAGES)"

    def page_chars_reason(self, page_num: int) -> str:
        return f"page {page_num + 1} has more than {self.max_page_chars} characters (MAX_PAGE_CHARS)"

    def document_chars_reason(self) -> str:
        return f"more than {self.max_document_chars} characters of text (MAX_DOCUMENT_CHARS)"

    def depth_reason(self, what: str) -> str:
        return f"{what} nested more than {self.max_nesting_depth} levels deep (MAX_NESTING_DEPTH)"

    def archive_depth_reason(self) -> str:
        return f"lies in more than {self.max_archive_depth} nested archives or mails (MAX_ARCHIVE_DEPTH)"

    def archive_members_reason(self) -> str:
        return f"past the first {self.max_archive_members} members of its container (MAX_ARCHIVE_MEMBERS)"

    def attachments_reason(self) -> str:
        return (f"the mail's attachments up to this one add up past {_size(self.max_decompressed_bytes)} "
                f"(MAX_DECOMPRESSED_BYTES)")

    def seconds_reason(self) -> str:
        return f"stage 1 took longer than {self.stage1_max_seconds} s (STAGE1_MAX_SECONDS)"


@dataclass
class Deadline:
    """The wall-clock end of one stage-1 invocation; ``expired()`` is checked between pages, blocks and chunks."""

    seconds: float
    started: float = field(default_factory=time.monotonic)

    def expired(self) -> bool:
        return time.monotonic() - self.started > self.seconds


def _size(size_bytes: int) -> str:
    mb = size_bytes / _MiB
    return f"{int(mb)} MB" if mb.is_integer() else f"{size_bytes} bytes"
