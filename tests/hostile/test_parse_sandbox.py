"""Parsing in a child process: the same pages as in-line, and a library call that hangs, crashes or exhausts
memory ends as the document's reason within the deadline, the worker untouched."""

from __future__ import annotations

import time

import pytest

from chunking.parse_sandbox import parse_in_child
from chunking.parsers import ParseError, ReadContext, parse_document
from chunking.parsers.limits import Deadline, Limits
from tests.documents import document_paths
from tests.hostile import child_parsers, generate


def _context(seconds: float = 60) -> ReadContext:
    return ReadContext(limits=Limits(stage1_max_seconds=int(seconds)), deadline=Deadline(seconds))


@pytest.mark.parametrize("path", [p for p in document_paths() if p.suffix != ".md" or p.name != "SOURCES.md"],
                         ids=lambda p: p.name)
def test_the_child_gives_the_same_pages_as_in_line(path):
    data = path.read_bytes()
    context = _context()

    assert parse_in_child(data, source=path.name, max_bytes=None, context=context, max_memory_mb=1024) == \
        parse_document(data, source=path.name, context=ReadContext())


def test_one_call_that_never_returns_is_stopped_at_the_deadline():
    started = time.monotonic()
    with pytest.raises(ParseError) as raised:
        parse_in_child(b"x", source="hang.txt", max_bytes=None, context=_context(1), max_memory_mb=1024,
                       parse=child_parsers.never_returns)

    assert raised.value.reason == "stage 1 took longer than 1 s (STAGE1_MAX_SECONDS)"
    assert time.monotonic() - started < 10


def test_one_slow_pdfium_call_is_stopped_at_the_deadline():
    # One page whose text takes PDFium about 11 s to lay out, in one call that no deadline check can interrupt.
    data = generate.text_pdf([b"BT /F1 1 Tf " + b"1 0 Td (ab) Tj " * 1_000_000 + b"ET\n"])
    started = time.monotonic()
    with pytest.raises(ParseError) as raised:
        parse_in_child(data, source="slow.pdf", max_bytes=None, context=_context(1), max_memory_mb=1024)

    assert raised.value.reason == "stage 1 took longer than 1 s (STAGE1_MAX_SECONDS)"
    assert time.monotonic() - started < 8


def test_a_crash_in_a_library_is_a_reason():
    with pytest.raises(ParseError) as raised:
        parse_in_child(b"x", source="crash.pdf", max_bytes=None, context=_context(), max_memory_mb=1024,
                       parse=child_parsers.segfaults)

    assert raised.value.reason == ("the parser stopped without answering (a parsing library crashed on this file, "
                                   "or it needed more than STAGE1_MAX_MEMORY_MB = 1024 MB)")


def test_an_allocation_past_the_memory_limit_is_a_reason():
    with pytest.raises(ParseError) as raised:
        parse_in_child(b"x", source="big.pdf", max_bytes=None, context=_context(), max_memory_mb=512,
                       parse=child_parsers.allocates)

    assert raised.value.reason == "out of memory while parsing: more than 512 MB (STAGE1_MAX_MEMORY_MB)"


def test_notes_come_back_and_the_next_document_is_parsed():
    context = _context()
    pages = parse_in_child(b"fine", source="ok.txt", max_bytes=None, context=context, max_memory_mb=1024,
                           parse=child_parsers.notes)

    assert ([p.text for p in pages], context.notes) == (["fine"], ["read with a note"])
