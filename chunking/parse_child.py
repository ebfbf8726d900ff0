"""The parse server: a small process, started once by ``chunking.parse_sandbox``, that has the parsers imported and
forks one child per document (a fork of a single-threaded process with nothing else to do: fast, and safe).

Run as ``python -m chunking.parse_child SOCKET_PATH``; it reads its authentication key (hex) as the first line
of standard input, says ``ready`` on standard output once it listens on the Unix socket, and exits when its
standard input closes (its parent ended). Each connection is one document: the forked child sends its process
id, receives the request and the document's bytes, sets its address-space limit, parses, and sends the answer
``(kind, pages or reason, notes, title)`` (the title the file declares, read here too: it opens the file).
"""

from __future__ import annotations

import importlib
import os
import select
import signal
import sys
from multiprocessing.connection import Connection, Listener

from chunking.parsers import ParseError, ReadContext
from chunking.parsers.limits import Deadline
from chunking.titles import property_title

__all__ = ["memory_reason", "serve"]

_MiB = 1024 * 1024


def memory_reason(max_memory_mb: int) -> str:
    """The reason of a document whose parse needed more than *max_memory_mb* MiB of address space."""
    return f"out of memory while parsing: more than {max_memory_mb} MB (STAGE1_MAX_MEMORY_MB)"


def _warm_up() -> None:
    """Read one small PDF and DOCX, so that the caches PDFium and python-docx fill on first use (font tables,
    the default template) are filled once here and inherited by every child, not filled again by each."""
    from chunking.parsers import parse_document

    pdf = (b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj "
           b"3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]/Resources<</Font<</F1 4 0 R>>>>/Contents 5 0 R>>"
           b"endobj 4 0 obj<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>endobj 5 0 obj<</Length 30>>stream\nBT /F1 "
           b"9 Tf 9 9 Td (warm) Tj ET\nendstream endobj trailer<</Root 1 0 R>>")
    try:
        parse_document(pdf, source="warm-up.pdf")
    except ValueError:
        pass


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
    target, source, max_bytes, limits, remaining_s, max_memory_mb = conn.recv()
    module_name, _, function_name = target.partition(":")
    parse = getattr(importlib.import_module(module_name), function_name)
    cap = max_memory_mb * _MiB
    try:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    except (ValueError, OSError):
        pass  # a lower hard limit is already in force: that one applies
    context = ReadContext(limits=limits, deadline=None if remaining_s is None else Deadline(remaining_s))
    try:
        data = conn.recv_bytes()
        try:
            pages = parse(data, source=source, max_bytes=max_bytes, context=context)
            answer = ("pages", pages, context.notes, property_title(data, source))
        except ParseError as error:
            reason = error.reason
            if reason.startswith("out of memory while parsing"):
                reason = memory_reason(max_memory_mb)
            answer = ("error", reason, context.notes, None)
        del data
    except MemoryError:
        answer = ("error", memory_reason(max_memory_mb), context.notes, None)
    conn.send(answer)
    conn.close()


if __name__ == "__main__":
    serve(sys.argv[1], bytes.fromhex(sys.stdin.readline().strip()))
