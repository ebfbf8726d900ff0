"""Search indexes: the ``SearchIndex`` protocol, Azure AI Search, and the local single-file index.

``LocalIndex`` and ``AzureSearchIndex`` are imported on first use, so ``import chunking.index`` never imports the
Azure SDK (or numpy) by itself.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from chunking.index.protocol import IndexError_, SearchHit, SearchIndex

if TYPE_CHECKING:
    from chunking.index.azure_search import AzureSearchIndex
    from chunking.index.local import LocalIndex
    from chunking.settings import Settings

__all__ = ["AzureSearchIndex", "IndexError_", "LocalIndex", "SearchHit", "SearchIndex", "fusion_options", "make_index"]

_LAZY = {"LocalIndex": "chunking.index.local", "AzureSearchIndex": "chunking.index.azure_search"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def make_index(settings: "Settings") -> SearchIndex:
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
        from chunking.index.azure_search import AzureSearchIndex

        return AzureSearchIndex(
            settings.search_endpoint,
            settings.search_index_name,
            settings.embedding_dimensions,
            settings.search_api_key or None,
            semantic_ranker=settings.search_semantic_ranker,
            metadata_fields=settings.metadata.field_names,
        )
    raise ValueError(f"unknown index backend {settings.index_backend!r} (INDEX_BACKEND: local, azure)")


def fusion_options(settings: "Settings"):
    """The local index's ``FusionOptions`` from the settings (``SEARCH_*``, docs/settings.md)."""
    from chunking.index.fusion import FusionOptions

    search = settings.search
    offline = settings.embedding_backend == "offline"
    # Chosen with chunking eval on samples/ (docs/search.md#why-these-defaults): hashed words match by chance less
    # often than a model's vectors resemble each other, and a model's vectors deserve a larger share.
    floor = search.min_vector_score if search.min_vector_score is not None else (0.15 if offline else 0.3)
    weight = search.lexical_weight if search.lexical_weight is not None else (0.6 if offline else 0.5)
    return FusionOptions(search.fusion, weight, search.rrf_k, floor)
