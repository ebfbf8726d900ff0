"""One query against an index, as ``chunking search`` and ``chunking eval`` run it: the query's vector (for the
offline lexical embedder weighted by inverse document frequencies from the index), then the index's hybrid
search, or one of its two rankings alone.
"""

from __future__ import annotations

from typing import Any, Sequence

from chunking.index.protocol import SearchHit, SearchIndex

__all__ = ["RANKINGS", "query_vector", "search"]

#: What ``search`` can rank by: both rankings fused (the index's method), keywords (BM25) alone, vectors alone.
RANKINGS = ("hybrid", "bm25", "vector")


def query_vector(embedder: Any, index: SearchIndex, query: str) -> list[float]:
    """The vector of *query*.

    An embedder with ``embed_query(text, idf)`` (the offline lexical one) gets the inverse document frequency of
    each of its query words over the index (``ln(1 + (N − n + 0.5) / (n + 0.5))``, the non-negative BM25 idf of
    Lucene), when the index can count them (``term_document_counts``, the local index); any other embedder
    embeds the query like a chunk.
    """
    counts = getattr(index, "term_document_counts", None)
    embed_query = getattr(embedder, "embed_query", None)
    if embed_query is None or counts is None:
        return embedder.embed([query])[0]
    words = embedder.query_words(query)
    total, found = counts(words)
    from math import log

    idf = {w: log(1.0 + (total - found.get(w, 0) + 0.5) / (found.get(w, 0) + 0.5)) for w in words}
    return embed_query(query, idf)


def search(query: str, *, index: SearchIndex, embedder: Any, k: int = 5, ranking: str = "hybrid",
           levels: Sequence[int] | None = None, filter: str | None = None) -> list[SearchHit]:
    """At most *k* hits for *query*, best first, among the records matching OData *filter* (if any).

    Args:
        ranking: ``"hybrid"`` (keywords and vectors, fused as the index does), ``"bm25"`` (keywords only) or
            ``"vector"`` (vectors only).
        levels: only records of these levels (``None``: all).

    Raises:
        ValueError: unknown *ranking*.
    """
    if ranking not in RANKINGS:
        raise ValueError(f"ranking must be one of {', '.join(RANKINGS)}, got {ranking!r}")
    vector = None if ranking == "bm25" else query_vector(embedder, index, query)
    extra = {"filter": filter} if filter else {}
    return index.search("" if ranking == "vector" else query, vector, k=k, levels=levels, **extra)
