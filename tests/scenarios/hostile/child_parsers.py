"""Parsers that misbehave the way a parsing library can, for the child process of ``chunking.parsers.sandbox``
(which imports them by name): one call that never returns, a segmentation fault, an allocation past the
address-space limit."""

from __future__ import annotations

import ctypes
import time


def never_returns(data: bytes, *, source: str, max_bytes, context):
    time.sleep(3600)  # one library call that checks no deadline


def segfaults(data, *, source: str, context, **_):  # a whole-document parse or a streamed page range
    ctypes.string_at(0)  # reads address 0: SIGSEGV


def allocates(data: bytes, *, source: str, max_bytes, context):
    return [bytearray(2 * 1024**3)]


def notes(data: bytes, *, source: str, max_bytes, context):
    context.note("read with a note")
    from chunking.model import Page

    return [Page(0, 0, data.decode())]


def one_page_then_hangs(data, *, source: str, context, **_):
    """A streamed page range whose second page never comes (one PDFium call that never returns)."""
    from chunking.model import Page

    yield Page(0, 0, "the first page\n")
    time.sleep(3600)
    yield Page(1, 15, "never\n")


def refuses_late(data: bytes, *, source: str, max_bytes, context):
    """One library call that ends just after a 1 s deadline (within the parent's grace) with a reason of its own,
    as PDFium does on a fast machine with a page too long to keep."""
    from chunking.parsers import ParseError

    time.sleep(1.5)
    raise ParseError(source, "page 1 has more than 1000000 characters (MAX_PAGE_CHARS)")


def hangs_after_the_first_range(data, *, source: str, context, start: int = 0, **kwargs):
    """``read_pages``, except that a page range after the first never answers (one call that never returns)."""
    from chunking.parsers import read_pages

    if start > 0:
        time.sleep(3600)
    yield from read_pages(data, source=source, context=context, start=start, **kwargs)
