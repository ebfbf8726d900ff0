"""The ledger: per-document state of the pipeline (which version is current, whether it is indexed, why it
failed), so that at-least-once triggers, duplicated and reordered messages never corrupt the index.

Backends: Azure Table Storage via ``azure-data-tables`` (Azure, and Azurite locally) and a SQLite file under the
local state folder (the embedded default). Both offer a read and a conditional write (optimistic concurrency on
an ETag / revision), and every state change below is a read-modify-write loop over them.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Literal, Protocol

from chunking.redact import redact

__all__ = ["Ledger", "LedgerEntry", "LocalLedgerStore", "Status", "TableLedgerStore", "local_ledger_path", "make_ledger"]

Status = Literal["sending", "queued", "indexed", "failed", "deleted"]
_MAX_ERROR_CHARS = 2000


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class LedgerEntry:
    """One document's state.

    Attributes:
        doc_id, source, container: the document id, its path, and the container (namespace) holding it.
        version: the current version (the newest one stage 1 accepted or rejected).
        status: ``sending`` (``version`` is split, its batches are being sent to the queue), ``queued`` (they were
            sent and are on their way), ``indexed`` (``version`` fully in the index),
            ``failed`` (``version`` could not be parsed or indexed; ``error`` says why), ``deleted``.
        indexed_version: the version fully in the index (may differ from ``version`` while a new one is queued
            or after it failed: the previous good version stays searchable).
        chunk_count, batch_count: of ``version``.
        error: reason of the last failure ('' if none); attempts: failed attempts on ``version``.
        created_at, updated_at: ISO 8601 UTC timestamps.
        note: what is worth knowing about ``version`` although it did not fail, e.g. ``"fallback: <reason>"``
            when a model-based strategy fell back to its deterministic splitter ('' if nothing).
    """

    doc_id: str
    source: str
    container: str = ""
    version: str = ""
    status: Status = "queued"
    indexed_version: str = ""
    chunk_count: int = 0
    batch_count: int = 0
    error: str = ""
    attempts: int = 0
    created_at: str = ""
    updated_at: str = ""
    note: str = ""

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


class LedgerStore(Protocol):
    """Entries with optimistic concurrency: ``write`` succeeds only if the entry's tag is still *tag*
    (``None`` = the entry must not exist yet)."""

    def read(self, doc_id: str) -> tuple[LedgerEntry | None, object]: ...

    def write(self, entry: LedgerEntry, tag: object) -> bool: ...

    def entries(self) -> Iterator[LedgerEntry]: ...


class Ledger:
    """Document state transitions over a ``LedgerStore``. Every method is safe under concurrent callers."""

    def __init__(self, store: LedgerStore) -> None:
        self.store = store

    def get(self, doc_id: str) -> LedgerEntry | None:
        return self.store.read(doc_id)[0]

    def entries(self) -> list[LedgerEntry]:
        return list(self.store.entries())

    def _change(self, doc_id: str, source: str, fn: Callable[[LedgerEntry], LedgerEntry | None]) -> LedgerEntry | None:
        """Apply *fn* to the current entry (a fresh one if none) until the conditional write wins; *fn* returns
        ``None`` to leave the entry unchanged."""
        for _ in range(50):
            entry, tag = self.store.read(doc_id)
            base = entry or LedgerEntry(doc_id=doc_id, source=source, created_at=_now())
            new = fn(base)
            if new is None:
                return entry
            new = dataclasses.replace(new, updated_at=_now())
            if self.store.write(new, tag):
                return new
        raise RuntimeError(f"ledger entry {doc_id} ({source}) kept changing under concurrent writers")

    def begin_version(self, doc_id: str, source: str, version: str, chunk_count: int, batch_count: int,
                      container: str = "", note: str = "", status: Status = "queued") -> LedgerEntry:
        """Stage 1 accepted *version*: it becomes current with *status* ``queued`` (its batches are on their way)
        or ``sending`` (they are about to be sent: ``mark_sent`` follows); *note* (e.g. a strategy's fallback)
        replaces the previous version's. Stage 2 accepts the batches of a current version in either status, so
        a batch that arrives before ``mark_sent`` is not lost."""

        def fn(e: LedgerEntry) -> LedgerEntry:
            attempts = e.attempts if e.version == version else 0
            return dataclasses.replace(e, source=source, container=container or e.container, version=version,
                                       status=status, chunk_count=chunk_count, batch_count=batch_count, error="",
                                       attempts=attempts, note=redact(note)[:_MAX_ERROR_CHARS])

        return self._change(doc_id, source, fn)  # type: ignore[return-value]

    def mark_sent(self, doc_id: str, source: str, version: str) -> None:
        """Every batch of *version* is on the queue: ``sending`` becomes ``queued``. Nothing changes if another
        version became current meanwhile, or if stage 2 already finished this one."""

        def fn(e: LedgerEntry) -> LedgerEntry | None:
            if e.version != version or e.status != "sending":
                return None
            return dataclasses.replace(e, status="queued")

        self._change(doc_id, source, fn)

    def mark_failed(self, doc_id: str, source: str, version: str, error: str, *, only_if_current: bool = False,
                    container: str = "") -> LedgerEntry | None:
        """*version* failed for good: status ``failed`` with the reason. The indexed version, if any, is untouched
        and stays searchable. Stage 1 rejecting a new upload makes *version* current; a poisoned batch
        (``only_if_current=True``) changes nothing once another version has become current."""

        def fn(e: LedgerEntry) -> LedgerEntry | None:
            if only_if_current and e.version != version:
                return None
            return dataclasses.replace(e, source=source, container=container or e.container, version=version,
                                       status="failed", error=redact(error)[:_MAX_ERROR_CHARS],
                                       attempts=e.attempts + 1)

        return self._change(doc_id, source, fn)

    def record_error(self, doc_id: str, source: str, version: str | None, error: str, container: str = "") -> None:
        """A transient failure on *version* (it will be retried): remember the reason and count the attempt.
        ``version=None``: a failure before the version was known (stage 1 crashed), recorded whatever is current."""

        def fn(e: LedgerEntry) -> LedgerEntry | None:
            if version is not None and e.version != version:
                return None
            if container and not e.container:
                e = dataclasses.replace(e, container=container)
            return dataclasses.replace(e, error=redact(error)[:_MAX_ERROR_CHARS], attempts=e.attempts + 1)

        self._change(doc_id, source, fn)

    def mark_indexed(self, doc_id: str, source: str, version: str) -> bool:
        """*version* is fully in the index. Returns False (and changes nothing) if it is no longer current."""
        done = False

        def fn(e: LedgerEntry) -> LedgerEntry | None:
            nonlocal done
            if e.version != version or e.status == "deleted":
                return None
            done = True
            return dataclasses.replace(e, status="indexed", indexed_version=version, error="")

        self._change(doc_id, source, fn)
        return done

    def touch(self, doc_id: str, source: str) -> None:
        """The source was seen again unchanged: only ``updated_at`` moves (so a watcher knows the upload was
        handled). Nothing happens for an unknown document."""
        self._change(doc_id, source, lambda e: e if e.updated_at else None)

    def mark_deleted(self, doc_id: str, source: str) -> LedgerEntry:
        """The source is gone and its chunks were removed."""
        return self._change(doc_id, source, lambda e: dataclasses.replace(  # type: ignore[return-value]
            e, status="deleted", indexed_version="", error=""))


# ------------------------------------------------------------------------------------------------ stores

_COLUMNS = [f.name for f in dataclasses.fields(LedgerEntry)]


class LocalLedgerStore:
    """The ledger in a SQLite file (stdlib ``sqlite3``, WAL); the tag is a revision number."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        cols = ", ".join(f"{c} {'INTEGER' if c in ('chunk_count', 'batch_count', 'attempts') else 'TEXT'}"
                         for c in _COLUMNS if c != "doc_id")
        self._db.execute(f"CREATE TABLE IF NOT EXISTS ledger (doc_id TEXT PRIMARY KEY, {cols}, rev INTEGER NOT NULL)")
        present = {row[1] for row in self._db.execute("PRAGMA table_info(ledger)")}
        if "note" not in present:  # a ledger file written before the column existed
            self._db.execute("ALTER TABLE ledger ADD COLUMN note TEXT NOT NULL DEFAULT ''")

    def read(self, doc_id: str) -> tuple[LedgerEntry | None, object]:
        with self._lock:
            row = self._db.execute(f"SELECT {', '.join(_COLUMNS)}, rev FROM ledger WHERE doc_id = ?",
                                   (doc_id,)).fetchone()
        if row is None:
            return None, None
        return LedgerEntry(*row[:-1]), row[-1]

    def write(self, entry: LedgerEntry, tag: object) -> bool:
        values = [getattr(entry, c) for c in _COLUMNS]
        with self._lock:
            if tag is None:
                cur = self._db.execute(
                    f"INSERT OR IGNORE INTO ledger ({', '.join(_COLUMNS)}, rev) VALUES ({', '.join('?' * len(_COLUMNS))}, 1)",
                    values)
            else:
                sets = ", ".join(f"{c} = ?" for c in _COLUMNS[1:])
                cur = self._db.execute(f"UPDATE ledger SET {sets}, rev = rev + 1 WHERE doc_id = ? AND rev = ?",
                                       values[1:] + [entry.doc_id, tag])
        return cur.rowcount == 1

    def entries(self) -> Iterator[LedgerEntry]:
        with self._lock:
            rows = self._db.execute(f"SELECT {', '.join(_COLUMNS)} FROM ledger ORDER BY source").fetchall()
        return iter(LedgerEntry(*row) for row in rows)


