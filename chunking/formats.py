"""Which splitter handles which file format, and what that choice contributes to a document's version."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Callable, Iterable

from chunking.model import Chunk, Page
from chunking.settings import Settings

__all__ = ["DocumentSplitter", "HEADING_EXTENSIONS", "PAGINATED_EXTENSIONS", "extension_of", "splitter_for"]

#: Formats whose pages are real pages (citations say ``#page=N``).
PAGINATED_EXTENSIONS = frozenset({".pdf"})
#: Formats whose ``#`` lines are headings: Markdown, and HTML/DOCX whose parsers render headings that way.
#: (In a PDF or a text file a leading ``#`` is as likely a shell comment.)
HEADING_EXTENSIONS = frozenset({".md", ".markdown", ".html", ".htm", ".docx"})


def extension_of(source: str) -> str:
    """Lower-case extension with its dot (``".pdf"``), or ``""``."""
    return PurePosixPath(source).suffix.lower()


@dataclass(frozen=True)
class DocumentSplitter:
    """A configured splitter for one format: ``split(pages)`` yields chunks; ``fingerprint`` identifies the
    splitter and all its settings (it goes into every document version, so a settings change re-indexes)."""

    name: str
    fingerprint: str
    split: Callable[[Iterable[Page]], Iterable[Chunk]]


def splitter_for(source: str, settings: Settings) -> DocumentSplitter:
    """The splitter for *source*'s format under *settings*.

    Every format currently goes through the page-aware ``SentenceTextSplitter`` (``max_tokens`` tokens hard cap,
    ``max_chars`` characters soft cap).
    """
    from chunking.splitters import SentenceTextSplitter

    splitter = SentenceTextSplitter(max_tokens=settings.max_tokens, max_chars=settings.max_chars)
    fingerprint = hashlib.sha256(
        json.dumps({"splitter": "sentence", "config": splitter.fingerprint()}, sort_keys=True).encode()
    ).hexdigest()[:16]
    return DocumentSplitter("sentence", fingerprint, splitter.split_pages)
