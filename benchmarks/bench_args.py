"""Argument types shared by the benchmark scripts, so that a bad value stops a script at once with its usage and
exit status 2 (``error: argument --rounds: must be at least 1, got 0``) instead of a traceback after minutes of
work, or a table of nothing: a count with its minimum, and a file or folder that must exist."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chunking.app.cli.arguments import count_at_least  # noqa: E402

__all__ = ["at_least", "existing"]

#: An argparse ``type``: ``at_least(minimum)`` takes a whole number of at least *minimum*, with the messages of
#: the ``chunking`` commands' own counts (``must be at least 1, got 0``).
at_least = count_at_least


def existing(raw: str) -> Path:
    """An argparse ``type``: a path that exists (a file or a folder)."""
    path = Path(raw)
    if not path.exists():
        raise argparse.ArgumentTypeError(f"no such file or folder: {raw}")
    return path
