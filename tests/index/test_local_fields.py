"""LocalIndex document fields: stored and read back, filters and security trimming before ranking, field updates
that leave text and vectors alone, and the migration of a schema-1 file in place."""

from __future__ import annotations

import dataclasses
import hashlib
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from chunking.index.local import LocalIndex
from chunking.index.local.schema import read_schema
from chunking.index.odata import FilterError
from chunking.index.security import security_filter
from chunking.model import ChunkRecord


def record(doc: str, content: str, vector, **fields) -> ChunkRecord:
    return ChunkRecord(id=f"{doc}-000000", doc_id=doc, version="v1", source=f"{doc}.md", sourcepage=f"{doc}.md",
                       ordinal=0, page_start=0, page_end=0, char_start=0, char_end=len(content), content=content,
                       content_hash=hashlib.sha256(content.encode()).hexdigest(), token_count=3, embedding=vector,
                       **fields)


DOCS = [
    record("pay", "salaries are paid monthly", (1.0, 0.0, 0.0, 0.0), title="Payroll", language="en",
           last_modified="2024-05-01T10:20:30Z", size_bytes=1200, acl_groups=("hr",),
           metadata=(("category", "policy"), ("dept", "HR"))),
    record("menu", "salaries of cooks and the lunch menu", (0.0, 1.0, 0.0, 0.0), title="Menu", language="en",
           last_modified="2024-06-01T00:00:00Z", size_bytes=300, metadata=(("category", "canteen"),)),
    record("board", "board salaries and bonuses", (0.0, 0.0, 1.0, 0.0), title="Board", language="de",
           acl_users=("ceo",), acl_groups=("board",)),
]


@pytest.fixture
def index(tmp_path: Path) -> LocalIndex:
    index = LocalIndex(tmp_path / "index.sqlite3", 4, metadata_fields=("category", "dept"))
    index.upsert(DOCS)
    yield index
    index.close()


def found(index: LocalIndex, **kwargs) -> list[str]:
    """The documents found (sorted: what a filter lets through is the point here, not the ranking)."""
    return sorted(h.record.doc_id for h in index.search("salaries", (1.0, 1.0, 1.0, 0.0), k=5, **kwargs))


def test_image_urls_round_trip(index):
    urls = ("file:///f/a.png", "file:///f/b.png")
    index.upsert([record("chart", "a bar chart", (0.0, 0.0, 0.0, 1.0), image_urls=urls)])
    assert index.records_by_id(["chart-000000"])["chart-000000"].image_urls == urls
    assert index.records_by_id(["pay-000000"])["pay-000000"].image_urls == ()


def test_fields_round_trip(index):
    stored = index.records_by_id(["pay-000000", "board-000000"])
    assert stored["pay-000000"] == dataclasses.replace(DOCS[0], embedding=None)
    assert stored["board-000000"].metadata == ()  # no category, no dept: none stored


def test_filters_apply_to_both_rankings(index):
    assert found(index) == ["board", "menu", "pay"]
    assert found(index, filter="category eq 'policy'") == ["pay"]
    assert found(index, filter="category ne 'policy'") == ["board", "menu"]  # null ne 'policy' holds
    assert found(index, filter="last_modified ge 2024-05-15T00:00:00Z or size_bytes gt 1000") == ["menu", "pay"]
    assert found(index, filter="language eq 'de' and acl_users/any(u: u eq 'ceo')") == ["board"]
    # The vector leg is filtered too: a vector-only query finds only what the filter lets through.
    assert index.search("", (0.6, 0.0, 0.8, 0.0), k=1)[0].record.doc_id == "board"
    hits = index.search("", (0.6, 0.0, 0.8, 0.0), k=5, filter="dept eq 'HR'")
    assert [h.record.doc_id for h in hits] == ["pay"]


def test_security_trimming(index):
    assert found(index, filter=security_filter("alice", ["hr"], "public")) == ["menu", "pay"]
    assert found(index, filter=security_filter("alice", ["hr"], "deny")) == ["pay"]
    assert found(index, filter=security_filter("ceo", [], "deny")) == ["board"]
    assert found(index, filter=security_filter("nobody", [], "deny")) == []


def test_filter_errors_name_the_field(index):
    with pytest.raises(FilterError, match="unknown or unfilterable field 'colour'"):
        found(index, filter="colour eq 'red'")
    with pytest.raises(FilterError, match="unknown or unfilterable field 'content'"):
        found(index, filter="content eq 'x'")  # searchable, not filterable, as on Azure


