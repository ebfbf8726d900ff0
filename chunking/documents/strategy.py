"""The strategies as pipeline splitters: ``SPLITTERS=".pdf=semantic,.md=propositions+enrich"`` picks them per
file extension (``chunking.documents.splitter.splitter_for``; their names are listed in ``chunking.formats``), with
their parameters from ``settings.strategy`` and the shared clients (``chunking.services.strategy_clients``).

| name | what runs |
|---|---|
| ``semantic`` | ``SemanticChunker`` (pipeline embedder, cached), max ``SPLIT_MAX_TOKENS`` |
| ``hierarchical`` | ``HierarchicalChunker``, ``HIERARCHY_LEVELS`` (level 0 cut at headings if the format has any) |
| ``small_to_big`` | two levels, ``SMALL_TO_BIG_TOKENS`` (parent, child); only children get vectors |
| ``sentence_window`` | sections (``SMALL_TO_BIG_TOKENS`` parent cap) without vectors, single sentences with |
| ``propositions`` | ``PropositionChunker``: passages (no vector) and their propositions |
| ``llm`` | ``LLMChunker``, falling back to ``semantic`` |
| ``router`` | ``LLMRouter`` picks one of ``ROUTER_CHOICES`` per document (format default otherwise) |
| ``<any>+enrich`` | then ``ContextEnricher`` (``ENRICH_*``); the document's file name is the title |

Every fallback goes to the format's default splitter (the deterministic one); each configuration dict holds every
parameter, model name and prompt version, and becomes part of the document version.
"""

from __future__ import annotations

import dataclasses
from pathlib import PurePosixPath
from typing import Any, Callable, Sequence

from chunking.formats import ENRICH_SUFFIX, STRATEGY_NAMES
from chunking.model import Chunk, Page
from chunking.parsers.selection import has_headings
from chunking.services import strategy_clients
from chunking.settings import Settings
from chunking.splitters.markdown import HeadingOutline
from chunking.strategies.enrichment import ContextEnricher
from chunking.strategies.hierarchical import HierarchicalChunker, Level
from chunking.strategies.llm import LLMChunker, LLMRouter
from chunking.strategies.proposition import PropositionChunker
from chunking.strategies.semantic import SemanticChunker

__all__ = ["strategy_splitter"]

Split = Callable[[Sequence[Page]], list[Chunk]]
#: ``(name, settings) -> (config, split)`` for the format splitters of ``chunking.documents.splitter``.
BaseSplitter = Callable[[str, Settings], tuple[dict[str, Any], Split]]


def strategy_splitter(name: str, source: str, settings: Settings, *, base: BaseSplitter,
                      default: str) -> tuple[dict[str, Any], Split]:
    """``(config, split)`` of strategy *name* for *source*.

    Args:
        name: a ``STRATEGY_NAMES`` entry or any splitter name, optionally with ``+enrich``.
        base: builds the format splitters by name; default: the format's default splitter name (the fallback).

    Raises:
        ValueError: an unknown name, or a router choice that is not a known splitter.
    """
    enrich = name.endswith(ENRICH_SUFFIX)
    core = name[: -len(ENRICH_SUFFIX)] if enrich else name
    config, split = (_build(core, source, settings, base, default) if core in STRATEGY_NAMES
                     else base(core, settings))  # fmt: skip
    if enrich:
        config, split = _enriched(config, split, source, settings)
    return config, split


