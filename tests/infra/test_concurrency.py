"""Concurrency sized from the embedding deployment's tokens per minute: the Bicep derives the scale-out cap from
the formula of docs/operations.md#concurrency-from-the-embedding-quota, with the batch size the app is given and
the per-instance concurrency of host.json; the table in the docs is what the Bicep computes."""

from __future__ import annotations

import json
import re

import pytest

from chunking.settings import Settings
from tests.infra.bicep import MAIN, ROOT, evaluate, parse

DOC = ROOT / "docs" / "operations.md"


def variable(name: str, **given):
    """The value of the variable or parameter *name* of main.bicep, with the parameters *given*."""
    return evaluate(parse(MAIN), name, given)


def host_queues() -> dict:
    return json.loads((ROOT / "host.json").read_text(encoding="utf-8"))["extensions"]["queues"]


def test_per_instance_concurrency_is_host_json_s():
    queues = host_queues()
    assert variable("batchesPerInstance") == queues["batchSize"] + queues["newBatchThreshold"] == 1


def test_the_batch_the_formula_assumes_is_the_batch_the_app_makes():
    tree = parse(MAIN)
    settings = evaluate(tree, tree["variables"]["appSettings"]["value"])
    assert int(settings["BATCH_MAX_CHUNKS"]) == variable("batchMaxChunks") == Settings().batch_max_chunks
    assert int(settings["SPLIT_MAX_TOKENS"]) == variable("splitMaxTokens") == Settings().max_tokens
    assert variable("tokensPerBatch") == 64 * 500


@pytest.mark.parametrize("tpm", [30_000, 350_000, 1_000_000, 38_400_000, 40_000_000, 100_000_000, 10**9])
def test_the_cap_keeps_tokens_per_minute_within_the_quota_where_flex_allows(tpm):
    cap = variable("maximumInstanceCount", embeddingTokensPerMinute=tpm)
    per_batch, per_instance = variable("tokensPerBatch"), variable("batchesPerInstance")
    seconds = variable("batchSeconds")

    def demand(instances: int) -> float:  # tokens per minute at full scale-out
        return per_batch * instances * per_instance * 60 / seconds

    assert 40 <= cap <= 1000
    if 40 < cap < 1000:
        assert demand(cap) <= tpm < demand(cap + 1)  # the largest cap within the quota
    elif cap == 40:
        assert demand(40) >= tpm or demand(41) > tpm  # Flex's lowest cap: back-pressure takes the surplus
    else:
        assert demand(1000) <= tpm


def test_defaults_and_overrides():
    assert variable("tokensPerMinute") == 30 * 1000  # embeddingCapacity × 1,000 when no quota is given
    assert variable("tokensPerMinute", embeddingTokensPerMinute=500_000) == 500_000
    assert variable("maximumInstanceCount", functionMaximumInstanceCount=250) == 250
    assert variable("maximumInstanceCount", functionMaximumInstanceCount=7) == 40
    tree = parse(MAIN)
    (call,) = [m for m in tree["modules"].values() if m["detail"]["path"] == "modules/functionapp.bicep"]
    assert call["config"]["params"]["maximumInstanceCount"] == "maximumInstanceCount"
    assert "FUNCTION_MAXIMUM_INSTANCE_COUNT" in tree["outputs"]


def test_the_docs_table_is_what_the_bicep_computes():
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Concurrency from the embedding quota", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| ([\d,]+) \| ([\d,]+) \| ([\d,]+) \|", section, re.M)
    assert len(rows) >= 4
    for tpm, quota, cap in rows:
        number = lambda s: int(s.replace(",", ""))  # noqa: E731
        assert variable("quotaInstances", embeddingTokensPerMinute=number(tpm)) == number(quota), tpm
        assert variable("maximumInstanceCount", embeddingTokensPerMinute=number(tpm)) == number(cap), tpm
