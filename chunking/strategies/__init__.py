"""Chunking strategies built on the splitters (docs/splitters.md#strategies): semantic, hierarchical,
small-to-big retrieval, propositions, LLM-chosen boundaries and context enrichment.

Each strategy takes its model clients as arguments (an ``Embedder`` of ``chunking.embeddings``, a ``ChatClient`` of
``chunking.chat``); ``chunking.services`` builds them from the settings, and ``chunking.documents.strategy`` runs a
strategy as the splitter of a document. The strategies' parameters are settings (``StrategyOptions`` in
``chunking.settings``).

Small-to-big retrieval, which searches, lives in ``chunking.retrieval.small_to_big``.

May import: core, errors, tokens, splitters, embeddings, chat.
"""

from chunking.strategies.enrichment import ContextEnricher
from chunking.strategies.hierarchical import HierarchicalChunker, Level
from chunking.strategies.llm import LLMChunker, LLMRouter
from chunking.strategies.proposition import PropositionChunker
from chunking.strategies.semantic import SemanticChunker

__all__ = ["ContextEnricher", "HierarchicalChunker", "LLMChunker", "LLMRouter", "Level", "PropositionChunker",
           "SemanticChunker"]
