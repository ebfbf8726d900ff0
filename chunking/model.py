"""The data that flows through the pipeline: pages in, chunks out, index records stored.

Field names are the index schema's (docs/architecture.md#ids-and-keys, docs/splitters.md#what-a-chunk-carries);
every offset is in characters (Python ``len``, code points) of the document text, every page number is 0-based.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping

__all__ = ["DOCUMENT_FIELDS", "EVERYONE", "SOURCE_FIELDS", "Chunk", "ChunkKind", "ChunkRecord", "Document",
           "DocumentFields", "Page", "SourceProperties", "acl_values", "iso_utc"]

#: ``proposition``: a generated statement (not verbatim), see ``chunking.strategies.proposition``.
ChunkKind = Literal["text", "figure", "figure_part", "proposition"]


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a parsed document.

    Attributes:
        page_num: 0-based page number, strictly increasing along a document.
        offset: character offset of ``text[0]`` in the document text; the page texts concatenated (with any
            gaps) are the text that chunk offsets refer to. Example: pages ``"ab"`` and ``"cd"`` have offsets
            0 and 2.
        text: the page's text (HTML ``<figure>`` blocks for tables and images are part of it).
        header, footer: page furniture (running header or footer, bare page number; all of a
            table-of-contents page) cut from the top and the bottom of the page and kept out of ``text`` (docs/splitters.md#page-furniture). They still count in
            the document text: ``header`` ends at ``offset``, ``footer`` starts at ``offset + len(text)``, so
            chunk offsets never move when furniture is recognised. ``""`` for formats without pages.
    """

    page_num: int
    offset: int
    text: str
    header: str = ""
    footer: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Page":
        return cls(int(data["page_num"]), int(data["offset"]), str(data["text"]),
                   str(data.get("header") or ""), str(data.get("footer") or ""))


@dataclass(frozen=True, slots=True)
class Chunk:
    """A piece of one document produced by a splitter.

    Attributes:
        text: the chunk text: its own text, then the look-ahead overlap (if any). Never empty and never starts
            or ends with whitespace.
        char_start, char_end: half-open document offsets (characters) of the chunk's own span.
        page_start, page_end: 0-based pages holding ``char_start`` and ``char_end - 1``.
        token_count: exact tokens of ``text`` in the splitter's encoding.
        overlap_chars: trailing characters of ``text`` that are look-ahead copied from what follows (0 if none).
        kind: ``"text"``, ``"figure"`` (holds ≥ 1 whole ``<figure>`` block) or ``"figure_part"``.
        part_index, part_count: position of a ``figure_part`` among the parts of its figure; ``None`` otherwise.
        headings: heading path (outermost first) where the format has headings.
        metadata: splitter-specific extras (JSON-serialisable).
    """

    text: str
    char_start: int
    char_end: int
    page_start: int = 0
    page_end: int = 0
    token_count: int = 0
    overlap_chars: int = 0
    kind: ChunkKind = "text"
    part_index: int | None = None
    part_count: int | None = None
    headings: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict, compare=True, hash=False)

    @property
    def page_num(self) -> int:
        """The page where the chunk's text begins (= ``page_start``), used for citations."""
        return self.page_start

    @property
    def own_text(self) -> str:
        """``text`` without the look-ahead overlap."""
        return self.text[: len(self.text) - self.overlap_chars]

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["headings"] = list(self.headings)
        data["page_num"] = self.page_start
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Chunk":
        names = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in data.items() if k in names}
        values["headings"] = tuple(values.get("headings") or ())
        return cls(**values)


