"""What the commands print with: one style of error line, plurals, aligned tables for people."""

from __future__ import annotations

import argparse
import sys
import unicodedata
from typing import Sequence

from chunking.redact import redact

__all__ = ["clip", "columns", "fail", "plural", "printable", "table"]


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
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)  # a space is printable


def plural(count: int, noun: str, plural_form: str | None = None) -> str:
    """``"1 file"``, ``"2 files"``, ``"0 files"``; *plural_form* when adding ``s`` is wrong (``"entries"``)."""
    return f"{count} {noun if count == 1 else plural_form or noun + 's'}"


def columns(text: str) -> int:
    """The terminal columns *text* takes: two for a wide or full-width character (CJK ideographs, kana, Hangul;
    Unicode's East Asian Width W and F), none for a combining mark, one for any other."""
    if text.isascii():
        return len(text)
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 0 if unicodedata.combining(c) else 1 for c in text)


def clip(text: str, width: int) -> str:
    """The longest start of *text* that takes at most *width* terminal columns (``columns``)."""
    if text.isascii():
        return text[:width]
    used = 0
    for end, c in enumerate(text):
        used += columns(c)
        if used > width:
            return text[:end]
    return text


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """Print *rows* under *headers*, columns padded to the terminal columns their text takes (``columns``: a CJK
    character takes two), so that they line up on a terminal; columns of numbers (or blanks) right-aligned."""
    cells = [[str(c) for c in headers]] + [[printable(str(c)) for c in row] for row in rows]
    widths = [max(columns(row[i]) for row in cells) for i in range(len(headers))]
    numeric = [all(isinstance(row[i], (int, float)) or str(row[i]).replace(".", "").replace("-", "").isdigit()
                   or row[i] == "" for row in rows) and rows != [] for i in range(len(headers))]
    for n, row in enumerate(cells):
        gaps = [" " * (w - columns(c)) for c, w in zip(row, widths)]
        print("  ".join(g + c if numeric[i] else c + g for i, (c, g) in enumerate(zip(row, gaps))).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))
