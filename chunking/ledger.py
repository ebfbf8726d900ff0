"""The ledger: per-document state of the pipeline (which version is current, whether it is indexed, why it
failed), so that at-least-once triggers, duplicated and reordered messages never corrupt the index.

Backends: Azure Table Storage via ``azure-data-tables`` (Azure, and Azurite locally) and a SQLite file under the
local state folder (the embedded default). Both offer a read and a conditional write (optimistic concurrency on
an ETag / revision), and every state change below is a read-modify-write loop over them.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Literal, Protocol

from chunking.redact import redact

__all__ = ["BatchRecord", "Ledger", "LedgerEntry", "LocalLedgerStore", "Status", "TableLedgerStore",
           "local_ledger_path", "make_ledger"]

Status = Literal["sending", "queued", "throttled", "indexed", "failed", "deleted"]
_MAX_ERROR_CHARS = 2000
# Reconcile retries a version failed by a transient cause after RETRY_BASE_S · 2^(failures - 1), at most
# RETRY_CAP_S; after MAX_TRANSIENT_FAILURES failures of one version it gives up (the failure becomes permanent).
RETRY_BASE_S = 300
RETRY_CAP_S = 6 * 3600
MAX_TRANSIENT_FAILURES = 8


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class LedgerEntry:
    """One document's state.

    Attributes:
        doc_id, source, container: the document id, its path, and the container (namespace) holding it.
        version: the current version (the newest one stage 1 accepted or rejected).
        status: ``sending`` (``version`` is split, its batches are being sent to the queue), ``queued`` (they were
            sent and are on their way), ``throttled`` (a batch was deferred by a 429/503; ``retry_at`` says
            when it is tried again), ``indexed`` (``version`` fully in the index),
            ``failed`` (``version`` could not be parsed or indexed; ``error`` says why), ``deleted``.
        indexed_version: the version fully in the index (may differ from ``version`` while a new one is queued
            or after it failed: the previous good version stays searchable).
        chunk_count, batch_count: of ``version``.
        error: reason of the last failure ('' if none); attempts: failed attempts on ``version``.
        created_at, updated_at: ISO 8601 UTC timestamps.
        note: what is worth knowing about ``version`` although it did not fail, e.g. ``"fallback: <reason>"``
            when a model-based strategy fell back to its deterministic splitter ('' if nothing).
        failure: the kind of the last error, ``transient`` or ``permanent`` ('' if none); failures: how many
            times ``version`` was marked ``failed``; retry_at: when reconcile retries a transient failure
            (ISO 8601 UTC, '' if it does not).
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
    failure: str = ""
    failures: int = 0
    retry_at: str = ""

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class BatchRecord:
    """One batch of a version that stage 2 wrote to the index: the keys it wrote (so that the version's chunks
    can be deleted by key, without asking the index which keys it holds)."""

    doc_id: str
    version: str
    batch_no: int
    keys: tuple[str, ...] = ()


