"""Parsing in a child process: the same pages as in-line, and a library call that hangs, crashes or exhausts
memory ends as the document's reason within the deadline, the worker untouched."""

from __future__ import annotations

import hashlib
import time

import pytest

from chunking.parsers import ParseError, ReadContext, parse_document
from chunking.parsers.limits import Deadline, Limits
from chunking.parsers.sandbox import parse_in_child, read_pages_in_child
from tests.sample_documents import document_paths
from tests.scenarios.hostile import child_parsers, generate


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


def test_an_answer_after_the_deadline_is_the_deadline_reason_whatever_it_says():
    # The parent waits a short grace past the deadline for the child's own reason; an answer in that grace is
    # late all the same, so the reason does not depend on how fast the machine was.
    with pytest.raises(ParseError) as raised:
        parse_in_child(b"x", source="late.pdf", max_bytes=None, context=_context(1), max_memory_mb=1024,
                       parse=child_parsers.refuses_late)

    assert raised.value.reason == "stage 1 took longer than 1 s (STAGE1_MAX_SECONDS)"


def test_one_slow_pdfium_call_is_stopped_at_the_deadline():
    # One page whose text takes PDFium 3-5 s to lay out on a 2-CPU VM, in one call no deadline check can interrupt.
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


def test_a_page_range_read_in_the_child_is_the_in_line_range_one_page_at_a_time(tmp_path):
    from chunking.parsers import read_pages
    from chunking.parsers.furniture import FurnitureKeys
    from tests.long_documents import long_pdf

    path = tmp_path / "long.pdf"
    path.write_bytes(long_pdf(120, lines=20))
    kwargs = {"start": 40, "end": 90, "offset": 1234, "chars_before": 5678, "check_streams": False,
              "furniture": FurnitureKeys(frozenset({"Earlier header"}), frozenset())}
    learnt_child: list = []
    learnt_inline: list = []

    child = read_pages_in_child(path, source="long.pdf", context=_context(), max_memory_mb=1024,
                                learnt=learnt_child.append, **kwargs)
    first = next(child)  # the child reads on only as the caller takes pages
    pages = [first, *child]
    inline = list(read_pages(path, source="long.pdf", context=ReadContext(), learnt=learnt_inline.append, **kwargs))

    assert pages == inline
    assert [p.page_num for p in pages] == list(range(40, 90)) and pages[0].offset > 1234
    assert learnt_child == learnt_inline and "Handbook of tests" in learnt_child[0].top


def test_a_page_that_never_comes_is_stopped_at_the_deadline():
    started = time.monotonic()
    pages = read_pages_in_child(b"x", source="hang.pdf", context=_context(1), max_memory_mb=1024,
                                read=child_parsers.one_page_then_hangs)

    assert next(pages).text == "the first page\n"
    with pytest.raises(ParseError) as raised:
        next(pages)
    assert raised.value.reason == "stage 1 took longer than 1 s (STAGE1_MAX_SECONDS)"
    assert time.monotonic() - started < 10


def test_a_later_page_range_that_never_answers_fails_the_document_at_the_deadline(tmp_path, monkeypatch):
    # Every page range is read in the child: one that hangs in a library call is stopped at STAGE1_MAX_SECONDS.
    from chunking.parsers import sandbox as parse_sandbox
    from chunking.pipeline.stage_two import run_stage_one
    from chunking.services import make_ledger
    from chunking.settings import Settings
    from chunking.storage import BlobFile
    from chunking.storage.claim_check import MemoryPayloadStore
    from tests.long_documents import long_pdf

    real = parse_sandbox.read_pages_in_child
    monkeypatch.setattr(parse_sandbox, "read_pages_in_child",
                        lambda data, **kw: real(data, read=child_parsers.hangs_after_the_first_range, **kw))
    data = long_pdf(30)
    path = tmp_path / "report.pdf"
    path.write_bytes(data)
    settings = Settings.from_env({"CHUNKING_STATE_DIR": str(tmp_path / "state"), "STAGE1_PAGES_PER_JOB": "12",
                                  "STAGE1_MAX_SECONDS": "2", "PARSE_ISOLATION": "process"})
    started = time.monotonic()

    result = run_stage_one(BlobFile(path, len(data), hashlib.sha256(data).hexdigest(), ""), source="report.pdf",
                           container="c", settings=settings, payloads=MemoryPayloadStore(),
                           ledger=make_ledger(settings))

    assert (result.outcome, result.error) == ("failed", "stage 1 took longer than 2 s (STAGE1_MAX_SECONDS)")
    assert (result.ranges, result.pages) == (3, 12)  # the first range went through
    assert time.monotonic() - started < 15
