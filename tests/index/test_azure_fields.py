"""AzureSearchIndex document fields through the real SDK on the stateful fake: an index of schema 1 gains the
fields in place (existing documents read null), a field that exists with another definition stops ``ensure``
(the fake refuses such a change as the service does), filters are checked and sent, and a field update is a
``merge`` that leaves text and vector alone."""

from __future__ import annotations

import copy
import dataclasses
import hashlib

import pytest

from chunking.errors import IndexError_
from chunking.index.azure import AzureSearchIndex
from chunking.index.odata import FilterError
from chunking.index.security import security_filter
from chunking.model import DOCUMENT_FIELDS, ChunkRecord
from tests.search_fake import ENDPOINT, SearchServiceFake


def record(doc: str, content: str, vector, **fields) -> ChunkRecord:
    return ChunkRecord(id=f"{doc}-000000", doc_id=doc, version="v1", source=f"{doc}.md", sourcepage=f"{doc}.md",
                       ordinal=0, page_start=0, page_end=0, char_start=0, char_end=len(content), content=content,
                       content_hash=hashlib.sha256(content.encode()).hexdigest(), token_count=3, embedding=vector,
                       **fields)


def schema_1(fake: SearchServiceFake) -> None:
    """An index created before the document fields existed, holding one document."""
    make(fake, ()).ensure()
    definition = fake.definitions["chunks"]
    definition["fields"] = [f for f in definition["fields"] if f["name"] not in DOCUMENT_FIELDS]
    old = {k: v for k, v in record("old", "old salaries", [1.0, 0.0, 0.0, 0.0]).to_dict().items()
           if k in {f["name"] for f in definition["fields"]}}
    fake.committed[old["id"]] = fake.visible[old["id"]] = old


def make(fake: SearchServiceFake, metadata_fields=("category",)) -> AzureSearchIndex:
    return AzureSearchIndex(ENDPOINT, "chunks", 4, "key", transport=fake, sleep=lambda s: None,
                            metadata_fields=metadata_fields)


def test_a_schema_1_index_gains_the_fields_in_place():
    fake = SearchServiceFake()
    schema_1(fake)
    index = make(fake)
    before = index.schema_info()
    assert (before.version, before.missing, before.records) == (1, (
        "title", "storage_url", "content_type", "last_modified", "size_bytes", "language", "acl_users",
        "acl_groups", "category"), 1)
    index.ensure()
    names = [f["name"] for f in fake.definitions["chunks"]["fields"]]
    assert names[-9:] == ["title", "storage_url", "content_type", "last_modified", "size_bytes", "language",
                          "acl_users", "acl_groups", "category"]
    after = index.schema_info()
    assert (after.version, after.missing, after.metadata_fields) == (2, (), ("category",))
    old = index.records_by_id(["old-000000"])["old-000000"]  # null in the new fields
    assert (old.title, old.last_modified, old.acl_users, old.metadata) == ("", None, (), ())
    # A METADATA_FIELDS field added later is added the same way; nothing else changes.
    make(fake, ("category", "region")).ensure()
    assert [f["name"] for f in fake.definitions["chunks"]["fields"]][-2:] == ["category", "region"]


def test_a_field_of_another_definition_stops_ensure():
    fake = SearchServiceFake()
    schema_1(fake)
    fake.definitions["chunks"]["fields"].append(
        {"name": "category", "type": "Edm.Int32", "key": False, "retrievable": True, "searchable": False,
         "filterable": True, "sortable": False, "facetable": False})
    with pytest.raises(IndexError_, match=r"cannot be changed in place \(category: type is Edm.Int32, wanted "
                                          r"Edm.String; category: facetable is False, wanted True\)"):
        make(fake).ensure()
    # Nothing was sent that the service would refuse: the definition is unchanged.
    assert [f["name"] for f in fake.definitions["chunks"]["fields"]][-1] == "category"


DOCS = [
    record("pay", "salaries paid monthly", (1.0, 0.0, 0.0, 0.0), title="Payroll", last_modified="2024-05-01T10:20:30Z",
           acl_groups=("hr",), metadata=(("category", "policy"),)),
    record("menu", "salaries of cooks", (0.0, 1.0, 0.0, 0.0), title="Menu", metadata=(("category", "canteen"),)),
]


def test_records_filters_and_field_updates():
    fake = SearchServiceFake()
    index = make(fake)
    index.ensure()
    index.upsert(DOCS)
    assert index.records_by_id(["pay-000000"])["pay-000000"] == dataclasses.replace(DOCS[0], embedding=None)
    stored = fake.committed["pay-000000"]
    assert (stored["category"], stored["acl_groups"], stored["last_modified"]) == (
        "policy", ["hr"], "2024-05-01T10:20:30Z")
    assert [h.record.doc_id for h in index.search("salaries", None, filter="category eq 'policy'")] == ["pay"]
    trimmed = index.search("salaries", None, filter=security_filter("alice", [], "public"))
    assert [h.record.doc_id for h in trimmed] == ["menu"]
    with pytest.raises(FilterError, match="unknown or unfilterable field 'colour'"):
        index.search("salaries", None, filter="colour eq 'x'")
    vector = copy.deepcopy(stored["embedding"])
    assert index.update_fields(["pay-000000", "gone-000000"], {"acl_users": ["alice"], "acl_groups": [],
                                                               "metadata": {}}) == 2
    after = fake.committed["pay-000000"]
    assert (after["acl_users"], after["acl_groups"], after["category"], after["embedding"], after["content"]) == (
        ["alice"], [], None, vector, "salaries paid monthly")
    assert "gone-000000" not in fake.committed  # a merge never creates a document
    assert [h.record.doc_id for h in index.search("salaries", None, filter=security_filter("alice", [], "deny"))] \
        == ["pay"]


def test_an_index_without_image_urls_gains_it_in_place_and_old_chunks_read_no_image():
    fake = SearchServiceFake()
    make(fake, ()).ensure()
    definition = fake.definitions["chunks"]
    definition["fields"] = [f for f in definition["fields"] if f["name"] != "image_urls"]
    old = {k: v for k, v in record("old", "old salaries", [1.0, 0.0, 0.0, 0.0]).to_dict().items()
           if k != "image_urls"}
    fake.committed[old["id"]] = fake.visible[old["id"]] = old
    index = make(fake, ())

    index.ensure()

    added = [f for f in fake.definitions["chunks"]["fields"] if f["name"] == "image_urls"]
    assert [(f["type"], f["retrievable"], f["filterable"]) for f in added] == [("Collection(Edm.String)", True,
                                                                                False)]
    assert index.records_by_id(["old-000000"])["old-000000"].image_urls == ()
    index.upsert([record("new", "a chart", [0.0, 1.0, 0.0, 0.0], image_urls=("https://a/figures/x.png",))])
    assert index.records_by_id(["new-000000"])["new-000000"].image_urls == ("https://a/figures/x.png",)
