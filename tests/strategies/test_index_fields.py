"""The strategy fields in the indexes (parent_id, level, kind, embedding_text, embedding_hash, has_vector):
LocalIndex migration, records without vectors, level filters, vector reuse keyed on the embedded text; the
Azure AI Search schema and requests (fake transport, as tests/index/test_azure_search.py)."""

from __future__ import annotations

import dataclasses
import hashlib
import sqlite3

import pytest

from chunking.errors import IndexError_
from chunking.index.local import LocalIndex
from chunking.model import ChunkRecord
from tests.index.search_fakes import Sent, created_definition, make, ok_for_all, record


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def rec(i: int, content: str, dims: int = 4, **fields) -> ChunkRecord:
    base = ChunkRecord(id=f"d-{i}", doc_id="d", version="v1", source="a.md", sourcepage="a.md", ordinal=i,
                       page_start=0, page_end=0, char_start=0, char_end=len(content), content=content,
                       content_hash=sha(content), token_count=3, embedding=tuple([float(i + 1)] + [0.0] * (dims - 1)))
    return dataclasses.replace(base, **fields)


# -- LocalIndex --------------------------------------------------------------------------------------------------

OLD_RECORDS_TABLE = """CREATE TABLE records (
    id TEXT NOT NULL UNIQUE, doc_id TEXT NOT NULL, version TEXT NOT NULL, source TEXT NOT NULL,
    sourcepage TEXT NOT NULL, ordinal INTEGER NOT NULL, page_start INTEGER NOT NULL, page_end INTEGER NOT NULL,
    char_start INTEGER NOT NULL, char_end INTEGER NOT NULL, content TEXT NOT NULL, content_hash TEXT NOT NULL,
    token_count INTEGER NOT NULL, headings TEXT NOT NULL, embedding BLOB NOT NULL)"""


def test_a_file_of_the_first_schema_gains_the_columns(tmp_path):
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        db.executemany("INSERT INTO meta VALUES (?, ?)", [("dimensions", "4"), ("schema", "1")])
        db.execute(OLD_RECORDS_TABLE)
        db.execute("INSERT INTO records VALUES ('d-0', 'd', 'v1', 'a.md', 'a.md', 0, 0, 0, 0, 3, 'old', ?, 1, '[]', ?)",
                   (sha("old"), b"\x00\x00\x80\x3f" + b"\x00" * 12))
    index = LocalIndex(path, 4)
    (old,) = index.records_of("d")
    assert (old.content, old.parent_id, old.level, old.kind, old.has_vector) == ("old", None, 0, "text", True)
    index.upsert([rec(1, "child text", parent_id="d-0", level=1)])
    assert index.records_by_id(["d-1"])["d-1"].parent_id == "d-0"
    assert index.vectors_by_key(["d-0"]) == {"d-0": (1.0, 0.0, 0.0, 0.0)}


def test_records_without_vector_are_kept_out_of_vector_search_and_reuse(tmp_path):
    index = LocalIndex(tmp_path / "i.sqlite3", 4)
    parent = rec(0, "parent about tea", has_vector=False, embedding=None)
    child = rec(1, "child about tea", parent_id="d-0", level=1)
    index.upsert([parent, child])
    assert [h.record.id for h in index.search("", [1.0, 0.0, 0.0, 0.0], k=5)] == ["d-1"]
    assert {h.record.id for h in index.search("tea", None, k=5)} == {"d-0", "d-1"}
    assert index.vectors_by_key(["d-0", "d-1"]) == {"d-1": (2.0, 0.0, 0.0, 0.0)}
    got = index.records_by_id(["d-0", "d-1", "missing"])
    assert got["d-0"] == dataclasses.replace(parent, embedding=None) and set(got) == {"d-0", "d-1"}
    with pytest.raises(IndexError_, match="lack a 4-dimensional embedding"):
        index.upsert([rec(2, "needs a vector", embedding=None)])


def test_level_filter(tmp_path):
    index = LocalIndex(tmp_path / "i.sqlite3", 4)
    index.upsert([rec(0, "tea top", level=0), rec(1, "tea middle", level=1), rec(2, "tea leaf", level=2)])
    vector = [1.0, 1.0, 1.0, 0.0]
    assert {h.record.id for h in index.search("tea", vector, k=5, levels=[1, 2])} == {"d-1", "d-2"}
    assert {h.record.id for h in index.search("", vector, k=5, levels=[0])} == {"d-0"}
    assert index.search("tea", vector, k=5, levels=[]) == []


