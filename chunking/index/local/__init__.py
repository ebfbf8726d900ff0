"""The local single-file search index: SQLite (stdlib ``sqlite3``) with FTS5 for BM25 and numpy for vectors.

Layout of the file:

* ``meta``: ``dimensions`` and ``schema`` of the index (checked by ``ensure``).
* ``records``: one row per ``ChunkRecord`` (headings and access lists as JSON text, the embedding as a
  little-endian float32 blob; an empty blob for a record stored without a vector). Columns added later are added
  to an older file by ``ensure`` (``chunking.index.local.schema``: columns, migration, schema version).
* ``records_fts``: an FTS5 table over content, headings and source, keyed by the ``records`` rowid. Tokenizer
  ``porter unicode61 remove_diacritics 2``; CJK characters are written to it space-separated so each is a token,
  and a CJK query run becomes overlapping two-character phrases (the CJK-bigram strategy of Lucene's
  ``CJKBigramFilter``): a phrase found inside a run without spaces still matches.

Search is hybrid: BM25 (``bm25()``) and cosine similarity over all stored vectors (a numpy scan, cached per
object and refreshed when ``PRAGMA data_version`` says another connection wrote), fused by
``chunking.index.fusion`` (score-normalised by default; reciprocal rank fusion as an option).

Concurrency: WAL journal, writes in ``BEGIN IMMEDIATE`` transactions, a 30 s busy timeout; several
``LocalIndex`` objects (threads or processes) may share one file, and each object may be used from any thread.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Collection, Iterable, Iterator, Sequence

import numpy as np

from chunking.errors import IndexError_
from chunking.index.fusion import FusionOptions, fuse
from chunking.index.local import schema
from chunking.index.local.fts import SNOWBALL, fts_query, fts_text
from chunking.index.local.odata_sql import filter_sql
from chunking.index.local.ranking import bm25_query_reference, keyword_ranking, nearest, term_document_counts
from chunking.index.protocol import SearchHit
from chunking.index.schema_info import SchemaInfo
from chunking.model import ChunkRecord

__all__ = ["LocalIndex", "fts_query"]

SCHEMA_VERSION = str(schema.SCHEMA_VERSION)
# Candidates taken from each ranking before fusion: deeper than k so that a record ranked moderately in both
# lists can beat one ranked high in only one.
_MIN_DEPTH = 50
# SQLite's default host-parameter limit is 999 on old builds; stay well under it.
_IN_GROUP = 500

class LocalIndex:
    """A ``SearchIndex`` (``IndexWriter`` and ``IndexSearcher``) in one SQLite file: BM25 + cosine vectors, fused
    as ``chunking.index.fusion`` says.

    Args:
        path: the SQLite file (created with its parent folders by ``ensure``).
        dimensions: vector length every record must have, ≥ 1.
        metadata_fields: the ``METADATA_FIELDS`` index fields (one column each, added by ``ensure``).
        fusion: how the two rankings are fused (default ``FusionOptions()``).

    Every method opens the file and creates the schema on first use (``ensure``); ``close`` releases it.
    Embeddings are stored as float32, so ``vectors_by_key`` returns float32-rounded values.

    Raises:
        IndexError_: the file is not an index of this schema or holds another vector dimension (from ``ensure``
            and any first call), or records lack a vector of ``dimensions`` floats (from ``upsert``).
    """

    def __init__(self, path: Path | str, dimensions: int, fusion: FusionOptions | None = None, *,
                 metadata_fields: Sequence[str] = (), languages: Sequence[str] = ()) -> None:
        if dimensions < 1:
            raise ValueError(f"dimensions must be ≥ 1, got {dimensions}")
        self.fusion = fusion or FusionOptions()
        self.path = Path(path)
        self.dimensions = dimensions
        self.metadata_fields = tuple(metadata_fields)
        # SEARCH_LANGUAGES that Snowball stems (chunking.index.local.fts): chunks and queries get their stems.
        self.languages = tuple(code for code in languages if code in SNOWBALL)
        self._select = schema.select_list(self.metadata_fields)
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        # Vector cache: (data_version, own writes) it was built at, record ids, unit-normalised float32 matrix.
        self._writes = 0
        self._cache_key: tuple[int, int] | None = None
        self._cache_ids: list[str] = []
        self._cache_matrix = np.zeros((0, dimensions), dtype=np.float32)
        self._cache_levels = np.zeros(0, dtype=np.int64)

    # -- connection and schema ----------------------------------------------------------------------------------

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            self.ensure()
        assert self._conn is not None
        return self._conn

    def ensure(self) -> None:
        """Open the file, create the schema if missing, and check its vector dimension.

        Raises:
            IndexError_: the file is not SQLite, has a newer schema version, or another dimension.
        """
        with self._lock:
            if self._conn is None:
                self._conn = schema.open_index(self.path, self.dimensions, self.metadata_fields)

    def schema_info(self) -> SchemaInfo:
        """The file's schema as it is (read-only: nothing is created or migrated)."""
        return schema.read_schema(self.path, self.metadata_fields)

    def close(self) -> None:
        """Close the connection (the next call reopens it)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
                self._cache_key = None

    def __enter__(self) -> "LocalIndex":
        self.ensure()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write(self, statements: Iterator[tuple[str, list[tuple]]]) -> None:
        db = self._db()
        db.execute("BEGIN IMMEDIATE")
        try:
            for sql, rows in statements:
                db.executemany(sql, rows)
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:  # SQLite may already have rolled back (e.g. disk full)
                db.execute("ROLLBACK")
            raise
        self._writes += 1

    # -- writes ------------------------------------------------------------------------------------------------

    def upsert(self, records: Sequence[ChunkRecord]) -> None:
        """Insert or replace *records* by id, in one transaction (all or nothing). Idempotent; of records
        sharing an id, the last wins.

        Raises:
            IndexError_: some records have no embedding or one of the wrong length (the message names them).
        """
        records = list({r.id: r for r in records}.values())
        bad = [r.id for r in records if r.has_vector and (r.embedding is None or len(r.embedding) != self.dimensions)]
        if bad:
            raise IndexError_(
                f"{len(bad)} records lack a {self.dimensions}-dimensional embedding: {', '.join(bad[:10])}"
            )
        rows = [schema.row_of(r, self.dimensions, self.metadata_fields) for r in records]
        names = [*schema.FIELDS, *(schema.metadata_column(f) for f in self.metadata_fields), "embedding"]
        columns = ", ".join(names)
        updates = ", ".join(f"{c} = excluded.{c}" for c in names[1:])
        ids = [(r.id,) for r in records]
        fts_rows = [
            (fts_text(r.content, self._stem_language(r.language)), fts_text(" / ".join(r.headings)), fts_text(r.source),
             r.id) for r in records
        ]

        def statements() -> Iterator[tuple[str, list[tuple]]]:
            # The rowid survives ON CONFLICT DO UPDATE, so the FTS row is replaced under the same rowid.
            yield "DELETE FROM records_fts WHERE rowid = (SELECT rowid FROM records WHERE id = ?)", ids
            placeholders = ", ".join("?" * len(names))
            yield (
                f"INSERT INTO records({columns}) VALUES ({placeholders}) ON CONFLICT(id) DO UPDATE SET {updates}",
                rows,
            )
            fts_insert = "INSERT INTO records_fts(rowid, content, headings, source) SELECT rowid, ?, ?, ? FROM records"
            yield f"{fts_insert} WHERE id = ?", fts_rows

        with self._lock:
            self._write(statements())

    def delete(self, ids: Iterable[str]) -> None:
        """Delete records by id; missing ids are ignored."""
        keys = [(i,) for i in dict.fromkeys(ids)]
        if not keys:
            return

        def statements() -> Iterator[tuple[str, list[tuple]]]:
            yield "DELETE FROM records_fts WHERE rowid = (SELECT rowid FROM records WHERE id = ?)", keys
            yield "DELETE FROM records WHERE id = ?", keys

        with self._lock:
            self._write(statements())

    # -- reads -------------------------------------------------------------------------------------------------

    def keys_of(self, doc_id: str, namespace: str | None = None) -> dict[str, str]:
        """``{id: version}`` of every record of *doc_id* (empty if none); with *namespace*, only the records of
        that namespace and those written before namespaces existed (``""``)."""
        sql, args = "SELECT id, version FROM records WHERE doc_id = ?", [doc_id]
        if namespace is not None:
            sql, args = sql + " AND namespace IN (?, '')", args + [namespace]
        with self._lock:
            return dict(self._db().execute(sql, args))

    def records_of(self, doc_id: str) -> list[ChunkRecord]:
        """Every record of *doc_id*, without embeddings, ordered by ordinal."""
        with self._lock:
            cur = self._db().execute(
                f"SELECT {self._select} FROM records r WHERE r.doc_id = ? ORDER BY r.ordinal", (doc_id,)
            )
            return [self._record(row) for row in cur]

    def doc_ids(self, namespace: str | None = None) -> set[str]:
        """Every ``doc_id`` present; with *namespace*, those with a record of exactly that namespace."""
        sql, args = "SELECT DISTINCT doc_id FROM records", []
        if namespace is not None:
            sql, args = sql + " WHERE namespace = ?", [namespace]
        with self._lock:
            return {row[0] for row in self._db().execute(sql, args)}

    def vectors_by_key(self, ids: Iterable[str]) -> dict[str, tuple[float, ...]]:
        """``{id: embedding}`` of the stored records among *ids* that have a vector."""
        wanted = list(dict.fromkeys(ids))
        found: dict[str, tuple[float, ...]] = {}
        with self._lock:
            for start in range(0, len(wanted), _IN_GROUP):
                group = wanted[start : start + _IN_GROUP]
                cur = self._db().execute(f"SELECT id, embedding FROM records WHERE id IN ({', '.join('?' * len(group))})"
                                         " AND length(embedding) > 0", group)
                found.update((key, tuple(np.frombuffer(blob, dtype="<f4").tolist())) for key, blob in cur)
        return found

    def records_by_id(self, ids: Iterable[str]) -> dict[str, ChunkRecord]:
        """The stored records among *ids* (without embeddings), by id."""
        wanted = list(dict.fromkeys(ids))
        found: dict[str, ChunkRecord] = {}
        with self._lock:
            for start in range(0, len(wanted), _IN_GROUP):
                group = wanted[start : start + _IN_GROUP]
                cur = self._db().execute(
                    f"SELECT {self._select} FROM records r WHERE r.id IN ({', '.join('?' * len(group))})", group
                )
                found.update((row[0], self._record(row)) for row in cur)
        return found

    def count(self) -> int:
        """Number of records."""
        with self._lock:
            return int(self._db().execute("SELECT count(*) FROM records").fetchone()[0])

    def _record(self, row: Sequence[object]) -> ChunkRecord:
        return schema.record_of(row, self.metadata_fields)

    def update_fields(self, ids: Iterable[str], values: dict[str, object]) -> int:
        """Set document fields (``storage_url``, ``content_type``, ``last_modified``, ``acl_users``, ``acl_groups``,
        ``metadata``: the ``METADATA_FIELDS`` values, absent ones cleared) of the records *ids*, in one
        transaction; the rest of each record (text, vector) is untouched. Returns how many records exist among
        *ids*.

        Raises:
            ValueError: a field that is not a document field.
        """
        keys = list(dict.fromkeys(ids))
        assignments, params = schema.field_assignments(values, self.metadata_fields)
        if not keys or not assignments:
            return 0
        with self._lock:
            db = self._db()
            db.execute("BEGIN IMMEDIATE")
            try:
                changed = 0
                for start in range(0, len(keys), _IN_GROUP):
                    group = keys[start : start + _IN_GROUP]
                    cur = db.execute(f"UPDATE records SET {assignments} WHERE id IN ({', '.join('?' * len(group))})",
                                     [*params, *group])
                    changed += cur.rowcount
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            self._writes += 1
        return changed

    # -- search ------------------------------------------------------------------------------------------------

    def search(self, query: str, vector: Sequence[float] | None, k: int = 5, *,
               levels: Collection[int] | None = None, filter: str | None = None) -> list[SearchHit]:
        """Hybrid search: BM25 over *query* and cosine similarity to *vector*, fused as ``self.fusion`` says
        (``chunking.index.fusion``).

        Args:
            query: free text (any characters; never a syntax error); ``""`` for vector-only search.
            vector: ``dimensions`` floats, or ``None`` for keyword-only search.
            k: at most this many hits.
            levels: only records whose ``level`` is one of these (``None``: all). Records stored without a vector
                are found by keywords only.
            filter: only records matching this OData filter (``chunking.index.odata``: metadata, dates, security
                trimming), applied before ranking in both legs.

        Returns:
            hits best first, each with its relevance 0–1 (``score``) and its parts (``lexical``: BM25 against the
            query's reference score; ``vector``: cosine). No hits when no record holds a query term and no vector
            reaches ``fusion.min_vector_score``. Records come without embeddings.

        Raises:
            ValueError: *vector* has the wrong length; FilterError: *filter* is malformed, outside the subset, or
                names a field this index cannot filter on.
        """
        if k < 1:
            return []
        depth = max(_MIN_DEPTH, 5 * k)
        where = filter_sql(filter, schema.filter_columns(self.metadata_fields)) if filter else None
        with self._lock:
            wanted = None if levels is None else sorted({int(v) for v in levels})
            lexical = self._keyword_ranking(query, depth, wanted, where)
            ranked: list[tuple[str, float]] = []
            cosines: dict[str, float] = {}
            if vector is not None:
                ranked, cosines = self._vector_ranking(vector, depth, wanted, where, also=[i for i, _ in lexical])
            reference = bm25_query_reference(self._db(), query, self.languages) if lexical else 0.0
            best = fuse(lexical, ranked, self.fusion, lexical_reference=reference, cosines=cosines,
                        use_lexical=bool(fts_query(query)), use_vector=vector is not None)[:k]
            if not best:
                return []
            placeholders = ", ".join("?" * len(best))
            cur = self._db().execute(f"SELECT {self._select} FROM records r WHERE r.id IN ({placeholders})",
                                     [f.id for f in best])  # fmt: skip
            by_id = {row[0]: self._record(row) for row in cur}
        return [SearchHit(by_id[f.id], f.score, f.lexical, f.vector) for f in best if f.id in by_id]

    def term_document_counts(self, terms: Iterable[str]) -> tuple[int, dict[str, int]]:
        """``(records, {term: records holding it})`` for free-text *terms*, each matched as ``search`` matches a
        one-word query (stemmed; a CJK term as its character bigrams). For inverse document frequencies."""
        with self._lock:
            return term_document_counts(self._db(), terms)

    def _keyword_ranking(self, query: str, depth: int, levels: list[int] | None = None,
                         where: tuple[str, list] | None = None) -> list[tuple[str, float]]:
        return keyword_ranking(self._db(), query, depth, levels, where, self.languages)

    def _stem_language(self, language: str) -> str:
        """*language* when its chunks are written with stems (one of ``languages``), else ``""``."""
        code = (language or "").split("-", 1)[0].lower()
        return code if code in self.languages else ""

    def _vector_ranking(self, vector: Sequence[float], depth: int, levels: list[int] | None = None,
                        where: tuple[str, list] | None = None,
                        also: Sequence[str] = ()) -> tuple[list[tuple[str, float]], dict[str, float]]:
        query = np.asarray(vector, dtype=np.float32)
        if query.shape != (self.dimensions,):
            raise ValueError(f"query vector has {query.size} dimensions, the index {self.dimensions}")
        ids, matrix = self._vectors()
        allowed = None
        if where is not None:
            allowed = {row[0] for row in self._db().execute(f"SELECT r.id FROM records r WHERE {where[0]}", where[1])}
        return nearest(ids, matrix, self._cache_levels, query, depth, levels, also, allowed)

    def _vectors(self) -> tuple[list[str], np.ndarray]:
        db = self._db()
        key = (int(db.execute("PRAGMA data_version").fetchone()[0]), self._writes)
        if key != self._cache_key:
            rows = db.execute("SELECT id, level, embedding FROM records WHERE length(embedding) > 0").fetchall()
            ids = [row[0] for row in rows]
            self._cache_levels = np.asarray([row[1] for row in rows], dtype=np.int64)
            matrix = np.frombuffer(b"".join(row[2] for row in rows), dtype="<f4").reshape(len(rows), self.dimensions)
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            self._cache_matrix = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
            self._cache_ids = ids
            self._cache_key = key
        return self._cache_ids, self._cache_matrix
