"""The model-result cache: keys, the local folder, a blob container on Azurite, and the caching embedder."""

from __future__ import annotations

import json

import pytest

from chunking.chat.cache import BlobModelCache, CachedEmbedder, LocalModelCache, MemoryModelCache, cache_key
from chunking.embeddings import OfflineLexicalEmbedder


def test_key_is_stable_and_changes_with_every_part():
    base = ("propositions", "propositions-v1", "offline-chat-v1", {"max": 30, "cap": 100}, "Tea is hot.")
    key = cache_key(*base)
    assert key == cache_key("propositions", "propositions-v1", "offline-chat-v1", {"cap": 100, "max": 30},
                            "Tea is hot.")  # parameter order does not matter
    assert len(key) == 64 and int(key, 16) >= 0
    variants = [("semantic", *base[1:]), (base[0], "propositions-v2", *base[2:]), (*base[:2], "gpt-4o", *base[3:]),
                (*base[:3], {"max": 31, "cap": 100}, base[4]), (*base[:4], "Tea is hot!")]
    assert len({key, *(cache_key(*v) for v in variants)}) == 6


def test_local_cache_round_trip_and_sharding(tmp_path):
    cache = LocalModelCache(tmp_path / "cache")
    key = cache_key("s", "v", "m", {}, "x")
    assert cache.get_many([key]) == {}
    cache.put_many({key: "naïve 東京 answer"})
    assert cache.get_many([key, "0" * 64]) == {key: "naïve 東京 answer"}
    assert (tmp_path / "cache" / key[:2] / key).read_text(encoding="utf-8") == "naïve 東京 answer"
    assert LocalModelCache(tmp_path / "cache").get_many([key]) == {key: "naïve 東京 answer"}  # another process
    assert not list((tmp_path / "cache").rglob(".tmp-*"))


@pytest.mark.integration
def test_blob_cache_on_azurite(azurite):
    cache = BlobModelCache(azurite.connection_string, "model-cache-unit")
    keys = [cache_key("s", "v", "m", {}, str(i)) for i in range(20)]
    assert cache.get_many(keys) == {}  # no container yet: nothing found, no error
    cache.put_many({k: f"value {i}" for i, k in enumerate(keys)})
    again = BlobModelCache(azurite.connection_string, "model-cache-unit")
    assert again.get_many(keys + ["f" * 64]) == {k: f"value {i}" for i, k in enumerate(keys)}


def test_cached_embedder_embeds_each_text_once_and_returns_exact_vectors():
    inner, cache = OfflineLexicalEmbedder(16), MemoryModelCache()
    embedder = CachedEmbedder(inner, cache)
    first = embedder.embed(["tea", "coffee", "tea"])
    assert (inner.requests, embedder.misses, embedder.hits) == (1, 3, 0)
    second = embedder.embed(["coffee", "tea", "water"])
    assert (inner.requests, embedder.misses, embedder.hits) == (2, 4, 2)
    assert second[:2] == [first[1], first[0]] and first[0] == first[2]
    assert second[0] == json.loads(json.dumps(inner.embed(["coffee"])[0]))  # nothing lost in the round trip
    assert embedder.name == inner.name and embedder.dimensions == 16 and embedder.requests == inner.requests


def test_cached_embedder_stores_nothing_when_the_model_fails():
    class Failing(OfflineLexicalEmbedder):
        def embed(self, texts):
            raise TimeoutError("no answer")

    cache = MemoryModelCache()
    with pytest.raises(TimeoutError):
        CachedEmbedder(Failing(8), cache).embed(["tea"])
    assert cache.entries == {}
