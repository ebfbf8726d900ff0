"""When a document needs repair, by the ledger alone: which entries are due for stage 1 again (a dead sender,
lost messages, a transient failure whose back-off is over), and which versions' chunks no longer belong in the
index. Reconcile (daily, the whole container) and the frequent repair (every few minutes, the ledger's due rows
only) both ask these rules (docs/operations.md#reconcile, docs/architecture.md#deletes-and-reconcile).
"""

from __future__ import annotations

import datetime as dt
import enum

from chunking.ledger.state import IN_FLIGHT, BatchRecord, Ledger, LedgerEntry

__all__ = ["IDLE_GRACE_S", "UNSENT_AFTER_S", "Due", "due_for_repair", "repair_candidates", "unwanted_batches"]

#: A ``sending`` entry not updated for this long lost its sender (it died, or failed before every batch was sent).
UNSENT_AFTER_S = 300
#: A ``queued`` or ``throttled`` entry not updated for this long, while the chunk-batch and stage-1 job queues
#: hold no message at all (visible or not), lost its messages: nothing can complete it any more.
IDLE_GRACE_S = 120


class Due(enum.Enum):
    """What a repair does with a document whose blob is in the container (``due_for_repair``)."""

    NOTHING = "nothing"
    """Nothing due: it is indexed, on its way, waiting for its back-off, or failed for good."""
    WAITING = "waiting"
    """Enqueued by an earlier run, and its stage 1 has not begun yet: not enqueued again."""
    STUCK = "stuck"
    """On its way too long: its sender died, or its messages were lost. Stage 1 again."""
    RETRY = "retry"
    """Failed by a transient cause and its back-off is over. Stage 1 again."""


def _age_s(timestamp: str, now: dt.datetime) -> float:
    return (now - dt.datetime.fromisoformat(timestamp)).total_seconds()


def due_for_repair(entry: LedgerEntry, now: dt.datetime, *, stuck_after_s: int, queues_idle: bool = False,
                   unsent_after_s: int = UNSENT_AFTER_S, idle_grace_s: int = IDLE_GRACE_S) -> Due:
    """Is *entry* due for stage 1 again at *now*?

    - enqueued less than *stuck_after_s* ago (``requeued_at``) and its stage 1 has not begun → ``WAITING``;
    - ``sending`` not updated for *unsent_after_s* → ``STUCK`` (its sender is gone);
    - ``queued`` or ``throttled`` (past its ``retry_at``) not updated for *stuck_after_s*, or for *idle_grace_s*
      when *queues_idle* (the chunk-batch and stage-1 job queues hold no message, visible or invisible, so
      nothing is left that could complete it) → ``STUCK``;
    - ``failed`` by a transient cause whose ``retry_at`` has passed → ``RETRY``;
    - anything else → ``NOTHING``.
    """
    if entry.requeued_at and _age_s(entry.requeued_at, now) <= stuck_after_s and not entry.in_flight:
        return Due.WAITING
    if entry.in_flight:
        age = _age_s(entry.updated_at, now)
        if entry.is_sending:
            return Due.STUCK if age > unsent_after_s else Due.NOTHING
        if entry.is_throttled and entry.retry_at and dt.datetime.fromisoformat(entry.retry_at) > now:
            return Due.NOTHING
        limit = min(stuck_after_s, idle_grace_s) if queues_idle else stuck_after_s
        return Due.STUCK if age > limit else Due.NOTHING
    if entry.awaits_retry:
        return Due.RETRY if dt.datetime.fromisoformat(entry.retry_at) <= now else Due.NOTHING
    return Due.NOTHING


def unwanted_batches(ledger: Ledger, doc_id: str) -> list[BatchRecord]:
    """The batch records of *doc_id* whose version's chunks may not stay in the index (``LedgerEntry.wants`` on
    the entry read *after* the records were listed: a version that became current meanwhile began before its
    first batch was written, so it is read as current and spared)."""
    records = ledger.batch_records(doc_id)
    if not records:
        return []
    entry = ledger.get(doc_id)
    return [b for b in records if entry is None or not entry.wants(b.version)]


def repair_candidates(ledger: Ledger, now: dt.datetime, lookback_s: int) -> list[LedgerEntry]:
    """The entries the frequent repair looks at: every one on its way (``sending``, ``queued``, ``throttled``),
    every ``failed`` one that reconcile retries, and every entry changed in the last *lookback_s* seconds (whose
    superseded versions may have left chunks behind). Read with one filtered query of the store when it has
    one (``entries_where``: the statuses, every ``failed`` entry of a transient cause, and those changed since),
    else by reading every entry."""
    since = (now - dt.timedelta(seconds=lookback_s)).isoformat(timespec="seconds")
    query = getattr(ledger.store, "entries_where", None)
    entries = list(query(IN_FLIGHT, since)) if query is not None else ledger.entries()
    return [e for e in entries if e.in_flight or e.awaits_retry or e.updated_at >= since]
