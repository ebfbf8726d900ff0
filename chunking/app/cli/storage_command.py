"""The preamble of the commands that work on the deployment's storage (``reconcile`` and its kind): check that
the documents container and the ledger table can be reached, run the work, and turn a storage failure into the
one error line and exit status 2 of every command."""

from __future__ import annotations

import argparse
from typing import Callable, TypeVar

from chunking.app.cli.output import fail
from chunking.errors import StorageError
from chunking.services import ledger_table
from chunking.storage import ensure_reachable

__all__ = ["on_storage"]

_T = TypeVar("_T")


def on_storage(args: argparse.Namespace, settings, work: Callable[[], _T]) -> tuple[_T | None, int]:
    """``(work(), 0)`` once the documents container (and the ledger table, for a table ledger) answer; else
    ``(None, 2)`` after printing why (the storage cannot be reached or refuses, or a setting names nothing)."""
    from azure.core.exceptions import AzureError

    try:
        ensure_reachable(settings, container=settings.documents_container, table=ledger_table(settings))
        return work(), 0
    except (StorageError, ValueError) as exc:
        return None, fail(args, str(exc))
    except AzureError as exc:
        return None, fail(args, f"{type(exc).__name__}: {str(exc).splitlines()[0]}")
