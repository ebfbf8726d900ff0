"""One typed settings object, read from the environment (app settings on Azure, ``local.settings.json`` under
``func start``, the shell for the CLI).

With no Azure settings at all everything runs locally (the *embedded default*): Azurite-style storage
(``UseDevelopmentStorage=true``), the offline lexical embedder, and a single-file search index under
``.chunking/`` of the current working directory.

May import: formats.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from .docintel import DocumentIntelligenceSettings
from .figures import FigureOptions
from .index_design import IndexDesignSettings
from .observability import ObservabilityOptions
from .isolation import ParseIsolation
from .vision import VisionOptions
from .figure_images import FigureImageOptions
from .local_model import LocalModelOptions
from .metadata import MetadataSettings
from .reconcile import ReconcileOptions
from .search import SearchOptions
from .stage_one import JOB_QUEUE_DEFAULT, StageOneJobs
from .strategy import SEMANTIC_THRESHOLD_TYPES, StrategyOptions
from .values import SettingsError, bool_value, connection_string, https_url, int_value, str_value

__all__ = [
    "BINDING_DEFAULTS", "MAX_SPLIT_TOKENS", "SEMANTIC_RANKER_PLANS", "SEMANTIC_THRESHOLD_TYPES", "Settings",
    "SettingsError", "StageOneJobs", "StrategyOptions", "binding_setting", "read_local_settings",
    "semantic_ranker_value",
]

# The settings that name what the Functions bindings read and write, with their defaults. The Functions host has
# no defaults for ``%NAME%`` binding expressions (an app without the setting fails to load the function), so
# function_app resolves these names itself when it is indexed, and Settings uses the same defaults.
BINDING_DEFAULTS: Mapping[str, str] = {
    "DOCUMENTS_CONTAINER": "documents",
    "CHUNK_BATCH_QUEUE": "chunk-batches",
    "BLOB_EVENTS_QUEUE": "blob-events",
    "RECONCILE_SCHEDULE": "0 30 3 * * *",
    "BLOB_TRIGGER_SOURCE": "EventGrid",
    "STAGE1_JOB_QUEUE": JOB_QUEUE_DEFAULT,
    # The frequent repair (docs/operations.md#healing-time): every 5 minutes.
    "REPAIR_SCHEDULE": "0 */5 * * * *",
}


def binding_setting(name: str, env: Mapping[str, str] | None = None) -> str:
    """The value of the binding setting *name* (a key of ``BINDING_DEFAULTS``) in *env* (default ``os.environ``),
    or its default when unset or blank.

    Raises:
        KeyError: *name* is not a binding setting.
    """
    return str_value(os.environ if env is None else env, name, BINDING_DEFAULTS[name])


def read_local_settings(path: Path) -> dict[str, str]:
    """The ``Values`` of the Functions local settings file *path* (``local.settings.json``), which ``func start``
    turns into environment variables; ``{}`` when the file does not exist.

    Raises:
        SettingsError: the file is not JSON, is encrypted (``IsEncrypted``), or a value is not a string; the
            message names the file and the key.
    """
    import json

    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise SettingsError(f"{path}: not a readable JSON file: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("Values", {}), dict):
        raise SettingsError(f"{path}: expected an object with a \"Values\" object")
    if data.get("IsEncrypted"):
        raise SettingsError(f"{path}: the values are encrypted (IsEncrypted); decrypt them with "
                            "`func settings decrypt`, or set the settings in the environment")
    values = data.get("Values", {})
    for key, value in values.items():
        if not isinstance(value, str):
            raise SettingsError(f"{path}: Values.{key} must be a string, got {json.dumps(value)}")
    return dict(values)


def _overrides(raw: str) -> dict[str, str]:
    result = {}
    for item in filter(None, (part.strip() for part in raw.split(","))):
        ext, sep, name = item.partition("=")
        ext = ext.strip().lower()
        if not sep or not ext.startswith(".") or not name.strip():
            raise SettingsError(f"SPLITTERS must look like '.txt=markdown,.htm=sentence', got {item!r}")
        result[ext] = name.strip()
    return result



#: The most tokens a chunk may have, for every format and strategy: the embedding models' input limit
#: (text-embedding-3-small/-large and ada-002 take 8,191 tokens), which the sentence splitter enforces as its
#: hard cap; ``SPLIT_MAX_TOKENS`` and ``split --max-tokens`` above it are refused up front.
MAX_SPLIT_TOKENS = 8191


def _split_max_tokens(env: Mapping[str, str]) -> int:
    value = int_value(env, "SPLIT_MAX_TOKENS", 500, 1)
    if value > MAX_SPLIT_TOKENS:
        raise SettingsError(f"SPLIT_MAX_TOKENS must be at most {MAX_SPLIT_TOKENS} (the embedding input limit, for "
                            f"every format), got {value}")
    return value

@dataclass(frozen=True)
class Settings:
    """Every setting the app reads. Environment variable names are given in ``Settings.from_env``.

    Units: sizes in bytes, budgets in tokens or characters as named.
    """

    # Storage (blob trigger container, chunk-batch queue, claim-check payloads).
    storage_connection: str = "UseDevelopmentStorage=true"
    # Identity-based storage (used when storage_connection is empty): account name, or service URIs.
    storage_account: str = ""
    storage_blob_uri: str = ""
    storage_queue_uri: str = ""
    storage_table_uri: str = ""
    documents_container: str = BINDING_DEFAULTS["DOCUMENTS_CONTAINER"]
    batch_queue: str = BINDING_DEFAULTS["CHUNK_BATCH_QUEUE"]
    # The queue of Event Grid BlobDeleted events (read by the remove_deleted_blob function).
    blob_events_queue: str = BINDING_DEFAULTS["BLOB_EVENTS_QUEUE"]
    payload_container: str = "chunk-payloads"
    # Local state (local index, ledger, caches).
    state_dir: Path = Path(".chunking")
    # Ledger: "table" (Azure Table Storage / Azurite, on the storage connection) or "local" (SQLite in state_dir).
    ledger_backend: str = "local"
    ledger_table: str = "chunkingledger"
    # Repair: reconcile re-enqueues a document still `queued` after stuck_after_seconds.
    stuck_after_seconds: int = 3600
    # Splitting.
    max_tokens: int = 500
    max_chars: int = 1000
    # Per-extension splitter overrides, extension → splitter name (setting SPLITTERS=.txt=markdown,.htm=sentence).
    splitters: Mapping[str, str] = dataclasses.field(default_factory=dict)
    encoding: str = "cl100k_base"
    max_document_bytes: int = 200 * 1024 * 1024
    # Queue messages: 64 KiB after the host's base64 encoding = 49,152 bytes of raw JSON.
    max_message_bytes: int = 49_152
    # Chunks per queue message at most: keeps each stage-2 invocation short whatever the chunk size.
    batch_max_chunks: int = 64
    # Embeddings.
    embedding_backend: str = "offline"  # "offline" | "azure_openai" | "openai"
    embedding_model: str = "text-embedding-3-small"
    # Azure OpenAI deployment of the embedding model ('' = named like the model).
    azure_openai_deployment: str = ""
    embedding_dimensions: int = 256
    embedding_batch_max_tokens: int = 16_000
    embedding_batch_max_inputs: int = 256
    azure_openai_endpoint: str = ""
    azure_openai_api_key: str = ""
    azure_openai_api_version: str = "2024-10-21"
    openai_base_url: str = ""
    openai_api_key: str = ""
    # Search index.
    index_backend: str = "local"  # "local" | "azure"
    search_endpoint: str = ""
    search_api_key: str = ""
    search_index_name: str = "chunks"
    search_semantic_ranker: bool = False
    # Model-based chunking strategies (chunking.strategies): the chat model, where model results are cached
    # (a blob container of the storage connection when set, else state_dir / "cache"), and their parameters.
    chat_backend: str = "offline"  # "offline" | "azure_openai" | "openai"
    chat_model: str = ""
    chat_max_concurrency: int = 4
    model_cache_container: str = ""
    strategy: StrategyOptions = dataclasses.field(default_factory=StrategyOptions)
    document_intelligence: DocumentIntelligenceSettings = dataclasses.field(default_factory=DocumentIntelligenceSettings)
    search: SearchOptions = dataclasses.field(default_factory=SearchOptions)
    local_model: LocalModelOptions = dataclasses.field(default_factory=LocalModelOptions)
    metadata: MetadataSettings = dataclasses.field(default_factory=MetadataSettings)  # document fields, ACLs
    # Per-document limits of stage 1, enforced while reading (chunking.parsers.limits says what each bounds).
    max_decompressed_bytes: int = 100 * 1024 * 1024
    max_pages: int = 5_000
    max_page_chars: int = 1_000_000
    max_document_chars: int = 10_000_000
    max_nesting_depth: int = 100
    max_archive_depth: int = 2  # containers (ZIP, mail) a document may lie in (chunking.parsers.limits)
    max_archive_members: int = 1_000  # members of one container that are read
    stage1_max_seconds: int = 300
    figures_max_per_document: int = 50
    isolation: ParseIsolation = dataclasses.field(default_factory=ParseIsolation)  # where stage 1 parses
    # Repair and backfill: the deployment's namespace in a shared index, re-enqueues per reconcile run.
    reconcile: ReconcileOptions = dataclasses.field(default_factory=ReconcileOptions)
    # Tables and figures in the sentence splitter: split sizes (docs/splitters.md#step-5-oversize-figure).
    figures: FigureOptions = dataclasses.field(default_factory=FigureOptions)
    stage_one: StageOneJobs = dataclasses.field(default_factory=StageOneJobs)  # page ranges, job queue
    # The Azure AI Search index definition: layout, vectorizer, compression, permission filters, analyzers.
    index_design: IndexDesignSettings = dataclasses.field(default_factory=IndexDesignSettings)
    # Figure descriptions: the describer, its vision model and token budget (docs/parsers.md#figure-descriptions).
    vision: VisionOptions = dataclasses.field(default_factory=VisionOptions)
    # Figure images: stored as PNG, pointed to by their chunks (docs/parsers.md#figure-images).
    figure_images: FigureImageOptions = dataclasses.field(default_factory=FigureImageOptions)
    # Telemetry exporters and completion events (docs/operations.md#telemetry, docs/events.md).
    observability: ObservabilityOptions = dataclasses.field(default_factory=ObservabilityOptions)

    @property
    def local_index_path(self) -> Path:
        """The local single-file index (SQLite): ``index.sqlite3`` beside the local ledger, or, with a ``table``
        ledger (Azurite, a storage account), ``index-<LEDGER_TABLE>.sqlite3``: one index per ledger in the state
        folder, so the index and the ledger always describe the same documents (the CLI on its own ledger and
        the Functions on Azurite's never write into one index; docs/operations.md#one-state-per-place)."""
        if self.ledger_backend == "table":
            return self.state_dir / f"index-{self.ledger_table}.sqlite3"
        return self.state_dir / "index.sqlite3"

    def replace(self, **changes: object) -> "Settings":
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "Settings":
        """Build settings from *env* (default ``os.environ``).

        Backends are chosen by what is configured: ``AZURE_SEARCH_ENDPOINT`` selects Azure AI Search,
        ``AZURE_OPENAI_ENDPOINT`` Azure OpenAI, ``OPENAI_BASE_URL``/``OPENAI_API_KEY`` any OpenAI-compatible
        endpoint; otherwise the local index and the offline embedder. ``EMBEDDING_BACKEND`` and
        ``INDEX_BACKEND`` force a choice. ``CHAT_MODEL`` names the chat model of the model-based strategies
        (on the same endpoint; ``CHAT_BACKEND`` forces one), otherwise they use the offline rule-based client.

        Raises:
            SettingsError: a value is malformed (the message names the variable).
        """
        env = os.environ if env is None else env
        search_endpoint = str_value(env, "AZURE_SEARCH_ENDPOINT")
        aoai_endpoint = str_value(env, "AZURE_OPENAI_ENDPOINT")
        openai_key = str_value(env, "OPENAI_API_KEY")
        openai_url = str_value(env, "OPENAI_BASE_URL")
        default_embedder = "azure_openai" if aoai_endpoint else ("openai" if (openai_key or openai_url) else "offline")
        embedding_backend = str_value(env, "EMBEDDING_BACKEND", default_embedder)
        if embedding_backend not in ("offline", "azure_openai", "openai", "local"):
            raise SettingsError(f"EMBEDDING_BACKEND must be offline, azure_openai, openai or local, got {embedding_backend!r}")
        local_model = LocalModelOptions.from_env(env, embedding_backend)
        index_backend = str_value(env, "INDEX_BACKEND", "azure" if search_endpoint else "local")
        if index_backend not in ("local", "azure"):
            raise SettingsError(f"INDEX_BACKEND must be local or azure, got {index_backend!r}")
        if index_backend == "azure" and not search_endpoint:
            raise SettingsError("INDEX_BACKEND=azure needs AZURE_SEARCH_ENDPOINT")
        # An explicit storage connection means a shared ledger in its table service (Functions, Azurite);
        # the CLI on a laptop with no storage configured keeps its ledger beside its local index.
        identity = {k: str_value(env, f"AzureWebJobsStorage__{k}") for k in
                    ("accountName", "blobServiceUri", "queueServiceUri", "tableServiceUri")}
        connection = str_value(env, "AzureWebJobsStorage", "" if any(identity.values()) else "UseDevelopmentStorage=true")
        connection = connection_string(connection, "AzureWebJobsStorage")
        if not connection:  # keyless storage: the service URIs carry a token, which needs HTTPS
            for k in ("blobServiceUri", "queueServiceUri", "tableServiceUri"):
                identity[k] = https_url(env, f"AzureWebJobsStorage__{k}")
        ledger_backend = str_value(env, "LEDGER_BACKEND", "table" if str_value(env, "AzureWebJobsStorage") or
                              any(identity.values()) else "local")
        if ledger_backend not in ("local", "table"):
            raise SettingsError(f"LEDGER_BACKEND must be local or table, got {ledger_backend!r}")
        default_dims = 256 if embedding_backend == "offline" else local_model.dimensions or 1536
        # A chat model is used only when one is named: then on the endpoint the embeddings use.
        chat_model = str_value(env, "CHAT_MODEL")
        default_chat = ("offline" if not chat_model else
                        "azure_openai" if aoai_endpoint else "openai" if (openai_key or openai_url) else "offline")
        chat_backend = str_value(env, "CHAT_BACKEND", default_chat)
        if chat_backend not in ("offline", "azure_openai", "openai"):
            raise SettingsError(f"CHAT_BACKEND must be offline, azure_openai or openai, got {chat_backend!r}")
        if chat_backend != "offline" and not chat_model:
            raise SettingsError(f"CHAT_BACKEND={chat_backend} needs CHAT_MODEL (the model or deployment name)")
        if str_value(env, "FIGURES_DESCRIBER").lower() == "azure_openai" and not aoai_endpoint:
            raise SettingsError("FIGURES_DESCRIBER=azure_openai needs AZURE_OPENAI_ENDPOINT")
        index_design = IndexDesignSettings.from_env(env)
        index_design.check(embedding_backend, str_value(env, "EMBEDDING_MODEL", "text-embedding-3-small"),
                           int_value(env, "EMBEDDING_DIMENSIONS", default_dims, 1))
        return cls(
            storage_connection=connection,
            storage_account=identity["accountName"],
            storage_blob_uri=identity["blobServiceUri"],
            storage_queue_uri=identity["queueServiceUri"],
            storage_table_uri=identity["tableServiceUri"],
            documents_container=binding_setting("DOCUMENTS_CONTAINER", env),
            batch_queue=binding_setting("CHUNK_BATCH_QUEUE", env),
            blob_events_queue=binding_setting("BLOB_EVENTS_QUEUE", env),
            payload_container=str_value(env, "PAYLOAD_CONTAINER", "chunk-payloads"),
            state_dir=Path(str_value(env, "CHUNKING_STATE_DIR", ".chunking")),
            ledger_backend=ledger_backend,
            ledger_table=str_value(env, "LEDGER_TABLE", "chunkingledger"),
            stuck_after_seconds=int_value(env, "STUCK_AFTER_SECONDS", 3600, 1),
            max_tokens=_split_max_tokens(env),
            max_chars=int_value(env, "SPLIT_MAX_CHARS", 1000, 1),
            splitters=_overrides(env.get("SPLITTERS", "")),
            max_document_bytes=int_value(env, "MAX_DOCUMENT_BYTES", 200 * 1024 * 1024, 1),
            max_message_bytes=int_value(env, "MAX_MESSAGE_BYTES", 49_152, 1024),
            batch_max_chunks=int_value(env, "BATCH_MAX_CHUNKS", 64, 1),
            embedding_backend=embedding_backend,
            embedding_model=str_value(env, "EMBEDDING_MODEL", "text-embedding-3-small"),
            azure_openai_deployment=str_value(env, "AZURE_OPENAI_EMBEDDING_DEPLOYMENT"),
            embedding_dimensions=int_value(env, "EMBEDDING_DIMENSIONS", default_dims, 1),
            embedding_batch_max_tokens=int_value(env, "EMBEDDING_BATCH_MAX_TOKENS", 16_000, 8191),
            embedding_batch_max_inputs=int_value(env, "EMBEDDING_BATCH_MAX_INPUTS", 256, 1),
            azure_openai_endpoint=aoai_endpoint,
            azure_openai_api_key=str_value(env, "AZURE_OPENAI_API_KEY"),
            azure_openai_api_version=str_value(env, "AZURE_OPENAI_API_VERSION", "2024-10-21"),
            openai_base_url=openai_url,
            openai_api_key=openai_key,
            index_backend=index_backend,
            search_endpoint=search_endpoint,
            search_api_key=str_value(env, "AZURE_SEARCH_API_KEY"),
            search_index_name=str_value(env, "AZURE_SEARCH_INDEX", "chunks"),
            search_semantic_ranker=semantic_ranker_value(env),
            chat_backend=chat_backend,
            chat_model=chat_model,
            chat_max_concurrency=int_value(env, "CHAT_MAX_CONCURRENCY", 4, 1),
            model_cache_container=str_value(env, "MODEL_CACHE_CONTAINER"),
            strategy=StrategyOptions.from_env(env),
            reconcile=ReconcileOptions.from_env(env),
            figures=FigureOptions.from_env(env),
            document_intelligence=DocumentIntelligenceSettings.from_env(env),
            search=SearchOptions.from_env(env),
            local_model=local_model,
            isolation=ParseIsolation.from_env(env),
            metadata=MetadataSettings.from_env(env),
            max_decompressed_bytes=int_value(env, "MAX_DECOMPRESSED_BYTES", 100 * 1024 * 1024, 1024),
            max_pages=int_value(env, "MAX_PAGES", 5_000, 1),
            max_page_chars=int_value(env, "MAX_PAGE_CHARS", 1_000_000, 1),
            max_document_chars=int_value(env, "MAX_DOCUMENT_CHARS", 10_000_000, 1),
            max_nesting_depth=int_value(env, "MAX_NESTING_DEPTH", 100, 2),
            max_archive_depth=int_value(env, "MAX_ARCHIVE_DEPTH", 2, 0),
            max_archive_members=int_value(env, "MAX_ARCHIVE_MEMBERS", 1_000, 1),
            stage1_max_seconds=int_value(env, "STAGE1_MAX_SECONDS", 300, 1),
            figures_max_per_document=int_value(env, "FIGURES_MAX_PER_DOCUMENT", 50, 0),
            stage_one=StageOneJobs.from_env(env),
            index_design=index_design,
            observability=ObservabilityOptions.from_env(env),
            vision=VisionOptions.from_env(env),
            figure_images=FigureImageOptions.from_env(env),
        )


#: The semantic ranker's plans, as the search service (and azd's AZURE_SEARCH_SEMANTIC_RANKER) names them: the
#: same variable means the same thing to infra/ and to the app (docs/deploy.md#parameters).
SEMANTIC_RANKER_PLANS = {"disabled": False, "free": True, "standard": True}


def semantic_ranker_value(env: Mapping[str, str]) -> bool:
    """``AZURE_SEARCH_SEMANTIC_RANKER``: whether queries use the semantic ranker. Takes the service's plan names
    (``disabled``, ``free``, ``standard``) or ``true``/``false``.

    Raises:
        SettingsError: any other value.
    """
    raw = str_value(env, "AZURE_SEARCH_SEMANTIC_RANKER").lower()
    if raw in SEMANTIC_RANKER_PLANS:
        return SEMANTIC_RANKER_PLANS[raw]
    try:
        return bool_value(env, "AZURE_SEARCH_SEMANTIC_RANKER")
    except SettingsError:
        raise SettingsError("AZURE_SEARCH_SEMANTIC_RANKER must be disabled, free or standard (the service's plan), "
                            f"or true or false, got {raw!r}") from None