class TableLedgerStore:
    """The ledger in an Azure Storage table (Azurite emulates it); one entity per document (PartitionKey
    ``"doc"``, RowKey = doc_id), the tag is the entity's ETag."""

    def __init__(self, storage: Any, table: str) -> None:
        """*storage*: a connection string or a ``TableServiceClient`` (see ``chunking.storage``); the table is
        created if missing.

        Raises:
            StorageError: the table service cannot be reached or refuses (the message names table and account).
        """
        from azure.data.tables import TableServiceClient

        from azure.core.exceptions import AzureError

        from chunking.storage import storage_error

        service = TableServiceClient.from_connection_string(storage) if isinstance(storage, str) else storage
        try:
            self._client = service.create_table_if_not_exists(table)
        except AzureError as exc:
            raise storage_error(exc, service, f"ledger table '{table}'") from None

    def read(self, doc_id: str) -> tuple[LedgerEntry | None, object]:
        from azure.core.exceptions import ResourceNotFoundError

        try:
            entity = self._client.get_entity("doc", doc_id)
        except ResourceNotFoundError:
            return None, None
        return self._entry(entity), entity.metadata["etag"]

    def write(self, entry: LedgerEntry, tag: object) -> bool:
        from azure.core import MatchConditions
        from azure.core.exceptions import HttpResponseError, ResourceExistsError
        from azure.data.tables import UpdateMode

        entity = {"PartitionKey": "doc", "RowKey": entry.doc_id, **entry.to_dict()}
        try:
            if tag is None:
                self._client.create_entity(entity)
            else:
                self._client.update_entity(entity, mode=UpdateMode.REPLACE, etag=tag,
                                           match_condition=MatchConditions.IfNotModified)
        except ResourceExistsError:
            return False
        except HttpResponseError as exc:
            if exc.status_code == 412:
                return False
            raise
        return True

    def entries(self) -> Iterator[LedgerEntry]:
        return (self._entry(e) for e in self._client.list_entities())

    @staticmethod
    def _entry(entity: dict) -> LedgerEntry:
        return LedgerEntry(**{c: entity.get(c, LedgerEntry.__dataclass_fields__[c].default) for c in _COLUMNS
                              if c in entity or c == "doc_id"} | {"doc_id": entity["RowKey"]})


def make_ledger(settings) -> Ledger:
    """The ledger for *settings*: a storage table when ``settings.ledger_backend == "table"``, else the SQLite
    file ``settings.state_dir / "ledger.sqlite3"``."""
    if settings.ledger_backend == "table":
        from chunking.storage import table_service

        return Ledger(TableLedgerStore(table_service(settings), settings.ledger_table))
    return Ledger(LocalLedgerStore(local_ledger_path(settings)))


def local_ledger_path(settings) -> Path:
    """Where the local ledger lives: ``settings.state_dir / "ledger.sqlite3"`` (read-only commands look before
    opening it, so they create nothing)."""
    return settings.state_dir / "ledger.sqlite3"
