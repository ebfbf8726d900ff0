"""Small-to-big retrieval: search the small chunks, hand over the big ones that contain the matches
(docs/splitters.md#small-to-big-and-sentence-window), after LangChain's ``ParentDocumentRetriever`` and LlamaIndex's
``AutoMergingRetriever`` / sentence-window retrieval, over any ``IndexSearcher``.

``ParentDocumentRetriever.retrieve(query)``:

1. Search ``child_k`` records (hybrid: keywords, and the query vector when an embedder is given), optionally only
   ``child_levels``.
2. Map each hit to what is returned:
   - default: its parent (``parent_id``); a hit without a parent is returned as itself; a hit whose parent is
     not in the index is returned as itself and logged;
   - ``auto_merge_ratio``: a parent replaces its children only when at least that share of its children are
     hits, repeated upwards (hierarchies); other hits are returned as themselves;
   - ``window``: the hit's sentences ``i − window … i + window`` among its siblings (same parent), as text; a
     hit without a parent (a top-level chunk) is returned as itself.
3. Score = the best score of its hits; order by score, then by first hit; never the same record twice.
4. Stop at ``max_parents`` results or when the next would exceed ``parent_token_budget`` (the first is always
   returned). Every result lists the matching children with their offsets, for highlighting and citation.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Collection, Sequence

from chunking.embeddings import Embedder
from chunking.index.protocol import IndexSearcher, SearchHit
from chunking.model import ChunkRecord
from chunking.retrieval import search

__all__ = ["ChildMatch", "ParentDocumentRetriever", "RetrievedContext"]

log = logging.getLogger("chunking.strategies")


@dataclass(frozen=True)
class ChildMatch:
    """A matching child: its id, score and own document span (``char_start``/``char_end``)."""

    id: str
    score: float
    char_start: int
    char_end: int


@dataclass(frozen=True)
class RetrievedContext:
    """One result: the record returned (a parent, or a hit itself), its score, the text to hand over (the
    record's content, or the sentence window) and the matching children, best first."""

    record: ChunkRecord
    score: float
    text: str
    children: tuple[ChildMatch, ...]


class ParentDocumentRetriever:
    """Retrieve small, return big (module docstring).

    Args:
        index: any ``IndexSearcher`` (``LocalIndex``, ``AzureSearchIndex``).
        embedder: embeds the query for the vector leg (``None``: keyword search only).
        child_k: hits searched (default 20). max_parents: results returned at most (default 5).
        parent_token_budget: total ``token_count`` of the results at most (``None``: unbounded).
        child_levels: search only these levels (``None``: all).
        auto_merge_ratio: see step 2 (``None``: always the parent).
        window: sentence-window size ``k`` (0: off).
        search_filter: an OData filter for the child search (``chunking.index.odata``: metadata, security
            trimming); parents are of the same documents, so they pass it too.

    Raises:
        ValueError: a count < 1, a ratio outside (0, 1], or a negative window.
    """

    def __init__(
        self, index: IndexSearcher, embedder: Embedder | None = None, *, child_k: int = 20, max_parents: int = 5,
        parent_token_budget: int | None = None, child_levels: Collection[int] | None = None,
        auto_merge_ratio: float | None = None, window: int = 0, search_filter: str | None = None,
    ) -> None:  # fmt: skip
        if child_k < 1 or max_parents < 1 or window < 0 or (auto_merge_ratio is not None and
                                                            not 0 < auto_merge_ratio <= 1):  # fmt: skip
            raise ValueError("need child_k, max_parents ≥ 1, window ≥ 0 and auto_merge_ratio in (0, 1]")
        self.index, self.embedder = index, embedder
        self.child_k, self.max_parents, self.budget = child_k, max_parents, parent_token_budget
        self.child_levels, self.ratio, self.window = child_levels, auto_merge_ratio, window
        self.search_filter = search_filter

    def retrieve(self, query: str) -> list[RetrievedContext]:
        """The contexts for *query*, best first (module docstring). The child search is
        ``chunking.retrieval.search``'s, so a child scores what ``chunking search`` gives it."""
        hits = search(query, index=self.index, embedder=self.embedder, k=self.child_k,
                      ranking="hybrid" if self.embedder is not None and query.strip() else "bm25",
                      levels=self.child_levels, filter=self.search_filter)
        return self.from_hits(hits)

    def from_hits(self, hits: Sequence[SearchHit]) -> list[RetrievedContext]:
        """The contexts for child *hits* (best first) already searched: steps 2 to 4 of the module docstring."""
        if self.window:
            groups = self._windows(hits)
        elif self.ratio is not None:
            groups = self._auto_merge(hits)
        else:
            groups = self._parents(hits)
        return self._limit(groups)

    # -- step 2 ----------------------------------------------------------------------------------------------

    def _parents(self, hits: Sequence[SearchHit]) -> list[tuple[ChunkRecord, str, list[SearchHit]]]:
        wanted = {h.record.parent_id for h in hits if h.record.parent_id}
        parents = self.index.records_by_id(wanted) if wanted else {}
        groups: dict[str, tuple[ChunkRecord, str, list[SearchHit]]] = {}
        for hit in hits:
            target = hit.record
            if hit.record.parent_id:
                if hit.record.parent_id in parents:
                    target = parents[hit.record.parent_id]
                else:
                    log.warning("parent %s of %s is missing: returning the child", hit.record.parent_id,
                                hit.record.id)
            groups.setdefault(target.id, (target, target.content, []))[2].append(hit)
        return list(groups.values())

    def _auto_merge(self, hits: Sequence[SearchHit]) -> list[tuple[ChunkRecord, str, list[SearchHit]]]:
        family = self._family({h.record.doc_id for h in hits})
        children: dict[str, set[str]] = {}
        for record in family.values():
            if record.parent_id:
                children.setdefault(record.parent_id, set()).add(record.id)
        current: dict[str, list[SearchHit]] = {}  # record id -> the original hits it stands for
        for hit in hits:
            current.setdefault(hit.record.id, []).append(hit)
        changed = True
        while changed:  # merge upwards until no parent reaches the ratio
            changed = False
            by_parent: dict[str, list[str]] = {}
            for rid in current:
                parent = family.get(rid).parent_id if rid in family else None
                if parent and parent in family:
                    by_parent.setdefault(parent, []).append(rid)
            for parent, ids in by_parent.items():
                if len(ids) / len(children[parent]) >= self.ratio:  # the parent may be a (keyword) hit itself
                    current[parent] = current.get(parent, []) + [h for rid in ids for h in current.pop(rid)]
                    changed = True
        return [(family.get(rid) or hs[0].record, (family.get(rid) or hs[0].record).content, hs)
                for rid, hs in current.items()]  # fmt: skip

    def _windows(self, hits: Sequence[SearchHit]) -> list[tuple[ChunkRecord, str, list[SearchHit]]]:
        family = self._family({h.record.doc_id for h in hits})
        siblings: dict[str | None, list[ChunkRecord]] = {}
        for record in family.values():
            siblings.setdefault(record.parent_id, []).append(record)
        for group in siblings.values():
            group.sort(key=lambda r: (r.version, r.char_start, r.ordinal))
        out: list[tuple[ChunkRecord, str, list[SearchHit]]] = []
        covered: set[str] = set()
        for hit in hits:
            if hit.record.id in covered:
                continue  # already inside a returned window
            if not hit.record.parent_id:  # a top-level chunk, not a sentence: its neighbours are no window
                out.append((hit.record, hit.record.content, [hit]))
                covered.add(hit.record.id)
                continue
            row = [r for r in siblings.get(hit.record.parent_id, []) if r.version == hit.record.version]
            i = next((n for n, r in enumerate(row) if r.id == hit.record.id), None)
            if i is None:
                out.append((hit.record, hit.record.content, [hit]))
                continue
            span = row[max(0, i - self.window) : i + self.window + 1]
            covered.update(r.id for r in span)
            parent = family.get(hit.record.parent_id or "")
            out.append((hit.record, _window_text(span, parent), [hit]))
        return out

    def _family(self, doc_ids: Collection[str]) -> dict[str, ChunkRecord]:
        return {r.id: r for d in sorted(doc_ids) for r in self.index.records_of(d)}

    # -- steps 3 and 4 ---------------------------------------------------------------------------------------

    def _limit(self, groups: list[tuple[ChunkRecord, str, list[SearchHit]]]) -> list[RetrievedContext]:
        # Hits come best first, so a group's first hit is its best one; ties keep the order of first hits.
        ranked = sorted(enumerate(groups), key=lambda item: (-max(h.score for h in item[1][2]), item[0]))
        out: list[RetrievedContext] = []
        used = 0
        for _, (record, text, hits) in ranked:
            if len(out) == self.max_parents:
                break
            if out and self.budget is not None and used + record.token_count > self.budget:
                break
            used += record.token_count
            matches = tuple(ChildMatch(h.record.id, h.score, h.record.char_start, h.record.char_end)
                            for h in sorted(hits, key=lambda h: -h.score))
            out.append(RetrievedContext(record, max(h.score for h in hits), text, matches))
        return out


def _window_text(span: Sequence[ChunkRecord], parent: ChunkRecord | None) -> str:
    """The text from the first to the last sentence of *span*: the parent's content sliced by offsets when the
    parent holds its span verbatim (one character per offset), else the sentences joined by a space."""
    if parent is not None and len(parent.content) == parent.char_end - parent.char_start:
        return parent.content[span[0].char_start - parent.char_start : span[-1].char_end - parent.char_start]
    return " ".join(r.content for r in span)
