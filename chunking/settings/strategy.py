"""The options of the model-based chunking strategies (semantic, hierarchical, small-to-big, propositions, LLM,
enrichment), read from the environment without importing the strategies."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from .values import SettingsError, boolean, int_list, natural, parsed_value, positive, ratio

__all__ = ["SEMANTIC_THRESHOLD_TYPES", "StrategyOptions"]

#: Breakpoint threshold types of the semantic chunker (``chunking.strategies.semantic``) and their default
#: amounts; here so that ``SEMANTIC_BREAKPOINT_TYPE`` is checked without importing the strategies.
SEMANTIC_THRESHOLD_TYPES: dict[str, float] = {
    "percentile": 95.0, "standard_deviation": 3.0, "interquartile": 1.5, "gradient": 95.0, "absolute": 0.35,
}  # fmt: skip

def _threshold_type(raw: str) -> str:
    if raw not in SEMANTIC_THRESHOLD_TYPES:
        raise ValueError(raw)
    return raw



@dataclass(frozen=True)
class StrategyOptions:
    """Parameters of the strategies (docs/splitters.md#strategies); units in the names.

    Environment variables (local defaults in brackets): ``SEMANTIC_BUFFER_SIZE`` [1], ``SEMANTIC_BREAKPOINT_TYPE``
    [percentile], ``SEMANTIC_BREAKPOINT_AMOUNT`` [the type's default], ``SEMANTIC_MIN_TOKENS`` [100],
    ``HIERARCHY_LEVELS`` [2000,500,128], ``HIERARCHY_EMBED_LEVELS`` [all], ``SMALL_TO_BIG_TOKENS`` [1500,200]
    (parent, child), ``PROPOSITION_PASSAGE_TOKENS`` [400], ``PROPOSITION_MAX`` [30], ``PROPOSITION_MAX_TOKENS``
    [100], ``PROPOSITION_MIN_GROUNDING`` [0.6], ``LLM_WINDOW_TOKENS`` [3000], ``LLM_MIN_TOKENS`` [100],
    ``ROUTER_CHOICES`` [sentence,markdown,semantic,hierarchical], ``ENRICH_BREADCRUMB`` [true],
    ``ENRICH_NEIGHBOUR_SENTENCES`` [1], ``ENRICH_NEIGHBOUR_MAX_TOKENS`` [50], ``ENRICH_GENERATED_CONTEXT``
    [false].

    Chunk caps not listed here come from the general settings: ``SPLIT_MAX_TOKENS`` is the maximum chunk size of
    the semantic and LLM chunkers, as it is of the splitters. Every value enters the document version of the files
    whose extension uses the strategy (``SPLITTERS``). The strategies (``chunking.strategies``) read these values;
    this module imports none of them.
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
        levels = parsed_value(env, "HIERARCHY_LEVELS", cls.hierarchy_levels_tokens, int_list, "token caps like 2000,500,128")
        pair = parsed_value(env, "SMALL_TO_BIG_TOKENS", cls.small_to_big_tokens, int_list, "two token caps like 1500,200")
        if len(pair) != 2 or 0 in pair or 0 in levels:
            raise SettingsError("SMALL_TO_BIG_TOKENS needs two caps (parent,child) and HIERARCHY_LEVELS caps ≥ 1")
        choices = parsed_value(env, "ROUTER_CHOICES", ",".join(cls.router_choices), str, "a comma-separated list")
        return cls(
            semantic_buffer_size=parsed_value(env, "SEMANTIC_BUFFER_SIZE", 1, natural, "an integer ≥ 0"),
            semantic_threshold_type=parsed_value(env, "SEMANTIC_BREAKPOINT_TYPE", "percentile", _threshold_type,
                                          "percentile, standard_deviation, interquartile, gradient or absolute"),
            semantic_threshold_amount=parsed_value(env, "SEMANTIC_BREAKPOINT_AMOUNT", None, float, "a number"),
            semantic_min_tokens=parsed_value(env, "SEMANTIC_MIN_TOKENS", 100, natural, "an integer ≥ 0"),
            hierarchy_levels_tokens=levels,
            hierarchy_embed_levels=parsed_value(env, "HIERARCHY_EMBED_LEVELS", None, int_list, "level numbers like 1,2"),
            small_to_big_tokens=(pair[0], pair[1]),
            proposition_passage_tokens=parsed_value(env, "PROPOSITION_PASSAGE_TOKENS", 400, positive, "an integer ≥ 1"),
            proposition_max_count=parsed_value(env, "PROPOSITION_MAX", 30, positive, "an integer ≥ 1"),
            proposition_max_tokens=parsed_value(env, "PROPOSITION_MAX_TOKENS", 100, positive, "an integer ≥ 1"),
            proposition_min_grounding=parsed_value(env, "PROPOSITION_MIN_GROUNDING", 0.6, ratio, "a number in [0, 1]"),
            llm_window_tokens=parsed_value(env, "LLM_WINDOW_TOKENS", 3000, positive, "an integer ≥ 1"),
            llm_min_tokens=parsed_value(env, "LLM_MIN_TOKENS", 100, natural, "an integer ≥ 0"),
            router_choices=tuple(c.strip() for c in choices.split(",") if c.strip()),
            enrich_breadcrumb=parsed_value(env, "ENRICH_BREADCRUMB", True, boolean, "true or false"),
            enrich_neighbour_sentences=parsed_value(env, "ENRICH_NEIGHBOUR_SENTENCES", 1, natural, "an integer ≥ 0"),
            enrich_neighbour_max_tokens=parsed_value(env, "ENRICH_NEIGHBOUR_MAX_TOKENS", 50, positive, "an integer ≥ 1"),
            enrich_generated_context=parsed_value(env, "ENRICH_GENERATED_CONTEXT", False, boolean, "true or false"),
        )
