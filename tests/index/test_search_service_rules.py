"""Azure AI Search as the service answers (tests/search_fake.py): the semantic ranker and its quota, hybrid
queries fused with RRF, ``$select`` / ``$orderby`` / ``selectedFields`` checked against the index definition,
and an index made elsewhere. Everything goes through the real SDK."""

from __future__ import annotations

import hashlib
import logging

import pytest
from azure.core.credentials import AzureKeyCredential
from azure.core.exceptions import HttpResponseError
from azure.search.documents import SearchClient
from azure.search.documents.indexes import SearchIndexClient
from azure.search.documents.models import VectorizedQuery

from chunking.errors import IndexError_
from chunking.index.azure import AzureSearchIndex, index_definition
from chunking.ledger import Ledger, LocalLedgerStore
from chunking.model import ChunkRecord
from chunking.pipeline.vector_reuse import reusable_vectors, vector_keys
from tests.search_fake import ENDPOINT, SearchServiceFake


def record(i: int, text: str, vector: tuple[float, ...], doc: str = "d", version: str = "v1") -> ChunkRecord:
    return ChunkRecord(id=f"{doc}-{version}-{i:06d}", doc_id=doc, version=version, source="a.txt", sourcepage="a.txt",
                       ordinal=i, page_start=0, page_end=0, char_start=0, char_end=len(text), content=text,
                       content_hash=hashlib.sha256(text.encode()).hexdigest(), token_count=5, headings=(),
                       embedding=vector)


DOCS = [
    record(0, "harbour lights at night", (1.0, 0.0, 0.0, 0.0)),
    record(1, "harbour cranes and ships", (0.0, 1.0, 0.0, 0.0)),
    record(2, "mountain huts", (0.0, 0.0, 1.0, 0.0)),
]


def make(fake: SearchServiceFake, **kwargs) -> AzureSearchIndex:
    index = AzureSearchIndex(ENDPOINT, "chunks", 4, "key", transport=fake, sleep=[].append, **kwargs)
    index.ensure()
    return index


def client(fake: SearchServiceFake) -> SearchClient:
    return SearchClient(ENDPOINT, "chunks", AzureKeyCredential("key"), transport=fake, retry_total=0)


# -- hybrid queries: RRF over the text and vector legs -----------------------------------------------------------

def test_the_vector_leg_of_a_hybrid_query_decides_between_equal_text_matches():
    fake = SearchServiceFake()
    index = make(fake)
    index.upsert(DOCS)

    towards_cranes = [h.record.id for h in index.search("harbour", (0.0, 1.0, 0.5, 0.0), k=3)]
    towards_lights = [h.record.id for h in index.search("harbour", (1.0, 0.0, 0.5, 0.0), k=3)]

    # The text leg ties 0 and 1 (one term each); the vector leg ranks the nearest first; RRF (k=60) sums
    # 1/(60 + rank) over the legs, so the vector decides whichever way the text tie is broken.
    assert towards_cranes == ["d-v1-000001", "d-v1-000000", "d-v1-000002"]
    assert towards_lights == ["d-v1-000000", "d-v1-000001", "d-v1-000002"]  # 2: no text match, a near vector


def test_hybrid_scores_are_the_reciprocal_rank_fusion_of_both_legs():
    fake = SearchServiceFake()
    make(fake).upsert(DOCS)

    hits = list(client(fake).search("harbour cranes", vector_queries=[
        VectorizedQuery(vector=[1.0, 0.1, 0.0, 0.0], k_nearest_neighbors=1, fields="embedding")], select=["id"]))

    # text: 1 (two terms) then 0; vector (k=1): 0 alone.
    assert [(h["id"], round(h["@search.score"], 9)) for h in hits] == [
        ("d-v1-000000", round(1 / 62 + 1 / 61, 9)), ("d-v1-000001", round(1 / 61, 9))]


def test_a_vector_query_on_an_unknown_field_or_of_the_wrong_length_is_refused():
    fake = SearchServiceFake()
    make(fake).upsert(DOCS)

    with pytest.raises(HttpResponseError) as caught:
        list(client(fake).search("harbour", vector_queries=[
            VectorizedQuery(vector=[0.0, 1.0, 0.0, 0.0], k_nearest_neighbors=2, fields="vector")]))
    assert caught.value.status_code == 400
    with pytest.raises(HttpResponseError) as caught:
        list(client(fake).search(None, vector_queries=[
            VectorizedQuery(vector=[0.0, 1.0, 0.0], k_nearest_neighbors=2, fields="embedding")]))
    assert caught.value.status_code == 400


# -- the semantic ranker -----------------------------------------------------------------------------------------

def test_with_the_semantic_ranker_hits_come_in_reranker_order_with_its_score():
    fake = SearchServiceFake()
    index = make(fake, semantic_ranker=True)
    index.upsert(DOCS)

    hits = index.search("harbour cranes", None, k=2)

    assert [h.record.id for h in hits] == ["d-v1-000001", "d-v1-000000"]
    assert [h.score for h in hits] == [4.0, 2.0]  # @search.rerankerScore, 0-4


