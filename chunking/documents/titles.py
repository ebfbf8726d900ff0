"""A document's title for the index's ``title`` field, derived in this one place for every format:

1. the format's own property: PDF ``/Title`` (document information), Office Open XML ``dc:title`` in
   ``docProps/core.xml`` (DOCX, PPTX, XLSX), HTML ``<title>``, Markdown front matter ``title:``;
2. else the first heading of the text (the parsers render headings as Markdown ``#`` lines), within its first
   ``_HEADING_WINDOW_CHARS`` characters. For a format whose parser renders no headings (``headings=False`` in
   ``chunking.formats``: PDF, plain text, code, ...) only the first page is searched: there a ``#`` line is
   usually accidental (a shell comment in a code listing on page 7), while a reader that does render headings
   for such a file (Document Intelligence on a PDF) puts the title on page 1. A YAML front matter block at the
   start of the text holds no heading (``chunking.splitters.markdown.fences``, rule 6);
3. else the file name without its extension.

A property that is blank, ``untitled``, or a file name (``Microsoft Word - report.docx``, ``main.tex``) is no
title. Reading a property never fails a document: a damaged part means step 2. Titles are one line of at most
``MAX_TITLE_CHARS`` characters.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Sequence

from chunking.formats import HEADING_EXTENSIONS, extension_of
from chunking.model import Page
from chunking.parsers.titles import MAX_TITLE_CHARS, clean_title, property_title
from chunking.splitters.markdown.fences import scan_lines
from chunking.splitters.markdown.headings import find_headings

__all__ = ["document_title"]

# The part of a document where a first heading still reads as its title.
_HEADING_WINDOW_CHARS = 20_000

def _first_heading(pages: Sequence[Page], all_pages: bool) -> str:
    """The first non-blank heading in the first ``_HEADING_WINDOW_CHARS`` characters of *pages* (of only the first
    page unless *all_pages*), cleaned; ``""`` if none."""
    seen = 0
    for number, page in enumerate(pages if all_pages else pages[:1]):
        text = page.text[: _HEADING_WINDOW_CHARS - seen]
        if "#" in text or "\n=" in text or "\n-" in text:
            for heading in find_headings(text, scan_lines(text, front_matter=number == 0 and page.offset == 0)):
                if heading.title.strip():
                    return clean_title(heading.title)
        seen += len(text)
        if seen >= _HEADING_WINDOW_CHARS:
            break
    return ""


def document_title(data: bytes, source: str, pages: Sequence[Page], declared: str | None = None) -> str:
    """The title of the document *source* (bytes *data*, parsed into *pages*): its property, else its first
    heading (on its first page only for a format without headings), else its file name without extension
    (module docstring). *declared*: the property already read
    (``property_title``, by the process that parsed the file), so *data* is not opened again here.

    Example: ``document_title(b"# Intro\\n", "notes/readme.md", [Page(0, 0, "# Intro\\n")])`` → ``"Intro"``.
    """
    declared = property_title(data, source) if declared is None else declared
    return (declared or _first_heading(pages, extension_of(source) in HEADING_EXTENSIONS)
            or PurePosixPath(source.replace("\\", "/")).stem[:MAX_TITLE_CHARS])
