"""What the commands print with: one style of error line, plurals, aligned tables for people."""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from chunking.redact import redact

__all__ = ["fail", "plural", "printable", "table"]


def fail(args: argparse.Namespace, reason: str, *, path: object = None, status: int = 2) -> int:
    """Print ``PROG COMMAND: [PATH: ]REASON`` on stderr (the one style of every CLI error) and return *status*
    (2 for bad usage or an unreachable service, 1 for a document that failed; see ``--help``)."""
    where = f"{printable(str(path))}: " if path is not None else ""
    print(redact(f"{args.prog}: {where}{reason}"), file=sys.stderr)  # no key, SAS or token in any error line
    return status


def printable(text: str) -> str:
    """*text* with each control character (a newline or tab in a file name) written as its escape (``\\n``,
    ``\\t``, ``\\x1b``), so that one table row or error line stays one line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in text)


def plural(count: int, noun: str, plural_form: str | None = None) -> str:
    """``"1 file"``, ``"2 files"``, ``"0 files"``; *plural_form* when adding ``s`` is wrong (``"entries"``)."""
    return f"{count} {noun if count == 1 else plural_form or noun + 's'}"


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """Print *rows* under *headers*, columns padded; columns of numbers (or blanks) right-aligned."""
    cells = [[str(c) for c in headers]] + [[printable(str(c)) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    numeric = [all(isinstance(row[i], (int, float)) or str(row[i]).replace(".", "").replace("-", "").isdigit()
                   or row[i] == "" for row in rows) and rows != [] for i in range(len(headers))]
    for n, row in enumerate(cells):
        print("  ".join(c.rjust(w) if numeric[i] else c.ljust(w)
                        for i, (c, w) in enumerate(zip(row, widths))).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))
