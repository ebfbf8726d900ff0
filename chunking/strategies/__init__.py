"""Chunking strategies built on the splitters (docs/splitters.md#strategies): semantic, hierarchical,
small-to-big retrieval, propositions, LLM-chosen boundaries and context enrichment, with their model clients and
the model-result cache.

Names are imported on first use (as in ``chunking.index``), so ``import chunking.strategies`` costs nothing. The
strategies' parameters are settings: ``StrategyOptions`` is defined in ``chunking.settings`` (which imports no
strategy) and re-exported here.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "BlobModelCache", "CachedEmbedder", "ChatClient", "ChatError", "ContextEnricher", "HierarchicalChunker",
    "InvalidOutput", "LLMChunker", "LLMRouter", "Level", "LocalModelCache", "MemoryModelCache", "ModelCache",
    "OfflineChatClient", "OpenAIChatClient", "ParentDocumentRetriever", "PropositionChunker", "RetrievedContext",
    "SemanticChunker", "StrategyOptions", "cache_key", "strategy_clients",
]  # fmt: skip

_LAZY = {
    "BlobModelCache": "cache", "CachedEmbedder": "cache", "LocalModelCache": "cache", "MemoryModelCache": "cache",
    "ModelCache": "cache", "cache_key": "cache",
    "ChatClient": "chat", "ChatError": "chat", "InvalidOutput": "chat", "OpenAIChatClient": "chat",
    "OfflineChatClient": "offline",
    "ContextEnricher": "enrichment",
    "HierarchicalChunker": "hierarchical", "Level": "hierarchical",
    "LLMChunker": "llm", "LLMRouter": "llm",
    "ParentDocumentRetriever": "small_to_big", "RetrievedContext": "small_to_big",
    "PropositionChunker": "proposition",
    "SemanticChunker": "semantic",
    "StrategyOptions": "options",  # defined in chunking.settings
    "strategy_clients": "clients",
}  # fmt: skip


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
