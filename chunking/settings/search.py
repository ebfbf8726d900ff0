"""How the local index ranks search results (``chunking.index.fusion``), read from the environment."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from .values import SettingsError, int_value, parsed_value, ratio, str_value

__all__ = ["SearchOptions"]

_METHODS = ("score", "rrf")


def _cosine(raw: str) -> float:
    value = float(raw)
    if not -1.0 <= value <= 1.0:
        raise ValueError(raw)
    return value


@dataclass(frozen=True)
class SearchOptions:
    """Hybrid ranking of the local index (docs/search.md).

    Environment variables (defaults in brackets): ``SEARCH_FUSION`` [score] (``score`` or ``rrf``),
    ``SEARCH_LEXICAL_WEIGHT`` [0.6 with the offline embedder, 0.5 with a model] (share of the keyword ranking,
    0–1), ``SEARCH_RRF_K`` [60],
    ``SEARCH_MIN_VECTOR_SCORE`` [0.15 with the offline embedder, 0.3 with a model] (cosine a vector candidate
    needs to count, -1–1).
    """

    fusion: str = "score"
    #: ``None``: the embedder's default (``chunking.index.fusion_options``), as for ``min_vector_score``.
    lexical_weight: float | None = None
    rrf_k: int = 60
    #: ``None``: the embedder's default (``chunking.index.fusion_options``).
    min_vector_score: float | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> "SearchOptions":
        """Read the variables of the class docstring from *env*.

        Raises:
            SettingsError: a value is malformed (the message names the variable).
        """
        fusion = str_value(env, "SEARCH_FUSION", "score")
        if fusion not in _METHODS:
            raise SettingsError(f"SEARCH_FUSION must be score or rrf, got {fusion!r}")
        return cls(
            fusion=fusion,
            lexical_weight=parsed_value(env, "SEARCH_LEXICAL_WEIGHT", None, ratio, "a number in [0, 1]"),
            rrf_k=int_value(env, "SEARCH_RRF_K", 60, 1),
            min_vector_score=parsed_value(env, "SEARCH_MIN_VECTOR_SCORE", None, _cosine, "a number in [-1, 1]"),
        )
