"""LLM-based ("agentic") chunking: a chat model chooses the boundaries, never the text
(docs/splitters.md#llm-boundaries-and-the-router), after the "agentic chunking" idea of Kamradt's "5 Levels of Text
Splitting", restricted to choosing cut points so every chunk stays a verbatim union of units.

1. Units: sentences and figures (``text.sentence_units``), numbered per window; an empty line marks a
   paragraph start (``prompts.render_units``).
2. Windows of ≤ ``window_tokens`` tokens of units. The model answers ``{"breaks": [i, …]}``, the units starting
   a new chunk; ``parse_breaks`` checks integers, strictly increasing, inside the window.
3. The last group of a window is unfinished: the next window starts at its first unit (re-sent), so no
   boundary is forced by the window edge. A window without any break is taken whole (the repair cuts it).
4. Size repair (``repair.repair_sizes``) with distances between neighbouring units from ``distance_embedder``
   (default: the offline lexical embedder: local, free, deterministic).
5. Fallback for the whole document on a failed call or invalid answer: ``fallback`` (default: the semantic
   chunker when ``fallback_embedder`` is given, else the sentence splitter), chunks marked ``llm_fallback``.

``LLMRouter`` is the router mode: the model names one strategy from an allowed list; anything else means "the
format's default".
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Callable, Iterable, Sequence

from chunking.chat import ChatClient, ChatTask, InvalidOutput, json_list, run_chat_tasks
from chunking.chat.cache import MemoryModelCache, ModelCache
from chunking.embeddings import Embedder, OfflineLexicalEmbedder
from chunking.model import Chunk, Page
from chunking.strategies.prompts import PROMPTS, render_units, section
from chunking.strategies.repair import group_tokens, repair_sizes
from chunking.strategies.semantic import SemanticChunker, sentence_fallback, window_distances
from chunking.strategies.units import DocumentText, Unit, sentence_units, unit_runs
from chunking.tokens import token_counter as _token_counter

__all__ = ["LLMChunker", "LLMRouter", "parse_breaks"]

log = logging.getLogger("chunking.strategies")
RULES_VERSION = 1
Split = Callable[[Sequence[Page]], list[Chunk]]


def parse_breaks(answer: str, units: int) -> list[int]:
    """The break indices of a model *answer* for a window of *units* units.

    Example: ``parse_breaks('{"breaks": [0, 3, 7]}', 9)`` → ``[0, 3, 7]``.

    Raises:
        InvalidOutput: not JSON, no ``breaks`` list, a non-integer, an index outside ``0 … units − 1``, or
            indices not strictly increasing.
    """
    breaks = json_list(answer, "breaks")
    if any(isinstance(b, bool) or not isinstance(b, int) for b in breaks):
        raise InvalidOutput("breaks must be integers")
    if any(not 0 <= b < units for b in breaks):
        raise InvalidOutput(f"a break is outside 0..{units - 1}: {breaks}")
    if any(a >= b for a, b in zip(breaks, breaks[1:])):
        raise InvalidOutput(f"breaks are not strictly increasing: {breaks}")
    return breaks


class LLMChunker:
    """Boundaries chosen by a chat model over numbered units (module docstring).

    Args:
        chat: the ``ChatClient`` (``OfflineChatClient`` cuts at paragraphs and headings).
        cache: where answers are kept (default: in memory).
        window_tokens: unit tokens sent per call (default 3000).
        min_chunk_tokens, max_chunk_tokens: bounds of the size repair (defaults 100, 500).
        distance_embedder: measures neighbouring units for the repair (default ``OfflineLexicalEmbedder()``).
        fallback: ``pages -> chunks`` on failure (default: see ``fallback_embedder``).
        fallback_embedder: when given (and *fallback* is not), the fallback is ``SemanticChunker`` with it.
        token_counter: exact ``str -> int`` (default ``cl100k_base``).

    Raises:
        ValueError: bounds out of order, or ``window_tokens < max_chunk_tokens``.
    """

    def __init__(
        self, chat: ChatClient, *, cache: ModelCache | None = None, window_tokens: int = 3000,
        min_chunk_tokens: int = 100, max_chunk_tokens: int = 500, distance_embedder: Embedder | None = None,
        fallback: Split | None = None, fallback_embedder: Embedder | None = None,
        token_counter: Callable[[str], int] | None = None,
    ) -> None:  # fmt: skip
        if not 0 <= min_chunk_tokens <= max_chunk_tokens or max_chunk_tokens < 1 or window_tokens < max_chunk_tokens:
            raise ValueError("need 0 ≤ min_chunk_tokens ≤ max_chunk_tokens ≤ window_tokens")
        self.chat, self.cache = chat, cache if cache is not None else MemoryModelCache()
        self.window_tokens = window_tokens
        self.min_chunk_tokens, self.max_chunk_tokens = min_chunk_tokens, max_chunk_tokens
        self.distance_embedder = distance_embedder or OfflineLexicalEmbedder()
        self._count = token_counter or _token_counter("cl100k_base")
        if fallback is None:
            fallback = (SemanticChunker(fallback_embedder, min_chunk_tokens=min_chunk_tokens,
                                        max_chunk_tokens=max_chunk_tokens, cache=self.cache).split_pages
                        if fallback_embedder is not None else sentence_fallback(max_chunk_tokens))  # fmt: skip
        self._fallback = fallback
        self.prompt = PROMPTS["boundaries"]

    def config(self) -> dict:
        return {"strategy": "llm", "rules": RULES_VERSION, "model": self.chat.name, "prompt": self.prompt.version,
                "window_tokens": self.window_tokens, "min_chunk_tokens": self.min_chunk_tokens,
                "max_chunk_tokens": self.max_chunk_tokens, "distances": self.distance_embedder.name}  # fmt: skip

    def fingerprint(self) -> str:
        return hashlib.sha256(json.dumps(self.config(), sort_keys=True).encode()).hexdigest()[:16]

    def split_text(self, text: str) -> list[Chunk]:
        return self.split_pages([Page(0, 0, text)])

    def split_pages(self, pages: Iterable[Page]) -> list[Chunk]:
        """Verbatim chunks whose boundaries the model chose (module docstring). Never raises for a model
        failure: the whole document falls back."""
        pages = list(pages)
        doc = DocumentText(pages)
        units = sentence_units(pages, max_unit_tokens=self.max_chunk_tokens, count=self._count)
        chunks: list[Chunk] = []
        try:
            for run in unit_runs(units):
                if isinstance(run, Unit):  # a piece of a huge figure: alone
                    chunks.append(doc.chunk(run.start, run.end, self._count, kind="figure_part", text=run.text))
                else:
                    chunks.extend(self._chunk_run(run, doc))
        except InvalidOutput as exc:
            log.warning("LLM chunking fell back: %s", exc)
            chunks = self._fallback(pages)
            for chunk in chunks:
                chunk.metadata.update({"llm_fallback": True, "fallback_reason": f"llm: {exc}"})
        return chunks

    def _chunk_run(self, units: list[Unit], doc: DocumentText) -> list[Chunk]:
        starts: list[int] = []
        pos = 0
        while pos < len(units):
            end, tokens = pos, 0
            while end < len(units) and (end == pos or tokens + units[end].tokens <= self.window_tokens):
                tokens += units[end].tokens
                end += 1
            window = units[pos:end]
            breaks = sorted({0, *self._ask(window)})
            if end == len(units):
                starts.extend(pos + b for b in breaks)
                break
            if breaks[-1] == 0:  # no break at all: take the window whole rather than resend it forever
                starts.append(pos)
                pos = end
            else:
                starts.extend(pos + b for b in breaks[:-1])
                pos += breaks[-1]  # the unfinished last group opens the next window
        bounds = [*starts, len(units)]
        groups = list(zip(bounds, bounds[1:]))
        distances = window_distances(units, doc, self.distance_embedder, 0, self._count, 16_000, 256)

        tokens = group_tokens(units, doc, self._count, self.max_chunk_tokens)
        groups = repair_sizes(groups, distances, tokens, min_tokens=self.min_chunk_tokens,
                              max_tokens=self.max_chunk_tokens)
        return [doc.chunk(units[i].start, max(u.end for u in units[i:j]), self._count,
                          kind="figure" if any(u.kind == "figure" for u in units[i:j]) else "text",
                          metadata={"strategy": "llm"}) for i, j in groups]  # fmt: skip

    def _ask(self, window: Sequence[Unit]) -> list[int]:
        rendered = render_units([u.text for u in window], [u.paragraph_start for u in window])
        params = {"min_chunk_tokens": self.min_chunk_tokens, "max_chunk_tokens": self.max_chunk_tokens,
                  "window_tokens": self.window_tokens}  # fmt: skip
        task = ChatTask("llm", self.prompt.version, rendered, self.prompt.messages(section("units", rendered),
                        **params), params, max_tokens=1024, response_format={"type": "json_object"})  # fmt: skip
        (answer,) = run_chat_tasks(self.chat, self.cache, [task], 1)
        if isinstance(answer, Exception):
            raise InvalidOutput(f"call failed: {type(answer).__name__}: {answer}")
        return parse_breaks(answer, len(window))


class LLMRouter:
    """Router mode: the model picks one strategy name from *choices* for a document.

    Args:
        chat, cache: as for ``LLMChunker``.
        choices: the allowed names (e.g. ``("sentence", "markdown", "semantic")``).
        excerpt_tokens: how much of the document's beginning is shown (default 2000 tokens).

    ``route(pages)`` returns the chosen name, or ``""`` when the call fails or the answer is not one of
    *choices* (the caller then uses the format's default).
    """

    def __init__(self, chat: ChatClient, choices: Sequence[str], *, cache: ModelCache | None = None,
                 excerpt_tokens: int = 2000, token_counter: Callable[[str], int] | None = None) -> None:
        if not choices:
            raise ValueError("a router needs at least one choice")
        self.chat, self.choices, self.excerpt_tokens = chat, tuple(choices), excerpt_tokens
        self.cache = cache if cache is not None else MemoryModelCache()
        self._count = token_counter or _token_counter("cl100k_base")
        self.prompt = PROMPTS["route"]

    def config(self) -> dict:
        return {"model": self.chat.name, "prompt": self.prompt.version, "choices": list(self.choices),
                "excerpt_tokens": self.excerpt_tokens}  # fmt: skip

    def route(self, pages: Sequence[Page]) -> str:
        excerpt = _head(DocumentText(pages), self.excerpt_tokens, self._count)
        params = {"choices": ", ".join(self.choices)}
        task = ChatTask("route", self.prompt.version, excerpt, self.prompt.messages(section("document", excerpt),
                        **params), params, max_tokens=64, response_format={"type": "json_object"})  # fmt: skip
        (answer,) = run_chat_tasks(self.chat, self.cache, [task], 1)
        if isinstance(answer, Exception):
            return ""
        try:
            name = json.loads(answer).get("strategy")
        except (ValueError, AttributeError):
            return ""
        return name if name in self.choices else ""


def _head(doc: DocumentText, max_tokens: int, count: Callable[[str], int]) -> str:
    """The document's beginning, ≤ *max_tokens* tokens (cut between characters; binary search on the length)."""
    text = doc.slice(doc.start, doc.end)
    if count(text) <= max_tokens:
        return text
    lo, hi = 0, min(len(text), 16 * max_tokens)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count(text[:mid]) <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo]
