"""Argument types shared by the benchmark scripts, so that a bad value stops a script at once with its usage and
exit status 2 (``error: argument --rounds: must be at least 1, got 0``) instead of a traceback after minutes of
work, or a table of nothing: a count with its minimum, and a file or folder that must exist."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Callable

__all__ = ["at_least", "existing"]


def at_least(minimum: int) -> Callable[[str], int]:
    """An argparse ``type``: a whole number of at least *minimum*."""
    def parse(raw: str) -> int:
        try:
            value = int(raw)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number, got {raw!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    return parse


def existing(raw: str) -> Path:
    """An argparse ``type``: a path that exists (a file or a folder)."""
    path = Path(raw)
    if not path.exists():
        raise argparse.ArgumentTypeError(f"no such file or folder: {raw}")
    return path
