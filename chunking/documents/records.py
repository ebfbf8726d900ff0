"""Turn a document's chunks into search-index records (``ChunkRecord``): keys, page citations, heading paths."""

from __future__ import annotations

import dataclasses
from typing import Sequence

from chunking.ids import chunk_id, content_hash
from chunking.model import Chunk, ChunkRecord, DocumentFields
from chunking.splitters.markdown import HeadingOutline

__all__ = ["build_records", "hierarchical_id"]

def hierarchical_id(document_id: str, version: str, level: int, path: Sequence[int]) -> str:
    """Search key of a chunk in a hierarchy (docs/splitters.md#hierarchical): ``{doc_id}-{version8}-{level}-{path}``,
    the path being the ordinals from the top joined by ``_`` (key characters only: letters, digits, ``_``, ``-``).

    Example: ``hierarchical_id("dabc", "0123456789", 2, [3, 0, 1])`` → ``"dabc-01234567-2-3_0_1"``.
    """
    return f"{document_id}-{version[:8]}-{level}-{'_'.join(str(int(p)) for p in path)}"


def build_records(
    chunks: Sequence[Chunk],
    *,
    doc_id: str,
    version: str,
    source: str,
    paginated: bool,
    outline: HeadingOutline | None = None,
    namespace: str = "",
    fields: DocumentFields | None = None,
    first_ordinal: int = 0,
) -> list[ChunkRecord]:
    """Index records for the chunks of one document version, in order (ordinal = *first_ordinal* + position: a
    page range of a long document continues the ordinals of the ranges before it).

    ``sourcepage`` is ``source#page=N`` with N 1-based for paginated formats (PDF), else ``source``. A chunk's
    ``headings`` are its own (from the splitter) or, failing that, the outline's path at its ``char_start``.

    Strategy metadata (``chunking.strategies``) shapes the rest: ``path`` (ordinals from the top of a hierarchy)
    and ``level`` give the key ``hierarchical_id`` and the parent's key as ``parent_id``; ``embed: False``
    stores the record without a vector; *namespace* is the writing deployment's (``chunking.pipeline.namespaces``);
    ``embedding_text`` (when it differs from the text) is what stage 2
    embeds, its hash the key for reusing the vector. A chunk of kind ``proposition`` keeps that kind.

    *fields* (title, storage URL, metadata, access lists …: ``chunking.documents.fields``) go on every record.
    """
    shared = {f.name: getattr(fields, f.name) for f in dataclasses.fields(fields)} if fields else {}
    records = []
    for ordinal, chunk in enumerate(chunks, first_ordinal):
        headings = chunk.headings or (outline.path_at(chunk.char_start) if outline else ())
        meta = chunk.metadata
        path, level = meta.get("path"), int(meta.get("level", 0))
        embedding_text = meta.get("embedding_text", "")
        embedding_text = "" if embedding_text == chunk.text else embedding_text
        records.append(
            ChunkRecord(
                id=hierarchical_id(doc_id, version, level, path) if path else chunk_id(doc_id, version, ordinal),
                doc_id=doc_id,
                version=version,
                source=source,
                sourcepage=f"{source}#page={chunk.page_start + 1}" if paginated else source,
                ordinal=ordinal,
                page_start=chunk.page_start,
                page_end=chunk.page_end,
                char_start=chunk.char_start,
                char_end=chunk.char_end,
                content=chunk.text,
                content_hash=content_hash(chunk.text),
                token_count=chunk.token_count,
                headings=tuple(headings),
                parent_id=hierarchical_id(doc_id, version, level - 1, path[:-1]) if path and len(path) > 1 else None,
                level=level,
                kind="proposition" if chunk.kind == "proposition" else "text",
                embedding_text=embedding_text,
                embedding_hash=content_hash(embedding_text) if embedding_text else "",
                has_vector=bool(meta.get("embed", True)),
                namespace=namespace,
                **shared,
            )
        )
    return records
