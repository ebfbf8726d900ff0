"""The strategies' parameters as settings (environment variables), one frozen dataclass.

Chunk caps not listed here come from the general settings: ``SPLIT_MAX_TOKENS`` is the maximum chunk size of the
semantic and LLM chunkers, as it is of the splitters. Every value enters the document version of the files whose
extension uses the strategy (``SPLITTERS``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, TypeVar

__all__ = ["StrategyOptions"]

_T = TypeVar("_T")


def _read(env: Mapping[str, str], name: str, default: _T, parse: Callable[[str], _T], rule: str) -> _T:
    from chunking.settings import SettingsError

    raw = env.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        return parse(raw.strip())
    except ValueError:
        raise SettingsError(f"{name} must be {rule}, got {raw!r}") from None


def _positive(raw: str) -> int:
    value = int(raw)
    if value < 1:
        raise ValueError(raw)
    return value


def _natural(raw: str) -> int:
    value = int(raw)
    if value < 0:
        raise ValueError(raw)
    return value


def _ints(raw: str) -> tuple[int, ...]:
    values = tuple(int(v) for v in raw.split(",") if v.strip())
    if not values or min(values) < 0:
        raise ValueError(raw)
    return values


def _ratio(raw: str) -> float:
    value = float(raw)
    if not 0.0 <= value <= 1.0:
        raise ValueError(raw)
    return value


def _bool(raw: str) -> bool:
    lowered = raw.lower()
    if lowered not in ("true", "false", "1", "0", "yes", "no"):
        raise ValueError(raw)
    return lowered in ("true", "1", "yes")


def _threshold_type(raw: str) -> str:
    from chunking.strategies.semantic import THRESHOLD_TYPES

    if raw not in THRESHOLD_TYPES:
        raise ValueError(raw)
    return raw


@dataclass(frozen=True)
class StrategyOptions:
    """Parameters of the strategies (``shared/spec/strategies.md`` §8–§13); units in the names.

    Environment variables (local defaults in brackets): ``SEMANTIC_BUFFER_SIZE`` [1], ``SEMANTIC_BREAKPOINT_TYPE``
    [percentile], ``SEMANTIC_BREAKPOINT_AMOUNT`` [the type's default], ``SEMANTIC_MIN_TOKENS`` [100],
    ``HIERARCHY_LEVELS`` [2000,500,128], ``HIERARCHY_EMBED_LEVELS`` [all], ``SMALL_TO_BIG_TOKENS`` [1500,200]
    (parent, child), ``PROPOSITION_PASSAGE_TOKENS`` [400], ``PROPOSITION_MAX`` [30], ``PROPOSITION_MAX_TOKENS``
    [100], ``PROPOSITION_MIN_GROUNDING`` [0.6], ``LLM_WINDOW_TOKENS`` [3000], ``LLM_MIN_TOKENS`` [100],
    ``ROUTER_CHOICES`` [sentence,markdown,semantic,hierarchical], ``ENRICH_BREADCRUMB`` [true],
    ``ENRICH_NEIGHBOUR_SENTENCES`` [1], ``ENRICH_NEIGHBOUR_MAX_TOKENS`` [50], ``ENRICH_GENERATED_CONTEXT``
    [false].
    """

    semantic_buffer_size: int = 1
    semantic_threshold_type: str = "percentile"
    semantic_threshold_amount: float | None = None
    semantic_min_tokens: int = 100
    hierarchy_levels_tokens: tuple[int, ...] = (2000, 500, 128)
    hierarchy_embed_levels: tuple[int, ...] | None = None
    small_to_big_tokens: tuple[int, int] = (1500, 200)
    proposition_passage_tokens: int = 400
    proposition_max_count: int = 30
    proposition_max_tokens: int = 100
    proposition_min_grounding: float = 0.6
    llm_window_tokens: int = 3000
    llm_min_tokens: int = 100
    router_choices: tuple[str, ...] = ("sentence", "markdown", "semantic", "hierarchical")
    enrich_breadcrumb: bool = True
    enrich_neighbour_sentences: int = 1
    enrich_neighbour_max_tokens: int = 50
    enrich_generated_context: bool = False

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> "StrategyOptions":
        """Read the variables of the class docstring from *env*.

        Raises:
            SettingsError: a value is malformed (the message names the variable).
        """
        levels = _read(env, "HIERARCHY_LEVELS", cls.hierarchy_levels_tokens, _ints, "token caps like 2000,500,128")
        pair = _read(env, "SMALL_TO_BIG_TOKENS", cls.small_to_big_tokens, _ints, "two token caps like 1500,200")
        if len(pair) != 2 or 0 in pair or 0 in levels:
            from chunking.settings import SettingsError

            raise SettingsError("SMALL_TO_BIG_TOKENS needs two caps (parent,child) and HIERARCHY_LEVELS caps ≥ 1")
        choices = _read(env, "ROUTER_CHOICES", ",".join(cls.router_choices), str, "a comma-separated list")
        return cls(
            semantic_buffer_size=_read(env, "SEMANTIC_BUFFER_SIZE", 1, _natural, "an integer ≥ 0"),
            semantic_threshold_type=_read(env, "SEMANTIC_BREAKPOINT_TYPE", "percentile", _threshold_type,
                                          "percentile, standard_deviation, interquartile, gradient or absolute"),
            semantic_threshold_amount=_read(env, "SEMANTIC_BREAKPOINT_AMOUNT", None, float, "a number"),
            semantic_min_tokens=_read(env, "SEMANTIC_MIN_TOKENS", 100, _natural, "an integer ≥ 0"),
            hierarchy_levels_tokens=levels,
            hierarchy_embed_levels=_read(env, "HIERARCHY_EMBED_LEVELS", None, _ints, "level numbers like 1,2"),
            small_to_big_tokens=(pair[0], pair[1]),
            proposition_passage_tokens=_read(env, "PROPOSITION_PASSAGE_TOKENS", 400, _positive, "an integer ≥ 1"),
            proposition_max_count=_read(env, "PROPOSITION_MAX", 30, _positive, "an integer ≥ 1"),
            proposition_max_tokens=_read(env, "PROPOSITION_MAX_TOKENS", 100, _positive, "an integer ≥ 1"),
            proposition_min_grounding=_read(env, "PROPOSITION_MIN_GROUNDING", 0.6, _ratio, "a number in [0, 1]"),
            llm_window_tokens=_read(env, "LLM_WINDOW_TOKENS", 3000, _positive, "an integer ≥ 1"),
            llm_min_tokens=_read(env, "LLM_MIN_TOKENS", 100, _natural, "an integer ≥ 0"),
            router_choices=tuple(c.strip() for c in choices.split(",") if c.strip()),
            enrich_breadcrumb=_read(env, "ENRICH_BREADCRUMB", True, _bool, "true or false"),
            enrich_neighbour_sentences=_read(env, "ENRICH_NEIGHBOUR_SENTENCES", 1, _natural, "an integer ≥ 0"),
            enrich_neighbour_max_tokens=_read(env, "ENRICH_NEIGHBOUR_MAX_TOKENS", 50, _positive, "an integer ≥ 1"),
            enrich_generated_context=_read(env, "ENRICH_GENERATED_CONTEXT", False, _bool, "true or false"),
        )
