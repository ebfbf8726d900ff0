"""Hostile uploads through the Functions handlers on Azurite: a good version 1 is indexed, then a hostile
version 2 of the same blob arrives. The blob function returns normally (no retry of a file that cannot
succeed), the ledger says ``failed`` with the exact reason, nothing logs a traceback, the memory the handler
took stays bounded, version 1's chunks are still what search returns, and the next document goes in."""

from __future__ import annotations

import json
import logging

import pytest

from chunking.ids import doc_id
from tests.azurite_harness import harness_fixture
from tests.scenarios.hostile import generate
from tests.scenarios.hostile.measure import PeakGrowth

pytestmark = pytest.mark.integration

h = harness_fixture("ho")

DECOMPRESSED = "expands past 100 MB when decompressed (MAX_DECOMPRESSED_BYTES)"
#: What one hostile document may add to the worker's peak resident set (the worker's whole budget is 500 MB).
PEAK_GROWTH_BOUND_MB = 300


def _good(name: str, text: str) -> bytes:
    """A valid version 1 of *name*'s format holding *text*."""
    if name.endswith(".pdf"):
        return generate.text_pdf([generate.text_line(text.encode())])
    if name.endswith(".docx"):
        return generate.small_docx(text)
    if name.endswith(".json"):
        return json.dumps({"note": text}).encode()
    if name.endswith(".html"):
        return f"<html><body><p>{text}</p></body></html>".encode()
    if name.endswith(".md"):
        return f"# Notes\n\n- {text}\n".encode()
    return text.encode()


CASES = [
    ("flate-bomb.pdf", lambda: generate.flate_bomb_pdf(200), {}, DECOMPRESSED),
    ("lzw-bomb.pdf", lambda: generate.filtered_pdf(generate.lzw_bomb(60), b"/LZWDecode"), {}, DECOMPRESSED),
    ("run-length-bomb.pdf", lambda: generate.filtered_pdf(generate.run_length_bomb(200), b"/RunLengthDecode"), {},
     DECOMPRESSED),
    ("pages.pdf", lambda: generate.text_pdf([generate.text_line(b"p %d" % i) for i in range(20_000)]),
     {}, "20000 pages, more than 5000 (MAX_PAGES)"),
    ("truncated.pdf", lambda: generate.text_pdf([generate.text_line(b"cut short")])[:200], {},
     "not a valid PDF: not a PDF, or damaged beyond repair"),
    ("cycle.pdf", lambda: generate.pdf([b"<< /Type /Catalog /Pages 2 0 R >>",
                                        b"<< /Type /Pages /Kids [2 0 R] /Count 1 >>"]), {},
     "could not read page 1: PDFium could not load it (damaged page tree, or the page object is missing)"),
    ("zip-bomb.docx", lambda: generate.docx_with(generate.paragraphs(200 << 20, b"<w:p/>" * 100), declared=1000),
     {}, DECOMPRESSED),
    ("ole.docx", lambda: b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(4000), {},
     "not a valid DOCX: password-protected, or an old .doc file (OLE compound file)"),
    ("not-a-zip.docx", lambda: b"PK\x03\x04 not really", {},
     "not a valid DOCX: not a ZIP package (File is not a zip file)"),
    ("deep.json", lambda: b"[" * 900 + b"]" * 900, {}, "JSON nested more than 100 levels deep (MAX_NESTING_DEPTH)"),
    ("deep.html", lambda: b"<div>" * 5000 + b"x" + b"</div>" * 5000, {},
     "HTML elements nested more than 100 levels deep (MAX_NESTING_DEPTH)"),
    ("deep.md", lambda: "".join("  " * i + "- item\n" for i in range(3000)).encode(), {},
     "Markdown lists or block quotes nested more than 100 levels deep (MAX_NESTING_DEPTH)"),
    ("line.txt", lambda: b"x" * 200_000, {"MAX_DOCUMENT_CHARS": "100000"},
     "more than 100000 characters of text (MAX_DOCUMENT_CHARS)"),
    # Two million CJK characters with no punctuation: 9-15 s of stage 1 here (9 s of CPU), far enough past the
    # one-second limit to stay past it on a faster machine.
    ("slow.txt", lambda: "一二三四五".encode() * 400_000, {"STAGE1_MAX_SECONDS": "1"},
     "stage 1 took longer than 1 s (STAGE1_MAX_SECONDS)"),
    ("empty.txt", lambda: b"", {}, "file is empty"),
    # One page whose text takes PDFium 3-5 s in one call (2-CPU VM): the child parsing it is stopped.
    ("slow-page.pdf", lambda: generate.text_pdf([b"BT /F1 1 Tf " + b"1 0 Td (ab) Tj " * 1_000_000 + b"ET\n"]),
     {"STAGE1_MAX_SECONDS": "1"}, "stage 1 took longer than 1 s (STAGE1_MAX_SECONDS)"),
]


@pytest.mark.parametrize(("name", "make", "env", "reason"), CASES, ids=[case[0] for case in CASES])
def test_hostile_version_2_is_a_reason_and_version_1_stays_searchable(h, monkeypatch, caplog, name, make, env,
                                                                        reason):
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    words = f"lanterns zebras {name.split('.')[0].replace('-', ' ')}"
    h.upload(name, _good(name, f"Version one mentions {words}."))
    h.drain()
    did = doc_id(h.cname, name)
    v1 = h.s.ledger.get(did)
    assert v1.status == "indexed"
    hostile = make()

    with caplog.at_level(logging.INFO), PeakGrowth() as peak:
        messages = h.upload(name, hostile)  # returns: a file that cannot succeed is not retried

    entry = h.s.ledger.get(did)
    assert messages == []
    assert (entry.status, entry.error, entry.indexed_version) == ("failed", reason, v1.version)
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == [f"rejected {name}: {reason}"]
    assert all(r.exc_info is None for r in caplog.records) and "Traceback" not in caplog.text
    assert peak.mb < PEAK_GROWTH_BOUND_MB, f"{name}: peak RSS grew by {peak.mb:.0f} MB"
    # The next document is not affected.
    h.upload("next.txt", _good("next.txt", "The next document is about harbours."))
    h.drain()
    assert h.s.ledger.get(doc_id(h.cname, "next.txt")).status == "indexed"
    # Version 1 is what the index holds, and what search finds.
    h.settle()
    assert set(h.s.index.keys_of(did).values()) == {v1.version}
    hits = h.s.index.search(words, None, k=10)
    assert [hit.record.source for hit in hits][:1] == [name]
    assert "Version one mentions" in hits[0].record.content
