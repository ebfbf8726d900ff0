"""Parsing one document in a child process that can be stopped: the stage-1 deadline bounds even one slow
library call, and a crash or an exhausted memory limit in a parsing library ends that document, not the worker.

Why a child process: the limits of ``chunking.parsers.limits`` are checked between pages, blocks and chunks,
but one call into PDFium, libxml2 or charset-normalizer cannot be interrupted from Python; a thread cannot be
stopped either. A child can: the parent waits for its answer until the deadline (``STAGE1_MAX_SECONDS``, what
is left of it) and kills it then. The child also runs under an address-space limit (``RLIMIT_AS``,
``STAGE1_MAX_MEMORY_MB``), so an allocation past it fails inside the child (Python's ``MemoryError``, a
reason) instead of the instance running out of memory; a child killed by a signal (a segmentation fault in a
C library) is a reason too. Flex Consumption runs Linux workers that may start processes.

Children come from a parse server (``chunking.parsers.sandbox.child``): a small process started once per worker,
with the parsers imported, that forks one child per document. Forking the worker itself would copy its threads' locks
(the Functions host runs invocations on several threads) and its memory; ``multiprocessing``'s own forkserver
would import the worker's main script again in every child. The document's bytes (or the path of the local file
holding them) go to the child, and its pages come back, over a Unix socket authenticated with a random key. Stage 1
reads one page range per child (``read_pages_bounded``): the pages come back one at a time as the child reads them,
so stage 1 stays bounded by the page (docs/architecture.md#long-documents) while every PDFium call is in the
child. What it costs per document is measured by ``benchmarks/parse_isolation.py`` (figures in
docs/operations.md#hostile-input-what-it-costs). What a child reads at the start of stage 1 (page count, title,
first pages, first page range) is in ``chunking.parsers.sandbox.reads``; the child's side of the protocol in
``chunking.parsers.sandbox.child``.
"""

from __future__ import annotations

import atexit
import logging
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from multiprocessing.connection import Client, Connection
from pathlib import Path

from chunking.formats import extension_of, format_of
from chunking.model import Page
from chunking.parsers import ParseError, ReadContext, page_count, parse_document, read_pages
from chunking.parsers.furniture import FurnitureKeys
from chunking.parsers.limits import Deadline
from chunking.parsers.pdf import PageLoads
from chunking.parsers.sandbox.reads import head_is_whole, read_first_range, read_head, read_start, title_needs_pdfium

__all__ = ["FirstRange", "count_pages_bounded", "parse_in_child", "read_first_range_bounded", "read_head_bounded",
           "read_pages_bounded", "read_pages_in_child", "read_start_bounded"]

log = logging.getLogger("chunking.parsers.sandbox")

_GRACE_S = 2.0  # after the deadline, for the child's own check to answer with the reason
_START_TIMEOUT_S = 60.0

_Parse = Callable[..., list[Page]]

#: The parse server's environment, where the worker's does not set these: a child parses one document on one
#: thread, so numeric libraries (NumPy's OpenBLAS, OpenCV and ONNX Runtime under local OCR) start no thread pools
#: and glibc keeps two malloc arenas. Each pool thread and arena reserves address space, which counts against
#: ``STAGE1_MAX_MEMORY_MB`` (``RLIMIT_AS``): about 165 MB less for a child that runs OCR
#: (``benchmarks/ocr_bench.py``).
PARSE_SERVER_ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MALLOC_ARENA_MAX": "2"}


