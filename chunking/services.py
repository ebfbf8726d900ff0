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
  ``vector_floor``; ``index_design`` and ``index_schema``: the Azure AI Search index definition the settings
  create (``chunking schema`` prints it), built by the function ``AzureSearchIndex.ensure`` creates it with.
* ledger: ``make_ledger`` (``LEDGER_BACKEND``), ``ledger_table``, ``ledger_exists``.
* storage: ``make_payload_store``, ``make_batch_queue``, ``make_job_queue``, ``make_figure_store`` (figure
  images: the blob container ``FIGURES_CONTAINER`` beside the table ledger, else ``CHUNKING_STATE_DIR/figures``).
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
from chunking.chat.vision import PROMPT_VERSION, FigureDescriber
from chunking.embeddings import Embedder, OfflineLexicalEmbedder, OpenAIEmbedder
from chunking.embeddings.local import LocalModelEmbedder
from chunking.formats import SUPPORTED_EXTENSIONS
from chunking.index import SearchIndex
from chunking.index.design import IndexDesign, Vectorizer
from chunking.index.fusion import FusionOptions
from chunking.index.local import LocalIndex
from chunking.ledger import Ledger, LocalLedgerStore, TableLedgerStore, local_ledger_path
from chunking.messages.events import EventGridPublisher, QueuePublisher
from chunking.model import Page
from chunking.redact import install_log_redaction, mask_url, register_settings
from chunking.settings import Settings
from chunking.settings.index_design import VECTORIZER_MODELS
from chunking.storage import QueueSender, blob_service, queue_client, table_service
from chunking.storage.claim_check import BlobPayloadStore, PayloadStore
from chunking.storage.figures import BlobFigureStore, FigureStore, LocalFigureStore
from chunking.tokens import token_counter

__all__ = [
    "Services", "StrategyClients", "document_readers", "fusion_options", "index_design", "index_known_empty",
    "index_location", "index_schema",
    "ledger_exists", "ledger_table", "make_batch_queue", "make_chat_client", "make_embedder", "make_index",
    "make_job_queue", "make_ledger", "make_model_cache", "make_payload_store", "reset_strategy_clients", "services",
    "strategy_clients", "vector_floor", "configure_telemetry", "make_event_publisher",
    "figure_describer", "figures_fingerprint", "make_figure_store",
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
                          metadata_fields=settings.metadata.field_names, languages=settings.index_design.languages)
    if settings.index_backend == "azure":
        if not settings.search_endpoint:
            raise ValueError("INDEX_BACKEND=azure needs AZURE_SEARCH_ENDPOINT")
        from chunking.index.azure import AzureSearchIndex  # the Azure AI Search SDK, only when it is used

        return AzureSearchIndex(
            settings.search_endpoint,
            credential=settings.search_api_key or None,
            semantic_ranker=settings.search_semantic_ranker,
            **_azure_index_arguments(settings),
        )
    raise ValueError(f"unknown index backend {settings.index_backend!r} (INDEX_BACKEND: local, azure)")


def index_design(settings: Settings) -> IndexDesign:
    """The ``IndexDesign`` of *settings* (``INDEX_LAYOUT``, ``SEARCH_*``; docs/settings.md#index-definition).

    A vectorizer is declared for the Azure OpenAI embedder of a model the service's vectorizer knows (its
    endpoint, deployment and model; keyless); with an OpenAI-compatible, local or offline embedder, none.

    The settings were checked against the embedder when read (``IndexDesignSettings.check``).
    """
    design = settings.index_design
    vectorizer = None
    if settings.embedding_backend == "azure_openai" and settings.embedding_model in VECTORIZER_MODELS:
        vectorizer = Vectorizer(settings.azure_openai_endpoint.rstrip("/"),
                                settings.azure_openai_deployment or settings.embedding_model, settings.embedding_model)
    return IndexDesign(
        layout=design.layout, category=design.category, vectorizer=vectorizer,
        service_vectorization=design.query_vectorization == "service", compression=design.compression,
        truncation_dimensions=design.truncation_dimensions, oversampling=design.oversampling,
        permission_filters=design.permission_filters,
        api_version=design.preview_api_version if design.permission_filters else None, languages=design.languages,
        acl_default=settings.metadata.acl_default,
    )  # fmt: skip


def _azure_index_arguments(settings: Settings) -> dict[str, Any]:
    """What decides the Azure AI Search index definition, as ``AzureSearchIndex`` takes it: one place for
    ``make_index`` and ``index_schema``."""
    return {"index_name": settings.search_index_name, "dimensions": settings.embedding_dimensions,
            "metadata_fields": settings.metadata.field_names, "design": index_design(settings)}


