"""Parsing one document in a child process that can be stopped: the stage-1 deadline bounds even one slow
library call, and a crash or an exhausted memory limit in a parsing library ends that document, not the worker.

Why a child process: the limits of ``chunking.parsers.limits`` are checked between pages, blocks and chunks,
but one call into PDFium, libxml2 or charset-normalizer cannot be interrupted from Python; a thread cannot be
stopped either. A child can: the parent waits for its answer until the deadline (``STAGE1_MAX_SECONDS``, what
is left of it) and kills it then. The child also runs under an address-space limit (``RLIMIT_AS``,
``STAGE1_MAX_MEMORY_MB``), so an allocation past it fails inside the child (Python's ``MemoryError``, a
reason) instead of the instance running out of memory; a child killed by a signal (a segmentation fault in a
C library) is a reason too. Flex Consumption runs Linux workers that may start processes.

Children come from a parse server (``chunking.parse_child``): a small process started once per worker, with the
parsers imported, that forks one child per document. Forking the worker itself would copy its threads' locks
(the Functions host runs invocations on several threads) and its memory; ``multiprocessing``'s own forkserver
would import the worker's main script again in every child. The document's bytes go to the child, and its
pages come back, over a Unix socket authenticated with a random key. What it costs per document is measured by ``benchmarks/parse_isolation.py``
(figures in docs/operations.md#hostile-input-what-it-costs).
"""

from __future__ import annotations

import atexit
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from multiprocessing.connection import Client, Connection
from pathlib import Path

from chunking.formats import extension_of
from chunking.model import Page
from chunking.parsers import ParseError, ReadContext, parse_document
from chunking.parsers.limits import Deadline
from chunking.titles import property_title

__all__ = ["parse_bounded", "parse_in_child"]

_GRACE_S = 2.0  # after the deadline, for the child's own check to answer with the reason
_START_TIMEOUT_S = 60.0

_Parse = Callable[..., list[Page]]


def parse_bounded(data: bytes, *, source: str, settings, context: ReadContext,
                  readers: Mapping[str, Callable] | None = None) -> list[Page]:
    """``parse_document`` for stage 1 under *settings* (``chunking.settings.Settings``): in a child process
    (``PARSE_ISOLATION=process``, the default) or in-line (``inline``). A format that *readers* sends to a
    service (``chunking.parsers.selection.document_readers``: Document Intelligence) is read in-line: that is
    network I/O with its own timeouts, not a local library, and its client does not cross processes. Raises
    ``ParseError`` as ``parse_in_child`` does. Sets ``context.title`` (``chunking.titles.property_title``), read
    where the parse ran; a PDF a service reads under process isolation is not opened here for it (``""``)."""
    inline = settings.isolation.mode == "inline"
    if inline or extension_of(source) in (readers or {}):
        pages = parse_document(data, source=source, max_bytes=settings.max_document_bytes, context=context,
                               readers=readers)
        context.title = property_title(data, source) if inline or extension_of(source) != ".pdf" else ""
        return pages
    return parse_in_child(data, source=source, max_bytes=settings.max_document_bytes, context=context,
                          max_memory_mb=settings.isolation.max_memory_mb)


def parse_in_child(data: bytes, *, source: str, max_bytes: int | None, context: ReadContext,
                   max_memory_mb: int, parse: _Parse = parse_document) -> list[Page]:
    """``parse(data, source=…, max_bytes=…, context=…)`` (``parse_document`` by default; a module-level
    function, since the child imports it by name) run in a child process, bounded by what is left of
    ``context.deadline`` and by *max_memory_mb* MiB of address space. The child's notes are added to *context*,
    and the title the file declares is ``context.title``.

    Returns:
        The pages, as ``parse`` returned them.

    Raises:
        ParseError: what ``parse`` raised (its reason); ``stage 1 took longer than N s (STAGE1_MAX_SECONDS)``
            when the child had not answered by the deadline (it is killed); ``out of memory while parsing: more
            than N MB (STAGE1_MAX_MEMORY_MB)``; ``the parser stopped without answering …`` when the child ended
            without an answer (a crash in a parsing library).
    """
    server, start_s = _server()
    if context.deadline is not None:
        context.deadline.started += start_s  # starting the server (once per process) is not this document's time
    remaining_s = _remaining_s(context.deadline)
    conn = server.connect()
    pid = 0
    try:
        pid = conn.recv()
        conn.send((f"{parse.__module__}:{parse.__qualname__}", source, max_bytes, context.limits, remaining_s,
                   max_memory_mb))
        conn.send_bytes(data)
        wait_s = None if remaining_s is None else remaining_s + _GRACE_S
        if not conn.poll(wait_s):
            _kill(pid)
            raise ParseError(source, context.limits.seconds_reason())
        kind, value, notes, context.title = conn.recv()
    except (EOFError, BrokenPipeError, ConnectionResetError):
        raise ParseError(source, "the parser stopped without answering (a parsing library crashed on this file, or "
                                 f"it needed more than STAGE1_MAX_MEMORY_MB = {max_memory_mb} MB)") from None
    finally:
        conn.close()
    for note in notes:
        context.note(note)
    if kind == "error":
        raise ParseError(source, value)
    return value


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
    root = str(Path(__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH", "")])))
    process = subprocess.Popen([sys.executable, "-m", "chunking.parse_child", address], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, env=env, cwd=root)
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
