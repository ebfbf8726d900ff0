"""Removing a document's versions from the index by their known keys.

The ledger's batch records name every key a version wrote (``Ledger.record_batch``), so deleting a version
never asks the index which keys it holds: a search query would miss writes the index has not made visible yet
(Azure AI Search is near-real-time: docs/architecture.md#completion-from-the-ledger). Deletes by key are
immediate in the service.
"""

from __future__ import annotations

import logging

from chunking.index.protocol import IndexWriter
from chunking.ledger import Ledger
from chunking.pipeline.members import remove_vanished_members
from chunking.storage.claim_check import PayloadStore
from chunking.storage.figures import FigureStore

__all__ = ["remove_other_versions", "retire_version"]

log = logging.getLogger("chunking.pipeline.versions")


def retire_version(doc_id: str, version: str, *, index: IndexWriter, ledger: Ledger,
                   payloads: PayloadStore | None = None, extra_keys: tuple[str, ...] | list[str] = (),
                   figures: FigureStore | None = None) -> int:
    """Delete every key *version* of *doc_id* recorded (plus *extra_keys*: a batch written but not yet
    recorded), then its batch records, its claim-check payloads and its figure images (in *figures*). Returns
    the number of keys deleted. Idempotent; the caller makes sure *version* is neither current nor the indexed
    one."""
    keys = {k for b in ledger.batch_records(doc_id, version) for k in b.keys} | set(extra_keys)
    if keys:
        index.delete(sorted(keys))
    ledger.forget_batches(doc_id, version)
    if payloads is not None:
        payloads.delete_prefix(f"{doc_id}/{version}/")
    if figures is not None:
        figures.delete_prefix(f"{doc_id}/{version}/")
    return len(keys)


def remove_other_versions(doc_id: str, keep: str, *, index: IndexWriter, ledger: Ledger,
                          payloads: PayloadStore | None = None, figures: FigureStore | None = None) -> int:
    """*keep* is complete: retire every other version with batch records, except the one that is current now
    (a newer upload may already be writing), their figure images with them (*figures*). Returns the number of
    keys deleted.

    The ledger is read after the batch records were listed: a version whose records were listed had become
    current before, so re-reading the entry spares it; a version that becomes current later wrote none of the
    listed records."""
    remove_vanished_members(doc_id, keep, index=index, ledger=ledger, payloads=payloads,  # a container's
                            figures=figures)
    versions = {b.version for b in ledger.batch_records(doc_id)}
    entry = ledger.get(doc_id)
    spare = {keep} | ({entry.version, entry.indexed_version} if entry and not entry.is_deleted else set())
    removed = 0
    for version in sorted(versions - spare):
        removed += retire_version(doc_id, version, index=index, ledger=ledger, payloads=payloads, figures=figures)
    if removed:
        log.info("removed %d chunks of %s's other versions", removed, doc_id)
    return removed
