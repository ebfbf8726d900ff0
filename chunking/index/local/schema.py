"""The schema of the local index file (``chunking.index.local``): tables, the columns added since the first
schema and their migration, rows to records and back, and the filterable fields (docs/architecture.md#schema-versions).

Migration is additive, as on Azure AI Search: ``open_index`` adds every missing column with ``ALTER TABLE …
ADD COLUMN`` (old rows get the column's default: null for the document fields, as the service gives null to
documents written before a field existed), one ``m_<field>`` column per ``METADATA_FIELDS`` field, and records
the schema version in ``meta``. A file of a newer schema than this code knows is refused.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Sequence

import numpy as np

from chunking.errors import IndexError_
from chunking.index.schema_info import SCHEMA_VERSION, SchemaInfo
from chunking.model import DOCUMENT_FIELDS, ChunkRecord

__all__ = ["FIELDS", "field_assignments", "filter_columns", "metadata_column", "open_index", "read_schema",
           "record_of", "row_of", "select_list"]

FIELDS = (
    "id", "doc_id", "version", "source", "sourcepage", "ordinal", "page_start", "page_end",
    "char_start", "char_end", "content", "content_hash", "token_count", "headings",
    "parent_id", "level", "kind", "embedding_text", "embedding_hash", "has_vector", "namespace",
    "title", "storage_url", "content_type", "last_modified", "size_bytes", "language", "acl_users", "acl_groups",
    "image_urls",
)  # fmt: skip
# Columns added after the first schema, with the definition that gives old rows their default. Version 1 added
# the strategy columns (hierarchy, enrichment) and ``namespace`` without a version change; version 2 the document
# fields; ``image_urls`` (a JSON list, docs/parsers.md#figure-images) came later without a version change, as
# ``namespace`` did: a file without the column gets it, its old rows null (read as no image).
ADDED_COLUMNS = {
    "parent_id": "TEXT", "level": "INTEGER NOT NULL DEFAULT 0", "kind": "TEXT NOT NULL DEFAULT 'text'",
    "embedding_text": "TEXT NOT NULL DEFAULT ''", "embedding_hash": "TEXT NOT NULL DEFAULT ''",
    "has_vector": "INTEGER NOT NULL DEFAULT 1", "namespace": "TEXT NOT NULL DEFAULT ''",
    "title": "TEXT", "storage_url": "TEXT", "content_type": "TEXT", "last_modified": "TEXT",
    "size_bytes": "INTEGER", "language": "TEXT", "acl_users": "TEXT", "acl_groups": "TEXT", "image_urls": "TEXT",
}  # fmt: skip
DOCUMENT_COLUMNS = DOCUMENT_FIELDS
# Filterable fields and their kinds (chunking.index.odata.FIELD_KINDS): those Azure AI Search's schema makes
# filterable (chunking.index.azure.schema, azure_fields), so a filter means the same on both.
_FILTERABLE = {
    "id": "string", "doc_id": "string", "version": "string", "source": "string", "content_hash": "string",
    "ordinal": "int", "page_start": "int", "page_end": "int", "char_start": "int", "char_end": "int",
    "token_count": "int", "parent_id": "string", "level": "int", "kind": "string", "embedding_hash": "string",
    "has_vector": "bool", "namespace": "string", "title": "string", "storage_url": "string",
    "content_type": "string",
    "last_modified": "datetime", "size_bytes": "int", "language": "string", "acl_users": "strings",
    "acl_groups": "strings",
}  # fmt: skip

_TABLES = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS records (
        id TEXT NOT NULL UNIQUE, doc_id TEXT NOT NULL, version TEXT NOT NULL, source TEXT NOT NULL,
        sourcepage TEXT NOT NULL, ordinal INTEGER NOT NULL, page_start INTEGER NOT NULL, page_end INTEGER NOT NULL,
        char_start INTEGER NOT NULL, char_end INTEGER NOT NULL, content TEXT NOT NULL, content_hash TEXT NOT NULL,
        token_count INTEGER NOT NULL, headings TEXT NOT NULL, embedding BLOB NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS records_doc_id ON records(doc_id)",
    "CREATE INDEX IF NOT EXISTS records_content_hash ON records(content_hash)",
    """CREATE VIRTUAL TABLE IF NOT EXISTS records_fts USING fts5(
        content, headings, source, tokenize = 'porter unicode61 remove_diacritics 2'
    )""",
)
_ADDED_INDEXES = (
    "CREATE INDEX IF NOT EXISTS records_parent_id ON records(parent_id)",
    "CREATE INDEX IF NOT EXISTS records_embedding_hash ON records(embedding_hash)",
    "CREATE INDEX IF NOT EXISTS records_namespace ON records(namespace, doc_id)",
)


def metadata_column(field: str) -> str:
    """The quoted column of ``METADATA_FIELDS`` field *field* (prefixed, so it never meets a column of ours even
    though SQLite compares names case-insensitively)."""
    return f'"m_{field}"'


def select_list(metadata_fields: Sequence[str]) -> str:
    """The columns ``record_of`` reads, in order (the ``r`` alias, as every query of the index names it)."""
    return ", ".join([*(f"r.{c}" for c in FIELDS), *(f"r.{metadata_column(f)}" for f in metadata_fields)])


def filter_columns(metadata_fields: Sequence[str]) -> dict[str, tuple[str, str]]:
    """Field → (SQL column under alias ``r``, kind) for ``chunking.index.local.odata_sql.filter_sql``."""
    columns = {name: (f"r.{name}", kind) for name, kind in _FILTERABLE.items()}
    columns.update({f: (f"r.{metadata_column(f)}", "string") for f in metadata_fields})
    return columns


def row_of(r: ChunkRecord, dimensions: int, metadata_fields: Sequence[str]) -> tuple:
    """The ``records`` row of *r*: ``FIELDS``, the ``METADATA_FIELDS`` columns, then the embedding blob (float32,
    little-endian; empty for a record stored without a vector)."""
    values = dict(r.metadata)
    return (
        r.id, r.doc_id, r.version, r.source, r.sourcepage, r.ordinal, r.page_start, r.page_end,
        r.char_start, r.char_end, r.content, r.content_hash, r.token_count,
        json.dumps(list(r.headings), ensure_ascii=False),
        r.parent_id, r.level, r.kind, r.embedding_text, r.embedding_hash, int(r.has_vector), r.namespace,
        r.title, r.storage_url, r.content_type, r.last_modified, r.size_bytes, r.language,
        json.dumps(list(r.acl_users), ensure_ascii=False), json.dumps(list(r.acl_groups), ensure_ascii=False),
        json.dumps(list(r.image_urls), ensure_ascii=False),
        *(values.get(f) for f in metadata_fields),
        np.asarray(r.embedding, dtype="<f4").tobytes() if r.has_vector else b"",
    )  # fmt: skip


# Fields a field update may set (the document fields that can change without the bytes).
_UPDATABLE = ("storage_url", "content_type", "last_modified", "acl_users", "acl_groups")


def field_assignments(values: dict, metadata_fields: Sequence[str]) -> tuple[str, list[object]]:
    """``SET`` clause and parameters for a field update of *values* (``metadata`` a dict; configured fields it
    lacks become null).

    Raises:
        ValueError: a key that is no updatable field.
    """
    unknown = set(values) - {*_UPDATABLE, "metadata"}
    if unknown:
        raise ValueError(f"not updatable in place: {', '.join(sorted(unknown))}")
    parts, params = [], []
    for name in _UPDATABLE:
        if name in values:
            value = values[name]
            parts.append(f"{name} = ?")
            params.append(json.dumps(list(value or ()), ensure_ascii=False) if name.startswith("acl_") else value)
    if "metadata" in values:
        given = dict(values["metadata"] or {})
        for field in metadata_fields:
            parts.append(f"{metadata_column(field)} = ?")
            params.append(given.get(field))
    return ", ".join(parts), params


def record_of(row: Sequence[object], metadata_fields: Sequence[str]) -> ChunkRecord:
    """The record of a row read with ``select_list`` (without its embedding)."""
    values = dict(zip(FIELDS, row))
    values["headings"] = tuple(json.loads(str(values["headings"])))
    values["has_vector"] = bool(values["has_vector"])
    for name in ("acl_users", "acl_groups", "image_urls"):
        values[name] = tuple(json.loads(str(values[name]))) if values[name] else ()
    for name in ("title", "storage_url", "content_type", "language"):
        values[name] = values[name] or ""
    values["size_bytes"] = values["size_bytes"] or 0
    extra = row[len(FIELDS):]
    values["metadata"] = tuple((f, str(v)) for f, v in zip(metadata_fields, extra) if v is not None)
    return ChunkRecord(**values)  # type: ignore[arg-type]


def open_index(path: Path, dimensions: int, metadata_fields: Sequence[str]) -> sqlite3.Connection:
    """Open (creating and migrating) the index file *path*.

    An index of another vector length that holds no record (e.g. left by a run whose embedder failed) takes
    *dimensions*; one that holds records is refused.

    Raises:
        IndexError_: the file is not SQLite, has a newer schema, or records of another vector dimension (the
            message says how many and what to do).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    # isolation_level=None: we issue BEGIN ourselves, so writes take the lock up front (IMMEDIATE) and two
    # connections never deadlock upgrading a read transaction.
    conn = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("BEGIN IMMEDIATE")
        for statement in _TABLES:
            conn.execute(statement)
        meta = dict(conn.execute("SELECT key, value FROM meta"))
        found = int(meta.get("schema", SCHEMA_VERSION))
        if found > SCHEMA_VERSION:
            conn.execute("ROLLBACK")
            conn.close()
            raise IndexError_(f"{path} has index schema {found}, newer than this version knows ({SCHEMA_VERSION});"
                              " upgrade, or use another index file")
        present = {row[1] for row in conn.execute("PRAGMA table_info(records)")}
        wanted = {**ADDED_COLUMNS, **{metadata_column(f).strip('"'): "TEXT" for f in metadata_fields}}
        for column, definition in wanted.items():
            if column not in present:  # a file written before the column existed
                conn.execute(f'ALTER TABLE records ADD COLUMN "{column}" {definition}')
        for statement in _ADDED_INDEXES:
            conn.execute(statement)
        if not meta:
            conn.executemany("INSERT INTO meta(key, value) VALUES (?, ?)",
                             [("dimensions", str(dimensions)), ("schema", str(SCHEMA_VERSION))])
        elif found < SCHEMA_VERSION:
            conn.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (str(SCHEMA_VERSION),))
        held = meta.get("dimensions", str(dimensions))
        records = 0
        if held != str(dimensions):
            records = int(conn.execute("SELECT count(*) FROM records").fetchone()[0])
            if not records:  # nothing written with the old length (e.g. a run that failed): take the new one
                conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('dimensions', ?)", (str(dimensions),))
        conn.execute("COMMIT")
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise IndexError_(f"{path} is not a usable local index: {exc}") from exc
    if records:
        conn.close()
        plural = "" if records == 1 else "s"
        raise IndexError_(
            f"{path} holds {records} record{plural} with {held}-dimensional vectors, but the embedder makes "
            f"{dimensions}: go back to the embedder settings that made them, or delete {path} and ingest again "
            f"(the documents are then written anew), or use another index file (another CHUNKING_STATE_DIR)"
        )
    return conn


def read_schema(path: Path, metadata_fields: Sequence[str]) -> SchemaInfo:
    """The schema of the index file *path* as it is (opened read-only: nothing is created or migrated)."""
    if not path.exists():
        return SchemaInfo("local", str(path), False, 0)
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        meta = dict(conn.execute("SELECT key, value FROM meta"))
        present = {row[1] for row in conn.execute("PRAGMA table_info(records)")}
        records = int(conn.execute("SELECT count(*) FROM records").fetchone()[0])
    except sqlite3.DatabaseError as exc:
        raise IndexError_(f"{path} is not a usable local index: {exc}") from exc
    finally:
        conn.close()
    missing = [c for c in DOCUMENT_COLUMNS if c not in present]
    missing += [f for f in metadata_fields if metadata_column(f).strip('"') not in present]
    custom = tuple(c[2:] for c in sorted(present) if c.startswith("m_"))
    return SchemaInfo("local", str(path), True, int(meta.get("schema", 1)), missing=tuple(missing),
                      metadata_fields=custom, records=records)