def test_a_spent_semantic_quota_falls_back_to_plain_hybrid_and_says_so_once(caplog):
    fake = SearchServiceFake(semantic_queries_left=0)  # the free plan's monthly queries are used up
    index = make(fake, semantic_ranker=True)
    index.upsert(DOCS)

    with caplog.at_level(logging.WARNING, logger="chunking.index.azure"):
        first = index.search("harbour cranes", (0.0, 1.0, 0.0, 0.0), k=2)
        second = index.search("harbour lights", (1.0, 0.0, 0.0, 0.0), k=2)

    assert [h.record.id for h in first] == ["d-v1-000001", "d-v1-000000"]
    assert [h.record.id for h in second] == ["d-v1-000000", "d-v1-000001"]
    assert [r.getMessage() for r in caplog.records if "semantic" in r.getMessage()] == [
        "index 'chunks': the semantic ranker answered 402 (its quota is spent); queries go on as plain hybrid "
        "(RRF) without it"]
    assert fake.semantic_refusals == 1  # the second query did not ask again


# -- $select, $orderby, selectedFields -----------------------------------------------------------------------

def test_select_and_orderby_of_unknown_or_unfit_fields_are_refused():
    fake = SearchServiceFake()
    make(fake).upsert(DOCS)
    search = client(fake)

    for kwargs in ({"select": ["id", "colour"]}, {"order_by": ["content asc"]}, {"order_by": ["colour desc"]}):
        with pytest.raises(HttpResponseError) as caught:
            list(search.search("*", **kwargs))
        assert caught.value.status_code == 400, kwargs
    with pytest.raises(HttpResponseError) as caught:
        search.get_document("d-v1-000000", selected_fields=["id", "colour"])
    assert caught.value.status_code == 400


def _index_made_elsewhere(fake: SearchServiceFake, **changes: dict) -> None:
    """Create ``chunks`` as another tool would: our definition with *changes* to some fields' attributes."""
    definition = index_definition("chunks", 4)
    for field_def in definition.fields:
        for name, value in changes.get(field_def.name, {}).items():
            setattr(field_def, name, value)
    SearchIndexClient(ENDPOINT, AzureKeyCredential("key"), transport=fake, retry_total=0).create_index(definition)


@pytest.mark.parametrize("ensured", [True, False])
def test_a_non_retrievable_vector_field_is_refused_by_select_and_means_embed_again(tmp_path, caplog, ensured):
    fake = SearchServiceFake()
    _index_made_elsewhere(fake, embedding={"hidden": True})
    index = make(fake)
    if not ensured:  # a fresh object that never read the definition: the refused lookup tells it
        index = AzureSearchIndex(ENDPOINT, "chunks", 4, "key", transport=fake, sleep=[].append)
    index.upsert(DOCS)
    with pytest.raises(HttpResponseError) as caught:  # the service's answer to selecting it
        client(fake).get_document("d-v1-000000", selected_fields=["id", "embedding"])
    assert caught.value.status_code == 400
    ledger = Ledger(LocalLedgerStore(tmp_path / "ledger.sqlite3"))
    ledger.record_batch("d", "v1", 0, [r.id for r in DOCS], vector_keys(DOCS), "emb/4")
    again = [record(0, "harbour lights at night", (1.0, 0.0, 0.0, 0.0), version="v2")]

    with caplog.at_level(logging.WARNING, logger="chunking.index.azure"):
        assert index.vectors_by_key(["d-v1-000000"]) == {}
        assert reusable_vectors(again, doc_id="d", embedder="emb/4", ledger=ledger, index=index) == {}

    assert [r.getMessage() for r in caplog.records] == [
        "index 'chunks': field embedding is not retrievable; vector reuse is off, texts are embedded again"]


def test_check_index_says_everything_an_index_made_elsewhere_lacks():
    fake = SearchServiceFake()
    definition = index_definition("chunks", 4)
    definition.fields = [f for f in definition.fields if f.name not in ("content_hash", "token_count")]
    for field_def in definition.fields:
        if field_def.name == "sourcepage":
            field_def.hidden = True
        if field_def.name == "doc_id":
            field_def.filterable = False
    SearchIndexClient(ENDPOINT, AzureKeyCredential("key"), transport=fake, retry_total=0).create_index(definition)

    with pytest.raises(IndexError_) as caught:
        make(fake)

    assert str(caught.value) == (
        "index 'chunks' cannot hold these records: it lacks fields content_hash, token_count; field sourcepage "
        "is not retrievable; field doc_id is not filterable")


# -- indexing requests ---------------------------------------------------------------------------------------

def _index_docs(fake: SearchServiceFake, actions: list[dict]) -> list:
    return client(fake).index_documents(actions_batch(actions))


