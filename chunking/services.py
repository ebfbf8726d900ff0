"""The one place that turns settings into adapters: every embedder, chat client, model cache, index, ledger, payload
store, queue and document reader the pipeline, the Functions and the CLI use is built here, chosen by the backend
names that ``chunking.settings`` declares. No other module builds an adapter, and a caller that behaves
differently per backend (the CLI) asks a helper of this module (``ledger_table``, ``index_known_empty`` …)
instead of comparing backend names.

What it holds, by adapter:

* embedder: ``make_embedder`` (``EMBEDDING_BACKEND``).
* chat and model cache: ``make_chat_client`` (``CHAT_BACKEND``), ``make_model_cache`` (blob container
  ``MODEL_CACHE_CONTAINER`` when set, else the folder ``CHUNKING_STATE_DIR/cache``), and ``strategy_clients``: the
  strategies' clients, built once per process and configuration and shared, so that every document of a run uses
  one cache and one pair of call counters (``StrategyClients.model_calls``).
* index: ``make_index`` (``INDEX_BACKEND``), ``fusion_options``, ``index_known_empty``, ``index_location``,
  ``vector_floor``.
* ledger: ``make_ledger`` (``LEDGER_BACKEND``), ``ledger_table``, ``ledger_exists``.
* storage: ``make_payload_store``, ``make_batch_queue``, ``make_job_queue``.
* parsers: ``document_readers`` (Document Intelligence for the extensions the settings send there).
* the Functions process: ``Services`` and ``services()``, all of the above built once from the environment.

It may import the core modules (model, ids, formats, redact, settings), errors, tokens, parsers, embeddings,
storage, index, ledger, messages, chat and strategies; never documents, pipeline, retrieval, evaluation or app.
Three heavy imports wait for the adapter that needs them: the Azure AI Search client (its SDK), the Document
Intelligence reader (every parser) and the offline chat client (every strategy), so that the commands that only
read the ledger or query the index start as fast as before; building the local adapters, or importing this
module, never touches the network.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from chunking.chat import ChatClient, OpenAIChatClient
from chunking.chat.cache import BlobModelCache, CachedEmbedder, LocalModelCache, ModelCache
from chunking.embeddings import Embedder, OfflineLexicalEmbedder, OpenAIEmbedder
from chunking.embeddings.local import LocalModelEmbedder
from chunking.formats import SUPPORTED_EXTENSIONS
from chunking.index import SearchIndex
from chunking.index.fusion import FusionOptions
from chunking.index.local import LocalIndex
from chunking.ledger import Ledger, LocalLedgerStore, TableLedgerStore, local_ledger_path
from chunking.model import Page
from chunking.redact import install_log_redaction, mask_url, register_settings
from chunking.settings import Settings
from chunking.storage import QueueSender, blob_service, queue_client, table_service
from chunking.storage.claim_check import BlobPayloadStore, PayloadStore
from chunking.tokens import token_counter

__all__ = [
    "Services", "StrategyClients", "document_readers", "fusion_options", "index_known_empty", "index_location",
    "ledger_exists", "ledger_table", "make_batch_queue", "make_chat_client", "make_embedder", "make_index",
    "make_job_queue", "make_ledger", "make_model_cache", "make_payload_store", "reset_strategy_clients", "services",
    "strategy_clients", "vector_floor",
]  # fmt: skip

log = logging.getLogger(__name__)


# -- embedder ------------------------------------------------------------------------------------------------------


def make_embedder(settings: Settings) -> Embedder:
    """The embedder selected by ``settings.embedding_backend``.

    ``"offline"`` → ``OfflineLexicalEmbedder(settings.embedding_dimensions)``; ``"local"`` →
    ``LocalModelEmbedder`` on ``settings.local_model.folder`` (its dimensions decide the index's); ``"azure_openai"``
    → deployment ``settings.azure_openai_deployment`` (default: named like ``settings.embedding_model``, the model,
    which decides whether ``dimensions`` is sent) at ``settings.azure_openai_endpoint`` (API key, else Entra ID);
    ``"openai"`` → ``settings.embedding_model`` at ``settings.openai_base_url`` (OpenAI itself when empty).

    Raises:
        ValueError: unknown backend, or a required endpoint is missing (the message names the setting).
    """
    backend = settings.embedding_backend
    dims = settings.embedding_dimensions
    if backend == "offline":
        return OfflineLexicalEmbedder(dims)
    if backend == "local":
        if settings.local_model.folder is None:
            raise ValueError("EMBEDDING_BACKEND=local needs EMBEDDING_MODEL (a sentence-transformers model folder)")
        embedder = LocalModelEmbedder(settings.local_model.folder)
        if embedder.dimensions != dims:
            raise ValueError(f"EMBEDDING_DIMENSIONS is {dims} but the local model {settings.local_model.folder} "
                             f"makes {embedder.dimensions}-dimensional vectors; leave EMBEDDING_DIMENSIONS unset")
        return embedder
    counter = token_counter(settings.encoding)
    if backend == "azure_openai":
        if not settings.azure_openai_endpoint:
            raise ValueError("EMBEDDING_BACKEND=azure_openai needs AZURE_OPENAI_ENDPOINT")
        return OpenAIEmbedder.azure(endpoint=settings.azure_openai_endpoint,
                                    deployment=settings.azure_openai_deployment or settings.embedding_model,
                                    dimensions=dims, api_key=settings.azure_openai_api_key or None,
                                    api_version=settings.azure_openai_api_version, token_counter=counter,
                                    send_dimensions="text-embedding-3" in settings.embedding_model)
    if backend == "openai":
        if not (settings.openai_api_key or settings.openai_base_url):
            raise ValueError("EMBEDDING_BACKEND=openai needs OPENAI_API_KEY or OPENAI_BASE_URL")
        # Self-hosted OpenAI-compatible servers often need no key, but the SDK refuses to start without one.
        return OpenAIEmbedder.openai_compatible(
            model=settings.embedding_model, dimensions=dims, api_key=settings.openai_api_key or "unused",
            base_url=settings.openai_base_url or None, token_counter=counter,
        )  # fmt: skip
    raise ValueError(f"unknown embedding backend {backend!r} (EMBEDDING_BACKEND: offline, azure_openai, openai, local)")


# -- chat and model cache ------------------------------------------------------------------------------------------


def make_chat_client(settings: Settings) -> ChatClient:
    """The chat client selected by ``settings.chat_backend``: ``offline`` → ``OfflineChatClient``;
    ``azure_openai`` → deployment ``CHAT_MODEL`` at ``AZURE_OPENAI_ENDPOINT`` (API key, else Entra ID); ``openai``
    → ``CHAT_MODEL`` at ``OPENAI_BASE_URL``.

    Raises:
        ValueError: unknown backend, or a required endpoint or model is missing (the message names the setting).
    """
    backend = settings.chat_backend
    if backend == "offline":
        from chunking.strategies.offline_chat import OfflineChatClient  # loads every strategy: on use only

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


# -- index ---------------------------------------------------------------------------------------------------------


def make_index(settings: Settings) -> SearchIndex:
    """The index selected by ``settings.index_backend`` (not yet opened: call ``ensure()`` at start-up).

    ``"local"`` → ``LocalIndex(settings.local_index_path, settings.embedding_dimensions)``; ``"azure"`` →
    ``AzureSearchIndex`` on ``settings.search_endpoint`` / ``settings.search_index_name``, authenticated with
    ``settings.search_api_key`` when set, else ``DefaultAzureCredential``.

    Raises:
        ValueError: unknown backend, or ``azure`` without an endpoint.
    """
    if settings.index_backend == "local":
        return LocalIndex(settings.local_index_path, settings.embedding_dimensions, fusion_options(settings),
                          metadata_fields=settings.metadata.field_names)
    if settings.index_backend == "azure":
        if not settings.search_endpoint:
            raise ValueError("INDEX_BACKEND=azure needs AZURE_SEARCH_ENDPOINT")
        from chunking.index.azure import AzureSearchIndex  # the Azure AI Search SDK, only when it is used

        return AzureSearchIndex(
            settings.search_endpoint,
            settings.search_index_name,
            settings.embedding_dimensions,
            settings.search_api_key or None,
            semantic_ranker=settings.search_semantic_ranker,
            metadata_fields=settings.metadata.field_names,
        )
    raise ValueError(f"unknown index backend {settings.index_backend!r} (INDEX_BACKEND: local, azure)")


def fusion_options(settings: Settings) -> FusionOptions:
    """The local index's ``FusionOptions`` from the settings (``SEARCH_*``, docs/settings.md)."""
    search = settings.search
    offline = settings.embedding_backend == "offline"
    # Chosen with chunking eval on samples/ (docs/search.md#why-these-defaults): hashed words match by chance less
    # often than a model's vectors resemble each other, and a model's vectors deserve a larger share.
    floor = search.min_vector_score if search.min_vector_score is not None else (0.15 if offline else 0.3)
    weight = search.lexical_weight if search.lexical_weight is not None else (0.6 if offline else 0.5)
    return FusionOptions(search.fusion, weight, search.rrf_k, floor)


def index_known_empty(settings: Settings) -> bool:
    """Whether the index of *settings* is known to hold nothing without building it or asking a service: a local
    index whose file does not exist yet. A remote index is never assumed empty."""
    return settings.index_backend == "local" and not settings.local_index_path.exists()


def index_location(settings: Settings) -> str:
    """Where the index of *settings* is, for messages: the local index file, or the search service endpoint."""
    return str(settings.local_index_path) if settings.index_backend == "local" else mask_url(settings.search_endpoint)


def vector_floor(settings: Settings) -> float | None:
    """The cosine a vector-only candidate needs to become a hit of the index of *settings*
    (``SEARCH_MIN_VECTOR_SCORE`` or its default, ``fusion_options``), or ``None`` when the index ranks by rules of
    its own (Azure AI Search)."""
    return fusion_options(settings).min_vector_score if settings.index_backend == "local" else None


# -- ledger --------------------------------------------------------------------------------------------------------


def ledger_table(settings: Settings) -> str | None:
    """The storage table the ledger of *settings* lives in (shared with the Functions), or ``None`` when it is the
    local SQLite file (``chunking.ledger.local_ledger_path``)."""
    return settings.ledger_table if settings.ledger_backend == "table" else None


def ledger_exists(settings: Settings) -> bool:
    """Whether the ledger of *settings* can be read without creating it: always for a table ledger, and for the
    local one once its file exists (read-only commands look first, so they create nothing)."""
    return ledger_table(settings) is not None or local_ledger_path(settings).exists()


def make_ledger(settings: Settings) -> Ledger:
    """The ledger for *settings*: the storage table ``ledger_table(settings)`` when there is one, else the SQLite
    file ``settings.state_dir / "ledger.sqlite3"``."""
    table = ledger_table(settings)
    if table is not None:
        return Ledger(TableLedgerStore(table_service(settings), table))
    return Ledger(LocalLedgerStore(local_ledger_path(settings)))


# -- storage -------------------------------------------------------------------------------------------------------


def make_payload_store(settings: Settings) -> PayloadStore:
    """The blob payload store of *settings* (``PAYLOAD_CONTAINER`` on the app's storage)."""
    return BlobPayloadStore(blob_service(settings), settings.payload_container)


def make_batch_queue(settings: Settings) -> QueueSender:
    """The chunk-batch queue ``settings.batch_queue`` on the app's storage."""
    return QueueSender(queue_client(settings, settings.batch_queue))


def make_job_queue(settings: Settings) -> QueueSender:
    """The stage-1 job queue ``settings.stage_one.job_queue`` on the app's storage."""
    return QueueSender(queue_client(settings, settings.stage_one.job_queue))


# -- parsers -------------------------------------------------------------------------------------------------------


def document_readers(settings: Settings, **client_kwargs: Any) -> dict[str, Callable[..., Iterator[Page]]]:
    """Extension → parser, for the extensions that do not use their local parser under *settings*
    (``settings.document_intelligence``: ``DOCUMENT_INTELLIGENCE_ENDPOINT`` and ``PARSERS``); ``{}`` when every
    format is parsed locally. Pass the result to ``chunking.parsers.parse_document(readers=…)``.

    Args:
        client_kwargs: passed to the Document Intelligence client (``transport=`` in tests).
    """
    options = settings.document_intelligence
    extensions = [ext for ext in sorted(SUPPORTED_EXTENSIONS) if options.uses_service(ext)]
    if not extensions:
        return {}
    from chunking.parsers.docintel import DocumentIntelligenceReader  # loads every parser: on use only

    reader = DocumentIntelligenceReader(options, **client_kwargs)
    return dict.fromkeys(extensions, reader.parse)


# -- the Functions process -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Services:
    """What every Functions handler works with (``chunking.app.functions``), built by ``services()``."""

    settings: Settings
    embedder: Embedder
    index: SearchIndex
    payloads: PayloadStore
    ledger: Ledger
    batches: QueueSender  # the chunk-batch queue (created on first use)
    jobs: QueueSender  # the stage-1 job queue (created on first use)


@functools.cache
def services() -> Services:
    """Settings (from the environment), embedder, index (ensured), claim-check store, ledger, chunk-batch and
    stage-1 job queues of this process, built on first use (``services.cache_clear()`` forgets them)."""
    settings = Settings.from_env()
    install_log_redaction()
    register_settings(settings)
    index = make_index(settings)
    index.ensure()
    payloads = make_payload_store(settings)
    embedder = make_embedder(settings)
    if settings.embedding_backend == "offline":
        log.warning("embedding with %s: the offline lexical embedder (hashed words, not semantic); set "
                    "AZURE_OPENAI_ENDPOINT or OPENAI_BASE_URL for real embeddings", embedder.name)
    return Services(settings, embedder, index, payloads, make_ledger(settings), make_batch_queue(settings),
                    make_job_queue(settings))