def _build(name: str, source: str, s: Settings, base: BaseSplitter, default: str) -> tuple[dict[str, Any], Split]:
    opts, clients = s.strategy, strategy_clients(s)
    fallback_config, fallback = base(default, s)
    if name in ("semantic", "llm"):
        semantic = SemanticChunker(
            clients.embedder, buffer_size=opts.semantic_buffer_size,
            breakpoint_threshold_type=opts.semantic_threshold_type,
            breakpoint_threshold_amount=opts.semantic_threshold_amount,
            min_chunk_tokens=min(opts.semantic_min_tokens, s.max_tokens), max_chunk_tokens=s.max_tokens,
            fallback=fallback, max_batch_tokens=s.embedding_batch_max_tokens,
            max_batch_inputs=s.embedding_batch_max_inputs,
        )  # fmt: skip
        if name == "semantic":
            return {**semantic.config(), "fallback": fallback_config}, semantic.split_pages
        llm = LLMChunker(clients.chat, cache=clients.cache, window_tokens=max(opts.llm_window_tokens, s.max_tokens),
                         min_chunk_tokens=min(opts.llm_min_tokens, s.max_tokens), max_chunk_tokens=s.max_tokens,
                         fallback=semantic.split_pages)  # fmt: skip
        return {**llm.config(), "fallback": {**semantic.config(), "fallback": fallback_config}}, llm.split_pages
    if name in ("hierarchical", "small_to_big", "sentence_window"):
        parent, child = opts.small_to_big_tokens
        if name == "hierarchical":
            caps = opts.hierarchy_levels_tokens
            levels, embed = [Level(caps[0], "sections"), *(Level(c) for c in caps[1:])], opts.hierarchy_embed_levels
        else:
            levels, embed = [Level(parent, "sections"), Level(child, "sentence" if name == "small_to_big" else
                                                               "sentences")], (1,)  # fmt: skip
        chunker = HierarchicalChunker(levels, embed_levels=embed, headings=has_headings(source, s))
        return {**chunker.config(), "variant": name}, chunker.split_pages
    if name == "propositions":
        cap = opts.proposition_passage_tokens
        passages = None if default == "sentence" else base(default, s.replace(max_tokens=cap, max_chars=4 * cap))[1]
        chunker = PropositionChunker(
            clients.chat, cache=clients.cache, passage_max_tokens=cap, max_propositions=opts.proposition_max_count,
            max_proposition_tokens=opts.proposition_max_tokens, min_grounding=opts.proposition_min_grounding,
            max_concurrency=s.chat_max_concurrency, passage_splitter=passages,
        )  # fmt: skip
        return {**chunker.config(), "passages": default}, chunker.split_pages
    if name == "router":
        return _router(source, s, base, default)
    raise ValueError(f"unknown strategy {name!r}; known: {', '.join(STRATEGY_NAMES)}")


def _router(source: str, s: Settings, base: BaseSplitter, default: str) -> tuple[dict[str, Any], Split]:
    clients = strategy_clients(s)
    choices = [c for c in s.strategy.router_choices if c != "router"]
    built = {c: strategy_splitter(c, source, s, base=base, default=default) for c in [*choices, default]}
    router = LLMRouter(clients.chat, choices, cache=clients.cache)

    def split(pages: Sequence[Page]) -> list[Chunk]:
        chosen = router.route(pages) or default
        chunks = built[chosen][1](pages)
        for chunk in chunks:
            chunk.metadata["routed_to"] = chosen
        return chunks

    return {"strategy": "router", **router.config(), "choices": {c: cfg for c, (cfg, _) in built.items()}}, split


def _enriched(config: dict[str, Any], split: Split, source: str, s: Settings) -> tuple[dict[str, Any], Split]:
    opts = s.strategy
    clients = strategy_clients(s) if opts.enrich_generated_context else None
    enricher = ContextEnricher(
        breadcrumb=opts.enrich_breadcrumb, neighbour_sentences=opts.enrich_neighbour_sentences,
        neighbour_max_tokens=opts.enrich_neighbour_max_tokens, generated_context=opts.enrich_generated_context,
        chat=clients.chat if clients else None, cache=clients.cache if clients else None,
    )  # fmt: skip
    title = PurePosixPath(source).name
    headed = has_headings(source, s)

    def enriched(pages: Sequence[Page]) -> list[Chunk]:
        pages = list(pages)
        chunks = split(pages)
        if headed:  # the heading path the records will carry (chunking.documents.records), for the breadcrumb
            outline = HeadingOutline(pages)
            chunks = [c if c.headings else dataclasses.replace(c, headings=outline.path_at(c.char_start))
                      for c in chunks]
        return enricher.enrich(chunks, title=title, pages=pages)

    return {**config, "enrich": enricher.config()}, enriched