@dataclass(frozen=True, slots=True)
class Document:
    """A LangChain-compatible text with metadata (``page_content``, ``metadata``)."""

    page_content: str
    metadata: dict[str, Any] = field(default_factory=dict, hash=False)

    def to_dict(self) -> dict[str, Any]:
        return {"page_content": self.page_content, "metadata": dict(self.metadata)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Document":
        return cls(data["page_content"], dict(data.get("metadata") or {}))


@dataclass(frozen=True, slots=True)
class ChunkRecord:
    """One search-index document: a chunk placed in its source. Field names are the index schema.

    Attributes:
        id: search key, ``doc_id + "-" + zero-padded ordinal`` (letters, digits, ``_``, ``-``, ``=`` only).
        doc_id: stable id of the source (hash of container + full blob path).
        version: hash of the source bytes plus the chunking-settings fingerprint.
        source: blob path as uploaded; ``sourcepage`` is ``source#page=N`` (1-based) for paginated formats.
        ordinal: 0-based position of the chunk in its document.
        page_start, page_end: 0-based page range; char_start, char_end: own span in the document text.
        headings: heading path; content: the chunk text; content_hash: SHA-256 hex of ``content``.
        token_count: tokens of ``content``; embedding: the vector (``None`` until stage 2).
        parent_id: id of the record this one refines (hierarchical and small-to-big strategies), ``None`` for a
            top-level record. level: 0 for the top level, +1 per step down.
        kind: ``"text"`` (verbatim document text, figures included) or ``"proposition"`` (generated, not
            verbatim: its offsets and pages are those of the passage it came from, its ``parent_id``).
        embedding_text: what the embedder receives when it differs from ``content`` (context enrichment);
            ``""`` = ``content``. embedding_hash: SHA-256 hex of ``embedding_text`` when set (the key for reusing
            its vector), else ``""``.
        has_vector: ``False`` for records stored without a vector (parents fetched by id), which vector search
            never returns.
        namespace: the deployment that wrote the record (``chunking.pipeline.namespaces``): reconcile and cleanup delete
            only records of their own namespace, so deployments may share one index. ``""`` on records written
            before namespaces existed.
        title, storage_url, content_type, last_modified, size_bytes, language: the document's
            (docs/architecture.md#document-fields); ``last_modified`` ISO 8601 UTC (``2024-05-01T10:20:30Z``) or
            ``None``. acl_users, acl_groups: who may read the document (empty: nobody listed, ``ACL_DEFAULT``
            decides). metadata: ``(index field, value)`` pairs of the ``METADATA_FIELDS`` the source has.
        image_urls: the URLs of the figure images (PNG) this chunk holds, in document order: the pictures whose
            ``<figure>`` block (or, for an image file, whose page) overlaps the chunk's own span
            (docs/parsers.md#figure-images); ``()`` for a chunk without one.
    """

    id: str
    doc_id: str
    version: str
    source: str
    sourcepage: str
    ordinal: int
    page_start: int
    page_end: int
    char_start: int
    char_end: int
    content: str
    content_hash: str
    token_count: int
    headings: tuple[str, ...] = ()
    embedding: tuple[float, ...] | None = None
    parent_id: str | None = None
    level: int = 0
    kind: str = "text"
    embedding_text: str = ""
    embedding_hash: str = ""
    has_vector: bool = True
    namespace: str = ""
    title: str = ""
    storage_url: str = ""
    content_type: str = ""
    last_modified: str | None = None
    size_bytes: int = 0
    language: str = ""
    acl_users: tuple[str, ...] = ()
    acl_groups: tuple[str, ...] = ()
    metadata: tuple[tuple[str, str], ...] = ()
    image_urls: tuple[str, ...] = ()

    @property
    def vector_key(self) -> str:
        """Hash of the text the vector is computed from: ``embedding_hash`` if set, else ``content_hash``."""
        return self.embedding_hash or self.content_hash

    @property
    def text_to_embed(self) -> str:
        """The embedder's input: ``embedding_text`` if set, else ``content``."""
        return self.embedding_text or self.content

    def to_dict(self) -> dict[str, Any]:
        """The record as a JSON-ready dict, keys in field order: tuples as lists (``headings``, ``embedding``,
        the access lists), ``metadata`` as a dict, ``embedding`` ``None`` when there is no vector.

        Written field by field rather than with ``dataclasses.asdict``, whose deep copy of every value made
        this call about 20 times as slow (docs/operations.md#pipeline-throughput-and-memory); the fields hold
        immutable values, so the result is the same. A field added to the class is added here too
        (``tests/test_model.py`` compares the two conversions, keys and order included).
        """
        return {
            "id": self.id, "doc_id": self.doc_id, "version": self.version, "source": self.source,
            "sourcepage": self.sourcepage, "ordinal": self.ordinal, "page_start": self.page_start,
            "page_end": self.page_end, "char_start": self.char_start, "char_end": self.char_end,
            "content": self.content, "content_hash": self.content_hash, "token_count": self.token_count,
            "headings": list(self.headings),
            "embedding": None if self.embedding is None else list(self.embedding),
            "parent_id": self.parent_id, "level": self.level, "kind": self.kind,
            "embedding_text": self.embedding_text, "embedding_hash": self.embedding_hash,
            "has_vector": self.has_vector, "namespace": self.namespace, "title": self.title,
            "storage_url": self.storage_url, "content_type": self.content_type,
            "last_modified": self.last_modified, "size_bytes": self.size_bytes, "language": self.language,
            "acl_users": list(self.acl_users), "acl_groups": list(self.acl_groups),
            "metadata": dict(self.metadata), "image_urls": list(self.image_urls),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "ChunkRecord":
        names = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in data.items() if k in names}
        values["headings"] = tuple(values.get("headings") or ())
        for name in ("acl_users", "acl_groups", "image_urls"):
            values[name] = tuple(values.get(name) or ())
        values["metadata"] = tuple((str(k), str(v)) for k, v in dict(values.get("metadata") or {}).items())
        values["size_bytes"] = int(values.get("size_bytes") or 0)
        for name in ("title", "storage_url", "content_type", "language"):
            values[name] = values.get(name) or ""
        emb = values.get("embedding")
        values["embedding"] = None if emb is None else tuple(float(x) for x in emb)
        return cls(**values)

    def with_embedding(self, vector: "list[float] | tuple[float, ...]") -> "ChunkRecord":
        return dataclasses.replace(self, embedding=tuple(vector))


#: The access-list group every user is in: a document listing it is visible to all
#: (docs/architecture.md#document-level-access-control).
EVERYONE = "*"


#: Fields that can change without the bytes changing (applied by a field update, not a new version).
SOURCE_FIELDS = ("storage_url", "content_type", "last_modified", "acl_users", "acl_groups", "metadata")


def iso_utc(moment: dt.datetime | None) -> str | None:
    """*moment* as ``YYYY-MM-DDTHH:MM:SSZ`` in UTC (a naive time counts as UTC); ``None`` stays ``None``."""
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return moment.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def acl_values(raw: str | None) -> tuple[str, ...]:
    """An access list written in one metadata value: ids separated by commas, semicolons or whitespace, sorted
    and without duplicates. Example: ``acl_values("bob, alice;bob")`` → ``("alice", "bob")``."""
    if not raw:
        return ()
    return tuple(sorted({v for v in raw.replace(";", ",").replace(",", " ").split() if v}))


@dataclass(frozen=True)
class SourceProperties:
    """What storage says about a source besides its bytes.

    Attributes:
        storage_url: the blob's URL (or a ``file://`` URL for a local file), ``""`` if unknown.
        content_type: the MIME type storage recorded (``""``: guessed from the name).
        last_modified: ISO 8601 UTC (``iso_utc``), ``None`` if unknown.
        size_bytes: the stored size, ``None`` if unknown (then the bytes read are counted).
        metadata: blob metadata (names compared case-insensitively), tags: blob index tags.
        acl_users, acl_groups: access lists read from elsewhere (ADLS Gen2 path ACLs); ``None`` to take them from
            the metadata.
    """

    storage_url: str = ""
    content_type: str = ""
    last_modified: str | None = None
    size_bytes: int | None = None
    metadata: Mapping[str, str] = field(default_factory=dict, hash=False)
    tags: Mapping[str, str] = field(default_factory=dict, hash=False)
    acl_users: tuple[str, ...] | None = None
    acl_groups: tuple[str, ...] | None = None


@dataclass(frozen=True)
class DocumentFields:
    """The document-level fields of one version, the same on each of its chunk records.

    ``metadata`` holds the ``METADATA_FIELDS`` values as ``(index field, value)`` pairs in setting order, only
    those the source has; ``last_modified`` is ISO 8601 UTC or ``None``.
    """

    title: str = ""
    storage_url: str = ""
    content_type: str = ""
    last_modified: str | None = None
    size_bytes: int = 0
    language: str = ""
    acl_users: tuple[str, ...] = ()
    acl_groups: tuple[str, ...] = ()
    metadata: tuple[tuple[str, str], ...] = ()

    def source_values(self) -> dict[str, object]:
        """The ``SOURCE_FIELDS`` as a JSON-ready dict (``metadata`` as a dict)."""
        return {"storage_url": self.storage_url, "content_type": self.content_type,
                "last_modified": self.last_modified, "acl_users": list(self.acl_users),
                "acl_groups": list(self.acl_groups), "metadata": dict(self.metadata)}

    @property
    def source_hash(self) -> str:
        """SHA-256 hex of ``source_values`` (canonical JSON): equal exactly when no source field changed."""
        text = json.dumps(self.source_values(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


#: The document-level fields every chunk record carries (docs/architecture.md#document-fields), as
#: ``DocumentFields`` declares them, besides the ``METADATA_FIELDS`` the settings map (``metadata``); both indexes
#: added them at schema version 2.
DOCUMENT_FIELDS = tuple(f.name for f in dataclasses.fields(DocumentFields) if f.name != "metadata")