class LedgerStore(Protocol):
    """Entries with optimistic concurrency: ``write`` succeeds only if the entry's tag is still *tag*
    (``None`` = the entry must not exist yet). Batch records are written once (``add_batch`` is an insert that
    a duplicate loses) and removed per version."""

    def read(self, doc_id: str) -> tuple[LedgerEntry | None, object]: ...

    def write(self, entry: LedgerEntry, tag: object) -> bool: ...

    def entries(self) -> Iterator[LedgerEntry]: ...

    def add_batch(self, record: BatchRecord) -> bool: ...

    def batches(self, doc_id: str, version: str | None = None) -> list[BatchRecord]: ...

    def remove_batches(self, doc_id: str, version: str) -> None: ...


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
            same = e.version == version
            return dataclasses.replace(e, source=source, container=container or e.container, version=version,
                                       status=status, chunk_count=chunk_count, batch_count=batch_count, error="",
                                       attempts=e.attempts if same else 0, note=redact(note)[:_MAX_ERROR_CHARS],
                                       failure="", failures=e.failures if same else 0, retry_at="")

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
                    container: str = "", kind: str = "permanent", now: dt.datetime | None = None) -> LedgerEntry | None:
        """*version* failed: status ``failed`` with the reason. The indexed version, if any, is untouched and stays
        searchable. Stage 1 rejecting a new upload makes *version* current; a poisoned batch
        (``only_if_current=True``) changes nothing once another version has become current, nor once *version*
        is already ``failed`` (the first reason stays: no reason is nested in another).

        *kind* ``transient``: reconcile retries the version at ``retry_at`` (exponential back-off over its
        failures, ``RETRY_BASE_S`` … ``RETRY_CAP_S``); after ``MAX_TRANSIENT_FAILURES`` it becomes permanent."""
        now = now or dt.datetime.now(dt.timezone.utc)

        def fn(e: LedgerEntry) -> LedgerEntry | None:
            if only_if_current and (e.version != version or e.status == "failed"):
                return None
            failures = (e.failures if e.version == version else 0) + 1
            reason, failure, retry_at = error, kind, ""
            if kind == "transient":
                if failures >= MAX_TRANSIENT_FAILURES:
                    failure, reason = "permanent", f"{error} (gave up after {failures} failures)"
                else:
                    delay = min(RETRY_CAP_S, RETRY_BASE_S * 2 ** (failures - 1))
                    retry_at = (now + dt.timedelta(seconds=delay)).isoformat(timespec="seconds")
            return dataclasses.replace(e, source=source, container=container or e.container, version=version,
                                       status="failed", error=redact(reason)[:_MAX_ERROR_CHARS], attempts=e.attempts + 1,
                                       failure=failure, failures=failures, retry_at=retry_at)

        return self._change(doc_id, source, fn)

    def record_error(self, doc_id: str, source: str, version: str | None, error: str, container: str = "",
                     kind: str = "transient") -> None:
        """A failed attempt on *version* (the trigger retries it): remember the reason, its *kind* (``transient``
        or ``permanent``: what the poison handler records if every attempt fails) and count the attempt.
        ``version=None``: a failure before the version was known (stage 1 crashed), recorded whatever is current."""

        def fn(e: LedgerEntry) -> LedgerEntry | None:
            if version is not None and e.version != version:
                return None
            if container and not e.container:
                e = dataclasses.replace(e, container=container)
            return dataclasses.replace(e, error=redact(error)[:_MAX_ERROR_CHARS], attempts=e.attempts + 1,
                                       failure=kind)

        self._change(doc_id, source, fn)

    def mark_indexed(self, doc_id: str, source: str, version: str) -> bool:
        """*version* is fully in the index. Returns False (and changes nothing) if it is no longer current."""
        done = False

        def fn(e: LedgerEntry) -> LedgerEntry | None:
            nonlocal done
            if e.version != version or e.status == "deleted":
                return None
            done = True
            return dataclasses.replace(e, status="indexed", indexed_version=version, error="", failure="",
                                       failures=0, retry_at="")

        self._change(doc_id, source, fn)
        return done

    def touch(self, doc_id: str, source: str) -> None:
        """The source was seen again unchanged: only ``updated_at`` moves (so a watcher knows the upload was
        handled). Nothing happens for an unknown document."""
        self._change(doc_id, source, lambda e: e if e.updated_at else None)

    def mark_throttled(self, doc_id: str, source: str, version: str, wait_s: float,
                       now: dt.datetime | None = None) -> None:
        """A batch of *version* was deferred for *wait_s* seconds by throttling: ``throttled`` with ``retry_at``.
        Nothing changes unless *version* is current and on its way (``sending``, ``queued``, ``throttled``)."""
        at = ((now or dt.datetime.now(dt.timezone.utc)) + dt.timedelta(seconds=wait_s)).isoformat(timespec="seconds")

        def fn(e: LedgerEntry) -> LedgerEntry | None:
            if e.version != version or e.status not in ("sending", "queued", "throttled"):
                return None
            return dataclasses.replace(e, status="throttled", retry_at=at)

        self._change(doc_id, source, fn)

    def record_batch(self, doc_id: str, version: str, batch_no: int, keys: Iterable[str]) -> None:
        """Batch *batch_no* of *version* is in the index with *keys*. Idempotent (a duplicate delivery records
        nothing new)."""
        self.store.add_batch(BatchRecord(doc_id, version, batch_no, tuple(keys)))

    def batches_done(self, doc_id: str, version: str) -> set[int]:
        """The batch numbers of *version* recorded so far (a strongly consistent read of the ledger)."""
        return {b.batch_no for b in self.store.batches(doc_id, version)}

    def batch_records(self, doc_id: str, version: str | None = None) -> list[BatchRecord]:
        """Batch records of *doc_id* (of every version, or of *version*), by version then batch number."""
        return sorted(self.store.batches(doc_id, version), key=lambda b: (b.version, b.batch_no))

    def forget_batches(self, doc_id: str, version: str) -> None:
        """Remove the batch records of *version* (its chunks were deleted)."""
        self.store.remove_batches(doc_id, version)

    def mark_deleted(self, doc_id: str, source: str) -> LedgerEntry:
        """The source is gone and its chunks were removed."""
        return self._change(doc_id, source, lambda e: dataclasses.replace(  # type: ignore[return-value]
            e, status="deleted", indexed_version="", error=""))


# ------------------------------------------------------------------------------------------------ stores

