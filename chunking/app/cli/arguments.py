"""Argument types shared by the commands, so a bad value is a usage error naming the option."""

from __future__ import annotations

import argparse
import math

__all__ = ["count_at_least", "metadata_item", "seconds"]


def count_at_least(minimum: int, maximum: int | None = None, why: str = ""):
    """An argparse ``type`` for whole numbers ≥ *minimum* (and ≤ *maximum*, when given; *why* says why in the
    message): ``--max-tokens 0`` is refused by the parser with ``argument --max-tokens: must be at least 1, got
    0`` (exit status 2), before anything runs."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"must be at most {maximum}{f' ({why})' if why else ''}, got {value}")
        return value

    return parse


def metadata_item(text: str) -> tuple[str, str]:
    """An argparse ``type`` for ``--metadata NAME=VALUE``: ``("NAME", "VALUE")``, blanks around both stripped; an
    item without ``=`` or a name is a usage error."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"takes NAME=VALUE, got {text!r}")
    return name.strip(), value.strip()


def seconds(*, zero: bool = False):
    """An argparse ``type`` for a finite number of seconds above 0 (at least 0 with *zero*): ``--interval -1``
    or ``--interval nan`` is refused by the parser (``argument --interval: must be a number of seconds above 0,
    got '-1'``, exit status 2) rather than by ``time.sleep`` in the middle of the work."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value < 0 or (value == 0 and not zero):
            raise argparse.ArgumentTypeError(f"must be a number of seconds {'of at least 0' if zero else 'above 0'}"
                                             f", got {text!r}")
        return value

    return parse