def read_pages_bounded(data: bytes | Path, *, source: str, settings, context: ReadContext,
                       readers: Mapping[str, Callable] | None = None, **kwargs) -> Iterator[Page]:
    """``chunking.parsers.read_pages`` for stage 1 under *settings* (``chunking.settings.Settings``): the pages
    of one page range (PDF) or of the whole document, as they come, read in a child process
    (``PARSE_ISOLATION=process``, the default; ``read_pages_in_child``) or in-line (``inline``). A format that
    *readers* sends to a service (``chunking.services.document_readers``: Document Intelligence) is read
    in-line: that is network I/O with its own timeouts, not a local library, and its client does not cross
    processes. *kwargs* are ``read_pages``'s range arguments (``start``, ``end``, ``offset``, ``furniture``,
    ``learnt``, …); ``max_bytes`` is ``MAX_DOCUMENT_BYTES``. Raises ``ParseError`` as ``read_pages_in_child``
    does."""
    if _inline(settings, source, readers):
        return read_pages(data, source=source, max_bytes=settings.max_document_bytes, context=context,
                          readers=readers, **kwargs)
    return read_pages_in_child(data, source=source, max_bytes=settings.max_document_bytes, context=context,
                               max_memory_mb=settings.isolation.max_memory_mb, **kwargs)


def count_pages_bounded(data: bytes | Path, *, source: str, settings, context: ReadContext,
                        readers: Mapping[str, Callable] | None = None) -> int | None:
    """``chunking.parsers.page_count`` under *settings*, as ``read_pages_bounded`` reads: opening a PDF (and
    scanning its compressed streams) is a parsing library's work too, so it runs in the child. ``None`` for a
    format without page ranges."""
    if _inline(settings, source, readers):
        return page_count(data, source=source, context=context, readers=readers)
    fmt = format_of(source)
    if fmt is None or not fmt.page_ranges:
        return None
    for kind, value in _exchange(page_count, {"source": source}, data, source=source, context=context,
                                 max_memory_mb=settings.isolation.max_memory_mb, stream=False):
        return value
    return None


def read_head_bounded(data: bytes | Path, *, source: str, settings, context: ReadContext,
                      readers: Mapping[str, Callable] | None = None, pages: int = 0,
                      whole: bool = False, record_loads: PageLoads | None = None) -> tuple[str, list[Page]]:
    """``read_head`` (the title *source* declares, and its first *pages* pages) where ``read_pages_bounded``
    reads: in the child, which opens the file, under ``PARSE_ISOLATION=process``; in-line otherwise. A format
    that a service reads is read in-line for its title, except a PDF under process isolation: the worker never
    opens a PDF, so its declared title is ``""`` (then the first heading, or the file name, is the title).
    *record_loads*: where a read in-line records its PDF page loads (``read_pages``); a child's are not. A format
    that declares no title (``Format.title_source`` ``none``: text, CSV, JSON, code, mail, archives) with no page
    asked for gives ``("", [])`` at once, as its read would, without a child."""
    fmt = format_of(source)
    if not pages and (fmt is None or fmt.title_source == "none"):
        return "", []  # no title property and no page asked for: nothing to read, no child to start
    if _inline(settings, source, readers):
        if settings.isolation.mode != "inline" and title_needs_pdfium(source):
            return "", []
        return read_head(data, source=source, context=context, pages=pages, whole=whole, record_loads=record_loads)
    for kind, value in _exchange(read_head, {"source": source, "pages": pages, "whole": whole}, data, source=source,
                                 context=context, max_memory_mb=settings.isolation.max_memory_mb, stream=False):
        return value  # type: ignore[return-value]
    return "", []


