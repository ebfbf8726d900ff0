"""Digests of the sentence splitter's chunks on every test document, for the regression test in
``test_sentence_golden.py``: speed work on the splitter must not change a single chunk.

``data/sentence_golden.json`` holds, per setting and document, the number of chunks and a SHA-256 over every
field of every chunk (text, offsets, pages, exact token count, overlap, kind, parts, metadata), and under
``"pages"`` a SHA-256 of each document's parsed pages, so that a parser change (new pages, new chunks) is told
apart from a splitter change (same pages, new chunks). It was written by the splitter as it was before the
token-count summing of docs/splitters.md#performance; rewrite it when a parser's pages or the chunks are meant to
change::

    .venv/bin/python -m tests.splitters.sentence_golden
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from chunking.model import Chunk, Page
from chunking.parsers import parse_document
from chunking.splitters import SentenceTextSplitter
from tests.sample_documents import document_paths

GOLDEN = Path(__file__).parent / "data" / "sentence_golden.json"
PAGES = "pages"  # the key of the pages digests

#: Settings the digests cover: the defaults, a small cap, and caps where tokens bind before characters do
#: (English text too), so both cap searches of the splitter are exercised.
SETTINGS: dict[str, dict[str, int]] = {
    "default": {},
    "max_tokens=100": {"max_tokens": 100},
    "max_tokens=200,max_chars=3000": {"max_tokens": 200, "max_chars": 3000},
    "max_tokens=60,max_chars=2000": {"max_tokens": 60, "max_chars": 2000},
}


def chunk_digest(chunks: list[Chunk]) -> str:
    """SHA-256 hex over every field of every chunk, in order."""
    h = hashlib.sha256()
    for c in chunks:
        fields = (c.text, c.char_start, c.char_end, c.page_start, c.page_end, c.token_count, c.overlap_chars,
                  c.kind, c.part_index, c.part_count, c.headings, sorted(c.metadata.items()))
        h.update(repr(fields).encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()


def pages_digest(pages: list[Page]) -> str:
    """SHA-256 hex over the number, offset and text of every page, in order."""
    h = hashlib.sha256()
    for page in pages:
        h.update(repr((page.page_num, page.offset, page.text)).encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()


def compute() -> dict[str, dict[str, Any]]:
    """``{setting: {document name: [chunk count, digest]}, "pages": {document name: digest}}`` with the parsers
    and the splitter as they are now."""
    pages = {p.name: parse_document(p.read_bytes(), source=p.name) for p in document_paths()}
    out: dict[str, dict[str, Any]] = {PAGES: {doc: pages_digest(doc_pages) for doc, doc_pages in pages.items()}}
    for name, kw in SETTINGS.items():
        splitter = SentenceTextSplitter(**kw)
        out[name] = {}
        for doc, doc_pages in pages.items():
            chunks = list(splitter.split_pages(doc_pages))
            out[name][doc] = [len(chunks), chunk_digest(chunks)]
    return out


if __name__ == "__main__":
    GOLDEN.write_text(json.dumps(compute(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {GOLDEN}")
