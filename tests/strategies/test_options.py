"""Strategy settings: parsing, errors that name the variable, and the sample settings file listing each one
with its local default."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from chunking.settings import Settings, SettingsError, StrategyOptions

ROOT = Path(__file__).resolve().parents[2]


def test_sample_settings_list_every_strategy_setting_with_its_default():
    sample = json.loads((ROOT / "local.settings.sample.json").read_text())["Values"]
    source = (ROOT / "chunking" / "settings" / "strategy.py").read_text()  # StrategyOptions.from_env
    names = set(re.findall(r'parsed_value\(env, "([A-Z_]+)"', source))
    # CHAT_BACKEND only forces a choice; the sample leaves it to CHAT_MODEL and the endpoints.
    names |= {"CHAT_MODEL", "CHAT_MAX_CONCURRENCY", "MODEL_CACHE_CONTAINER", "SPLITTERS"}
    assert len(names) == 22 and not names - set(sample) and "CHAT_BACKEND" not in sample
    settings = Settings.from_env({k: v for k, v in sample.items() if k in names})
    assert settings.strategy == StrategyOptions()
    assert (settings.chat_backend, settings.chat_model, settings.chat_max_concurrency,
            settings.model_cache_container) == ("offline", "", 4, "")


def test_values_are_parsed():
    s = Settings.from_env({"HIERARCHY_LEVELS": "1000, 300,80", "HIERARCHY_EMBED_LEVELS": "2", "SMALL_TO_BIG_TOKENS":
                           "900,150", "ENRICH_GENERATED_CONTEXT": "yes", "SEMANTIC_BREAKPOINT_TYPE": "gradient",
                           "SEMANTIC_BREAKPOINT_AMOUNT": "90.5", "ROUTER_CHOICES": "sentence, llm"}).strategy
    assert (s.hierarchy_levels_tokens, s.hierarchy_embed_levels, s.small_to_big_tokens) == ((1000, 300, 80), (2,),
                                                                                             (900, 150))
    assert (s.enrich_generated_context, s.semantic_threshold_type, s.semantic_threshold_amount) == (True, "gradient",
                                                                                                    90.5)
    assert s.router_choices == ("sentence", "llm")


@pytest.mark.parametrize(
    "env, message",
    [
        ({"SEMANTIC_BREAKPOINT_TYPE": "median"}, "SEMANTIC_BREAKPOINT_TYPE must be percentile"),
        ({"PROPOSITION_MIN_GROUNDING": "1.5"}, "PROPOSITION_MIN_GROUNDING must be a number in"),
        ({"HIERARCHY_LEVELS": "big"}, "HIERARCHY_LEVELS must be token caps"),
        ({"SMALL_TO_BIG_TOKENS": "100"}, "SMALL_TO_BIG_TOKENS needs two caps"),
        ({"ENRICH_BREADCRUMB": "maybe"}, "ENRICH_BREADCRUMB must be true or false"),
        ({"LLM_WINDOW_TOKENS": "0"}, "LLM_WINDOW_TOKENS must be an integer ≥ 1"),
        ({"CHAT_BACKEND": "bard"}, "CHAT_BACKEND must be offline"),
    ],
)
def test_errors_name_the_variable(env, message):
    with pytest.raises(SettingsError, match=message):
        Settings.from_env(env)
