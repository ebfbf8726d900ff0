"""The Azure AI Search fake is as unkind as the service: queries lag writes, lookups by key do not, and it
throttles with Retry-After. These tests pin that behaviour down through the real SDK."""

from __future__ import annotations

import hashlib

import pytest
from azure.core.credentials import AzureKeyCredential
from azure.core.exceptions import HttpResponseError
from azure.search.documents import SearchClient

from chunking.index.azure import AzureSearchIndex
from chunking.model import ChunkRecord
from tests.search_fake import ENDPOINT, SearchServiceFake


def record(i: int, doc: str = "d", version: str = "v1") -> ChunkRecord:
    text = f"chunk number {i} about harbours"
    return ChunkRecord(id=f"{doc}-{version}-{i:06d}", doc_id=doc, version=version, source="a.txt", sourcepage="a.txt",
                       ordinal=i, page_start=0, page_end=0, char_start=0, char_end=len(text), content=text,
                       content_hash=hashlib.sha256(text.encode()).hexdigest(), token_count=5, headings=(),
                       embedding=(1.0, 0.0, 0.0, float(i)))


def make(fake: SearchServiceFake, sleeps: list | None = None) -> AzureSearchIndex:
    index = AzureSearchIndex(ENDPOINT, "chunks", 4, "key", transport=fake,
                             sleep=(sleeps if sleeps is not None else []).append)
    index.ensure()
    return index


def test_queries_see_writes_only_after_the_lag_lookups_at_once():
    fake = SearchServiceFake(lag_requests=3)
    index = make(fake)
    index.upsert([record(0), record(1)])
    client = SearchClient(ENDPOINT, "chunks", AzureKeyCredential("key"), transport=fake, retry_total=0)
    assert client.get_document("d-v1-000001")["content"] == "chunk number 1 about harbours"  # lookup: immediate
    assert index.keys_of("d") == {}  # query: not yet
    assert index.keys_of("d") == {}
    assert index.keys_of("d") == {"d-v1-000000": "v1", "d-v1-000001": "v1"}  # after 3 more requests
    index.delete(["d-v1-000000"])
    assert set(index.keys_of("d")) == {"d-v1-000000", "d-v1-000001"}  # the delete lags too
    with pytest.raises(Exception):
        client.get_document("d-v1-000000")  # but a lookup no longer finds it
    fake.settle()
    assert set(index.keys_of("d")) == {"d-v1-000001"}
    assert index.count() == 1


def test_filters_orderby_and_search_in():
    fake = SearchServiceFake()
    index = make(fake)
    index.upsert([record(i, doc) for doc in ("a", "b") for i in range(3)])
    assert list(index.keys_of("b")) == ["b-v1-000000", "b-v1-000001", "b-v1-000002"]
    assert index.doc_ids() == {"a", "b"}
    assert set(index.vectors_by_key(["a-v1-000001", "nope"])) == {"a-v1-000001"}
    assert set(index.records_by_id(["a-v1-000002", "nope"])) == {"a-v1-000002"}
    assert [h.record.doc_id for h in index.search("harbours", None, k=2)] and index.search("zebra", None) == []


def test_throttling_answers_429_with_retry_after_and_the_client_waits():
    fake = SearchServiceFake()
    sleeps: list[float] = []
    index = make(fake, sleeps)
    fake.throttle(2, retry_after_s=7)
    index.upsert([record(0)])
    assert sleeps == [7.0, 7.0] and fake.throttled == 2
    fake.throttle(1, retry_after_s=300)  # longer than the client waits inside one call
    with pytest.raises(Exception, match="retry after 300 s"):
        index.upsert([record(1)])
    fake.fail(1, 503)
    index.delete(["d-v1-000000"])  # 503 without Retry-After: exponential back-off, then success
    assert len(sleeps) == 3


def test_an_unknown_route_is_a_400_not_a_silent_success():
    fake = SearchServiceFake()
    client = SearchClient(ENDPOINT, "chunks", AzureKeyCredential("key"), transport=fake, retry_total=0)
    with pytest.raises(HttpResponseError):
        client.autocomplete("harb", "sg")


def test_an_index_update_may_add_fields_but_not_change_or_delete_them():
    from azure.search.documents.indexes import SearchIndexClient
    from azure.search.documents.indexes import models as m

    fake = SearchServiceFake()
    make(fake)
    indexes = SearchIndexClient(ENDPOINT, AzureKeyCredential("key"), transport=fake, retry_total=0)
    definition = indexes.get_index("chunks")
    definition.fields.append(m.SimpleField(name="category", type="Edm.String", filterable=True))
    indexes.create_or_update_index(definition)  # a new field: accepted in place
    assert [f["name"] for f in fake.definitions["chunks"]["fields"]][-1] == "category"
    changed = indexes.get_index("chunks")
    next(f for f in changed.fields if f.name == "category").facetable = True
    with pytest.raises(HttpResponseError, match=r"Existing field 'category' cannot be changed \(facetable\)"):
        indexes.create_or_update_index(changed)
    fewer = indexes.get_index("chunks")
    fewer.fields = [f for f in fewer.fields if f.name != "category"]
    with pytest.raises(HttpResponseError, match="Existing field 'category' cannot be deleted"):
        indexes.create_or_update_index(fewer)
    retrievable = indexes.get_index("chunks")
    next(f for f in retrievable.fields if f.name == "category").hidden = True  # retrievable may change
    indexes.create_or_update_index(retrievable)


def test_unknown_fields_merge_and_collection_filters():
    fake = SearchServiceFake()
    make(fake)
    client = SearchClient(ENDPOINT, "chunks", AzureKeyCredential("key"), transport=fake, retry_total=0)
    with pytest.raises(HttpResponseError, match="The property 'colour' does not exist"):
        client.upload_documents([{"id": "x", "colour": "red"}])
    results = client.merge_documents([{"id": "missing", "content": "x"}])
    assert [(r.key, r.succeeded, r.status_code) for r in results] == [("missing", False, 404)]
    with pytest.raises(HttpResponseError, match="Could not find a property named 'colour'"):
        list(client.search("*", filter="colour eq 'red'"))
    with pytest.raises(HttpResponseError, match="The field 'content' is not filterable"):
        list(client.search("*", filter="content eq 'red'"))
    # Collections: the fake's own evaluator of any() and search.in, on documents of a hand-made index.
    from tests.search_fake import _parse_filter

    docs = [{"id": "a", "acl": ["alice"], "g": []}, {"id": "b", "acl": [], "g": ["hr", "all staff"]},
            {"id": "c", "acl": [], "g": []}]
    def ids(text):
        predicate = _parse_filter(text)
        return [d["id"] for d in docs if predicate(d)]
    assert ids("acl/any(u: u eq 'alice')") == ["a"]
    assert ids("g/any(x: search.in(x, 'hr nobody'))") == ["b"]
    assert ids("g/any(x: search.in(x, 'all staff', ','))") == ["b"]
    assert ids("not acl/any() and not g/any()") == ["c"]
