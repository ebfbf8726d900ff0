"""Semantic chunking: cut where the meaning of consecutive sentence windows shifts (docs/splitters.md#semantic),
after Greg Kamradt's "5 Levels of Text Splitting" (percentile breakpoints over the cosine distances of
buffered sentence windows), with the threshold types LangChain's ``SemanticChunker`` offers and a deterministic
size repair.

1. Units: sentences and figure blocks (``text.sentence_units``; a sentence over ``max_chunk_tokens`` is cut by
   the sentence splitter's step 4, a figure over 8,191 tokens by its step 5).
2. Window ``w_i`` = units ``i − b … i + b`` (clipped at the ends, and narrowed if over 8,191 tokens) as the
   document slice; ``d_i = 1 − cos(e(w_i), e(w_{i+1}))``. Windows are embedded in batches through the cache.
3. Threshold over all ``d`` (``THRESHOLD_TYPES``); a cut after unit ``i`` when ``d_i > threshold`` (for
   ``gradient``: when the gradient of ``d`` at ``i`` exceeds the percentile of the gradient).
4. Size repair (``repair.repair_sizes``): over ``max_chunk_tokens`` → cut at the largest internal distance;
   under ``min_chunk_tokens`` → merge across the smaller distance while within the cap.
5. Chunks are verbatim document slices from the first unit of a group to its last, with pages and
   ``metadata["breakpoint_distance"]`` (the distance at the cut that starts the chunk; ``None`` for the first).
6. Fallback: fewer than 3 sentences, or the embedder failing, → the fallback splitter (default
   ``SentenceTextSplitter`` with the same token cap), every chunk marked ``semantic_fallback`` with the reason.
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Callable, Iterable, Sequence

import numpy as np

from chunking.chat.cache import CachedEmbedder, ModelCache
from chunking.embeddings import Embedder, embed_all
from chunking.model import Chunk, Page
from chunking.settings import SEMANTIC_THRESHOLD_TYPES
from chunking.splitters import SentenceTextSplitter
from chunking.strategies.repair import group_tokens, repair_sizes
from chunking.strategies.units import EMBEDDING_MAX_TOKENS, DocumentText, Unit, sentence_units, unit_runs
from chunking.tokens import token_counter as _token_counter

__all__ = ["THRESHOLD_TYPES", "SemanticChunker", "breakpoint_threshold", "window_distances"]

log = logging.getLogger("chunking.strategies")

#: Threshold types and their default amounts (docs/splitters.md#semantic); defined with the settings that name them.
THRESHOLD_TYPES = SEMANTIC_THRESHOLD_TYPES
#: Bump when the chunks change for the same inputs and settings.
RULES_VERSION = 1

Split = Callable[[Sequence[Page]], list[Chunk]]


def breakpoint_threshold(distances: Sequence[float], kind: str, amount: float) -> tuple[np.ndarray, float]:
    """The values compared with the threshold, and the threshold, for *distances* (docs/splitters.md#semantic, item 3).

    ``percentile``: the *amount*-th percentile (linear interpolation); ``standard_deviation``: mean + amount ×
    std (population); ``interquartile``: Q3 + amount × (Q3 − Q1); ``gradient``: the *amount*-th percentile of
    ``numpy.gradient(distances)``, compared with the gradient itself; ``absolute``: *amount*.

    Example: ``breakpoint_threshold([0.1, 0.2, 0.9], "percentile", 50)`` → ``(array([0.1, 0.2, 0.9]), 0.2)``.

    Raises:
        ValueError: unknown *kind*.
    """
    d = np.asarray(distances, dtype=np.float64)
    if kind == "percentile":
        return d, float(np.percentile(d, amount))
    if kind == "standard_deviation":
        return d, float(d.mean() + amount * d.std())
    if kind == "interquartile":
        q1, q3 = np.percentile(d, [25, 75])
        return d, float(q3 + amount * (q3 - q1))
    if kind == "gradient":
        g = np.gradient(d) if d.size > 1 else d
        return g, float(np.percentile(g, amount))
    if kind == "absolute":
        return d, float(amount)
    raise ValueError(f"unknown breakpoint_threshold_type {kind!r}; known: {', '.join(THRESHOLD_TYPES)}")


def window_distances(units: Sequence[Unit], doc: DocumentText, embedder: Embedder, buffer_size: int,
                     count: Callable[[str], int], max_batch_tokens: int, max_inputs: int) -> list[float]:
    """``d_i`` between the windows of units ``i`` and ``i + 1`` (docs/splitters.md#semantic, item 2):
    ``len(units) − 1`` floats.

    A window over 8,191 tokens is narrowed one neighbour at a time (down to the unit alone, which fits).
    Zero vectors (text without words, for a lexical embedder) count as cosine 0, distance 1.
    """
    if len(units) < 2:
        return []
    windows, counts = [], []
    for i in range(len(units)):
        for b in range(buffer_size, -1, -1):
            lo, hi = max(0, i - b), min(len(units) - 1, i + b)
            text = doc.slice(units[lo].start, max(u.end for u in units[lo : hi + 1]))
            n = count(text)
            if n <= EMBEDDING_MAX_TOKENS or b == 0:
                break
        windows.append(text)
        counts.append(max(1, n))
    vectors = np.asarray(embed_all(embedder, windows, counts, max_batch_tokens=max_batch_tokens,
                                   max_inputs=max_inputs), dtype=np.float64)  # fmt: skip
    norms = np.linalg.norm(vectors, axis=1)
    unit_vectors = np.divide(vectors, norms[:, None], out=np.zeros_like(vectors), where=norms[:, None] > 0)
    cosines = np.einsum("ij,ij->i", unit_vectors[:-1], unit_vectors[1:])
    return [float(1.0 - c) for c in cosines]


class SemanticChunker:
    """Split a document where consecutive sentence windows stop being similar (module docstring).

    Args:
        embedder: any ``Embedder``; with *cache*, wrapped in a ``CachedEmbedder`` (each window embedded once).
        buffer_size: neighbours on each side of a sentence in its window (≥ 0; default 1).
        breakpoint_threshold_type: one of ``THRESHOLD_TYPES`` (default ``"percentile"``).
        breakpoint_threshold_amount: the type's amount (default: ``THRESHOLD_TYPES[type]``).
        min_chunk_tokens, max_chunk_tokens: size bounds of the repair, tokens (defaults 100, 500).
        cache: where window vectors are kept (``None``: not kept).
        fallback: ``pages -> chunks`` used when semantic chunking is not possible (default
            ``SentenceTextSplitter(max_tokens=max_chunk_tokens, max_chars=2 × max_chunk_tokens)``).
        token_counter: exact ``str -> int`` (default ``cl100k_base``).
        max_batch_tokens, max_batch_inputs: per-request embedding budgets.

    Raises:
        ValueError: an unknown threshold type, ``buffer_size < 0``, or bounds out of order.

    Example:
        >>> from chunking.embeddings import OfflineLexicalEmbedder
        >>> chunker = SemanticChunker(OfflineLexicalEmbedder(), buffer_size=0, min_chunk_tokens=1,
        ...                           max_chunk_tokens=50)
        >>> [c.text for c in chunker.split_text("Cats purr. Cats nap. Cats purr and nap. Rust compiles code. "
        ...                                     "Rust code compiles fast.")]
        ['Cats purr. Cats nap. Cats purr and nap.', 'Rust compiles code. Rust code compiles fast.']
    """

    def __init__(
        self, embedder: Embedder, *, buffer_size: int = 1, breakpoint_threshold_type: str = "percentile",
        breakpoint_threshold_amount: float | None = None, min_chunk_tokens: int = 100, max_chunk_tokens: int = 500,
        cache: ModelCache | None = None, fallback: Split | None = None,
        token_counter: Callable[[str], int] | None = None, max_batch_tokens: int = 16_000,
        max_batch_inputs: int = 256,
    ) -> None:  # fmt: skip
        if breakpoint_threshold_type not in THRESHOLD_TYPES:
            raise ValueError(f"unknown breakpoint_threshold_type {breakpoint_threshold_type!r}; known: "
                             f"{', '.join(THRESHOLD_TYPES)}")
        if buffer_size < 0 or not 0 <= min_chunk_tokens <= max_chunk_tokens or max_chunk_tokens < 1:
            raise ValueError("need buffer_size ≥ 0 and 0 ≤ min_chunk_tokens ≤ max_chunk_tokens (≥ 1), got "
                             f"{buffer_size}, {min_chunk_tokens}, {max_chunk_tokens}")
        self.embedder: Embedder = embedder
        if cache is not None and not isinstance(embedder, CachedEmbedder):
            self.embedder = CachedEmbedder(embedder, cache)
        self.buffer_size = buffer_size
        self.threshold_type = breakpoint_threshold_type
        self.threshold_amount = float(THRESHOLD_TYPES[breakpoint_threshold_type] if breakpoint_threshold_amount
                                      is None else breakpoint_threshold_amount)  # fmt: skip
        self.min_chunk_tokens, self.max_chunk_tokens = min_chunk_tokens, max_chunk_tokens
        self._count = token_counter or _token_counter("cl100k_base")
        self._fallback = fallback or sentence_fallback(max_chunk_tokens)
        self.max_batch_tokens, self.max_batch_inputs = max_batch_tokens, max_batch_inputs

    def config(self) -> dict:
        """Every parameter that shapes the chunks, with the embedding model's name (for the version)."""
        return {"strategy": "semantic", "rules": RULES_VERSION, "embedder": self.embedder.name,
                "buffer_size": self.buffer_size, "threshold_type": self.threshold_type,
                "threshold_amount": self.threshold_amount, "min_chunk_tokens": self.min_chunk_tokens,
                "max_chunk_tokens": self.max_chunk_tokens}  # fmt: skip

    def fingerprint(self) -> str:
        return hashlib.sha256(json.dumps(self.config(), sort_keys=True).encode()).hexdigest()[:16]

    def split_text(self, text: str) -> list[Chunk]:
        """Split one text as page 0 at offset 0."""
        return self.split_pages([Page(0, 0, text)])

    def split_pages(self, pages: Iterable[Page]) -> list[Chunk]:
        """The chunks of *pages*, in document order (module docstring).

        Never raises for an embedding failure (it falls back); raises ``ValueError`` for invalid pages.
        """
        pages = list(pages)
        doc = DocumentText(pages)
        units = sentence_units(pages, max_unit_tokens=self.max_chunk_tokens, count=self._count)
        runs = unit_runs(units)
        segments = [r for r in runs if isinstance(r, list)]
        sentences = sum(len(s) for s in segments)
        if sentences < 3:
            return self._fall_back(pages, f"document too short ({sentences} sentence{'' if sentences == 1 else 's'})")
        try:
            distances = [window_distances(s, doc, self.embedder, self.buffer_size, self._count,
                                          self.max_batch_tokens, self.max_batch_inputs) for s in segments]
        except Exception as exc:  # noqa: BLE001 - any embedder failure means: fall back, and say why
            log.warning("semantic chunking fell back: %s: %s", type(exc).__name__, exc)
            return self._fall_back(pages, f"embedding failed: {type(exc).__name__}: {exc}")
        all_d = [d for ds in distances for d in ds]
        values, threshold = (breakpoint_threshold(all_d, self.threshold_type, self.threshold_amount) if all_d
                             else (np.zeros(0), 0.0))
        chunks: list[Chunk] = []
        offset = 0
        per_segment = iter(distances)
        for run in runs:  # figure parts stand alone; the sentence runs between them are grouped
            if isinstance(run, Unit):
                chunks.append(doc.chunk(run.start, run.end, self._count, kind="figure_part", text=run.text))
                continue
            ds = next(per_segment)
            chunks.extend(self._group(run, ds, values[offset : offset + len(ds)], threshold, doc))
            offset += len(ds)
        return chunks

    def _group(self, units: list[Unit], distances: list[float], values: np.ndarray, threshold: float,
               doc: DocumentText) -> list[Chunk]:
        cuts = [i for i, v in enumerate(values) if v > threshold] if len(units) >= 3 else []
        bounds = [0, *(i + 1 for i in cuts), len(units)]
        groups = list(zip(bounds, bounds[1:]))

        tokens = group_tokens(units, doc, self._count, self.max_chunk_tokens)
        groups = repair_sizes(groups, distances, tokens, min_tokens=self.min_chunk_tokens,
                              max_tokens=self.max_chunk_tokens)
        return [
            doc.chunk(units[i].start, max(u.end for u in units[i:j]), self._count,
                      kind="figure" if any(u.kind == "figure" for u in units[i:j]) else "text",
                      metadata={"strategy": "semantic", "breakpoint_distance": distances[i - 1] if i else None})
            for i, j in groups
        ]

    def _fall_back(self, pages: Sequence[Page], reason: str) -> list[Chunk]:
        return [_mark(c, "semantic_fallback", reason) for c in self._fallback(pages)]


def sentence_fallback(max_tokens: int) -> Split:
    """The sentence splitter at *max_tokens* tokens and ``2 × max_tokens`` characters (the default pairing)."""

    def split(pages: Sequence[Page]) -> list[Chunk]:
        return list(SentenceTextSplitter(max_tokens=max_tokens, max_chars=2 * max_tokens).split_pages(pages))

    return split


def _mark(chunk: Chunk, flag: str, reason: str) -> Chunk:
    """*chunk* with ``metadata[flag] = True`` and ``metadata["fallback_reason"]``."""
    chunk.metadata.update({flag: True, "fallback_reason": reason})
    return chunk
