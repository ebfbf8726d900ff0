"""The two rankings of the local index's hybrid search, over its SQLite file and its cached vector matrix:
BM25 through FTS5 (``keyword_ranking``, with the statistics the 0–1 lexical part needs) and cosine similarity
(``nearest``). ``chunking.index.fusion`` fuses them; ``chunking.index.local`` owns the file and the cache.
"""

from __future__ import annotations

import sqlite3
from typing import Iterable, Sequence

import numpy as np

from chunking.index.fusion import bm25_idf, bm25_reference
from chunking.index.local.fts import fts_query

__all__ = ["BM25_WEIGHTS", "bm25_query_reference", "keyword_ranking", "nearest", "term_document_counts"]

#: BM25 column weights of ``records_fts``: content, headings, source.
BM25_WEIGHTS = (1.0, 1.0, 0.5)


def keyword_ranking(db: sqlite3.Connection, query: str, depth: int, levels: list[int] | None = None,
                    where: tuple[str, list] | None = None, languages: Sequence[str] = ()) -> list[tuple[str, float]]:
    """The *depth* best ``(id, bm25)`` for free-text *query* (``bm25`` positive, higher is better; FTS5's
    ``bm25()`` negated), ties by id; empty when the query has no term or *levels* is empty. *where*: an SQL
    condition on the ``r`` alias and its parameters (an OData filter, ``chunking.index.local.odata_sql``);
    *languages*: the query's stems in these languages are asked for too (``fts_query``)."""
    expression = fts_query(query, languages)
    if not expression or levels == []:
        return []
    weights = ", ".join(str(w) for w in BM25_WEIGHTS)
    level_filter = f" AND r.level IN ({', '.join('?' * len(levels))})" if levels is not None else ""
    level_filter += f" AND {where[0]}" if where else ""
    cur = db.execute(
        f"SELECT r.id, bm25(records_fts, {weights}) AS score FROM records_fts "
        f"JOIN records r ON r.rowid = records_fts.rowid "
        f"WHERE records_fts MATCH ?{level_filter} ORDER BY score, r.id LIMIT ?",
        (expression, *(levels or ()), *(where[1] if where else ()), depth),
    )
    return [(row[0], -float(row[1])) for row in cur]


def bm25_query_reference(db: sqlite3.Connection, query: str, languages: Sequence[str] = ()) -> float:
    """``bm25_reference`` of *query*: FTS5 scores each OR-ed phrase of the expression with its own idf over all
    rows, so the reference is the sum of those idfs. A stem of *languages* counts only when some chunk holds it:
    stems are extra chances to match, so one that matches nothing (an English word stemmed as Spanish) must not
    lower the relevance of what the words themselves found."""
    words = [p for p in fts_query(query).split(" OR ") if p]
    stems = [p for p in fts_query(query, languages).split(" OR ") if p and p not in words]
    rows = int(db.execute("SELECT count(*) FROM records_fts").fetchone()[0])

    def hits(phrase: str) -> int:
        return int(db.execute("SELECT count(*) FROM records_fts WHERE records_fts MATCH ?", (phrase,)).fetchone()[0])

    counts = [hits(p) for p in words] + [n for n in map(hits, stems) if n]
    return bm25_reference([bm25_idf(rows, n) for n in counts])


def term_document_counts(db: sqlite3.Connection, terms: Iterable[str]) -> tuple[int, dict[str, int]]:
    """``(rows, {term: rows matching it})``; a term of several parts (a CJK run) must match all of them."""
    total = int(db.execute("SELECT count(*) FROM records").fetchone()[0])
    counts: dict[str, int] = {}
    for term in dict.fromkeys(terms):
        expression = fts_query(term).replace(" OR ", " AND ")
        counts[term] = int(db.execute("SELECT count(*) FROM records_fts WHERE records_fts MATCH ?",
                                      (expression,)).fetchone()[0]) if expression else 0
    return total, counts


def nearest(ids: Sequence[str], matrix: np.ndarray, record_levels: np.ndarray, query: np.ndarray, depth: int,
            levels: list[int] | None = None, also: Sequence[str] = (),
            allowed: set[str] | None = None) -> tuple[list[tuple[str, float]], dict[str, float]]:
    """The *depth* rows of unit-normalised *matrix* nearest to *query* as ``(id, cosine)`` best first (ties by
    id), only rows whose level is in *levels* (``None``: all) and whose id is in *allowed* (``None``: all); and the
    cosine of each id of *also* found.

    Args:
        ids: the id of each row of *matrix*; record_levels: the level of each row.
        query: the query vector (any norm; the zero vector matches nothing).
    """
    norm = float(np.linalg.norm(query))
    if norm == 0.0 or not len(ids):
        return [], {}
    all_scores = matrix @ (query / norm)
    position = {i: j for j, i in enumerate(ids)} if also else {}
    extra = {i: float(all_scores[position[i]]) for i in also if i in position}
    keep = np.isin(record_levels, levels) if levels is not None else np.ones(len(ids), dtype=bool)
    if allowed is not None:
        keep &= np.asarray([i in allowed for i in ids], dtype=bool)
    ids, scores = [i for i, kept in zip(ids, keep) if kept], all_scores[keep]
    if not len(ids):
        return [], extra
    top = min(depth, len(ids))
    candidates = np.argpartition(-scores, top - 1)[:top]
    # Sort by score, then by id so that equal scores rank the same in every run.
    ordered = sorted(candidates.tolist(), key=lambda j: (-float(scores[j]), ids[j]))
    return [(ids[j], float(scores[j])) for j in ordered], extra
