"""The ledger in a SQLite file (stdlib ``sqlite3``): the embedded default, under the local state folder."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import threading
from pathlib import Path
from typing import Iterator

from chunking.ledger.state import FAILED, TRANSIENT, BatchRecord, LedgerEntry

__all__ = ["LocalLedgerStore"]

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
        # A commit reaches the WAL without waiting for the disk; the file stays consistent, and only a power loss
        # can lose the last writes, which a later run re-does (docs/architecture.md#the-ledger).
        self._db.execute("PRAGMA synchronous=NORMAL")
        cols = ", ".join(f"{c} {'INTEGER' if c in _INT_COLUMNS else 'TEXT'}" for c in _COLUMNS if c != "doc_id")
        self._db.execute(f"CREATE TABLE IF NOT EXISTS ledger (doc_id TEXT PRIMARY KEY, {cols}, rev INTEGER NOT NULL)")
        present = {row[1] for row in self._db.execute("PRAGMA table_info(ledger)")}
        for column in _COLUMNS:  # a ledger file written before these columns existed
            if column not in present:
                kind = "INTEGER NOT NULL DEFAULT 0" if column in _INT_COLUMNS else "TEXT NOT NULL DEFAULT ''"
                self._db.execute(f"ALTER TABLE ledger ADD COLUMN {column} {kind}")
        self._db.execute("CREATE TABLE IF NOT EXISTS batches (doc_id TEXT NOT NULL, version TEXT NOT NULL, "
                         "batch_no INTEGER NOT NULL, keys TEXT NOT NULL, PRIMARY KEY (doc_id, version, batch_no))")
        present = {row[1] for row in self._db.execute("PRAGMA table_info(batches)")}
        for column, kind in (("hashes", "TEXT NOT NULL DEFAULT '[]'"), ("embedder", "TEXT NOT NULL DEFAULT ''")):
            if column not in present:  # a ledger file written before vector reuse by key
                self._db.execute(f"ALTER TABLE batches ADD COLUMN {column} {kind}")

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

    def entries_where(self, statuses: tuple[str, ...], updated_since: str) -> Iterator[LedgerEntry]:
        """The entries in one of *statuses*, ``failed`` by a transient cause, or updated at *updated_since* or
        later (ISO 8601 UTC, compared as text: every timestamp is written in one format)."""
        marks = ", ".join("?" * len(statuses))
        with self._lock:
            rows = self._db.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM ledger WHERE status IN ({marks}) OR updated_at >= ? "
                f"OR (status = ? AND failure = ?) ORDER BY source",
                (*statuses, updated_since, FAILED, TRANSIENT)).fetchall()
        return iter(LedgerEntry(*row) for row in rows)

    def add_batch(self, record: BatchRecord) -> bool:
        with self._lock:
            cur = self._db.execute(
                "INSERT OR IGNORE INTO batches (doc_id, version, batch_no, keys, hashes, embedder) "
                "VALUES (?, ?, ?, ?, ?, ?)", (record.doc_id, record.version, record.batch_no,
                                             json.dumps(record.keys), json.dumps(record.hashes), record.embedder))
        return cur.rowcount == 1

    def batches(self, doc_id: str, version: str | None = None) -> list[BatchRecord]:
        sql = "SELECT doc_id, version, batch_no, keys, hashes, embedder FROM batches WHERE doc_id = ?"
        args = [doc_id]
        if version is not None:
            sql, args = sql + " AND version = ?", args + [version]
        with self._lock:
            rows = self._db.execute(sql, args).fetchall()
        return [BatchRecord(d, v, n, tuple(json.loads(k)), tuple(json.loads(h)), e) for d, v, n, k, h, e in rows]

    def remove_batches(self, doc_id: str, version: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM batches WHERE doc_id = ? AND version = ?", (doc_id, version))
