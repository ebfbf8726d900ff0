"""The model-result cache: what a model answered for an input, stored under a content hash so that re-ingesting
unchanged text makes no model call (docs/splitters.md#rules-shared-by-the-strategies).

Key: ``sha256(json([strategy, prompt_version, model, parameters, input_text]))`` (``cache_key``); value: a string
(a chat answer as returned, or a vector as JSON). Stores:

* ``LocalModelCache``: one file per entry under a folder (``settings.state_dir / "cache"`` by default), sharded by
  the key's first two hex digits; written to a temporary file, then renamed, so a reader never sees half a value.
* ``BlobModelCache``: one blob per entry in a container (setting ``MODEL_CACHE_CONTAINER``), created on first write;
  reads and writes of a batch run on a few threads.
* ``MemoryModelCache``: a dict, for tests and one-off runs.

``CachedEmbedder`` wraps any ``Embedder`` so that each text is embedded at most once per model: the semantic
chunker's sentence windows go through it.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Mapping, Protocol, Sequence

from chunking.embeddings import Embedder
from chunking.storage import blob_container, create_container
from chunking.tokens import token_counter

__all__ = ["BlobModelCache", "CachedEmbedder", "LocalModelCache", "MemoryModelCache", "ModelCache", "cache_key"]


def cache_key(strategy: str, prompt_version: str, model: str, parameters: Mapping[str, Any], input_text: str) -> str:
    """SHA-256 hex of the strategy, prompt version, model name, parameters (sorted JSON) and input text.

    Example: ``cache_key("propositions", "v1", "offline-chat-v1", {"max_propositions": 30}, "Tea costs 3 dollars.")``
    is the same 64 hex digits in every process; changing any part gives another key.
    """
    payload = json.dumps([strategy, prompt_version, model, dict(parameters), input_text], sort_keys=True,
                         ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class ModelCache(Protocol):
    """Strings by key. ``get_many`` returns only the keys found; ``put_many`` overwrites."""

    location: str

    def get_many(self, keys: Sequence[str]) -> dict[str, str]: ...

    def put_many(self, items: Mapping[str, str]) -> None: ...


class MemoryModelCache:
    """Entries in a dict (lost with the process)."""

    def __init__(self) -> None:
        self.location = "memory"
        self.entries: dict[str, str] = {}

    def get_many(self, keys: Sequence[str]) -> dict[str, str]:
        return {k: self.entries[k] for k in keys if k in self.entries}

    def put_many(self, items: Mapping[str, str]) -> None:
        self.entries.update(items)


class LocalModelCache:
    """Entries as UTF-8 files ``<folder>/<key[:2]>/<key>`` (the folder is created on first write)."""

    def __init__(self, folder: Path | str) -> None:
        self.folder = Path(folder)
        self.location = str(self.folder)

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / key

    def get_many(self, keys: Sequence[str]) -> dict[str, str]:
        found = {}
        for key in keys:
            try:
                found[key] = self._path(key).read_text(encoding="utf-8")
            except FileNotFoundError:
                continue
        return found

    def put_many(self, items: Mapping[str, str]) -> None:
        for key, value in items.items():
            path = self._path(key)
            path.parent.mkdir(parents=True, exist_ok=True)
            # Write then rename: concurrent workers writing the same key both write whole, identical values.
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(value)
            os.replace(tmp, path)


class BlobModelCache:
    """Entries as blobs ``<key[:2]>/<key>`` of one container, via ``azure-storage-blob``.

    Args:
        storage: a storage connection string (Azurite's works) or a ``BlobServiceClient``.
        container: the container (setting ``MODEL_CACHE_CONTAINER``), created on first write.
        max_concurrency: parallel blob requests per ``get_many``/``put_many`` (≥ 1).
    """

    def __init__(self, storage: Any, container: str, max_concurrency: int = 8) -> None:
        self.location = container
        self._container = blob_container(storage, container)
        self._created = False
        self._workers = max(1, max_concurrency)

    def _get(self, key: str) -> tuple[str, str | None]:
        from azure.core.exceptions import ResourceNotFoundError

        try:
            return key, self._container.download_blob(f"{key[:2]}/{key}").readall().decode("utf-8")
        except ResourceNotFoundError:  # no such blob, or no container yet
            return key, None

    def get_many(self, keys: Sequence[str]) -> dict[str, str]:
        if not keys:
            return {}
        with ThreadPoolExecutor(min(self._workers, len(keys))) as pool:
            return {k: v for k, v in pool.map(self._get, keys) if v is not None}

    def put_many(self, items: Mapping[str, str]) -> None:
        if not items:
            return
        if not self._created:
            create_container(self._container)
            self._created = True

        def put(item: tuple[str, str]) -> None:
            key, value = item
            self._container.upload_blob(f"{key[:2]}/{key}", value.encode("utf-8"), overwrite=True)

        with ThreadPoolExecutor(min(self._workers, len(items))) as pool:
            list(pool.map(put, items.items()))


class CachedEmbedder:
    """An ``Embedder`` that answers from a ``ModelCache`` and embeds only the texts it has not seen.

    Keys are ``cache_key("embedding", "", inner.name, {}, text)``: the same text under the same model is embedded
    once, whichever strategy or document asks. Vectors are stored as JSON (exact float round trip), so a vector
    read back equals the one computed, and a cached run cuts exactly where the first run did.

    Attributes:
        name, dimensions: the inner embedder's. requests, tokens: the inner embedder's counters (calls really
            made). hits, misses: texts answered from the cache / sent to the model. sent_tokens: cl100k_base
            tokens of the texts sent to the model (``chunking eval`` adds them to a strategy's embedding tokens).
    """

    def __init__(self, inner: Embedder, cache: ModelCache) -> None:
        self.inner = inner
        self.cache = cache
        self.name = inner.name
        self.dimensions = inner.dimensions
        self.hits = 0
        self.misses = 0
        self.sent_tokens = 0

    @property
    def requests(self) -> int:  # type: ignore[override]
        return self.inner.requests

    @property
    def tokens(self) -> int:  # type: ignore[override]
        return self.inner.tokens

    def keys(self, texts: Sequence[str]) -> list[str]:
        return [cache_key("embedding", "", self.name, {}, t) for t in texts]

    def cached(self, texts: Sequence[str]) -> dict[int, list[float]]:
        """Vectors already in the cache, by input index."""
        keys = self.keys(texts)
        found = self.cache.get_many(list(dict.fromkeys(keys)))
        return {i: json.loads(found[k]) for i, k in enumerate(keys) if k in found}

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in input order; only the texts missing from the cache reach the inner embedder
        (in one request), and their vectors are stored.

        Raises:
            whatever the inner embedder raises (nothing is stored then).
        """
        texts = list(texts)
        have = self.cached(texts)
        todo = [i for i in range(len(texts)) if i not in have]
        self.hits += len(texts) - len(todo)
        self.misses += len(todo)
        if todo:
            vectors = self.inner.embed([texts[i] for i in todo])
            count = token_counter("cl100k_base")
            self.sent_tokens += sum(count(texts[i]) for i in todo)
            # Round-trip through JSON before use: the first run must see exactly what later runs will read.
            encoded = [json.dumps([float(x) for x in v]) for v in vectors]
            keys = self.keys([texts[i] for i in todo])
            self.cache.put_many(dict(zip(keys, encoded)))
            have.update({i: json.loads(e) for i, e in zip(todo, encoded)})
        return [have[i] for i in range(len(texts))]
