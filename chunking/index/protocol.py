"""The search-index interface every backend implements (Azure AI Search, the local single-file index).

Records are ``ChunkRecord`` objects (``chunking.model``); their field names are the index schema.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Collection, Iterable, Protocol, Sequence

from chunking.model import ChunkRecord

__all__ = ["IndexSearcher", "IndexWriter", "SearchHit", "SearchIndex"]


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One search result: the stored record (without its vector) and a score (higher is better).

    ``lexical`` and ``vector``: the keyword and vector parts of ``score`` when the index reports them (the local
    index: 0–1 each, ``None`` when the record was not in that ranking)."""

    record: ChunkRecord
    score: float
    lexical: float | None = None
    vector: float | None = None


class IndexWriter(Protocol):
    """The write side of a vector + keyword index of chunk records, keyed by ``ChunkRecord.id``: what the
    pipeline (``chunking.pipeline``) needs to create the index, write, retire and update the records of document
    versions, and reuse stored vectors."""

    def ensure(self) -> None:
        """Create the index if missing; raise ``IndexError_`` if it exists with an incompatible schema
        (e.g. another vector dimension)."""

    def upsert(self, records: Sequence[ChunkRecord]) -> None:
        """Merge-or-upload *records* (each with an embedding). Idempotent. Raises ``IndexError_`` naming the
        keys that failed permanently."""

    def delete(self, ids: Iterable[str]) -> None:
        """Delete records by key; missing keys are ignored."""

    def keys_of(self, doc_id: str, namespace: str | None = None) -> dict[str, str]:
        """``{id: version}`` of every record of document *doc_id*; with *namespace*, only its records of that
        namespace and those written before namespaces existed (no namespace)."""

    def doc_ids(self, namespace: str | None = None) -> set[str]:
        """Every ``doc_id`` present in the index; with *namespace*, those with records of exactly that
        namespace (``ChunkRecord.namespace``)."""

    def vectors_by_key(self, ids: Iterable[str]) -> dict[str, tuple[float, ...]]:
        """``{id: embedding}`` of the stored records among *ids* that have a vector, by lookups by key (not
        queries: immediate after a write, no filter over the index). Missing ids are left out."""

    def update_fields(self, ids: Iterable[str], values: dict) -> int:
        """Set the document fields in *values* (``storage_url``, ``content_type``, ``last_modified``,
        ``acl_users``, ``acl_groups``, ``metadata``) on the stored records *ids*, leaving text and vector as they
        are; returns how many of them were updated (missing ids are skipped)."""


class IndexSearcher(Protocol):
    """The read side of the index: what retrieval (``chunking.retrieval``), ``chunking search`` and the
    evaluation need to query it and read stored records back."""

    def search(self, query: str, vector: Sequence[float] | None, k: int = 5, *,
               levels: Collection[int] | None = None, filter: str | None = None) -> list[SearchHit]:
        """Hybrid search: keyword (BM25) and, when *vector* is given, vector similarity, fused by reciprocal
        rank fusion; at most *k* hits, best first. *levels*: only records of these ``level`` values. *filter*:
        only records matching this OData filter (``chunking.index.odata``; ``FilterError`` when it is outside
        the subset or names a field the index cannot filter on). Records stored without a vector take part in
        the keyword ranking only."""

    def records_of(self, doc_id: str) -> list[ChunkRecord]:
        """Every record of document *doc_id* (embeddings omitted), in no particular order."""

    def records_by_id(self, ids: Iterable[str]) -> dict[str, ChunkRecord]:
        """The stored records (embeddings omitted) among *ids*, by id; missing ids are left out."""

    def count(self) -> int:
        """Number of records."""


class SearchIndex(IndexWriter, IndexSearcher, Protocol):
    """Both sides: what a backend implements (``LocalIndex``, ``AzureSearchIndex``) and what the composition
    root (``chunking.services.make_index``, the Functions handlers, the CLI) holds and hands to each side."""
