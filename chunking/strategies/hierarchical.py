"""Hierarchical chunking: the same document at several granularities, each chunk linked to its parent
(docs/splitters.md#hierarchical), as LlamaIndex's ``HierarchicalNodeParser`` does, with every level split
*within* its parent's span.

1. Level 0 splits the whole document; level ``l + 1`` splits each chunk of level ``l`` on its own (the pages cut
   to the parent's own span), so children never cross a parent boundary and partition it (modulo whitespace).
2. A level's splitter is one of ``LEVEL_SPLITTERS``: ``sections`` (Markdown heading sections when the format has
   headings, each then sentence-split to the cap), ``sentence`` (the sentence splitter at the cap, without
   look-ahead or hard-cut overlap, so children do not repeat each other), ``sentences`` (one chunk per sentence:
   the sentence-window variant of small-to-big).
3. Chunks come out in pre-order (a parent, then its subtree) with ``metadata``: ``level``, ``path`` (ordinals
   from the top: ``[2, 0, 3]``), ``embed`` (the level is in ``embed_levels``). ``chunking.documents.records`` turns the
   path into the key ``{doc_id}-{version8}-{level}-{path}`` and the parent's key into ``parent_id``.
4. A ``figure_part`` (a piece of a figure over 8,191 tokens) is not re-wrapped and gets no children.

The record field ``ordinal`` stays the position in the document (pre-order), as every other splitter's; the
ordinal within the parent is the last element of ``path`` and of the key.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from typing import Callable, Collection, Iterable, Sequence

from chunking.model import Chunk, Page
from chunking.splitters import SentenceTextSplitter
from chunking.splitters.markdown import HeadingOutline
from chunking.strategies.units import DocumentText, sentence_units
from chunking.tokens import token_counter as _token_counter

__all__ = ["LEVEL_SPLITTERS", "HierarchicalChunker", "Level"]

LEVEL_SPLITTERS = ("sections", "sentence", "sentences")
RULES_VERSION = 1


@dataclass(frozen=True)
class Level:
    """One granularity.

    Attributes:
        max_tokens: token cap of the level's chunks (figures excepted, as in the sentence splitter).
        splitter: one of ``LEVEL_SPLITTERS`` (default ``"sentence"``).
    """

    max_tokens: int
    splitter: str = "sentence"

    def __post_init__(self) -> None:
        if self.max_tokens < 1 or self.splitter not in LEVEL_SPLITTERS:
            raise ValueError(f"a level needs max_tokens ≥ 1 and a splitter in {LEVEL_SPLITTERS}, got {self}")


#: Defaults (docs/splitters.md#hierarchical): sections (or 2,000 tokens), 500, 128.
DEFAULT_LEVELS = (Level(2000, "sections"), Level(500), Level(128))


class HierarchicalChunker:
    """Chunks at several linked granularities (module docstring).

    Args:
        levels: top first (default ``DEFAULT_LEVELS``).
        embed_levels: the level numbers whose chunks get a vector (default: all); the others are stored without
            one, to be fetched by id (small-to-big parents).
        headings: whether ``#`` lines are headings (Markdown, and HTML/DOCX as parsed); ``sections`` levels cut at
            them and every chunk carries its heading path.
        token_counter: exact ``str -> int`` (default ``cl100k_base``).

    Raises:
        ValueError: no levels, or an ``embed_levels`` entry that is not a level.

    Example:
        >>> chunker = HierarchicalChunker([Level(40), Level(12)])
        >>> [(c.metadata["level"], c.metadata["path"], c.text) for c in chunker.split_text("One two. Three four.")]
        [(0, [0], 'One two. Three four.'), (1, [0, 0], 'One two. Three four.')]
    """

    def __init__(self, levels: Sequence[Level] = DEFAULT_LEVELS, *, embed_levels: Collection[int] | None = None,
                 headings: bool = False, token_counter: Callable[[str], int] | None = None) -> None:
        if not levels:
            raise ValueError("a hierarchy needs at least one level")
        self.levels = tuple(levels)
        self.embed_levels = frozenset(range(len(self.levels)) if embed_levels is None else embed_levels)
        if not self.embed_levels <= set(range(len(self.levels))):
            raise ValueError(f"embed_levels {sorted(self.embed_levels)} name levels that do not exist")
        self.headings = headings
        self._count = token_counter or _token_counter("cl100k_base")

    def config(self) -> dict:
        return {"strategy": "hierarchical", "rules": RULES_VERSION, "headings": self.headings,
                "levels": [[lv.splitter, lv.max_tokens] for lv in self.levels],
                "embed_levels": sorted(self.embed_levels)}  # fmt: skip

    def fingerprint(self) -> str:
        return hashlib.sha256(json.dumps(self.config(), sort_keys=True).encode()).hexdigest()[:16]

    def split_text(self, text: str) -> list[Chunk]:
        return self.split_pages([Page(0, 0, text)])

    def split_pages(self, pages: Iterable[Page]) -> list[Chunk]:
        """Every level's chunks in pre-order (module docstring, step 3)."""
        pages = list(pages)
        doc = DocumentText(pages)
        outline = None
        if self.headings:
            outline = HeadingOutline(doc.pages)
        out: list[Chunk] = []

        def descend(depth: int, start: int, end: int, path: list[int], headings: tuple[str, ...]) -> None:
            level = self.levels[depth]
            for k, child in enumerate(self._split(level, doc, start, end, headings, outline)):
                meta = {"strategy": "hierarchical", "level": depth, "path": [*path, k],
                        "embed": depth in self.embed_levels}  # fmt: skip
                out.append(dataclasses.replace(child, metadata={**child.metadata, **meta}))
                if depth + 1 < len(self.levels) and child.kind != "figure_part":
                    descend(depth + 1, child.char_start, child.char_end, [*path, k], child.headings)

        if doc.pages:
            descend(0, doc.start, doc.end, [], ())
        return out

    def _split(self, level: Level, doc: DocumentText, start: int, end: int, headings: tuple[str, ...],
               outline) -> list[Chunk]:
        if level.splitter == "sentences":
            units = sentence_units(doc.sub_pages(start, end), max_unit_tokens=level.max_tokens, count=self._count,
                                   overlap_percent=0)
            return [doc.chunk(u.start, u.end, self._count, kind=_unit_kind(u.kind), headings=headings,
                              text=u.text) for u in units]  # fmt: skip
        if level.splitter == "sections" and outline is not None:
            offsets = [o for page in doc.sub_pages(start, end) for o in outline.offsets_in(page)]
            bounds = sorted({start, *offsets, end})
            return [c for a, b in zip(bounds, bounds[1:])
                    for c in self._sentence_split(doc, a, b, level.max_tokens, outline.path_at(a))]  # fmt: skip
        return self._sentence_split(doc, start, end, level.max_tokens, headings)

    def _sentence_split(self, doc: DocumentText, start: int, end: int, max_tokens: int,
                        headings: tuple[str, ...]) -> list[Chunk]:
        # No look-ahead and no overlap at hard cuts: siblings share no text, so they partition their parent.
        splitter = SentenceTextSplitter(max_tokens=max_tokens, max_chars=4 * max_tokens, semantic_overlap_percent=0,
                                        split_overlap_percent=0, token_counter=self._count)
        return [dataclasses.replace(c, headings=headings) for c in splitter.split_pages(doc.sub_pages(start, end))]


def _unit_kind(kind: str) -> str:
    return "text" if kind == "sentence" else kind
