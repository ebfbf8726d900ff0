"""Digests of the sentence splitter's chunks on every test document, for the regression test in
``test_sentence_golden.py``: speed work on the splitter must not change a single chunk.

``data/sentence_golden.json`` holds, per setting and document, the number of chunks and a SHA-256 over every
field of every chunk (text, offsets, pages, exact token count, overlap, kind, parts, metadata). It was written
by the splitter as it was before the token-count summing of docs/splitters.md#performance; rewrite it only when
the chunks are meant to change::

    .venv/bin/python -m tests.splitters.sentence_golden
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from chunking.model import Chunk
from chunking.parsers import parse_document
from chunking.splitters import SentenceTextSplitter
from tests.documents import document_paths

GOLDEN = Path(__file__).parent / "data" / "sentence_golden.json"

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


def compute() -> dict[str, dict[str, list]]:
    """``{setting: {document name: [chunk count, digest]}}`` with the splitter as it is now."""
    pages = {p.name: parse_document(p.read_bytes(), source=p.name) for p in document_paths()}
    out: dict[str, dict[str, list]] = {}
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