def read_start_bounded(data: bytes | Path, *, source: str, settings, context: ReadContext,
                       readers: Mapping[str, Callable] | None = None,
                       pages: int = 0) -> tuple[int | None, str, list[Page], PageLoads]:
    """``count_pages_bounded`` then, for a document with pages, ``read_head_bounded`` (its first *pages* pages):
    what the first page range of a document needs before its own read: ``(page count or None, declared title,
    head pages, page loads)``; ``(count, "", [], {})`` when the count is 0 or None (no head is read). Under
    ``PARSE_ISOLATION=process`` a format with page ranges (PDF) does both in one child (``read_start``), which
    forks, scans the compressed streams and opens the file once instead of twice; otherwise it is the two calls.
    The page loads are what loading the head's pages gave (``chunking.parsers.pdf.PageLoads``, at most *pages*
    of them, their text layers and table gates): the read of the first range takes them (``read_pages_bounded``,
    ``page_loads``) instead of loading those pages again when the head is not the whole document.

    Raises:
        ParseError: as ``count_pages_bounded`` and ``read_head_bounded`` raise.
    """
    fmt = format_of(source)
    if _inline(settings, source, readers) or fmt is None or not fmt.page_ranges:
        count = count_pages_bounded(data, source=source, settings=settings, context=context, readers=readers)
        if not count:
            return count, "", [], {}
        loads: PageLoads = {}
        title, head = read_head_bounded(data, source=source, settings=settings, context=context, readers=readers,
                                        pages=pages, whole=count <= pages,
                                        record_loads=None if count <= pages else loads)
        return count, title, head, loads
    for kind, value in _exchange(read_start, {"source": source, "pages": pages}, data, source=source,
                                 context=context, max_memory_mb=settings.isolation.max_memory_mb, stream=False):
        return value  # type: ignore[return-value]
    return None, "", [], {}


@dataclass
class FirstRange:
    """What stage 1 reads of a document before its first page range is split (``read_first_range_bounded``).

    Attributes:
        count: the page count (PDF), or None for a format without page ranges.
        title: the title the document declares ("" if none).
        head: its first pages (at most the *pages* asked for), for the title and language.
        loads: what loading the head's pages gave, for the range's own read in this process
            (``read_pages_bounded``'s ``page_loads``); empty when *pages* below are given.
        pages: the first range's pages as they come, when the read of the head read them too (one child under
            ``PARSE_ISOLATION=process``); None when the caller reads the range itself, or the head is the whole
            document.
        learnt: the furniture keys that read of the range reported, once *pages* are all taken.
    """

    count: int | None
    title: str
    head: list[Page]
    loads: PageLoads
    pages: Iterator[Page] | None = None
    learnt: list[FurnitureKeys] = field(default_factory=list)


def read_first_range_bounded(data: bytes | Path, *, source: str, settings, context: ReadContext,
                             readers: Mapping[str, Callable] | None = None, pages: int = 0,
                             range_pages: int = 0, **kwargs) -> FirstRange:
    """The start of stage 1's read of a document: ``read_start_bounded`` (page count, declared title, first
    *pages* pages) and, under ``PARSE_ISOLATION=process`` for a format with page ranges (PDF), the pages of its
    first page range (0 to the count or *range_pages*, whichever is less) from the same child: one process
    opens the file, and each page of the head is loaded once (the range's read takes the head's page loads, as
    an in-line read does). The pages come as the child sends them (``FirstRange.pages``); *kwargs* are the
    range's ``read_pages`` arguments (``size_bytes``, ``offset``, ``chars_before``, ``check_streams``,
    ``furniture``). The whole read has the deadline of *context*, whose notes and kept pictures it adds to. In
    every other case the range is left to the caller (``read_pages_bounded`` with ``FirstRange.loads``).

    Raises:
        ParseError: as ``read_start_bounded`` raises; a failure of the range's read is raised while its pages are
            taken.
    """
    fmt = format_of(source)
    if _inline(settings, source, readers) or fmt is None or not fmt.page_ranges:
        count, title, head, loads = read_start_bounded(data, source=source, settings=settings, context=context,
                                                       readers=readers, pages=pages)
        return FirstRange(count, title, head, loads)
    kwargs = dict(kwargs, source=source, pages=pages, range_pages=range_pages,
                  max_bytes=settings.max_document_bytes)
    exchange = _exchange(read_first_range, kwargs, data, source=source, context=context,
                         max_memory_mb=settings.isolation.max_memory_mb, stream=True, learnt=True, started=True)
    for kind, value in exchange:
        if kind == "start":
            break
    else:  # the child ended without its start (a failure raises in the exchange)
        return FirstRange(None, "", [], {})
    count, title, head = value  # type: ignore[misc]
    first = FirstRange(count, title, head, {})
    if not count or head_is_whole(count, pages, head):
        for _ in exchange:  # nothing but the end, with the child's notes
            pass
        return first

    def range_pages_as_they_come() -> Iterator[Page]:
        try:
            for kind, value in exchange:
                if kind == "page":
                    yield value  # type: ignore[misc]
                elif kind == "learnt":
                    first.learnt.append(value)  # type: ignore[arg-type]
        finally:
            exchange.close()  # a caller that stops early stops the child

    first.pages = range_pages_as_they_come()
    return first


