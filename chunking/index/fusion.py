"""Hybrid ranking of the local index: how a keyword (BM25) ranking and a vector ranking become one list, and the
0–1 relevance shown to people. docs/search.md explains the choice, with the figures that made it.

Methods (``FusionOptions.method``):

* ``"score"`` (default): score-normalised fusion. The lexical part is the BM25 score divided by the BM25 score
  the query would get from an average-length chunk holding each query term once (``Σ idf``, see
  ``bm25_reference``), capped at 1; the vector part is the cosine similarity, floored at 0. The relevance is
  ``w · lexical + (1 − w) · vector`` with ``w = lexical_weight``, a number a person can read: 0 is nothing in
  common, 1 every query term (or a vector identical to the query's).
* ``"rrf"``: reciprocal rank fusion, ``Σ weight / (rrf_k + rank)`` over the two rankings (Cormack, Clarke and
  Büttcher 2009, k = 60), the lexical ranking weighted ``w`` and the vector ranking ``1 − w`` (``w = 0.5``
  is plain RRF, up to a factor 2). Scores are then divided by their largest possible value, so they lie in
  0–1 too, but they say how high a record ranked, not how well it matches.

A vector candidate below ``min_vector_score`` (cosine) takes no part: a query sharing nothing with the corpus
gets no hits instead of the least dissimilar chunks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

__all__ = ["FUSION_METHODS", "Fused", "FusionOptions", "bm25_idf", "bm25_reference", "fuse"]

FUSION_METHODS = ("score", "rrf")
#: FTS5's BM25 parameters (sqlite ext/fts5/fts5_aux.c): term-frequency saturation and length normalisation.
BM25_K1 = 1.2


@dataclass(frozen=True)
class FusionOptions:
    """How the local index fuses its two rankings (see the module docstring).

    Attributes:
        method: ``"score"`` or ``"rrf"``.
        lexical_weight: share ``w`` of the keyword ranking, 0–1 (1: keywords only, vectors break no tie).
        rrf_k: the RRF constant (rank offset), ≥ 1.
        min_vector_score: cosine a vector candidate needs to take part, -1–1.

    Raises:
        ValueError: a value out of range.
    """

    method: str = "score"
    lexical_weight: float = 0.6
    rrf_k: int = 60
    min_vector_score: float = 0.15

    def __post_init__(self) -> None:
        if self.method not in FUSION_METHODS:
            raise ValueError(f"fusion method must be one of {', '.join(FUSION_METHODS)}, got {self.method!r}")
        if not 0.0 <= self.lexical_weight <= 1.0:
            raise ValueError(f"lexical_weight must be in [0, 1], got {self.lexical_weight}")
        if self.rrf_k < 1:
            raise ValueError(f"rrf_k must be ≥ 1, got {self.rrf_k}")
        if not -1.0 <= self.min_vector_score <= 1.0:
            raise ValueError(f"min_vector_score must be in [-1, 1], got {self.min_vector_score}")


@dataclass(frozen=True)
class Fused:
    """One fused result: record id, relevance 0–1, and the parts (``None``: not in that ranking)."""

    id: str
    score: float
    lexical: float | None
    vector: float | None


def bm25_idf(rows: int, rows_with_term: int) -> float:
    """FTS5's inverse document frequency: ``ln((N − n + 0.5) / (n + 0.5))``, floored at 1e-6 as FTS5 does
    (a term in more than half of the rows counts next to nothing). ``bm25_idf(100, 1)`` ≈ 4.20."""
    value = math.log((rows - rows_with_term + 0.5) / (rows_with_term + 0.5)) if rows > 0 else 0.0
    return max(value, 1e-6)


def bm25_reference(idfs: Sequence[float]) -> float:
    """The BM25 score of a chunk of average length holding each query term exactly once: each term then scores
    ``idf · (k1 + 1) / (1 + k1) = idf``, so the reference is ``Σ idf`` (0 for no terms)."""
    return float(sum(idfs))


def fuse(lexical: Sequence[tuple[str, float]], vector: Sequence[tuple[str, float]], options: FusionOptions,
         *, lexical_reference: float, cosines: Mapping[str, float] | None = None, use_lexical: bool = True,
         use_vector: bool = True) -> list[Fused]:
    """Fuse a keyword ranking and a vector ranking into one, best first (ties by BM25 score, then by id).

    Args:
        lexical: ``(id, bm25)`` best first, ``bm25`` positive (higher is better; FTS5's ``bm25()`` negated).
        vector: ``(id, cosine)`` best first.
        options: the method and its parameters.
        lexical_reference: ``bm25_reference`` of the query (≤ 0: lexical parts are 0).
        cosines: cosine of further ids (keyword candidates outside the vector ranking), for their vector part.
        use_lexical, use_vector: whether the search asked for that ranking (a query with no word, no query
            vector); a ranking not asked for takes no share, so a keyword-only relevance is the lexical part and
            a vector-only one the cosine.

    Returns:
        every id of either list that takes part (vector candidates under ``min_vector_score`` do not, unless they
        are in the keyword ranking, where their vector part is still shown), with its relevance and parts.
    """
    w = options.lexical_weight if use_lexical and use_vector else (1.0 if use_lexical else 0.0)
    lex = {i: (min(1.0, s / lexical_reference) if lexical_reference > 0 else 0.0) for i, s in lexical}
    vec_all = {i: max(0.0, float(s)) for i, s in [*(cosines or {}).items(), *vector]}
    vec_ranked = [i for i, s in vector if s >= options.min_vector_score]
    ids = list(dict.fromkeys([i for i, _ in lexical] + vec_ranked))
    if options.method == "score":
        scores = {i: w * lex.get(i, 0.0) + (1.0 - w) * vec_all.get(i, 0.0) for i in ids}
    else:
        k = options.rrf_k
        best = (w if use_lexical else 0.0) + ((1.0 - w) if use_vector else 0.0)
        scores = dict.fromkeys(ids, 0.0)
        for rank, (i, _) in enumerate(lexical, 1):
            scores[i] += w / (k + rank)
        for rank, i in enumerate(vec_ranked, 1):
            scores[i] += (1.0 - w) / (k + rank)
        scale = (k + 1) / best if best > 0 else 0.0
        scores = {i: s * scale for i, s in scores.items()}
    # Keyword parts are capped at 1, so the best keyword matches of a query tie: BM25 itself orders them (a
    # keyword-only search lists them in BM25's order, not by id).
    raw = dict(lexical)
    order = sorted(ids, key=lambda i: (-scores[i], -raw.get(i, 0.0), i))
    return [Fused(i, scores[i], lex.get(i), vec_all.get(i)) for i in order]