def index_schema(settings: Settings) -> Any:
    """The Azure AI Search index definition (an SDK ``SearchIndex``; ``.as_dict()`` is the REST API's JSON) that
    ``make_index(settings).ensure()`` creates when the index is missing, whatever ``INDEX_BACKEND`` is: nothing is
    contacted.

    Raises:
        ValueError: the settings make no valid definition (``index_design``).
    """
    from chunking.index.azure import index_definition  # the Azure AI Search SDK, only when it is used

    arguments = _azure_index_arguments(settings)
    return index_definition(arguments["index_name"], arguments["dimensions"], False, arguments["metadata_fields"],
                            arguments["design"])


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
        return Ledger(TableLedgerStore(table_service(settings), table), publish=make_event_publisher(settings))
    return Ledger(LocalLedgerStore(local_ledger_path(settings)), publish=make_event_publisher(settings))


# -- completion events ---------------------------------------------------------------------------------------------


def make_event_publisher(settings: Settings) -> Callable[[Any], None] | None:
    """Where the ledger publishes completion events (docs/events.md): the Event Grid namespace
    ``COMPLETION_EVENTS_ENDPOINT``, topic ``COMPLETION_EVENTS_TOPIC`` (key ``COMPLETION_EVENTS_KEY``, else the
    identity), else, with the ledger in
    storage, the queue ``COMPLETION_EVENTS_QUEUE``; ``None`` for the CLI's local ledger (its events stay pending in
    the ledger). Nothing is contacted until the first event."""
    options = settings.observability
    if options.events_endpoint:
        return EventGridPublisher(options.events_endpoint, options.events_topic, options.events_key)
    if ledger_table(settings) is not None:
        return QueuePublisher(QueueSender(queue_client(settings, options.events_queue)))
    return None


# -- storage -------------------------------------------------------------------------------------------------------


def make_payload_store(settings: Settings) -> PayloadStore:
    """The blob payload store of *settings* (``PAYLOAD_CONTAINER`` on the app's storage)."""
    return BlobPayloadStore(blob_service(settings), settings.payload_container)


def make_figure_store(settings: Settings) -> FigureStore | None:
    """Where figure images go (docs/parsers.md#figure-images): ``None`` with ``FIGURES_STORE=false``; the blob
    container ``FIGURES_CONTAINER`` on the app's storage when the ledger is the storage table (the Functions, and
    the CLI pointed at them); else the folder ``CHUNKING_STATE_DIR/figures``, beside the local ledger."""
    options = settings.figure_images
    if not options.store:
        return None
    if ledger_table(settings) is not None:
        return BlobFigureStore(blob_service(settings), options.container)
    return LocalFigureStore(settings.state_dir / "figures")


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


# -- telemetry -----------------------------------------------------------------------------------------------------

_telemetry_lock = threading.Lock()
_telemetry: list[str] = []  # the exporter installed in this process, once


def configure_telemetry(settings: Settings) -> str:
    """Install the process's OpenTelemetry exporter once (docs/operations.md#telemetry) and return which:
    ``azure_monitor`` (``APPLICATIONINSIGHTS_CONNECTION_STRING``: the Azure Monitor distro, which also traces the
    Azure SDK and HTTP client calls, authenticated with the managed identity when
    ``APPLICATIONINSIGHTS_AUTHENTICATION_STRING`` asks for Entra ID), ``otlp`` (``OTEL_EXPORTER_OTLP_ENDPOINT``:
    the SDK with the OTLP/HTTP span and metric exporters, Azure SDK calls traced through azure-core's
    OpenTelemetry plugin, the OpenAI SDK's through the httpx instrumentation) or ``none``. The SDK, the exporters and the distro are imported only here, so a process
    without telemetry never loads them (the cold start of ``function_app`` is measured in
    docs/operations.md#cold-start). A second call returns the first one's choice."""
    with _telemetry_lock:
        if _telemetry:
            return _telemetry[0]
        choice = settings.observability.exporter
        if choice == "azure_monitor":
            from azure.monitor.opentelemetry import configure_azure_monitor

            options = settings.observability
            extra = {}
            if options.app_insights_client_id is not None:  # local authentication off: the app's identity
                from azure.identity import ManagedIdentityCredential

                extra["credential"] = ManagedIdentityCredential(client_id=options.app_insights_client_id or None)
            # The Functions host already sends the app's log lines to Application Insights: not twice.
            configure_azure_monitor(connection_string=options.app_insights_connection, disable_logging=True,
                                    **extra)
        elif choice == "otlp":
            _configure_otlp(settings.observability.otlp_endpoint)
        _telemetry.append(choice)
        log.info("telemetry: %s", choice)
        return choice


