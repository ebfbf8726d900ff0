"""The Azure AI Search fake is as unkind as the service: queries lag writes, lookups by key do not, and it
throttles with Retry-After. These tests pin that behaviour down through the real SDK."""

from __future__ import annotations

import hashlib

import pytest
from azure.search.documents import SearchClient
from azure.core.credentials import AzureKeyCredential
from azure.core.exceptions import HttpResponseError

from chunking.index.azure_search import AzureSearchIndex
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
    wanted = {record(1, "a").content_hash}
    assert set(index.vectors_by_content_hash(wanted)) == wanted
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
