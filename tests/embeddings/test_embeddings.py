"""Embedders and request batching. The OpenAI SDK talks to an in-process httpx mock: nothing leaves the process."""

from __future__ import annotations

import hashlib
import json
import math
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx2 as httpx  # the HTTP client of openai 3.x
import openai
import pytest

from chunking.embeddings import (
    MAX_TOKENS_PER_INPUT,
    Embedder,
    OfflineLexicalEmbedder,
    OpenAIEmbedder,
    batch_by_tokens,
    embed_all,
)
from chunking.embeddings import offline as offline_embedder
from chunking.embeddings.stopwords import is_stop_word
from chunking.errors import EmbeddingError
from chunking.services import make_embedder
from chunking.settings import Settings
from tests.openai_fakes import ScriptedEndpoint, embeddings_refusal

ROOT = Path(__file__).resolve().parents[2]


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b))


def reference_vector(text: str, dims: int) -> list[float]:
    """The documented algorithm, written plainly (one feature at a time) to check the vectorised one."""
    vector = [0.0] * dims
    words = offline_embedder._words(text)
    words = [w for w in words if not is_stop_word(w)] or words
    for word, count in Counter(words).items():
        features = [("w:" + word, 1.0)]
        padded = f" {word} "
        features += [("c:" + padded[i : i + 3], 0.25) for i in range(len(padded) - 2)]
        for feature, weight in features:
            digest = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "big")
            vector[digest % dims] += (-1 if digest >> 63 else 1) * weight * (1 + math.log(count))
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm else vector


# -- offline lexical embedder ------------------------------------------------------------------------------------


def test_offline_vector_is_pinned():
    # Any change here changes every stored local vector: bump OfflineLexicalEmbedder.VERSION with it.
    vector = OfflineLexicalEmbedder(8).embed(["Install pyenv on Linux."])[0]
    assert vector == pytest.approx(
        [
            0.160128153805,
            0.800640769025,
            -0.160128153805,
            0.160128153805,
            -0.160128153805,
            0.0,
            0.160128153805,
            0.480384461415,
        ],
        abs=1e-12,
    )
    assert OfflineLexicalEmbedder(8).embed(["東京タワー"])[0] == pytest.approx(
        [0, 0.125, 0.625, -0.125, 0.125, -0.25, 0.5, -0.5], abs=1e-12
    )
    wide = OfflineLexicalEmbedder(256).embed(["Install pyenv on Linux."])[0]
    assert [i for i, x in enumerate(wide) if x][:6] == [1, 7, 30, 39, 55, 58]
    assert wide[1] == pytest.approx(0.124035, abs=1e-6) and wide[30] == pytest.approx(-0.124035, abs=1e-6)


@pytest.mark.parametrize(
    "texts",
    [
        ["the cat sat on the mat, the cat!", "Cats and dogs", ""],
        ["本章介绍如何在系统中配置网络接口。", "このコマンドは依存関係を解決します 2024", "x"],
        ["a " * 50 + "b", "naïve café déjà vu", "snake_case and CamelCase 12345"],
    ],
)
def test_offline_matches_the_plain_reference_algorithm(texts: list[str]):
    for dims in (16, 256):
        got = OfflineLexicalEmbedder(dims).embed(texts)
        for text, vector in zip(texts, got):
            assert vector == pytest.approx(reference_vector(text, dims), abs=1e-12)


def test_offline_is_identical_across_processes_and_hash_seeds():
    code = "from chunking.embeddings import OfflineLexicalEmbedder as E; print(E(64).embed(['Alpha beta, 東京!'])[0])"

    def run(seed: str) -> str:
        env = {"PYTHONHASHSEED": seed, "PATH": ""}
        return subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True, env=env
        ).stdout

    outputs = {run("1"), run("2")}
    assert len(outputs) == 1
    assert json.loads(outputs.pop()) == pytest.approx(OfflineLexicalEmbedder(64).embed(["Alpha beta, 東京!"])[0])


def test_offline_vectors_do_not_depend_on_batch_or_history():
    text = "Reciprocal rank fusion combines rankings."
    fresh = OfflineLexicalEmbedder(32).embed([text])[0]
    used = OfflineLexicalEmbedder(32)
    used.embed(["unrelated words first", "and more"])
    assert used.embed(["x", text, text]) == [used.embed(["x"])[0], fresh, fresh]


