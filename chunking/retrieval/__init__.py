"""One query against an index, as ``chunking search`` and ``chunking eval`` run it: the query's vector (for the
offline lexical embedder weighted by inverse document frequencies from the index), then the index's hybrid
search, or one of its two rankings alone.

May import: core, errors, tokens, embeddings, index.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from chunking.embeddings.stopwords import is_stop_word
from chunking.index.protocol import IndexSearcher, SearchHit

__all__ = ["RANKINGS", "keyword_text", "query_vector", "search"]

#: What ``search`` can rank by: both rankings fused (the index's method), keywords (BM25) alone, vectors alone.
RANKINGS = ("hybrid", "bm25", "vector")


# A word as a query is cut into words: letters and digits of any script, with inner apostrophes ("don't").
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")


def keyword_text(query: str) -> str:
    """What the keyword ranking (BM25) of *query* is asked: *query* as it is, or ``""`` (no keyword ranking)
    when every word of it is a stop word (``chunking.embeddings.stopwords``, case-insensitive) or it has none.
    BM25 over words found in nearly every chunk ranks chunks by length, not by what they say
    (docs/search.md#no-hits); a query holding one other word keeps its stop words, which BM25's idf weighs
    little. Example: ``keyword_text("the and of")`` → ``""``; ``keyword_text("the pyenv")`` → ``"the pyenv"``."""
    return query if any(not is_stop_word(w.lower()) for w in _WORD.findall(query)) else ""


def query_vector(embedder: Any, index: IndexSearcher, query: str) -> list[float]:
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


def search(query: str, *, index: IndexSearcher, embedder: Any, k: int = 5, ranking: str = "hybrid",
           levels: Sequence[int] | None = None, filter: str | None = None) -> list[SearchHit]:
    """At most *k* hits for *query*, best first, among the records matching OData *filter* (if any).

    With an embedder that can tell whether a text holds a query word (``shares_word``: the offline lexical
    one), a hit found by its vector alone must hold one: its cosine is otherwise hash collisions, and a query
    sharing nothing with the documents gets no hits. Other embedders rely on the index's cosine floor
    (``SEARCH_MIN_VECTOR_SCORE``) alone. A query of stop words only gets no keyword ranking (``keyword_text``):
    its hybrid hits are its vector hits (none with the offline embedder, which drops stop words too), and its
    ``bm25`` ranking has none; except on an index that vectorizes query text itself, whose hybrid query is sent
    as it is.

    Args:
        ranking: ``"hybrid"`` (keywords and vectors, fused as the index does), ``"bm25"`` (keywords only) or
            ``"vector"`` (vectors only).
        levels: only records of these levels (``None``: all).

    Raises:
        ValueError: unknown *ranking*.
    """
    if ranking not in RANKINGS:
        raise ValueError(f"ranking must be one of {', '.join(RANKINGS)}, got {ranking!r}")
    # An index whose vectorizer embeds the query text itself (SEARCH_QUERY_VECTORIZATION=service) gets no vector
    # for a hybrid query; a vector-only query still needs one.
    service_side = ranking == "hybrid" and getattr(index, "vectorizes_queries", False)
    vector = None if ranking == "bm25" or service_side else query_vector(embedder, index, query)
    extra = {"filter": filter} if filter else {}
    # The service's vectorizer embeds the text it is sent: that query goes as it is (its vector needs the words).
    keywords = "" if ranking == "vector" else query if service_side else keyword_text(query)
    if not keywords and vector is None:  # only stop words, and no vector asked for: nothing to rank by
        return []
    shares_word = getattr(embedder, "shares_word", None) if vector is not None else None
    if shares_word is None:
        return index.search(keywords, vector, k=k, levels=levels, **extra)
    # The offline embedder hashes features into few columns, so a chunk sharing no word with the query still
    # gets cosines up to ~0.3 from collisions alone (docs/search.md#no-hits): such a vector-only candidate is
    # dropped. More than k are asked for so that k remain; fused scores do not depend on how many are asked.
    hits = index.search(keywords, vector, k=2 * k + 10, levels=levels, **extra)
    kept = [h for h in hits
            if h.lexical is not None or h.vector is None or shares_word(query, h.record.text_to_embed)]
    return kept[:k]