def _inline(settings, source: str, readers: Mapping[str, Callable] | None) -> bool:
    return settings.isolation.mode == "inline" or extension_of(source) in (readers or {})


def read_pages_in_child(data: bytes | Path, *, source: str, context: ReadContext, max_memory_mb: int,
                        learnt: Callable[[FurnitureKeys], None] | None = None, read: Callable = read_pages,
                        **kwargs) -> Iterator[Page]:
    """``read(data, source=…, context=…, **kwargs)`` (``read_pages`` by default: a module-level generator of
    pages, which the child imports by name) run in a child process, its pages passed back one at a time as the
    child yields them: the caller holds one page, and the child blocks while the caller has not taken the ones
    it sent (the socket's buffer). *data* is the document's bytes, sent to the child, or the path of a local
    file, which the child opens itself (its bytes never pass through the caller). *learnt* is called with the
    furniture keys the child learnt (``pdf.parse``). Bounded as ``parse_in_child`` is, by what is left of
    ``context.deadline`` while waiting for each page; a caller that stops iterating stops the child.

    Raises:
        ParseError: as ``parse_in_child``.
    """
    for kind, value in _exchange(read, dict(kwargs, source=source), data, source=source, context=context,
                                 max_memory_mb=max_memory_mb, stream=True, learnt=learnt is not None):
        if kind == "page":
            yield value  # type: ignore[misc]
        elif kind == "learnt" and learnt is not None:
            learnt(value)  # type: ignore[arg-type]


def parse_in_child(data: bytes, *, source: str, max_bytes: int | None, context: ReadContext,
                   max_memory_mb: int, parse: _Parse = parse_document) -> list[Page]:
    """``parse(data, source=…, max_bytes=…, context=…)`` (``parse_document`` by default; a module-level
    function, since the child imports it by name) run in a child process, bounded by what is left of
    ``context.deadline`` and by *max_memory_mb* MiB of address space. The child's notes are added to *context*.

    Returns:
        The pages, as ``parse`` returned them.

    Raises:
        ParseError: what ``parse`` raised (its reason); ``stage 1 took longer than N s (STAGE1_MAX_SECONDS)``
            when the child had not answered by the deadline (it is killed); ``out of memory while parsing: more
            than N MB (STAGE1_MAX_MEMORY_MB)``; ``the parser stopped without answering …`` when the child ended
            without an answer (a crash in a parsing library).
    """
    for kind, value in _exchange(parse, {"source": source, "max_bytes": max_bytes}, data, source=source,
                                 context=context, max_memory_mb=max_memory_mb, stream=False):
        return value  # type: ignore[return-value]
    return []