def actions_batch(actions: list[dict]):
    from azure.search.documents import IndexDocumentsBatch

    batch = IndexDocumentsBatch()
    for action in actions:
        kind = action.pop("@search.action")
        {"upload": batch.add_upload_actions, "delete": batch.add_delete_actions, "merge": batch.add_merge_actions,
         "mergeOrUpload": batch.add_merge_or_upload_actions}[kind]([action])
    return batch


def test_a_delete_answers_200_whether_or_not_the_key_existed_and_a_partial_failure_is_207():
    fake = SearchServiceFake()
    make(fake).upsert(DOCS[:1])

    results = _index_docs(fake, [{"@search.action": "delete", "id": "d-v1-000000"},
                                 {"@search.action": "delete", "id": "never-there"},
                                 {"@search.action": "upload", "id": "new", "content": "x"}])
    assert [(r.key, r.status_code) for r in results] == [("d-v1-000000", 200), ("never-there", 200), ("new", 201)]

    statuses = []
    original = fake.send
    fake.send = lambda request, **kw: (lambda response: (statuses.append(response.status_code), response)[1])(
        original(request, **kw))
    results = _index_docs(fake, [{"@search.action": "merge", "id": "missing", "content": "x"},
                                 {"@search.action": "upload", "id": "bad key!", "content": "x"},
                                 {"@search.action": "upload", "id": "fine", "content": "x"}])
    assert statuses == [207]
    assert [(r.key, r.succeeded, r.status_code) for r in results] == [
        ("missing", False, 404), ("bad key!", False, 400), ("fine", True, 201)]


def test_wrong_types_and_vector_lengths_refuse_the_request_and_an_oversized_one_is_413():
    fake = SearchServiceFake(max_request_bytes=2000)
    index = make(fake)

    for bad in ({"ordinal": "three"}, {"embedding": [1.0, 0.0]}, {"headings": "not a list"}):
        with pytest.raises(HttpResponseError) as caught:
            _index_docs(fake, [{"@search.action": "upload", "id": "k", **bad}])
        assert caught.value.status_code == 400, bad
    with pytest.raises(IndexError_) as caught:
        index.upsert([record(0, "long " * 500, (1.0, 0.0, 0.0, 0.0))])
    assert caught.value.status == 413


def test_each_index_holds_its_own_documents():
    fake = SearchServiceFake()
    first = make(fake)
    other = AzureSearchIndex(ENDPOINT, "other", 4, "key", transport=fake, sleep=[].append)
    other.ensure()
    first.upsert(DOCS)

    assert other.count() == 0 and other.doc_ids() == set()
    assert first.count() == 3


def test_with_the_semantic_ranker_on_check_index_wants_its_configuration():
    fake = SearchServiceFake()
    definition = index_definition("chunks", 4)
    definition.semantic_search = None
    SearchIndexClient(ENDPOINT, AzureKeyCredential("key"), transport=fake, retry_total=0).create_index(definition)
    make(fake)  # an index with no semantic configuration gets ours in place (docs/search.md#the-index-definition)
    assert fake.definitions["chunks"]["semantic"]["configurations"][0]["name"] == "default"
    make(fake, semantic_ranker=True)

    fake = SearchServiceFake()  # one made elsewhere with a configuration of another name keeps it
    definition = index_definition("chunks", 4)
    definition.semantic_search.configurations[0].name = definition.semantic_search.default_configuration_name = "x"
    SearchIndexClient(ENDPOINT, AzureKeyCredential("key"), transport=fake, retry_total=0).create_index(definition)
    make(fake)  # without the ranker the index is fine

    with pytest.raises(IndexError_) as caught:
        make(fake, semantic_ranker=True)

    assert str(caught.value) == ("index 'chunks' cannot hold these records: it has no semantic configuration "
                                 "'default', which the semantic ranker uses (AZURE_SEARCH_SEMANTIC_RANKER)")


def test_the_fake_answers_the_spec_example_batch_as_the_example_says():
    import json
    from pathlib import Path

    from azure.search.documents.indexes.models import SearchField, SearchIndex

    example = json.loads((Path(__file__).parents[1] / "data" / "specs" / "examples" /
                          "SearchIndexIndexDocuments.json").read_text())
    fake = SearchServiceFake()
    SearchIndexClient(ENDPOINT, AzureKeyCredential("key"), transport=fake, retry_total=0).create_index(SearchIndex(
        name="indexdocumentsexample", fields=[SearchField(name="docId", type="Edm.String", key=True),
                                              SearchField(name="title", type="Edm.String"),
                                              SearchField(name="description", type="Edm.String")]))
    documents = SearchClient(ENDPOINT, "indexdocumentsexample", AzureKeyCredential("key"), transport=fake,
                             retry_total=0)

    results = documents.index_documents(actions_batch([dict(a) for a in example["parameters"]["batch"]["value"]]))

    assert [{"key": r.key, "status": r.succeeded, "errorMessage": r.error_message, "statusCode": r.status_code}
            for r in results] == example["responses"]["207"]["body"]["value"]
