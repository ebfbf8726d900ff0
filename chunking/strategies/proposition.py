"""Proposition chunking: an LLM rewrites each passage into atomic, self-contained statements, which are indexed
as children of their passage (docs/splitters.md#propositions), after Chen et al. 2023, "Dense X Retrieval:
What Retrieval Granularity Should We Use?" (propositions as retrieval units).

1. Passages: the passage splitter (default: the sentence splitter at ``passage_max_tokens``, no look-ahead).
2. One chat call per passage (cached, temperature 0) asking for ``{"propositions": [...]}``.
3. Validation (``parse_propositions``): JSON; a list of non-empty strings; each ≤ ``max_proposition_tokens``;
   at most ``max_propositions``. Grounding: a proposition whose words (alphanumeric runs, case-folded; each
   CJK character a word) are less than ``min_grounding`` present in the passage is dropped and counted.
4. Output, per passage in order: the passage (level 0, stored without a vector: retrieval returns it), then
   its propositions (level 1, ``kind="proposition"``, not verbatim, offsets and pages of the passage).
5. Fallback, per passage: a failed call, invalid output or no grounded proposition → the passage's sentences
   (docs/splitters.md#sentence-end; one over the cap cut by docs/splitters.md#step-4-oversize-span) with
   ``proposition_fallback``.

Nothing of the source is lost: the passages cover the document whatever the model answers.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Callable, Iterable, Sequence

from chunking.chat import ChatClient, ChatTask, InvalidOutput, json_list, run_chat_tasks
from chunking.chat.cache import MemoryModelCache, ModelCache
from chunking.model import Chunk, Page
from chunking.splitters import SentenceTextSplitter
from chunking.splitters.sentence.boundaries import Boundaries
from chunking.splitters.sentence.config import SentenceSplitterConfig
from chunking.splitters.sentence.oversize import cut_oversize
from chunking.strategies.prompts import PROMPTS, section
from chunking.strategies.units import sentence_spans
from chunking.tokens import token_counter as _token_counter

__all__ = ["PropositionChunker", "grounding", "parse_propositions"]

RULES_VERSION = 1
_WORD = re.compile(r"[^\W_]+")
_CJK = re.compile(r"[\u2e80-\u2fdf\u3005-\u3007\u3040-\u30ff\u3100-\u312f\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff"
                  r"\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0002fa1f]")
Split = Callable[[Sequence[Page]], list[Chunk]]


def _words(text: str) -> list[str]:
    out: list[str] = []
    for word in _WORD.findall(text.casefold()):
        out.extend(list(word) if _CJK.search(word) else [word])
    return out


def grounding(proposition: str, passage: str) -> float:
    """Share of *proposition*'s words found among *passage*'s words (0.0 when it has none).

    Example: ``grounding("The headset costs 3,499 dollars", "It costs 3,499 dollars.")`` → 4 / 6 (``costs``,
    ``3``, ``499``, ``dollars`` are in the passage; ``the`` and ``headset`` are not).
    """
    words = _words(proposition)
    if not words:
        return 0.0
    known = set(_words(passage))
    return sum(1 for w in words if w in known) / len(words)


def parse_propositions(answer: str, passage: str, *, max_propositions: int, max_proposition_tokens: int,
                       min_grounding: float, count: Callable[[str], int]) -> tuple[list[str], int]:
    """Validate a model *answer* for *passage* (module docstring, step 3).

    Returns:
        the grounded propositions (stripped), and how many were dropped as ungrounded.

    Raises:
        InvalidOutput: the answer breaks a rule, or no proposition is grounded.
    """
    items = json_list(answer, "propositions")
    if not items or len(items) > max_propositions:
        raise InvalidOutput(f"{len(items)} propositions (allowed 1 to {max_propositions})")
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, str) or not item.strip():
            raise InvalidOutput(f"proposition {i} is not a non-empty string")
        if count(item.strip()) > max_proposition_tokens:
            raise InvalidOutput(f"proposition {i} has {count(item.strip())} tokens (cap {max_proposition_tokens})")
        out.append(item.strip())
    grounded = [p for p in out if grounding(p, passage) >= min_grounding]
    if not grounded:
        raise InvalidOutput(f"none of {len(out)} propositions is grounded in the passage")
    return grounded, len(out) - len(grounded)


class PropositionChunker:
    """Passages and their propositions (module docstring).

    Args:
        chat: the ``ChatClient`` (``OfflineChatClient`` runs without a model).
        cache: where answers are kept (default: in memory, for this object's life).
        passage_max_tokens: token cap of a passage (default 400).
        max_propositions: per passage (default 30). max_proposition_tokens: per proposition (default 100).
        min_grounding: the share of a proposition's words that must occur in its passage (default 0.6).
        max_concurrency: chat calls in flight at once (default 4).
        passage_splitter: ``pages -> chunks`` making the passages (default: sentence splitter, no look-ahead).
        token_counter: exact ``str -> int`` (default ``cl100k_base``).

    Raises:
        ValueError: a cap < 1 or ``min_grounding`` outside [0, 1].
    """

    def __init__(
        self, chat: ChatClient, *, cache: ModelCache | None = None, passage_max_tokens: int = 400,
        max_propositions: int = 30, max_proposition_tokens: int = 100, min_grounding: float = 0.6,
        max_concurrency: int = 4, passage_splitter: Split | None = None,
        token_counter: Callable[[str], int] | None = None,
    ) -> None:  # fmt: skip
        if min(passage_max_tokens, max_propositions, max_proposition_tokens) < 1 or not 0 <= min_grounding <= 1:
            raise ValueError("caps must be ≥ 1 and min_grounding in [0, 1]")
        self.chat, self.cache = chat, cache if cache is not None else MemoryModelCache()
        self.passage_max_tokens = passage_max_tokens
        self.max_propositions, self.max_proposition_tokens = max_propositions, max_proposition_tokens
        self.min_grounding, self.max_concurrency = min_grounding, max_concurrency
        self._count = token_counter or _token_counter("cl100k_base")
        self._passages = passage_splitter or _plain_sentences(passage_max_tokens)
        self._bounds = Boundaries(SentenceSplitterConfig())
        self.prompt = PROMPTS["propositions"]

    def config(self) -> dict:
        """Every parameter that shapes the chunks, with model name and prompt version (for the version)."""
        return {"strategy": "propositions", "rules": RULES_VERSION, "model": self.chat.name,
                "prompt": self.prompt.version, "passage_max_tokens": self.passage_max_tokens,
                "max_propositions": self.max_propositions, "max_proposition_tokens": self.max_proposition_tokens,
                "min_grounding": self.min_grounding}  # fmt: skip

    def fingerprint(self) -> str:
        return hashlib.sha256(json.dumps(self.config(), sort_keys=True).encode()).hexdigest()[:16]

    def split_text(self, text: str) -> list[Chunk]:
        return self.split_pages([Page(0, 0, text)])

    def split_pages(self, pages: Iterable[Page]) -> list[Chunk]:
        """Passage, its propositions, next passage, … (module docstring). Never raises for a model failure."""
        passages = self._passages(list(pages))
        params = {"max_propositions": self.max_propositions, "max_proposition_tokens": self.max_proposition_tokens}
        tasks = [
            ChatTask("propositions", self.prompt.version, p.text, self.prompt.messages(section("passage", p.text),
                     **params), params, max_tokens=min(4096, 64 + self.max_propositions * self.max_proposition_tokens),
                     response_format={"type": "json_object"})
            for p in passages
        ]  # fmt: skip
        answers = run_chat_tasks(self.chat, self.cache, tasks, self.max_concurrency)
        chunks: list[Chunk] = []
        for n, (passage, answer) in enumerate(zip(passages, answers)):
            meta: dict = {"strategy": "propositions", "level": 0, "path": [n], "embed": False}
            try:
                if isinstance(answer, Exception):
                    raise InvalidOutput(f"call failed: {type(answer).__name__}: {answer}")
                props, dropped = parse_propositions(
                    answer, passage.text, max_propositions=self.max_propositions,
                    max_proposition_tokens=self.max_proposition_tokens, min_grounding=self.min_grounding,
                    count=self._count)  # fmt: skip
                meta["propositions_dropped"] = dropped
            except InvalidOutput as exc:
                props = self._sentences(passage.text)
                meta.update({"proposition_fallback": True, "fallback_reason": f"propositions: {exc}"})
            chunks.append(_with(passage, meta))
            for k, prop in enumerate(props):
                chunks.append(Chunk(
                    text=prop, char_start=passage.char_start, char_end=passage.char_end,
                    page_start=passage.page_start, page_end=passage.page_end, token_count=self._count(prop),
                    kind="proposition", headings=passage.headings,
                    metadata={"strategy": "propositions", "level": 1, "path": [n, k],
                              **({"proposition_fallback": True} if meta.get("proposition_fallback") else {})},
                ))  # fmt: skip
        return chunks

    def _sentences(self, text: str) -> list[str]:
        """The fallback propositions: *text*'s sentences, each cut to ``max_proposition_tokens``."""
        out = []
        for a, b in sentence_spans(text, 0, len(text), self._bounds):
            for piece in cut_oversize(text, a, b, max_tokens=self.max_proposition_tokens, hard_chars=10**9,
                                      overlap_fraction=0.0, boundaries=self._bounds, count=self._count):
                if text[piece.start : piece.end].strip():
                    out.append(text[piece.start : piece.end])
        return out


def _with(chunk: Chunk, metadata: dict) -> Chunk:
    import dataclasses

    return dataclasses.replace(chunk, metadata={**chunk.metadata, **metadata})


def _plain_sentences(max_tokens: int) -> Split:
    """The sentence splitter at *max_tokens* with no look-ahead (a passage holds only its own text)."""

    def split(pages: Sequence[Page]) -> list[Chunk]:
        splitter = SentenceTextSplitter(max_tokens=max_tokens, max_chars=4 * max_tokens, semantic_overlap_percent=0)
        return list(splitter.split_pages(pages))

    return split
