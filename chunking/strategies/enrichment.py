"""Context enrichment: add the breadcrumb, a little of the neighbouring chunks and optionally a generated
situating sentence to the text that is *embedded*, while the text that is shown and cited stays the chunk
(docs/splitters.md#context-enrichment), after Anthropic's "Contextual Retrieval" (2024) for the generated part.

1. Parts per chunk: ``breadcrumb`` = document title › heading path; ``previous`` = the last
   ``neighbour_sentences`` sentences of the previous chunk, ``next`` = the first ones of the next chunk (each cut
   to ``neighbour_max_tokens``, at a word boundary); ``context`` = a generated sentence (optional: one summary
   call per document, one call per chunk, cached, validated as non-empty and ≤ ``max_context_tokens``; omitted
   on failure).
2. Layout (``DEFAULT_LAYOUT``): blocks joined by an empty line, parts in a block by a line break, empty parts
   and blocks left out: ``"{title} › {headings}\\n\\n{context}\\n\\n{previous}\\n{content}\\n{next}"``.
3. Limit: over ``max_embedding_tokens``, drop the context, then the neighbours, then shorten the breadcrumb from
   the left; ``content`` is never cut. The result goes to ``metadata["embedding_text"]`` (only when it differs
   from the chunk text); the pipeline embeds it and keys vector reuse on its hash.

Neighbours are the chunks before and after at the same level (hierarchies) and of the same kind; chunks stored
without a vector are left alone.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Callable, Sequence

from chunking.chat import ChatClient, ChatTask, run_chat_tasks
from chunking.chat.cache import MemoryModelCache, ModelCache
from chunking.model import Chunk, Page
from chunking.splitters.sentence.boundaries import Boundaries
from chunking.splitters.sentence.config import SentenceSplitterConfig
from chunking.strategies.prompts import PROMPTS, section
from chunking.strategies.units import EMBEDDING_MAX_TOKENS, DocumentText, sentence_spans
from chunking.tokens import token_counter as _token_counter

__all__ = ["DEFAULT_LAYOUT", "ContextEnricher"]

#: Blocks (joined by an empty line) of parts (joined by a line break).
DEFAULT_LAYOUT: tuple[tuple[str, ...], ...] = (("breadcrumb",), ("context",), ("previous", "content", "next"))
RULES_VERSION = 1
_PARTS = frozenset({"breadcrumb", "context", "previous", "content", "next"})


class ContextEnricher:
    """Compute each chunk's ``embedding_text`` (module docstring).

    Args:
        breadcrumb: prefix the title and heading path (default True).
        neighbour_sentences: sentences taken from each neighbour (default 1; 0 for none).
        neighbour_max_tokens: cap of each neighbour part, tokens (default 50).
        generated_context: ask *chat* for a situating sentence per chunk (default False).
        chat, cache: the ``ChatClient`` and answer cache for the generated context.
        max_context_tokens: cap of a generated context (default 100). max_summary_tokens: of the summary (150).
        max_embedding_tokens: the embedding model's input limit (default 8191).
        layout: blocks of part names (``DEFAULT_LAYOUT``); must contain ``"content"``.
        token_counter: exact ``str -> int`` (default ``cl100k_base``).

    Raises:
        ValueError: generated context without a chat client, or a layout without ``content`` or with an unknown
            part.
    """

    def __init__(
        self, *, breadcrumb: bool = True, neighbour_sentences: int = 1, neighbour_max_tokens: int = 50,
        generated_context: bool = False, chat: ChatClient | None = None, cache: ModelCache | None = None,
        max_context_tokens: int = 100, max_summary_tokens: int = 150, max_embedding_tokens: int = EMBEDDING_MAX_TOKENS,
        layout: Sequence[Sequence[str]] = DEFAULT_LAYOUT, token_counter: Callable[[str], int] | None = None,
    ) -> None:  # fmt: skip
        names = [p for block in layout for p in block]
        if "content" not in names or not set(names) <= _PARTS:
            raise ValueError(f"layout must name content and only {sorted(_PARTS)}, got {layout}")
        if generated_context and chat is None:
            raise ValueError("generated_context needs a chat client")
        self.breadcrumb, self.generated_context = breadcrumb, generated_context
        self.neighbour_sentences, self.neighbour_max_tokens = neighbour_sentences, neighbour_max_tokens
        self.chat, self.cache = chat, cache if cache is not None else MemoryModelCache()
        self.max_context_tokens, self.max_summary_tokens = max_context_tokens, max_summary_tokens
        self.max_embedding_tokens = max_embedding_tokens
        self.layout = tuple(tuple(block) for block in layout)
        self._count = token_counter or _token_counter("cl100k_base")
        self._bounds = Boundaries(SentenceSplitterConfig())

    def config(self) -> dict:
        return {"enrichment": RULES_VERSION, "breadcrumb": self.breadcrumb, "layout": self.layout,
                "neighbour_sentences": self.neighbour_sentences, "neighbour_max_tokens": self.neighbour_max_tokens,
                "generated_context": self.generated_context, "max_embedding_tokens": self.max_embedding_tokens,
                **({"model": self.chat.name, "prompts": [PROMPTS["summary"].version, PROMPTS["situate"].version],
                    "max_context_tokens": self.max_context_tokens, "max_summary_tokens": self.max_summary_tokens}
                   if self.generated_context and self.chat else {})}  # fmt: skip

    def fingerprint(self) -> str:
        return hashlib.sha256(json.dumps(self.config(), sort_keys=True).encode()).hexdigest()[:16]

    def enrich(self, chunks: Sequence[Chunk], *, title: str = "", pages: Sequence[Page] | None = None) -> list[Chunk]:
        """*chunks* with ``metadata["embedding_text"]`` set where the enrichment adds something.

        Args:
            title: the document title for the breadcrumb (e.g. its file name).
            pages: the document, for the summary of the generated context (default: the chunks' text).
        """
        out = list(chunks)
        todo = [i for i, c in enumerate(out) if c.metadata.get("embed", True)]
        previous, following = self._neighbours(out, todo)
        contexts = self._contexts(out, todo, title, pages) if self.generated_context else {}
        for i in todo:
            chunk = out[i]
            trail = [t for t in (title, *chunk.headings) if t]
            parts = {"content": chunk.text, "context": contexts.get(i, ""),
                     "previous": self._tail(previous.get(i, "")), "next": self._head(following.get(i, ""))}
            text = self._fit(parts, trail if self.breadcrumb else [])
            if text != chunk.text:
                out[i] = dataclasses.replace(chunk, metadata={**chunk.metadata, "embedding_text": text})
        return out

    # -- parts -----------------------------------------------------------------------------------------------

    def _neighbours(self, chunks: list[Chunk], todo: list[int]) -> tuple[dict[int, str], dict[int, str]]:
        """Previous/next neighbour sentences by chunk index, among chunks of the same level and kind."""
        if self.neighbour_sentences < 1:
            return {}, {}
        lanes: dict[tuple, list[int]] = {}
        for i in todo:
            lanes.setdefault((chunks[i].metadata.get("level", 0), chunks[i].kind), []).append(i)
        previous, following = {}, {}
        for lane in lanes.values():
            for a, b in zip(lane, lane[1:]):
                previous[b] = " ".join(self._sentences(chunks[a].own_text)[-self.neighbour_sentences :])
                following[a] = " ".join(self._sentences(chunks[b].own_text)[: self.neighbour_sentences])
        return previous, following

    def _sentences(self, text: str) -> list[str]:
        return [s for a, b in sentence_spans(text, 0, len(text), self._bounds) if (s := " ".join(text[a:b].split()))]

    def _tail(self, text: str) -> str:
        """The end of *text* within ``neighbour_max_tokens``, starting at a word."""
        if not text or self._count(text) <= self.neighbour_max_tokens:
            return text
        lo, hi = 0, len(text)  # smallest start whose suffix fits
        while lo < hi:
            mid = (lo + hi) // 2
            if self._count(text[mid:]) <= self.neighbour_max_tokens:
                hi = mid
            else:
                lo = mid + 1
        space = text.find(" ", lo)
        return text[space + 1 :] if 0 <= space < len(text) - 1 else text[lo:]

    def _head(self, text: str, cap: int | None = None) -> str:
        """The start of *text* within *cap* tokens (default ``neighbour_max_tokens``), ending at a word."""
        cap = self.neighbour_max_tokens if cap is None else cap
        if not text or self._count(text) <= cap:
            return text
        lo, hi = 0, min(len(text), 16 * cap)  # largest end whose prefix fits (a token is rarely > 16 chars)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self._count(text[:mid]) <= cap:
                lo = mid
            else:
                hi = mid - 1
        space = text.rfind(" ", 0, lo + 1)
        return text[:space] if space > 0 else text[:lo]

    def _contexts(self, chunks: list[Chunk], todo: list[int], title: str,
                  pages: Sequence[Page] | None) -> dict[int, str]:
        """Generated situating sentences by chunk index; a failed or invalid one is left out."""
        assert self.chat is not None
        whole = DocumentText(pages) if pages else None
        doc = whole.slice(whole.start, whole.end) if whole else "\n".join(c.text for c in chunks)
        summary_prompt, situate = PROMPTS["summary"], PROMPTS["situate"]
        excerpt = self._head(doc, 2000)
        params = {"max_summary_tokens": self.max_summary_tokens}
        task = ChatTask("summary", summary_prompt.version, excerpt, summary_prompt.messages(
            section("document", excerpt), **params), params, max_tokens=2 * self.max_summary_tokens)  # fmt: skip
        (summary,) = run_chat_tasks(self.chat, self.cache, [task], 1)
        if isinstance(summary, Exception) or not summary.strip():
            return {}
        params = {"max_context_tokens": self.max_context_tokens}
        tasks = []
        for i in todo:
            user = "\n".join([section("summary", summary.strip()), section("headings", "\n".join(chunks[i].headings)),
                              section("chunk", chunks[i].text)])  # fmt: skip
            tasks.append(ChatTask("situate", situate.version, f"{title}\n{user}", situate.messages(user, **params),
                                  params, max_tokens=2 * self.max_context_tokens))  # fmt: skip
        answers = run_chat_tasks(self.chat, self.cache, tasks)
        return {i: a.strip() for i, a in zip(todo, answers)
                if isinstance(a, str) and a.strip() and self._count(a.strip()) <= self.max_context_tokens}

    # -- layout and limit ------------------------------------------------------------------------------------

    def _render(self, parts: dict[str, str], trail: list[str]) -> str:
        values = {**parts, "breadcrumb": " › ".join(trail)}
        blocks = ["\n".join(v for name in block if (v := values.get(name, ""))) for block in self.layout]
        return "\n\n".join(b for b in blocks if b)

    def _fit(self, parts: dict[str, str], trail: list[str]) -> str:
        """Render within ``max_embedding_tokens``: drop context, then neighbours, then breadcrumb elements from
        the left; the content alone is the last resort."""
        attempts = [dict(parts), {**parts, "context": ""}, {**parts, "context": "", "previous": "", "next": ""}]
        for attempt in attempts:
            text = self._render(attempt, trail)
            if self._count(text) <= self.max_embedding_tokens:
                return text
        bare = attempts[-1]
        for k in range(1, len(trail) + 1):
            text = self._render(bare, trail[k:])
            if self._count(text) <= self.max_embedding_tokens:
                return text
        return parts["content"]