def test_offline_vocabulary_reset_does_not_change_vectors(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(offline_embedder, "_VOCAB_MAX", 3)
    embedder = OfflineLexicalEmbedder(32)
    first = embedder.embed(["one two three four five"])
    assert len(embedder._vocab) == 5
    assert embedder.embed(["one two three four five"]) == first
    assert len(embedder._vocab) == 5  # dropped (5 > 3) and rebuilt


def test_offline_related_texts_score_higher_than_unrelated():
    embedder = OfflineLexicalEmbedder(256)
    query, related, unrelated = embedder.embed(
        ["how to install python on linux", "Installing Python packages on Linux systems", "The weather in Lisbon"]
    )
    assert cosine(query, related) > 0.3
    assert cosine(query, unrelated) < 0.1
    zh_query, zh_related, zh_unrelated = embedder.embed(
        ["配置网络接口", "本章介绍如何配置网络接口和防火墙", "今天天气很好"]
    )
    assert cosine(zh_query, zh_related) > 0.3
    assert cosine(zh_query, zh_unrelated) < 0.1


def test_offline_shapes_norms_and_counters():
    embedder = OfflineLexicalEmbedder(24)
    assert isinstance(embedder, Embedder)
    assert (embedder.name, embedder.dimensions) == ("offline-lexical-v2/24", 24)
    vectors = embedder.embed(["Hello hello world", "", "!!! ???"])
    assert [len(v) for v in vectors] == [24, 24, 24]
    assert math.isclose(math.sqrt(sum(x * x for x in vectors[0])), 1.0)
    assert vectors[1] == vectors[2] == [0.0] * 24
    assert embedder.embed([]) == []
    assert (embedder.requests, embedder.tokens) == (2, 3)
    with pytest.raises(ValueError, match="dimensions"):
        OfflineLexicalEmbedder(0)


# -- batching ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("counts", "budget", "max_inputs", "expected"),
    [
        ([3, 3, 3, 5], 6, 2048, [range(0, 2), range(2, 3), range(3, 4)]),
        ([5, 5], 10, 2048, [range(0, 2)]),  # exactly at the budget
        ([2, 10, 2], 5, 2048, [range(0, 1), range(1, 2), range(2, 3)]),  # over the budget: alone
        ([1] * 5, 100, 2, [range(0, 2), range(2, 4), range(4, 5)]),
        ([MAX_TOKENS_PER_INPUT, 1], 8191, 2048, [range(0, 1), range(1, 2)]),
        ([], 10, 2048, []),
    ],
)
def test_batch_by_tokens_exact_ranges(counts, budget, max_inputs, expected):
    assert batch_by_tokens(counts, budget, max_inputs) == expected


def test_batch_by_tokens_caps_inputs_at_2048_by_default():
    assert batch_by_tokens([1] * 4097, 10**9) == [range(0, 2048), range(2048, 4096), range(4096, 4097)]


@pytest.mark.parametrize(
    ("counts", "budget", "max_inputs", "message"),
    [
        ([3, 0], 10, 10, "input 1 has 0 tokens"),
        ([MAX_TOKENS_PER_INPUT + 1], 10**6, 10, "input 0 has 8192 tokens; the per-input limit is 8191"),
        ([1], 0, 10, "max_batch_tokens"),
        ([1], 10, 2049, "max_inputs"),
        ([1], 10, 0, "max_inputs"),
    ],
)
def test_batch_by_tokens_rejects(counts, budget, max_inputs, message):
    with pytest.raises(ValueError, match=message):
        batch_by_tokens(counts, budget, max_inputs)


class RecordingEmbedder:
    name, dimensions, requests, tokens = "recording/2", 2, 0, 0

    def __init__(self, drop_one: bool = False) -> None:
        self.calls: list[list[str]] = []
        self.drop_one = drop_one

    def embed(self, texts):
        self.calls.append(list(texts))
        vectors = [[float(len(t)), 1.0] for t in texts]
        return vectors[:-1] if self.drop_one else vectors


def test_embed_all_makes_one_call_per_batch_in_order():
    embedder = RecordingEmbedder()
    texts = ["a", "bb", "ccc", "dddd", "eeeee"]
    vectors = embed_all(embedder, texts, [1, 2, 3, 4, 5], max_batch_tokens=5, max_inputs=10)
    assert embedder.calls == [["a", "bb"], ["ccc"], ["dddd"], ["eeeee"]]
    assert vectors == [[1.0, 1.0], [2.0, 1.0], [3.0, 1.0], [4.0, 1.0], [5.0, 1.0]]
    with pytest.raises(ValueError, match="2 texts but 1 token counts"):
        embed_all(embedder, ["a", "b"], [1], max_batch_tokens=5)
    with pytest.raises(EmbeddingError, match="sent 2 inputs, got 1"):
        embed_all(RecordingEmbedder(drop_one=True), ["a", "b"], [1, 1], max_batch_tokens=5)


