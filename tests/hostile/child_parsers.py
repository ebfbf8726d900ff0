"""Parsers that misbehave the way a parsing library can, for the child process of ``chunking.parse_sandbox``
(which imports them by name): one call that never returns, a segmentation fault, an allocation past the
address-space limit."""

from __future__ import annotations

import ctypes
import time


def never_returns(data: bytes, *, source: str, max_bytes, context):
    time.sleep(3600)  # one library call that checks no deadline


def segfaults(data: bytes, *, source: str, max_bytes, context):
    ctypes.string_at(0)  # reads address 0: SIGSEGV


def allocates(data: bytes, *, source: str, max_bytes, context):
    return [bytearray(2 * 1024**3)]


def notes(data: bytes, *, source: str, max_bytes, context):
    context.note("read with a note")
    from chunking.model import Page

    return [Page(0, 0, data.decode())]
