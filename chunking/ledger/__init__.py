"""The ledger: per-document state of the pipeline (which version is current, whether it is indexed, why it
failed), so that at-least-once triggers, duplicated and reordered messages never corrupt the index.

Backends: Azure Table Storage via ``azure-data-tables`` (Azure, and Azurite locally; ``table_store``) and a SQLite
file under the local state folder (the embedded default; ``sqlite_store``). Both offer a read and a conditional
write (optimistic concurrency on an ETag / revision); ``state`` holds the data and the transitions over them.
Everything is importable from ``chunking.ledger``; ``chunking.services.make_ledger`` builds the one the settings
choose.
"""

from __future__ import annotations

from pathlib import Path

from chunking.ledger.sqlite_store import LocalLedgerStore
from chunking.ledger.state import (
    MAX_TRANSIENT_FAILURES,
    RETRY_BASE_S,
    RETRY_CAP_S,
    BatchRecord,
    Ledger,
    LedgerEntry,
    LedgerStore,
    Status,
)
from chunking.ledger.table_store import TableLedgerStore

__all__ = ["MAX_TRANSIENT_FAILURES", "RETRY_BASE_S", "RETRY_CAP_S", "BatchRecord", "Ledger", "LedgerEntry",
           "LedgerStore", "LocalLedgerStore", "Status", "TableLedgerStore", "local_ledger_path"]


def local_ledger_path(settings) -> Path:
    """Where the local ledger lives: ``settings.state_dir / "ledger.sqlite3"`` (read-only commands look before
    opening it, so they create nothing)."""
    return settings.state_dir / "ledger.sqlite3"
