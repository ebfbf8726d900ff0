"""Vectors reused on stage 2's hot path without a search query.

A new version of a document mostly repeats the text of the version before it; recomputing those embeddings
would cost tokens for nothing. The ledger's batch records name, for every key a version wrote, the hash of the
text its vector was computed from and the embedder that computed it (``chunking.ledger.BatchRecord``), so the
vectors to reuse are found in the ledger and fetched from the index by key. A lookup by key reads the stored
document directly: it is immediate after a write, unlike a query, which the near-real-time index answers from a
lagging view (docs/architecture.md#completion-from-the-ledger); and it needs no filter over every document.

Only vectors of the same embedder (``Embedder.name``: model and dimensions) are reused, so a change of
embedding model re-embeds everything. Texts repeated in other documents are not found this way (that would
take a query): they are embedded again.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from chunking.index.protocol import IndexWriter
from chunking.ledger import Ledger
from chunking.model import ChunkRecord

__all__ = ["reusable_vectors", "vector_keys"]


def reusable_vectors(records: Sequence[ChunkRecord], *, doc_id: str, embedder: str, ledger: Ledger,
                     index: IndexWriter) -> dict[str, tuple[float, ...]]:
    """``{vector_key: vector}`` for those *records* (with a vector) whose text some recorded batch of *doc_id*
    (any version: the indexed one, the batches of the current one already in) embedded with *embedder*.

    One ledger read (the document's batch records) and one lookup by key per reusable text; keys deleted
    meanwhile (a retired version) are simply not found, and their texts are embedded again."""
    wanted = {r.vector_key for r in records if r.has_vector}
    if not wanted:
        return {}
    key_of: dict[str, str] = {}
    for batch in ledger.batch_records(doc_id):
        if batch.embedder != embedder or len(batch.hashes) != len(batch.keys):
            continue
        for key, vector_key in zip(batch.keys, batch.hashes):
            if vector_key in wanted:
                key_of.setdefault(vector_key, key)
    if not key_of:
        return {}
    found = index.vectors_by_key(key_of.values())
    return {h: found[k] for h, k in key_of.items() if k in found}


def vector_keys(records: Iterable[ChunkRecord]) -> list[str]:
    """What a batch record stores beside each key: the record's ``vector_key``, or '' without a vector."""
    return [r.vector_key if r.has_vector else "" for r in records]
