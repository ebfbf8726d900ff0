"""The ledger: per-document state of the pipeline (which version is current, whether it is indexed, why it
failed), so that at-least-once triggers, duplicated and reordered messages never corrupt the index.

Backends: Azure Table Storage via ``azure-data-tables`` (Azure, and Azurite locally; ``table_store``) and a SQLite
file under the local state folder (the embedded default; ``sqlite_store``). Both offer a read and a conditional
write (optimistic concurrency on an ETag / revision); ``state`` holds the data, the statuses (named once there,
asked through ``LedgerEntry``'s predicates) and the transitions over them; ``completion`` holds the rule of when
a version is complete and which versions' chunks stay; ``repair`` when a document is due for stage 1 again
and which recorded batches no longer belong in the index; ``views`` what the CLI's ``status`` and the status API
answer (one function each); a transition to ``indexed``, ``failed`` or ``deleted`` records its completion event
in the entry (``LedgerEntry.event``), published through the ``Ledger``'s *publish* (docs/events.md).
Everything is importable from ``chunking.ledger``; ``chunking.services.make_ledger`` builds the one the settings
choose.

May import: core, errors, storage.
"""

from __future__ import annotations

from pathlib import Path

from chunking.ledger.completion import (
    BatchFate,
    Completion,
    all_batches_in,
    batch_fate,
    complete_if_done,
    is_wanted,
)
from chunking.ledger.repair import (
    IDLE_GRACE_S,
    UNSENT_AFTER_S,
    Due,
    due_for_repair,
    repair_candidates,
    unwanted_batches,
)
from chunking.ledger.sqlite_store import LocalLedgerStore
from chunking.ledger.state import (
    DELETED,
    EVENT_STATUSES,
    FAILED,
    IN_FLIGHT,
    INDEXED,
    MAX_TRANSIENT_FAILURES,
    PERMANENT,
    QUEUED,
    RETRY_BASE_S,
    RETRY_CAP_S,
    SENDING,
    STATUSES,
    THROTTLED,
    TRANSIENT,
    BatchRecord,
    Clock,
    Ledger,
    LedgerEntry,
    LedgerStore,
    Status,
    clock,
    count_statuses,
    status_counts,
)
from chunking.ledger.table_store import TableLedgerStore
from chunking.ledger.views import MAX_PAGE_SIZE, SUMMARY_STATUSES, document_view, list_documents, summary

__all__ = ["DELETED", "EVENT_STATUSES", "FAILED", "IDLE_GRACE_S", "INDEXED", "IN_FLIGHT", "MAX_PAGE_SIZE",
           "MAX_TRANSIENT_FAILURES", "PERMANENT", "QUEUED", "RETRY_BASE_S", "RETRY_CAP_S", "SENDING", "STATUSES",
           "SUMMARY_STATUSES", "THROTTLED", "TRANSIENT", "UNSENT_AFTER_S", "BatchFate", "BatchRecord", "Clock",
           "Completion", "Due", "Ledger", "LedgerEntry", "LedgerStore", "LocalLedgerStore", "Status",
           "TableLedgerStore", "all_batches_in", "batch_fate", "clock", "complete_if_done", "count_statuses",
           "document_view", "due_for_repair", "is_wanted", "list_documents", "local_ledger_path",
           "repair_candidates", "status_counts", "summary", "unwanted_batches"]


def local_ledger_path(settings) -> Path:
    """Where the local ledger lives: ``settings.state_dir / "ledger.sqlite3"`` (read-only commands look before
    opening it, so they create nothing)."""
    return settings.state_dir / "ledger.sqlite3"