def test_update_fields_keeps_text_and_vector(index):
    before = index.vectors_by_key(["pay-000000"])
    changed = index.update_fields(["pay-000000", "gone-000000"], {
        "acl_users": ["alice"], "acl_groups": [], "last_modified": "2024-07-01T00:00:00Z",
        "metadata": {"category": "archive"}})
    assert changed == 1
    after = index.records_by_id(["pay-000000"])["pay-000000"]
    assert (after.acl_users, after.acl_groups, after.last_modified, after.metadata) == (
        ("alice",), (), "2024-07-01T00:00:00Z", (("category", "archive"),))  # dept cleared: not in the update
    assert (after.content, after.title, after.size_bytes) == (DOCS[0].content, "Payroll", 1200)
    assert index.vectors_by_key(["pay-000000"]) == before and before
    assert found(index, filter=security_filter("alice", [], "deny")) == ["pay"]
    with pytest.raises(ValueError, match="not updatable in place: content"):
        index.update_fields(["pay-000000"], {"content": "x"})


V1_TABLES = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE records (id TEXT NOT NULL UNIQUE, doc_id TEXT NOT NULL, version TEXT NOT NULL,
        source TEXT NOT NULL, sourcepage TEXT NOT NULL, ordinal INTEGER NOT NULL, page_start INTEGER NOT NULL,
        page_end INTEGER NOT NULL, char_start INTEGER NOT NULL, char_end INTEGER NOT NULL, content TEXT NOT NULL,
        content_hash TEXT NOT NULL, token_count INTEGER NOT NULL, headings TEXT NOT NULL, embedding BLOB NOT NULL)""",
    "CREATE VIRTUAL TABLE records_fts USING fts5(content, headings, source, "
    "tokenize = 'porter unicode61 remove_diacritics 2')",
)


def test_a_schema_1_file_is_migrated_in_place(tmp_path):
    path = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(path)
    for statement in V1_TABLES:
        conn.execute(statement)
    conn.executemany("INSERT INTO meta VALUES (?, ?)", [("dimensions", "4"), ("schema", "1")])
    blob = np.asarray([1, 0, 0, 0], dtype="<f4").tobytes()
    conn.execute("INSERT INTO records VALUES ('old-000000', 'old', 'v1', 'old.md', 'old.md', 0, 0, 0, 0, 9, "
                 "'old salaries', 'h', 2, '[]', ?)", (blob,))
    conn.execute("INSERT INTO records_fts(rowid, content, headings, source) VALUES (1, 'old salaries', '', 'old.md')")
    conn.commit()
    conn.close()
    info = read_schema(path, ("category",))
    assert (info.exists, info.version, info.records) == (True, 1, 1)
    assert info.missing == ("title", "storage_url", "content_type", "last_modified", "size_bytes", "language",
                            "acl_users", "acl_groups", "category")
    index = LocalIndex(path, 4, metadata_fields=("category",))
    index.ensure()
    old = index.records_by_id(["old-000000"])["old-000000"]
    assert (old.title, old.last_modified, old.acl_users, old.metadata, old.level) == ("", None, (), (), 0)
    assert old.image_urls == ()  # the column added later, null in old rows
    assert "image_urls" in {row[1] for row in sqlite3.connect(path).execute("PRAGMA table_info(records)")}
    assert [h.record.id for h in index.search("salaries", None, filter="language eq null")] == ["old-000000"]
    assert [h.record.id for h in index.search("salaries", None, filter=security_filter("x", [], "public"))] == [
        "old-000000"]
    index.close()
    after = read_schema(path, ("category",))
    assert (after.version, after.missing, after.metadata_fields) == (2, (), ("category",))
    assert after.describe() == f"index: local {path}, schema 2 (current), metadata fields category, 1 records"
    # A metadata field added to the setting later is one more column, added in place.
    LocalIndex(path, 4, metadata_fields=("category", "region")).ensure()
    assert read_schema(path, ("category", "region")).metadata_fields == ("category", "region")


def test_a_newer_schema_is_refused(tmp_path):
    path = tmp_path / "new.sqlite3"
    LocalIndex(path, 4).ensure()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value = '3' WHERE key = 'schema'")
    conn.commit()
    conn.close()
    from chunking.errors import IndexError_

    with pytest.raises(IndexError_, match="has index schema 3, newer than this version knows"):
        LocalIndex(path, 4).ensure()
