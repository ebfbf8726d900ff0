"""Retrieval metrics over ranked hit lists with binary relevance: hit@k, reciprocal rank and nDCG@k.

Definitions (Manning, Raghavan and Schütze, *Introduction to Information Retrieval*, §8.4, and Järvelin and
Kekäläinen 2002, "Cumulated gain-based evaluation of IR techniques"):

* hit@k: 1 when a relevant hit is among the first *k*, else 0.
* reciprocal rank: ``1 / r`` for the rank ``r`` (1-based) of the first relevant hit, 0 when there is none.
* nDCG@k: ``DCG@k / IDCG@k`` with ``DCG@k = Σ_{i ≤ k} rel_i / log2(i + 1)``; the ideal ranking puts
  ``min(k, relevant)`` relevant records first, where ``relevant`` counts the relevant records in the whole index.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

__all__ = ["QuestionScore", "Summary", "hit_at", "ndcg_at", "reciprocal_rank", "score_question", "summarise"]


def hit_at(relevance: Sequence[bool], k: int) -> float:
    """1.0 when any of the first *k* hits is relevant, else 0.0 (``hit_at([False, True], 1)`` → 0.0)."""
    return 1.0 if any(relevance[:k]) else 0.0


def reciprocal_rank(relevance: Sequence[bool]) -> float:
    """``1 / rank`` of the first relevant hit (``[False, True]`` → 0.5), 0.0 when none is relevant."""
    return next((1.0 / rank for rank, rel in enumerate(relevance, 1) if rel), 0.0)


def ndcg_at(relevance: Sequence[bool], k: int, relevant: int) -> float:
    """nDCG@k with binary gains; *relevant* is the number of relevant records in the index (the ideal list).

    ``ndcg_at([False, True], 10, 1)`` → ``1 / log2(3)`` ≈ 0.631. 0.0 when *relevant* is 0.
    """
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(k, relevant) + 1))
    if ideal == 0.0:
        return 0.0
    return sum(1.0 / math.log2(i + 1) for i, rel in enumerate(relevance[:k], 1) if rel) / ideal


@dataclass(frozen=True)
class QuestionScore:
    """The metrics of one question; ``rank`` is the first relevant hit's (0: none in the list)."""

    question: str
    lang: str
    rank: int
    hit1: float
    hit3: float
    hit5: float
    rr: float
    ndcg10: float
    relevant: int


def score_question(question: str, lang: str, relevance: Sequence[bool], relevant: int) -> QuestionScore:
    """The metrics of one ranked list (*relevance* per hit, best first, up to 10 used)."""
    rank = next((r for r, rel in enumerate(relevance, 1) if rel), 0)
    return QuestionScore(question, lang, rank, hit_at(relevance, 1), hit_at(relevance, 3), hit_at(relevance, 5),
                         reciprocal_rank(relevance[:10]), ndcg_at(relevance, 10, relevant), relevant)


@dataclass
class Summary:
    """Means over questions: ``hit1``, ``hit3``, ``hit5``, ``mrr`` (mean reciprocal rank within 10), ``ndcg10``."""

    questions: int = 0
    hit1: float = 0.0
    hit3: float = 0.0
    hit5: float = 0.0
    mrr: float = 0.0
    ndcg10: float = 0.0
    by_lang: dict[str, "Summary"] = field(default_factory=dict)

    def to_dict(self) -> dict:
        out = {"questions": self.questions, "hit@1": round(self.hit1, 4), "hit@3": round(self.hit3, 4),
               "hit@5": round(self.hit5, 4), "mrr": round(self.mrr, 4), "ndcg@10": round(self.ndcg10, 4)}
        if self.by_lang:
            out["by_lang"] = {lang: s.to_dict() for lang, s in sorted(self.by_lang.items())}
        return out


def _mean(scores: Sequence[QuestionScore]) -> Summary:
    n = len(scores)
    if not n:
        return Summary()
    return Summary(n, sum(s.hit1 for s in scores) / n, sum(s.hit3 for s in scores) / n,
                   sum(s.hit5 for s in scores) / n, sum(s.rr for s in scores) / n, sum(s.ndcg10 for s in scores) / n)


def summarise(scores: Sequence[QuestionScore]) -> Summary:
    """Means over *scores*, with the same means per ``lang`` when more than one language occurs."""
    summary = _mean(scores)
    langs = sorted({s.lang for s in scores if s.lang})
    if len(langs) > 1:
        summary.by_lang = {lang: _mean([s for s in scores if s.lang == lang]) for lang in langs}
    return summary
