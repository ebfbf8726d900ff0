"""The parse server: a small process, started once by ``chunking.parsers.sandbox``, that has the parsers imported and
forks one child per document (a fork of a single-threaded process with nothing else to do: fast, and safe).

Run as ``python -m chunking.parsers.sandbox.child SOCKET_PATH``; it reads its authentication key (hex) as the first line
of standard input, says ``ready`` on standard output once it listens on the Unix socket, and exits when its
standard input closes (its parent ended). Each connection is one call: the forked child sends its process id,
receives the request (a dict: ``target``, a module-level function pickled by reference, its keyword arguments,
the limits, the seconds left, the address-space limit, ``stream``, ``learnt``, ``started``, and ``path`` or else
the document's bytes next), sets its address-space limit, and runs ``target(data, context=…, **kwargs)``. A plain
call answers ``("value", result, notes, peak_kib)``; a streamed one (a generator of pages: a PDF page range) sends
``("page", page)`` for each page as it comes, ``("learnt", keys)`` when the target reports its furniture keys, and
``("start", value)`` when it reports what it read before its pages (``started``), then ``("end", None, notes,
peak_kib)``. Either kind sends ``("images", {sha256: bytes})`` first when the parse kept pictures for a vision
describer (``Limits.keep_pictures``): before the page or the start that names them, or before the answer. A
failure answers ``("error", reason, notes, peak_kib)``. ``peak_kib`` is the child's peak resident set (``VmHWM``;
0 where the kernel does not say), for the parent's log.
"""

from __future__ import annotations

import os
import select
import signal
import sys
from multiprocessing.connection import Connection, Listener
from pathlib import Path

from chunking.parsers import ParseError, ReadContext, parse_document
from chunking.parsers.limits import Deadline

__all__ = ["memory_reason", "serve"]

_MiB = 1024 * 1024


def memory_reason(max_memory_mb: int) -> str:
    """The reason of a document whose parse needed more than *max_memory_mb* MiB of address space."""
    return f"out of memory while parsing: more than {max_memory_mb} MB (STAGE1_MAX_MEMORY_MB)"


def _warm_up() -> None:
    """Read one small PDF and DOCX, so that the caches PDFium and python-docx fill on first use (font tables,
    the default template) are filled once here and inherited by every child, not filled again by each; and
    import what a parser imports only when a document needs it (pdfplumber: 60 ms, in every child reading a
    PDF page with a ruled table)."""

    pdf = (b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj "
           b"3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]/Resources<</Font<</F1 4 0 R>>>>/Contents 5 0 R>>"
           b"endobj 4 0 obj<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>endobj 5 0 obj<</Length 30>>stream\nBT /F1 "
           b"9 Tf 9 9 Td (warm) Tj ET\nendstream endobj trailer<</Root 1 0 R>>")
    try:
        parse_document(pdf, source="warm-up.pdf")
    except ValueError:
        pass
    import pdfplumber.table  # noqa: F401  # the PDF table finder, which the parser imports on a page with a grid


def serve(address: str, authkey: bytes) -> None:
    """Accept connections on *address* and fork a child for each, until standard input closes."""
    _warm_up()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    with Listener(address, family="AF_UNIX", authkey=authkey) as listener:
        print("ready", flush=True)
        stdin = sys.stdin.fileno()
        socket_fd = listener._listener._socket.fileno()  # the listening socket, to wait on it with stdin
        while True:
            readable, _, _ = select.select([socket_fd, stdin], [], [])
            if stdin in readable and not os.read(stdin, 4096):
                return
            if socket_fd not in readable:
                continue
            try:
                conn = listener.accept()
            except (OSError, EOFError):
                continue  # a client that went away, or failed authentication
            if os.fork() == 0:
                code = 0
                try:
                    listener.close()
                    _handle(conn)
                except BaseException:
                    code = 1
                finally:
                    os._exit(code)
            conn.close()


def _handle(conn: Connection) -> None:
    import resource

    conn.send(os.getpid())
    request = conn.recv()
    target = request["target"]  # a module-level function, pickled by reference: unpickling imports its module
    max_memory_mb = request["max_memory_mb"]
    cap = max_memory_mb * _MiB
    try:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    except (ValueError, OSError):
        pass  # a lower hard limit is already in force: that one applies
    remaining_s = request["remaining_s"]
    context = ReadContext(limits=request["limits"], deadline=None if remaining_s is None else Deadline(remaining_s))
    kwargs = dict(request["kwargs"])
    try:
        data = Path(request["path"]) if request["path"] is not None else conn.recv_bytes()
        try:
            if request["stream"]:
                if request["learnt"]:
                    kwargs["learnt"] = lambda keys: conn.send(("learnt", keys))
                if request.get("started"):
                    kwargs["started"] = lambda value: _send_started(conn, context, value)
                for page in target(data, context=context, **kwargs):
                    _send_images(conn, context)  # before the page whose figures name them
                    conn.send(("page", page))
                answer = ("end", None, context.notes)
            else:
                value = target(data, context=context, **kwargs)
                _send_images(conn, context)
                answer = ("value", value, context.notes)
        except ParseError as error:
            reason = error.reason
            if reason.startswith("out of memory while parsing"):
                reason = memory_reason(max_memory_mb)
            answer = ("error", reason, context.notes)
        del data
    except MemoryError:
        answer = ("error", memory_reason(max_memory_mb), context.notes)
    conn.send((*answer, _peak_kib()))
    conn.close()


def _send_started(conn: Connection, context: ReadContext, value: object) -> None:
    """What a streamed target reports before its pages (``("start", value)``: the page count, title and head
    of ``chunking.parsers.sandbox.reads.read_first_range``), after the pictures kept so far."""
    _send_images(conn, context)
    conn.send(("start", value))


def _send_images(conn: Connection, context: ReadContext) -> None:
    """The pictures kept for a vision describer since the last message (``ReadContext.images``), as
    ``("images", {sha256: bytes})``, then forgotten here."""
    if context.images:
        conn.send(("images", dict(context.images)))
        context.images.clear()


def _peak_kib() -> int:
    try:
        with open("/proc/self/status") as status:
            return int(next(line for line in status if line.startswith("VmHWM")).split()[1])
    except (OSError, StopIteration, ValueError):
        return 0


if __name__ == "__main__":
    serve(sys.argv[1], bytes.fromhex(sys.stdin.readline().strip()))
