"""The model clients of the strategies, built from settings once per process and shared, so that every document
of a run uses one cache and one pair of call counters (``StrategyClients.model_calls``).

* chat: ``CHAT_BACKEND`` ``offline`` → ``OfflineChatClient``; ``azure_openai`` → deployment ``CHAT_MODEL`` at
  ``AZURE_OPENAI_ENDPOINT`` (API key, else Entra ID); ``openai`` → ``CHAT_MODEL`` at ``OPENAI_BASE_URL``.
* embedder: the pipeline's (``make_embedder``), behind the model cache.
* cache: blob container ``MODEL_CACHE_CONTAINER`` on the storage connection when set, else the folder
  ``CHUNKING_STATE_DIR/cache``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from chunking.embeddings import make_embedder
from chunking.settings import Settings
from chunking.chat.cache import BlobModelCache, CachedEmbedder, LocalModelCache, ModelCache
from chunking.chat import ChatClient, OpenAIChatClient
from chunking.strategies.offline_chat import OfflineChatClient

__all__ = ["StrategyClients", "make_chat_client", "make_model_cache", "reset_strategy_clients", "strategy_clients"]


def make_chat_client(settings: Settings) -> ChatClient:
    """The chat client selected by ``settings.chat_backend``.

    Raises:
        ValueError: unknown backend, or a required endpoint or model is missing (the message names the setting).
    """
    backend = settings.chat_backend
    if backend == "offline":
        return OfflineChatClient()
    if not settings.chat_model:
        raise ValueError(f"CHAT_BACKEND={backend} needs CHAT_MODEL")
    if backend == "azure_openai":
        if not settings.azure_openai_endpoint:
            raise ValueError("CHAT_BACKEND=azure_openai needs AZURE_OPENAI_ENDPOINT")
        return OpenAIChatClient.azure(endpoint=settings.azure_openai_endpoint, deployment=settings.chat_model,
                                      api_key=settings.azure_openai_api_key or None,
                                      api_version=settings.azure_openai_api_version)  # fmt: skip
    if backend == "openai":
        if not (settings.openai_api_key or settings.openai_base_url):
            raise ValueError("CHAT_BACKEND=openai needs OPENAI_API_KEY or OPENAI_BASE_URL")
        # Self-hosted OpenAI-compatible servers often need no key, but the SDK refuses to start without one.
        return OpenAIChatClient.openai_compatible(
            model=settings.chat_model, api_key=settings.openai_api_key or "unused",
            base_url=settings.openai_base_url or None)  # fmt: skip
    raise ValueError(f"unknown chat backend {backend!r} (CHAT_BACKEND: offline, azure_openai, openai)")


def make_model_cache(settings: Settings) -> ModelCache:
    """The model-result cache: ``BlobModelCache`` when ``settings.model_cache_container`` is set, else
    ``LocalModelCache(settings.state_dir / "cache")``."""
    if settings.model_cache_container:
        from chunking.storage import blob_service

        return BlobModelCache(blob_service(settings), settings.model_cache_container)
    return LocalModelCache(settings.state_dir / "cache")


@dataclass
class StrategyClients:
    """The shared clients of one configuration.

    Attributes:
        chat: the chat client. embedder: the pipeline's embedder behind ``cache`` (``CachedEmbedder``).
        cache: the model-result cache.
    """

    chat: ChatClient
    embedder: CachedEmbedder
    cache: ModelCache

    @property
    def model_calls(self) -> int:
        """Requests that reached a model so far: chat completions plus embedding requests (not cache hits)."""
        return self.chat.requests + self.embedder.requests


_lock = threading.Lock()
_shared: dict[tuple, StrategyClients] = {}


def _key(settings: Settings) -> tuple:
    return (settings.chat_backend, settings.chat_model, settings.embedding_backend, settings.embedding_model,
            settings.embedding_dimensions, settings.azure_openai_endpoint, settings.openai_base_url,
            settings.model_cache_container, settings.storage_connection, settings.storage_account,
            settings.storage_blob_uri, str(settings.state_dir))


def strategy_clients(settings: Settings) -> StrategyClients:
    """The clients for *settings*, built on first use and shared by every later call with the same model and
    cache settings (no network is touched by building them)."""
    key = _key(settings)
    with _lock:
        if key not in _shared:
            cache = make_model_cache(settings)
            _shared[key] = StrategyClients(make_chat_client(settings), CachedEmbedder(make_embedder(settings), cache),
                                           cache)  # fmt: skip
        return _shared[key]


def reset_strategy_clients() -> None:
    """Forget the shared clients (tests; or after changing credentials)."""
    with _lock:
        _shared.clear()


def make_index(settings: Settings) -> SearchIndex:
    """The index selected by ``settings.index_backend`` (not yet opened: call ``ensure()`` at start-up).

    ``"local"`` → ``LocalIndex(settings.local_index_path, settings.embedding_dimensions)``; ``"azure"`` →
    ``AzureSearchIndex`` on ``settings.search_endpoint`` / ``settings.search_index_name``, authenticated with
    ``settings.search_api_key`` when set, else ``DefaultAzureCredential``.

    Raises:
        ValueError: unknown backend, or ``azure`` without an endpoint.
    """
    if settings.index_backend == "local":
        from chunking.index.local import LocalIndex

        return LocalIndex(settings.local_index_path, settings.embedding_dimensions, fusion_options(settings),
                          metadata_fields=settings.metadata.field_names)
    if settings.index_backend == "azure":
        if not settings.search_endpoint:
            raise ValueError("INDEX_BACKEND=azure needs AZURE_SEARCH_ENDPOINT")
        from chunking.index.azure import AzureSearchIndex

        return AzureSearchIndex(
            settings.search_endpoint,
            settings.search_index_name,
            settings.embedding_dimensions,
            settings.search_api_key or None,
            semantic_ranker=settings.search_semantic_ranker,
            metadata_fields=settings.metadata.field_names,
        )
    raise ValueError(f"unknown index backend {settings.index_backend!r} (INDEX_BACKEND: local, azure)")


def fusion_options(settings: Settings):
    """The local index's ``FusionOptions`` from the settings (``SEARCH_*``, docs/settings.md)."""
    from chunking.index.fusion import FusionOptions

    search = settings.search
    offline = settings.embedding_backend == "offline"
    # Chosen with chunking eval on samples/ (docs/search.md#why-these-defaults): hashed words match by chance less
    # often than a model's vectors resemble each other, and a model's vectors deserve a larger share.
    floor = search.min_vector_score if search.min_vector_score is not None else (0.15 if offline else 0.3)
    weight = search.lexical_weight if search.lexical_weight is not None else (0.6 if offline else 0.5)
    return FusionOptions(search.fusion, weight, search.rrf_k, floor)
