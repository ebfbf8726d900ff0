"""The repair rules of the ledger (``chunking.ledger.repair``): when an entry is due for stage 1 again, which rows
the frequent repair reads, which batch records are unwanted; and the transient back-off's bound."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from chunking.ledger import (
    DELETED,
    FAILED,
    INDEXED,
    MAX_TRANSIENT_FAILURES,
    QUEUED,
    RETRY_CAP_S,
    SENDING,
    THROTTLED,
    Due,
    Ledger,
    LedgerEntry,
    LocalLedgerStore,
    due_for_repair,
    repair_candidates,
    unwanted_batches,
)

NOW = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.timezone.utc)


def _ago(minutes: float) -> str:
    return (NOW - dt.timedelta(minutes=minutes)).isoformat(timespec="seconds")


def _entry(status, updated_min_ago=0.0, **kw) -> LedgerEntry:
    return LedgerEntry("d", "a.txt", status=status, version="v2", updated_at=_ago(updated_min_ago), **kw)


@pytest.mark.parametrize("entry, idle, due", [
    (_entry(SENDING, 4), False, Due.NOTHING),
    (_entry(SENDING, 6), False, Due.STUCK),
    (_entry(QUEUED, 30), False, Due.NOTHING),   # the queues are busy: an hour
    (_entry(QUEUED, 61), False, Due.STUCK),
    (_entry(QUEUED, 1), True, Due.NOTHING),     # idle queues: 2 minutes
    (_entry(QUEUED, 3), True, Due.STUCK),
    (_entry(THROTTLED, 3, retry_at=_ago(-5)), True, Due.NOTHING),  # deferred for 5 more minutes
    (_entry(THROTTLED, 3, retry_at=_ago(1)), True, Due.STUCK),
    (_entry(FAILED, 9, failure="transient", retry_at=_ago(-1)), False, Due.NOTHING),
    (_entry(FAILED, 9, failure="transient", retry_at=_ago(0)), False, Due.RETRY),
    (_entry(FAILED, 9, failure="permanent"), True, Due.NOTHING),
    (_entry(FAILED, 9, failure="transient", retry_at=_ago(1), requeued_at=_ago(2)), False, Due.WAITING),
    (_entry(INDEXED, 500), True, Due.NOTHING),
])
def test_due_for_repair(entry, idle, due):
    assert due_for_repair(entry, NOW, stuck_after_s=3600, queues_idle=idle) is due


def test_a_transient_failure_is_retried_within_the_cap_however_often_it_failed(tmp_path):
    ledger = Ledger(LocalLedgerStore(tmp_path / "l.sqlite3"))
    delays = []
    for _ in range(12):
        e = ledger.mark_failed("d", "a.txt", "v1", "HTTP 500", kind="transient", now=NOW)
        delays.append((dt.datetime.fromisoformat(e.retry_at) - NOW).total_seconds())
    assert delays == [60, 120, 240] + [RETRY_CAP_S] * 9 and RETRY_CAP_S == 480
    for _ in range(MAX_TRANSIENT_FAILURES - 13):
        ledger.mark_failed("d", "a.txt", "v1", "HTTP 500", kind="transient", now=NOW)
    last = ledger.mark_failed("d", "a.txt", "v1", "HTTP 500", kind="transient", now=NOW)
    assert (last.failure, last.retry_at, last.failures) == ("permanent", "", MAX_TRANSIENT_FAILURES)
    assert last.error == f"HTTP 500 (gave up after {MAX_TRANSIENT_FAILURES} failures)"


def test_repair_reads_only_the_rows_that_may_need_it(tmp_path):
    store = LocalLedgerStore(tmp_path / "l.sqlite3")
    rows = {"old-indexed": _entry(INDEXED, 120), "new-indexed": _entry(INDEXED, 10),
            "old-permanent": _entry(FAILED, 120, failure="permanent"),
            "old-transient": _entry(FAILED, 120, failure="transient", retry_at=_ago(100)),
            "old-queued": _entry(QUEUED, 120), "old-sending": _entry(SENDING, 120),
            "old-throttled": _entry(THROTTLED, 120, retry_at=_ago(110)), "old-deleted": _entry(DELETED, 120)}
    for name, entry in rows.items():
        assert store.write(dataclasses.replace(entry, doc_id=name, source=name), None)
    got = sorted(e.doc_id for e in repair_candidates(Ledger(store), NOW, 3600))
    assert got == ["new-indexed", "old-queued", "old-sending", "old-throttled", "old-transient"]


def test_unwanted_batches_are_those_of_versions_neither_current_nor_indexed(tmp_path):
    ledger = Ledger(LocalLedgerStore(tmp_path / "l.sqlite3"))
    ledger.begin_version("d", "a.txt", "v0", 1, 1)
    ledger.record_batch("d", "v0", 0, ["d-v0-0"])
    ledger.mark_indexed("d", "a.txt", "v0")
    ledger.begin_version("d", "a.txt", "v1", 2, 2)
    ledger.record_batch("d", "v1", 0, ["d-v1-0"])
    assert unwanted_batches(ledger, "d") == []  # v1 in progress, v0 indexed
    ledger.mark_failed("d", "a.txt", "v2", "file is empty")
    assert [(b.version, b.keys) for b in unwanted_batches(ledger, "d")] == [("v1", ("d-v1-0",))]
    ledger.mark_deleted("d", "a.txt")
    assert [b.version for b in unwanted_batches(ledger, "d")] == ["v0", "v1"]
