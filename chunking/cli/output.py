"""What the commands print with: aligned tables for people."""

from __future__ import annotations

from typing import Sequence

__all__ = ["table"]


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """Print *rows* under *headers*, columns padded; columns of numbers (or blanks) right-aligned."""
    cells = [[str(c) for c in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    numeric = [all(isinstance(row[i], (int, float)) or str(row[i]).replace(".", "").replace("-", "").isdigit()
                   or row[i] == "" for row in rows) and rows != [] for i in range(len(headers))]
    for n, row in enumerate(cells):
        print("  ".join(c.rjust(w) if numeric[i] else c.ljust(w)
                        for i, (c, w) in enumerate(zip(row, widths))).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))