def _configure_otlp(endpoint: str) -> None:
    from azure.core.settings import settings as azure_settings
    from opentelemetry import metrics, trace
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    base = endpoint.rstrip("/")  # the OTLP/HTTP paths of the OpenTelemetry protocol specification
    resource = Resource.create()  # the SDK reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES itself
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{base}/v1/traces")))
    trace.set_tracer_provider(provider)
    reader = PeriodicExportingMetricReader(OTLPMetricExporter(endpoint=f"{base}/v1/metrics"))
    metrics.set_meter_provider(MeterProvider(resource=resource, metric_readers=[reader]))
    azure_settings.tracing_implementation = "opentelemetry"  # Azure SDK calls as child spans
    from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor

    HTTPXClientInstrumentor().instrument()  # the OpenAI SDK's HTTP calls as child spans (the distro does the same)


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
    figures: FigureStore | None = None  # figure images (``make_figure_store``)


@functools.cache
def services() -> Services:
    """Settings (from the environment), embedder, index (ensured), claim-check store, ledger, chunk-batch and
    stage-1 job queues of this process, built on first use (``services.cache_clear()`` forgets them)."""
    settings = Settings.from_env()
    install_log_redaction()
    register_settings(settings)
    configure_telemetry(settings)
    index = make_index(settings)
    index.ensure()
    payloads = make_payload_store(settings)
    embedder = make_embedder(settings)
    if settings.embedding_backend == "offline":
        log.warning("embedding with %s: the offline lexical embedder (hashed words, not semantic); set "
                    "AZURE_OPENAI_ENDPOINT or OPENAI_BASE_URL for real embeddings", embedder.name)
    return Services(settings, embedder, index, payloads, make_ledger(settings), make_batch_queue(settings),
                    make_job_queue(settings), make_figure_store(settings))


# -- figure descriptions -------------------------------------------------------------------------------------------

_describers: dict[tuple, FigureDescriber] = {}


def figure_describer(settings: Settings, **client_kwargs: Any) -> FigureDescriber | None:
    """The vision describer of ``FIGURES_DESCRIBER`` (docs/parsers.md#figure-descriptions), built once per process
    and configuration, on the model cache (``make_model_cache``); ``None`` for ``offline`` (a picture's text is
    then what local OCR reads). ``azure_openai``: deployment ``VISION_MODEL`` at ``AZURE_OPENAI_ENDPOINT`` (API
    key, else Microsoft Entra ID); ``openai``: ``VISION_MODEL`` at ``OPENAI_BASE_URL``. *client_kwargs* go to the
    SDK client (``http_client=`` in tests).

    Raises:
        ValueError: the endpoint the describer needs is not set (the message names the setting).
    """
    options = settings.vision
    if not options.calls_model:
        return None
    key = (options, settings.azure_openai_endpoint, settings.openai_base_url, settings.model_cache_container,
           settings.storage_connection, settings.storage_account, str(settings.state_dir), tuple(client_kwargs))
    with _lock:
        if key not in _describers or client_kwargs:
            cache = make_model_cache(settings)
            if options.describer == "azure_openai":
                if not settings.azure_openai_endpoint:
                    raise ValueError("FIGURES_DESCRIBER=azure_openai needs AZURE_OPENAI_ENDPOINT")
                _describers[key] = FigureDescriber.azure(
                    endpoint=settings.azure_openai_endpoint, deployment=options.model, cache=cache,
                    api_key=settings.azure_openai_api_key or None, api_version=settings.azure_openai_api_version,
                    max_tokens_per_document=options.max_tokens_per_document, **client_kwargs)
            else:
                if not (settings.openai_api_key or settings.openai_base_url):
                    raise ValueError("FIGURES_DESCRIBER=openai needs OPENAI_API_KEY or OPENAI_BASE_URL")
                _describers[key] = FigureDescriber.openai_compatible(
                    model=options.model, cache=cache, api_key=settings.openai_api_key or "unused",
                    base_url=settings.openai_base_url or None,
                    max_tokens_per_document=options.max_tokens_per_document, **client_kwargs)
        return _describers[key]


def figures_fingerprint(settings: Settings) -> str:
    """What the describer adds to the version of a document whose pictures it describes: ``""`` for ``offline``,
    else the backend, the model and the prompt's version (``chunking.chat.vision.PROMPT_VERSION``), so changing
    any of them describes the figures again."""
    options = settings.vision
    return f"{options.describer}/{options.model}:{PROMPT_VERSION}" if options.calls_model else ""