def _exchange(target: Callable, kwargs: dict, data: bytes | Path, *, source: str, context: ReadContext,
              max_memory_mb: int, stream: bool, learnt: bool = False,
              started: bool = False) -> Iterator[tuple[str, object]]:
    """One call of *target* in a child (the protocol of ``chunking.parsers.sandbox.child``): yields
    ``("page", page)``, ``("learnt", keys)`` and ``("start", value)`` as a streamed call sends them, then
    ``("value", result)`` or ``("end", None)``; the child is killed when the deadline passes before its next
    message, or when the caller stops early."""
    server, start_s = _server()
    if context.deadline is not None:
        context.deadline.started += start_s  # starting the server (once per process) is not this document's time
    conn = server.connect()
    pid, answered = 0, False
    try:
        pid = conn.recv()
        path = str(data) if isinstance(data, Path) else None
        conn.send({"target": target, "kwargs": kwargs,
                   "limits": context.limits, "remaining_s": _remaining_s(context.deadline),
                   "max_memory_mb": max_memory_mb, "stream": stream, "learnt": learnt, "started": started,
                   "path": path})
        if path is None:
            conn.send_bytes(data)  # type: ignore[arg-type]
        while True:
            remaining_s = _remaining_s(context.deadline)
            if not conn.poll(None if remaining_s is None else remaining_s + _GRACE_S):
                raise ParseError(source, context.limits.seconds_reason())
            message = conn.recv()
            if message[0] == "images":  # pictures kept for a vision describer (chunking.parsers.pictures)
                context.images.update(message[1])
                continue
            if message[0] in ("page", "learnt", "start"):
                yield message[0], message[1]
                continue
            kind, value, notes, peak_kib = message
            answered = True
            if remaining_s is not None and _remaining_s(context.deadline) == 0.0:
                # An answer that came in the grace after the deadline: the document took too long all the same
                # (the reason must not depend on how fast the machine was in those seconds).
                raise ParseError(source, context.limits.seconds_reason())
            for note in notes:
                context.note(note)
            log.debug("parsed %s in a child process: peak RSS %.0f MB", source, peak_kib / 1024)
            if kind == "error":
                raise ParseError(source, value)
            yield kind, value
            return
    except (EOFError, BrokenPipeError, ConnectionResetError):
        raise ParseError(source, "the parser stopped without answering (a parsing library crashed on this file, or "
                                 f"it needed more than STAGE1_MAX_MEMORY_MB = {max_memory_mb} MB)") from None
    finally:
        if pid and not answered:
            _kill(pid)  # past the deadline, or the caller stopped reading: the child has nothing more to do
        conn.close()


def _remaining_s(deadline: Deadline | None) -> float | None:
    if deadline is None:
        return None
    return max(0.0, deadline.seconds - (time.monotonic() - deadline.started))


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # it ended meanwhile


@dataclass
class _Server:
    process: subprocess.Popen
    folder: str
    address: str
    authkey: bytes

    def connect(self) -> Connection:
        return Client(self.address, family="AF_UNIX", authkey=self.authkey)

    def stop(self) -> None:
        if self.process.poll() is None and self.process.stdin is not None:
            self.process.stdin.close()  # it exits when its standard input closes
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
        shutil.rmtree(self.folder, ignore_errors=True)


_LOCK = threading.Lock()
_current: _Server | None = None


def _server() -> tuple[_Server, float]:
    """The parse server of this process, started on first use and again if it has ended; and the seconds this
    call spent starting it."""
    global _current
    started = time.monotonic()
    with _LOCK:
        if _current is None or _current.process.poll() is not None:
            if _current is not None:
                _current.stop()
            _current = _start()
            return _current, time.monotonic() - started
        return _current, 0.0


def _start() -> _Server:
    folder = tempfile.mkdtemp(prefix="chunking-parse-")  # private (0700): only this user reaches the socket
    address = str(Path(folder) / "parse.sock")
    authkey = secrets.token_bytes(32)
    root = str(Path(__file__).resolve().parents[3])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH", "")])))
    env.update({name: value for name, value in PARSE_SERVER_ENV.items() if name not in os.environ})
    # A session of its own: Ctrl-C at a terminal signals the whole foreground process group, and the server is no
    # part of what the user stopped. The worker handles the interrupt: it kills the child it waits for, and its
    # exit closes the server's standard input, which ends the server (no traceback of the server's own).
    process = subprocess.Popen([sys.executable, "-m", "chunking.parsers.sandbox.child", address], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, env=env, cwd=root, start_new_session=True)
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(authkey.hex().encode() + b"\n")
    process.stdin.flush()
    line = process.stdout.readline()  # "ready" once it listens (an import error ends it: empty)
    if line.strip() != b"ready":
        process.kill()
        shutil.rmtree(folder, ignore_errors=True)
        raise RuntimeError(f"the parse server did not start (exit status {process.wait()})")
    server = _Server(process, folder, address, authkey)
    atexit.register(server.stop)
    return server