_COLUMNS = [f.name for f in dataclasses.fields(LedgerEntry)]
_INT_COLUMNS = {"chunk_count", "batch_count", "attempts", "failures"}


class LocalLedgerStore:
    """The ledger in a SQLite file (stdlib ``sqlite3``, WAL); the tag is a revision number."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        cols = ", ".join(f"{c} {'INTEGER' if c in _INT_COLUMNS else 'TEXT'}" for c in _COLUMNS if c != "doc_id")
        self._db.execute(f"CREATE TABLE IF NOT EXISTS ledger (doc_id TEXT PRIMARY KEY, {cols}, rev INTEGER NOT NULL)")
        present = {row[1] for row in self._db.execute("PRAGMA table_info(ledger)")}
        for column in _COLUMNS:  # a ledger file written before these columns existed
            if column not in present:
                kind = "INTEGER NOT NULL DEFAULT 0" if column in _INT_COLUMNS else "TEXT NOT NULL DEFAULT ''"
                self._db.execute(f"ALTER TABLE ledger ADD COLUMN {column} {kind}")
        self._db.execute("CREATE TABLE IF NOT EXISTS batches (doc_id TEXT NOT NULL, version TEXT NOT NULL, "
                         "batch_no INTEGER NOT NULL, keys TEXT NOT NULL, PRIMARY KEY (doc_id, version, batch_no))")

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

    def add_batch(self, record: BatchRecord) -> bool:
        with self._lock:
            cur = self._db.execute("INSERT OR IGNORE INTO batches VALUES (?, ?, ?, ?)",
                                   (record.doc_id, record.version, record.batch_no, json.dumps(record.keys)))
        return cur.rowcount == 1

    def batches(self, doc_id: str, version: str | None = None) -> list[BatchRecord]:
        sql, args = "SELECT doc_id, version, batch_no, keys FROM batches WHERE doc_id = ?", [doc_id]
        if version is not None:
            sql, args = sql + " AND version = ?", args + [version]
        with self._lock:
            rows = self._db.execute(sql, args).fetchall()
        return [BatchRecord(d, v, n, tuple(json.loads(k))) for d, v, n, k in rows]

    def remove_batches(self, doc_id: str, version: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM batches WHERE doc_id = ? AND version = ?", (doc_id, version))


# A string property of a table entity holds at most 64 KiB (32 K UTF-16 characters): keys are spread over
# properties k0, k1, … of at most this many characters.
_KEYS_CHARS_PER_PROPERTY = 30_000


class TableLedgerStore:
    """The ledger in an Azure Storage table (Azurite emulates it); one entity per document (PartitionKey
    ``"doc"``, RowKey = doc_id), the tag is the entity's ETag. Batch records are entities of the partition
    ``"batch-<doc_id>"`` with RowKey ``<version>-<batch_no>`` (one partition per document: a version's records
    are one range query away)."""

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
        return (self._entry(e) for e in self._client.query_entities("PartitionKey eq 'doc'"))

    def add_batch(self, record: BatchRecord) -> bool:
        from azure.core.exceptions import ResourceExistsError

        text = json.dumps(record.keys)
        parts = [text[i:i + _KEYS_CHARS_PER_PROPERTY] for i in range(0, len(text), _KEYS_CHARS_PER_PROPERTY)]
        entity = {"PartitionKey": f"batch-{record.doc_id}", "RowKey": f"{record.version}-{record.batch_no:06d}",
                  "version": record.version, "batch_no": record.batch_no, "parts": len(parts),
                  **{f"k{i}": part for i, part in enumerate(parts)}}
        try:
            self._client.create_entity(entity)
        except ResourceExistsError:
            return False
        return True

    def batches(self, doc_id: str, version: str | None = None) -> list[BatchRecord]:
        query = "PartitionKey eq @pk"
        params = {"pk": f"batch-{doc_id}"}
        if version is not None:
            # RowKeys of the version sort between "<version>-" and "<version>." ("." follows "-").
            query += " and RowKey gt @lo and RowKey lt @hi"
            params.update(lo=f"{version}-", hi=f"{version}.")
        return [BatchRecord(doc_id, e["version"], int(e["batch_no"]),
                            tuple(json.loads("".join(e[f"k{i}"] for i in range(int(e["parts"]))))))
                for e in self._client.query_entities(query, parameters=params)]

    def remove_batches(self, doc_id: str, version: str) -> None:
        from azure.core.exceptions import ResourceNotFoundError

        for record in self.batches(doc_id, version):
            try:
                self._client.delete_entity(f"batch-{doc_id}", f"{version}-{record.batch_no:06d}")
            except ResourceNotFoundError:
                pass

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