def test_a_vector_is_keyed_on_the_text_it_was_computed_from(tmp_path):
    index = LocalIndex(tmp_path / "i.sqlite3", 4)
    enriched = rec(0, "It costs 5 dollars.", embedding_text="Pricing › Tea\n\nIt costs 5 dollars.",
                   embedding_hash=sha("Pricing › Tea\n\nIt costs 5 dollars."))
    index.upsert([enriched])
    # Reuse (chunking.pipeline.vector_reuse) matches vector_key, the hash of the embedded text, not the content's.
    assert enriched.vector_key == enriched.embedding_hash != enriched.content_hash
    assert enriched.text_to_embed.startswith("Pricing")
    assert index.records_by_id(["d-0"])["d-0"].embedding_hash == enriched.embedding_hash
    assert set(index.vectors_by_key(["d-0"])) == {"d-0"}


# -- Azure AI Search ---------------------------------------------------------------------------------------------


def test_an_index_created_with_strategy_fields():
    def handler(sent: Sent) -> tuple:
        if sent.method == "GET":
            return 404, {"error": {"code": "ResourceNotFound", "message": "no"}}
        return 201, sent.body

    index, service, _ = make(handler, strategy_fields=True)
    index.ensure()
    fields = {f["name"]: f for f in service.sent[1].body["fields"]}
    assert list(fields)[-6:] == ["parent_id", "level", "kind", "embedding_text", "embedding_hash", "has_vector"]
    assert fields["parent_id"]["filterable"] and fields["embedding_hash"]["filterable"]
    assert (fields["level"]["type"], fields["level"]["filterable"]) == ("Edm.Int32", True)
    assert fields["embedding_text"]["searchable"] and fields["has_vector"]["type"] == "Edm.Boolean"


def test_a_base_index_gains_the_fields_on_the_first_record_that_needs_them():
    definition = created_definition(4)

    def handler(sent: Sent) -> tuple:
        if sent.path == "/indexes('chunks')" and sent.method == "GET":
            return 200, definition
        if sent.path == "/indexes('chunks')" and sent.method == "PUT":
            definition["fields"] = sent.body["fields"]
            return 200, sent.body
        return ok_for_all(sent)

    index, service, _ = make(handler)
    index.ensure()
    index.upsert([record(0)])  # a plain record: sent exactly as before, the index unchanged
    (plain,) = service.to("/docs/search.index")[0].body["value"]
    assert "parent_id" not in plain and "level" not in plain
    assert not [s for s in service.sent if s.method == "PUT"]
    index.upsert([dataclasses.replace(record(1), parent_id="d-000000", level=1),
                  dataclasses.replace(record(2), has_vector=False, embedding=None)])
    (put,) = [s for s in service.sent if s.method == "PUT"]
    assert [f["name"] for f in put.body["fields"]][-6:] == ["parent_id", "level", "kind", "embedding_text",
                                                            "embedding_hash", "has_vector"]
    child, parent = service.to("/docs/search.index")[1].body["value"]
    assert (child["parent_id"], child["level"], child["has_vector"]) == ("d-000000", 1, True)
    assert "embedding" not in parent and parent["has_vector"] is False


def test_refused_without_strategy_fields():
    index, service, _ = make(ok_for_all, strategy_fields=False)
    with pytest.raises(IndexError_, match="has no strategy fields"):
        index.upsert([dataclasses.replace(record(1), level=1)])
    assert service.sent == []


def test_requests_of_an_index_with_strategy_fields():
    calls: list[Sent] = []

    def handler(sent: Sent) -> tuple:
        calls.append(sent)
        if sent.method == "GET":
            definition = created_definition(4)
            from chunking.index.azure import strategy_field_definitions

            definition["fields"] += [{"name": f.name, "type": f.type} for f in strategy_field_definitions()]
            return 200, definition
        return 200, {"value": []}

    index, service, _ = make(handler)
    index.ensure()
    index.search("tea", None, k=3, levels=[2, 1])
    assert calls[-1].body["filter"] == "level eq 1 or level eq 2"
    assert "parent_id" in calls[-1].body["select"].split(",")
    index.records_by_id(["d-1", "d-2"])
    assert calls[-1].body["filter"] == "(search.in(id, 'd-1,d-2', ','))"


def test_level_filter_on_a_base_index_needs_no_request():
    index, service, _ = make(lambda sent: (200, {"value": []}))
    assert index.search("tea", None, levels=[1]) == [] and service.sent == []
    index.search("tea", None, levels=[0])
    assert "filter" not in service.sent[0].body