# -- OpenAI / Azure OpenAI through a mock transport ----------------------------------------------------------


class FakeEmbeddingsAPI(ScriptedEndpoint):
    """An ``/embeddings`` endpoint: answers the *plan* statuses in turn (then 200), recording requests."""

    def __init__(self, dims: int, plan: list[tuple[int, dict[str, str]]] | None = None, wrong_dims: bool = False):
        super().__init__(plan)
        self.dims, self.wrong_dims = dims, wrong_dims

    def reply(self, request: httpx.Request) -> httpx.Response:
        refused = embeddings_refusal(request)  # as unkind as the service (tests/openai_fakes.py)
        if refused is not None:
            return refused
        inputs = json.loads(request.content)["input"]
        dims = self.dims + (1 if self.wrong_dims else 0)
        # Returned out of order on purpose: the index field gives the order.
        data = [
            {"object": "embedding", "index": i, "embedding": [float(i)] + [0.5] * (dims - 1)}
            for i in reversed(range(len(inputs)))
        ]
        usage = {"prompt_tokens": 7 * len(inputs), "total_tokens": 7 * len(inputs)}
        return httpx.Response(200, json={"object": "list", "data": data, "model": "m", "usage": usage})


def compatible(api: FakeEmbeddingsAPI, model: str = "text-embedding-3-small", dims: int = 4, **kw) -> OpenAIEmbedder:
    return OpenAIEmbedder.openai_compatible(
        model=model,
        dimensions=dims,
        api_key="sk-test",
        base_url="http://embeddings.invalid/v1",
        http_client=httpx.Client(transport=httpx.MockTransport(api)),
        **kw,
    )


def test_openai_compatible_request_and_response():
    api = FakeEmbeddingsAPI(4)
    embedder = compatible(api)
    vectors = embedder.embed(["alpha", "beta", "gamma"])
    assert vectors == [[0.0, 0.5, 0.5, 0.5], [1.0, 0.5, 0.5, 0.5], [2.0, 0.5, 0.5, 0.5]]
    assert str(api.requests[0].url) == "http://embeddings.invalid/v1/embeddings"
    assert api.requests[0].headers["authorization"] == "Bearer sk-test"
    assert api.body() == {
        "model": "text-embedding-3-small",
        "input": ["alpha", "beta", "gamma"],
        "encoding_format": "float",
        "dimensions": 4,
    }
    assert (embedder.name, embedder.requests, embedder.tokens) == ("openai/text-embedding-3-small/4", 1, 21)


def test_dimensions_are_not_sent_to_models_that_reject_them():
    api = FakeEmbeddingsAPI(4)
    compatible(api, model="text-embedding-ada-002").embed(["x"])
    assert "dimensions" not in api.body()


def test_429_with_retry_after_ms_is_waited_out_then_retried():
    api = FakeEmbeddingsAPI(4, plan=[(429, {"retry-after-ms": "60"})])
    embedder = compatible(api)
    assert embedder.embed(["x"]) == [[0.0, 0.5, 0.5, 0.5]]
    assert len(api.requests) == 2
    assert api.times[1] - api.times[0] >= 0.055
    assert api.requests[1].headers["x-stainless-retry-count"] == "1"
    assert embedder.requests == 1


def test_503_with_retry_after_seconds_is_retried():
    api = FakeEmbeddingsAPI(4, plan=[(503, {"retry-after": "0.05"}), (503, {"retry-after": "0.05"})])
    compatible(api).embed(["x"])
    assert len(api.requests) == 3 and api.times[2] - api.times[0] >= 0.095


def test_retry_after_beyond_two_minutes_is_not_waited():
    api = FakeEmbeddingsAPI(4, plan=[(429, {"retry-after": "600"})])
    started = time.monotonic()
    with pytest.raises(openai.RateLimitError):
        compatible(api).embed(["x"])
    assert len(api.requests) == 1 and time.monotonic() - started < 5


def test_wrong_vector_dimension_is_an_error():
    with pytest.raises(EmbeddingError, match="vector 0 has 5 dimensions, expected 4"):
        compatible(FakeEmbeddingsAPI(4, wrong_dims=True)).embed(["x"])


@pytest.mark.parametrize(
    ("texts", "message"),
    [
        ([], "at least one text"),
        (["ok", ""], "input 1 is empty"),
        (["  \n"], "input 0 is empty"),
        (["ok", " ".join(["word"] * 9000)], "input 1 has 9000 tokens; the per-input limit is 8191"),
        (["x"] * 2049, "2049 inputs"),
    ],
)
def test_invalid_inputs_are_never_sent(texts: list[str], message: str):
    api = FakeEmbeddingsAPI(4)
    with pytest.raises(ValueError, match=message):
        compatible(api).embed(texts)
    assert api.requests == []


