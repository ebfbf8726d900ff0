"""Argument types shared by the commands, so a bad value is a usage error naming the option."""

from __future__ import annotations

import argparse
import math
import re

from chunking.app.cli.output import printable
from chunking.model import acl_values

__all__ = ["count_at_least", "metadata_item", "metadata_refusal", "seconds", "unread_metadata"]

# A blob metadata name: a C# identifier in ASCII (letters, digits, underscores; no digit first).
_METADATA_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A blob metadata value travels as an HTTP header: printable ASCII only.
_METADATA_VALUE = re.compile(r"[\x20-\x7e]*")


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


def metadata_refusal(items, meta, *, read_names_only: bool = True) -> str:
    """Why ``--metadata`` (of ``ingest`` and of ``upload``: the same rules) refuses *items*, ``(name, value)``
    pairs checked in order, or ``""`` when it takes them all. *meta* is the ``MetadataSettings``. Refused, each
    with a line naming the item: a name that is no blob metadata name (letters, digits and underscores, no digit
    first); with *read_names_only* (``ingest``, which indexes with these very settings), a name no index field
    or access list is read from (a typo such as ``acl_user``, or a name missing from ``METADATA_FIELDS``, would be
    dropped without a word; ``upload`` warns of it instead with ``unread_metadata``, the Functions app that
    indexes the blob having settings of its own); a name given twice (names are compared without regard
    to case, as the storage service compares them); an empty value, or an access list without an id (it would
    leave the document without its access list); a value that is not printable ASCII (blob metadata travels as
    HTTP headers). See docs/operations.md#the-command-line."""
    read = {name.lower() for name in meta.read_names}
    acl = {meta.acl_users_key.lower(), meta.acl_groups_key.lower()}
    seen: set[str] = set()
    for name, value in items:
        item = printable(f"--metadata {name}={value}")
        if not _METADATA_NAME.fullmatch(name):
            return f"{item}: a metadata name is ASCII letters, digits and underscores, not starting with a digit"
        if read_names_only and name.lower() not in read:
            if name.lower() in acl:
                return f"{item}: the access lists are not read from metadata (ACL_SOURCE={meta.acl_source})"
            return (f"{item}: no index field or access list is read from this name (names read: "
                    f"{', '.join(meta.read_names) or 'none'}); add it to METADATA_FIELDS to make it an index field")
        if name.lower() in seen:
            return f"{item}: {name} is given twice (metadata names are compared without regard to case)"
        seen.add(name.lower())
        if not value or (name.lower() in acl and not acl_values(value)):
            return (f"{item}: an access list needs at least one id" if name.lower() in acl
                    else f"{item}: no value")
        if not _METADATA_VALUE.fullmatch(value):
            return (f"{item}: a metadata value is printable ASCII (blob metadata travels as HTTP headers), "
                    f"without accents or control characters")
    return ""


def unread_metadata(items, meta) -> list[str]:
    """A warning for each ``--metadata`` item of *items* (``(name, value)`` pairs) whose name no index field or
    access list is read from under *meta* (``MetadataSettings``): what ``metadata_refusal`` refuses with
    *read_names_only*, said instead of refused where the settings that index the blob may differ (``upload``)."""
    read = {name.lower() for name in meta.read_names}
    return [f"{printable(f'--metadata {name}={value}')}: no index field or access list is read from this name "
            f"under these settings (names read: {', '.join(meta.read_names) or 'none'}); it is indexed only where "
            f"METADATA_FIELDS names it" for name, value in items if name.lower() not in read]


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
