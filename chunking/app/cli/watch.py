"""``chunking status --watch``: follow the documents of the documents container until each is indexed or failed.

A blob newer than its ledger entry (or with none) waits for the blob trigger; then the ledger says ``sending``,
``queued``, and finally ``indexed`` or ``failed``. Every change is printed as it is seen.
"""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass
from typing import Callable, Iterable

from chunking.ids import doc_id
from chunking.ledger import FAILED, INDEXED, QUEUED, SENDING, LedgerEntry, count_statuses

__all__ = ["WAITING", "DocState", "follow", "ledger_states", "states", "summary"]

WAITING = "waiting for the blob trigger"
# Followed until they change: waiting for the trigger, and the ledger's sending and queued (not throttled).
_IN_PROGRESS = (WAITING, SENDING, QUEUED)


@dataclass(frozen=True)
class DocState:
    """Where one document is: ``state`` (:data:`WAITING`, or a ledger status) and what to say about it."""

    source: str
    state: str
    detail: str = ""

    @property
    def in_progress(self) -> bool:
        return self.state in _IN_PROGRESS

    def line(self) -> str:
        return f"{self.source}: {self.state}" + (f" ({self.detail})" if self.detail else "")


def states(blobs: Iterable[tuple[str, dt.datetime]], entries: Iterable, container: str) -> dict[str, DocState]:
    """The state of every document of *container*: its blobs ``(path, last_modified)`` against the ledger
    *entries*; entries still in progress whose blob is gone (or that belong to another container) are included.

    A blob modified after its entry was last written is :data:`WAITING` (timestamps have whole seconds, so an
    entry written in the same second as the upload counts as having seen it).
    """
    by_id = {e.doc_id: e for e in entries}
    result: dict[str, DocState] = {}
    for path, modified in blobs:
        did = doc_id(container, path)
        entry = by_id.pop(did, None)
        if entry is None or dt.datetime.fromisoformat(entry.updated_at) < modified.replace(microsecond=0):
            result[did] = DocState(path, WAITING)
        else:
            result[did] = _entry_state(entry)
    for did, entry in by_id.items():
        if entry.is_sending or entry.is_queued:
            result[did] = _entry_state(entry)
    return result


def ledger_states(entries: Iterable) -> dict[str, DocState]:
    """The state of every document of the ledger *entries*, by ``doc_id``: what ``--watch`` follows when no
    storage is configured (no container to list), so its closing counts are those ``chunking status`` prints."""
    return {e.doc_id: _entry_state(e) for e in entries}


def summary(docs: Iterable[DocState]) -> str:
    """How many documents are in each state, e.g. ``"2 queued, 1 waiting for the blob trigger"``."""
    counts: dict[str, int] = {}
    for doc in docs:
        counts[doc.state] = counts.get(doc.state, 0) + 1
    return ", ".join(f"{n} {state}" for state, n in sorted(counts.items()))


def _entry_state(entry: LedgerEntry) -> DocState:
    if entry.is_queued and not entry.version and entry.requeued_at:  # enqueued by reconcile, no stage 1 yet
        detail = "a stage-1 job waits for it"
    elif entry.is_sending or entry.is_queued:
        detail = f"{_n(entry.batch_count, 'batch', 'es')}, {_n(entry.chunk_count, 'chunk')}"
        if entry.error:
            detail += f"; last error: {entry.error}"
    elif entry.is_indexed:
        detail = _n(entry.chunk_count, "chunk")
    elif entry.is_failed:
        detail = entry.error
    else:
        detail = ""
    return DocState(entry.source, entry.status, detail)


def _n(count: int, word: str, plural: str = "s") -> str:
    return f"{count} {word}{plural * (count != 1)}"


def follow(poll: Callable[[], dict[str, DocState]], *, interval: float, timeout: float,
           out: Callable[[str], None] = print, clock: Callable[[], float] = time.monotonic,
           sleep: Callable[[float], None] = time.sleep) -> int:
    """Call *poll* every *interval* seconds and print each document whose state changed, until none is in
    progress or *timeout* seconds have passed; the last line gives the counts, and how many of the documents
    followed in progress failed. Returns 0 once nothing is in progress, 1 if the timeout came first (the caller
    decides what a failed document makes of the first: ``chunking.app.cli.status.exit_status``)."""
    started = clock()
    seen: dict[str, DocState] = {}
    followed: set[str] = set()
    first = True
    while True:
        current = poll()
        for did, doc in sorted(current.items(), key=lambda kv: kv[1].source):
            if doc.in_progress:
                followed.add(did)
            if seen.get(did) != doc and (doc.in_progress or did in followed or not first):
                out(f"{dt.datetime.now().strftime('%H:%M:%S')}  {doc.line()}")
        seen = current
        first = False
        busy = [d for d in current.values() if d.in_progress]
        mine = [current[d] for d in followed if d in current]
        failed = count_statuses((d.state for d in mine), (FAILED,))[FAILED]
        if not busy:
            counts = count_statuses((d.state for d in current.values()), (INDEXED, FAILED))
            out(f"nothing in progress: {counts[INDEXED]} indexed, {counts[FAILED]} failed"
                + (f" ({len(mine)} followed, {failed} of them failed)" if mine else ""))
            return 0
        if clock() - started >= timeout:
            out(f"still in progress after {timeout:g} s: {summary(busy)}"
                + (" (is `func start` running?)" if all(d.state == WAITING for d in busy) else ""))
            return 1
        sleep(interval)