def test_azure_openai_with_an_api_key():
    api = FakeEmbeddingsAPI(8)
    embedder = OpenAIEmbedder.azure(
        endpoint="https://unit.openai.azure.com",
        deployment="text-embedding-3-large",
        dimensions=8,
        api_key="aoai-key",
        api_version="2024-10-21",
        http_client=httpx.Client(transport=httpx.MockTransport(api)),
    )
    embedder.embed(["x"])
    request = api.requests[0]
    assert request.url.path == "/openai/deployments/text-embedding-3-large/embeddings"
    assert request.url.params["api-version"] == "2024-10-21"
    assert request.headers["api-key"] == "aoai-key" and "authorization" not in request.headers
    assert api.body()["dimensions"] == 8
    assert embedder.name == "azure_openai/text-embedding-3-large/8"


def test_azure_openai_without_a_key_uses_entra_id(monkeypatch: pytest.MonkeyPatch):
    from azure.core.credentials import AccessToken

    scopes_seen: list[tuple[str, ...]] = []

    class FakeCredential:
        def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
            scopes_seen.append(scopes)
            return AccessToken("entra-token", int(time.time()) + 3600)

    import azure.identity

    monkeypatch.setattr(azure.identity, "DefaultAzureCredential", FakeCredential)
    api = FakeEmbeddingsAPI(4)
    embedder = OpenAIEmbedder.azure(
        endpoint="https://unit.openai.azure.com",
        deployment="emb",
        dimensions=4,
        http_client=httpx.Client(transport=httpx.MockTransport(api)),
    )
    embedder.embed(["x"])
    assert api.requests[0].headers["authorization"] == "Bearer entra-token"
    assert scopes_seen == [("https://cognitiveservices.azure.com/.default",)]
    assert "dimensions" not in api.body()  # a deployment name that does not say text-embedding-3


# -- factory -----------------------------------------------------------------------------------------------------


def test_make_embedder_by_backend():
    offline = make_embedder(Settings(embedding_dimensions=64))
    assert isinstance(offline, OfflineLexicalEmbedder) and offline.dimensions == 64
    azure = make_embedder(
        Settings(
            embedding_backend="azure_openai",
            azure_openai_endpoint="https://u.openai.azure.com",
            azure_openai_api_key="k",
            embedding_dimensions=1536,
        )
    )
    assert isinstance(azure, OpenAIEmbedder) and azure.name == "azure_openai/text-embedding-3-small/1536"
    compatible_ = make_embedder(
        Settings(
            embedding_backend="openai",
            openai_base_url="http://127.0.0.1:9/v1",
            embedding_model="nomic-embed-text",
            embedding_dimensions=768,
        )
    )
    assert compatible_.name == "openai/nomic-embed-text/768" and not compatible_.send_dimensions
    with pytest.raises(ValueError, match="AZURE_OPENAI_ENDPOINT"):
        make_embedder(Settings(embedding_backend="azure_openai"))
    with pytest.raises(ValueError, match="unknown embedding backend 'word2vec'"):
        make_embedder(Settings(embedding_backend="word2vec"))


def test_counters_count_requests_and_billed_tokens_across_batches():
    embedder = compatible(FakeEmbeddingsAPI(4))
    embed_all(embedder, ["a", "b", "c"], [1, 1, 1], max_batch_tokens=2)
    assert (embedder.requests, embedder.tokens) == (2, 21)  # usage.prompt_tokens: 14 + 7


def test_make_embedder_uses_the_azure_deployment_setting(monkeypatch):
    from chunking.embeddings import OpenAIEmbedder
    from chunking.services import make_embedder
    from chunking.settings import Settings

    seen = {}

    def fake_azure(**kwargs):
        seen.update(kwargs)
        return "embedder"

    monkeypatch.setattr(OpenAIEmbedder, "azure", staticmethod(fake_azure))
    settings = Settings.from_env({"AZURE_OPENAI_ENDPOINT": "https://x.openai.azure.com", "AZURE_OPENAI_API_KEY": "k",
                                  "AZURE_OPENAI_EMBEDDING_DEPLOYMENT": "emb-prod"})
    assert make_embedder(settings) == "embedder"
    assert (seen["deployment"], seen["send_dimensions"], seen["dimensions"]) == ("emb-prod", True, 1536)
