"""When a document version is complete, and what stage 2 does with a batch of a version that is not wanted: the
rule stage 2 follows, over the ledger alone (the index is never asked: its queries lag its writes;
docs/architecture.md#the-two-stages).

A version is complete when the ledger records every one of its batch numbers ``0 … n-1``, ``n`` being the
message's batch count or, for a long document whose batches went out before stage 1 knew it, the count stage 1
recorded in the entry afterwards (``Ledger.mark_sent``); a count of 0 is never complete. Completing marks it
``indexed`` (``Ledger.mark_indexed``), which the ledger refuses once another version is current or the document
is deleted. The index and the payload store are the caller's: these functions only say what to do with them.
"""

from __future__ import annotations

import enum

from chunking.ledger.state import Ledger, LedgerEntry

__all__ = ["BatchFate", "Completion", "all_batches_in", "batch_fate", "complete_if_done", "is_wanted"]


class BatchFate(enum.Enum):
    """What stage 2 does with a batch of a version, given the document's entry (``batch_fate``)."""

    WRITE = "write"
    """The version is current and not complete: embed and write the batch."""
    SUPERSEDED = "superseded"
    """The version is not current (another one is, or the document is deleted or unknown) and not the indexed
    one: drop the batch, and delete what the version wrote."""
    SUPERSEDED_INDEXED = "superseded, still indexed"
    """The version is not current but is the indexed one (a late duplicate while a newer version is on its way):
    drop the batch; the version's chunks stay searchable."""
    ABANDONED = "abandoned"
    """Stage 1 gave up on the version after sending some of its batches (``LedgerEntry.is_abandoned``): drop the
    batch and delete what the version wrote."""
    COMPLETE = "complete"
    """The version is already ``indexed`` (a duplicate): drop the batch; the other versions may still need
    removing if a crash cut that short."""


class Completion(enum.Enum):
    """What ``complete_if_done`` found."""

    PENDING = "pending"
    """A batch of the version is not recorded yet (or its batch count is not known yet): nothing changed."""
    COMPLETED = "completed"
    """Every batch is recorded and the version is now ``indexed``: the caller removes the other versions."""
    KEPT = "kept"
    """Every batch is recorded but the ledger refused to mark the version ``indexed`` (it is no longer current),
    and it is still wanted (the indexed version): nothing to do."""
    UNWANTED = "unwanted"
    """Every batch is recorded, the ledger refused to mark the version ``indexed``, and no chunk of it is wanted
    any more (superseded, deleted or abandoned): the caller deletes what it wrote."""


def batch_fate(entry: LedgerEntry | None, version: str) -> BatchFate:
    """The fate of a batch of *version* arriving at stage 2 when the document's entry is *entry* (``None``: the
    ledger does not know the document)."""
    if entry is None or not entry.is_current(version):
        if entry is not None and entry.has_indexed(version):
            return BatchFate.SUPERSEDED_INDEXED
        return BatchFate.SUPERSEDED
    if entry.is_abandoned(version):
        return BatchFate.ABANDONED
    if entry.is_indexed:
        return BatchFate.COMPLETE
    return BatchFate.WRITE


def is_wanted(ledger: Ledger, doc_id: str, version: str) -> bool:
    """May the chunks of *version* of *doc_id* stay in the index (``LedgerEntry.wants``, on a fresh read)? False
    for an unknown document."""
    entry = ledger.get(doc_id)
    return entry is not None and entry.wants(version)


def all_batches_in(ledger: Ledger, doc_id: str, version: str, batch_count: int = 0,
                   entry: LedgerEntry | None = None) -> bool:
    """Does the ledger record every batch of *version*? *batch_count* is the count a message carries (0: not
    known when it was sent); then the count comes from *entry* (read now when ``None``) if *version* is its
    current version, and is 0 (not complete) until stage 1 recorded it."""
    if not batch_count:
        entry = entry if entry is not None else ledger.get(doc_id)
        batch_count = entry.batch_count if entry is not None and entry.version == version else 0
    return batch_count > 0 and set(range(batch_count)) <= ledger.batches_done(doc_id, version)


def complete_if_done(ledger: Ledger, doc_id: str, source: str, version: str, batch_count: int = 0, *,
                     embedder: str = "", entry: LedgerEntry | None = None) -> Completion:
    """Complete *version* of *doc_id* if the ledger records every one of its batches (``all_batches_in`` with
    *batch_count* and *entry*): mark it ``indexed`` with vectors of *embedder* (``Embedder.name``; '' = the one
    its batch records name, for a completion reached without embedding). Returns what happened; the caller
    removes the other versions (``COMPLETED``) or this one (``UNWANTED``) from the index.

    Marked before anything is removed, so a writer of an older version that records a batch afterwards sees that
    its version is no longer wanted and removes its own keys."""
    if not all_batches_in(ledger, doc_id, version, batch_count, entry):
        return Completion.PENDING
    embedder = embedder or next((b.embedder for b in ledger.batch_records(doc_id, version) if b.embedder), "")
    if ledger.mark_indexed(doc_id, source, version, embedder):
        return Completion.COMPLETED
    return Completion.KEPT if is_wanted(ledger, doc_id, version) else Completion.UNWANTED
