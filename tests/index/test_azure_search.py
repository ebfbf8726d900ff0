"""AzureSearchIndex against a fake azure-core transport (``tests/index/search_fakes.py``): the real SDK builds real
requests, nothing leaves the process. Assertions are on the request bodies the service would receive. Writes
(batching, retries) are in ``test_azure_search_writes.py``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from azure.core.credentials import AccessToken

from chunking.errors import IndexError_
from chunking.index.azure import AzureSearchIndex, odata_string
from chunking.index.local import LocalIndex
from chunking.model import DOCUMENT_FIELDS
from chunking.services import make_index
from chunking.settings import Settings
from tests.index.search_fakes import ENDPOINT, FakeService, Sent, created_definition, make, record, stored

# -- schema ------------------------------------------------------------------------------------------------------


def test_ensure_creates_the_missing_index_with_the_spec_schema():
    body = created_definition(1536)
    fields = {f["name"]: f for f in body["fields"]}
    assert body["name"] == "chunks"
    assert list(fields) == [
        "id",
        "doc_id",
        "version",
        "source",
        "sourcepage",
        "ordinal",
        "page_start",
        "page_end",
        "char_start",
        "char_end",
        "token_count",
        "headings",
        "content",
        "content_hash",
        "embedding",
        "namespace",
        "image_urls",
        "title",
        "storage_url",
        "content_type",
        "last_modified",
        "size_bytes",
        "language",
        "acl_users",
        "acl_groups",
    ]
    assert {n: (f["type"], f["filterable"], f["sortable"], f["facetable"]) for n, f in fields.items()
            if n in DOCUMENT_FIELDS} == {
        "title": ("Edm.String", True, True, False), "storage_url": ("Edm.String", True, False, False),
        "content_type": ("Edm.String", True, False, True), "last_modified": ("Edm.DateTimeOffset", True, True, True),
        "size_bytes": ("Edm.Int64", True, True, False), "language": ("Edm.String", True, False, True),
        "acl_users": ("Collection(Edm.String)", True, False, False),
        "acl_groups": ("Collection(Edm.String)", True, False, False),
    }  # fmt: skip
    assert fields["namespace"]["filterable"] is True and fields["namespace"]["searchable"] is False
    assert {k: fields["image_urls"][k] for k in ("type", "retrievable", "searchable", "filterable", "facetable")} == {
        "type": "Collection(Edm.String)", "retrievable": True, "searchable": False, "filterable": False,
        "facetable": False}
    assert fields["id"]["key"] is True and fields["id"]["sortable"] is True
    assert [n for n, f in fields.items() if f.get("key")] == ["id"]
    for name in ("doc_id", "version", "source", "content_hash"):
        assert fields[name]["filterable"] is True and fields[name]["searchable"] is False
    for name in ("ordinal", "page_start", "page_end", "char_start", "char_end", "token_count"):
        assert (fields[name]["type"], fields[name]["filterable"], fields[name]["sortable"]) == ("Edm.Int32", True, True)
    assert fields["headings"]["type"] == "Collection(Edm.String)"
    assert fields["content"]["searchable"] is True and fields["content"]["filterable"] is False
    vector = fields["embedding"]
    assert (vector["type"], vector["dimensions"], vector["vectorSearchProfile"]) == (
        "Collection(Edm.Single)",
        1536,
        "hnsw-cosine",
    )
    assert body["vectorSearch"]["profiles"] == [{"name": "hnsw-cosine", "algorithm": "hnsw"}]
    (algorithm,) = body["vectorSearch"]["algorithms"]
    assert algorithm["kind"] == "hnsw" and algorithm["hnswParameters"]["metric"] == "cosine"
    (semantic,) = body["semantic"]["configurations"]
    assert semantic["prioritizedFields"]["prioritizedContentFields"] == [{"fieldName": "content"}]


def test_ensure_accepts_an_existing_matching_index_and_rejects_another_dimension():
    definition = created_definition(4)
    index, service, _ = make(lambda sent: (200, definition), dims=4)
    index.ensure()
    assert [s.method for s in service.sent] == ["GET"]  # nothing created
    other, _, _ = make(lambda sent: (200, definition), dims=8)
    with pytest.raises(IndexError_, match="4-dimensional vectors, but the embedder makes 8"):
        other.ensure()


def test_ensure_rejects_an_index_without_the_spec_fields():
    definition = created_definition(4)
    definition["fields"] = [f for f in definition["fields"] if f["name"] != "content_hash"]
    index, _, _ = make(lambda sent: (200, definition))
    with pytest.raises(IndexError_, match="lacks fields content_hash"):
        index.ensure()


def test_ensure_reports_a_refused_creation():
    def handler(sent: Sent) -> tuple:
        if sent.method == "GET":
            return 404, {"error": {"code": "ResourceNotFound", "message": "missing"}}
        return 400, {"error": {"code": "InvalidRequestParameter", "message": "dimensions too large"}}

    index, _, _ = make(handler)
    with pytest.raises(IndexError_, match="dimensions too large"):
        index.ensure()


# -- reads -------------------------------------------------------------------------------------------------------


def test_keys_of_pages_by_key_and_escapes_quotes():
    def handler(sent: Sent) -> tuple:
        start = 0 if len(service.sent) == 1 else 1000
        size = 1000 if start == 0 else 2
        return 200, {
            "value": [{"@search.score": 1.0, "id": f"k-{i:06d}", "version": "v1"} for i in range(start, start + size)]
        }

    index, service, _ = make(handler)
    keys = index.keys_of("O'Brien")
    assert len(keys) == 1002 and keys["k-001001"] == "v1"
    first, second = (s.body for s in service.sent)
    assert first == {
        "search": "*",
        "filter": "(doc_id eq 'O''Brien')",
        "orderby": "id asc",
        "select": "id,version",
        "top": 1000,
    }
    assert second["filter"] == "(doc_id eq 'O''Brien') and id gt 'k-000999'"


def test_records_of_and_doc_ids():
    def handler(sent: Sent) -> tuple:
        if "doc_id eq" in (sent.body.get("filter") or ""):
            return 200, {"value": [stored(2), stored(0), stored(1)]}
        return 200, {
            "value": [{"id": "a-1", "doc_id": "a"}, {"id": "a-2", "doc_id": "a"}, {"id": "b-1", "doc_id": "b"}]
        }

    index, service, _ = make(handler)
    records = index.records_of("d")
    assert [r.ordinal for r in records] == [0, 1, 2]
    assert records[1] == record(1).__class__.from_dict({**record(1).to_dict(), "embedding": None})
    assert "embedding" not in service.sent[0].body["select"].split(",")
    assert index.doc_ids() == {"a", "b"}
    assert "filter" not in service.sent[1].body and service.sent[1].body["select"] == "id,doc_id"


def test_vectors_by_key_looks_each_key_up_once():
    keys = [f"d-{i:06d}" for i in range(20)]

    def handler(sent: Sent) -> tuple:
        key = sent.path.split("docs('", 1)[1].split("')", 1)[0]
        if key.endswith("7"):
            return 200, {"id": key, "embedding": [0.25, -1.0, 0.0, 2.0]}
        if key.endswith("8"):
            return 200, {"id": key, "embedding": None}  # stored without a vector
        return 404, {"error": {"code": "ResourceNotFound", "message": "no"}}

    index, service, _ = make(handler)
    found = index.vectors_by_key(keys + keys[:3])
    assert [s.method for s in service.sent] == ["GET"] * len(keys)  # one lookup per key, no query
    assert service.sent[0].path.endswith("/docs('d-000000')")
    assert found == {key: (0.25, -1.0, 0.0, 2.0) for key in keys if key.endswith("7")}


def test_search_sends_a_hybrid_query_and_maps_hits():
    index, service, _ = make(lambda sent: (200, {"value": [stored(3), stored(1)]}))
    hits = index.search("install on linux", [0.1, 0.2, 0.3, 0.4], k=2)
    body = service.sent[0].body
    assert body["search"] == "install on linux" and body["top"] == 2
    assert body["vectorQueries"] == [{"kind": "vector", "vector": [0.1, 0.2, 0.3, 0.4], "k": 50, "fields": "embedding"}]
    assert "embedding" not in body["select"].split(",")
    assert [(h.record.ordinal, h.score) for h in hits] == [(3, 0.25), (1, 0.5)]
    assert hits[0].record.embedding is None


def test_vector_only_and_keyword_only_queries():
    index, service, _ = make(lambda sent: (200, {"value": []}))
    index.search("", [1.0, 0.0, 0.0, 0.0], k=3)
    index.search("words", None, k=3)
    assert "search" not in service.sent[0].body and "vectorQueries" in service.sent[0].body
    assert service.sent[1].body["search"] == "words" and "vectorQueries" not in service.sent[1].body
    assert index.search("", None, k=3) == [] and len(service.sent) == 2
    with pytest.raises(ValueError, match="3 dimensions"):
        index.search("x", [1.0, 0.0, 0.0], k=3)


def test_count():
    index, service, _ = make(lambda sent: (200, 1234))
    assert index.count() == 1234
    assert (service.sent[0].method, service.sent[0].path) == ("GET", "/indexes('chunks')/docs/$count")


def test_odata_string_doubles_quotes():
    assert odata_string("O'Brien's") == "'O''Brien''s'"


# -- credentials and factory -------------------------------------------------------------------------------------


class _FakeTokenCredential:
    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        assert scopes == ("https://search.azure.com/.default",)
        return AccessToken("entra-token", 4_102_444_800)


def test_without_a_key_the_default_azure_credential_is_used(monkeypatch: pytest.MonkeyPatch):
    import azure.identity

    monkeypatch.setattr(azure.identity, "DefaultAzureCredential", _FakeTokenCredential)
    service = FakeService(lambda sent: (200, 0))
    AzureSearchIndex(ENDPOINT, "chunks", 4, None, transport=service).count()
    assert service.sent[0].headers["Authorization"] == "Bearer entra-token"
    assert "api-key" not in service.sent[0].headers


def test_make_index_by_backend(tmp_path: Path):
    local = make_index(Settings(state_dir=tmp_path, embedding_dimensions=16))
    assert isinstance(local, LocalIndex) and local.path == tmp_path / "index.sqlite3" and local.dimensions == 16
    remote = make_index(
        Settings(
            index_backend="azure",
            search_endpoint=ENDPOINT,
            search_api_key="k",
            search_index_name="other",
            embedding_dimensions=1536,
        )
    )
    assert isinstance(remote, AzureSearchIndex) and (remote.index_name, remote.dimensions) == ("other", 1536)
    with pytest.raises(ValueError, match="AZURE_SEARCH_ENDPOINT"):
        make_index(Settings(index_backend="azure"))


def test_importing_chunking_index_does_not_import_the_azure_sdk():
    code = "import sys, chunking.index; print('azure.search.documents' in sys.modules, 'numpy' in sys.modules)"
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_user_text_is_escaped_for_the_simple_query_syntax():
    from chunking.index.azure import simple_query_text

    assert simple_query_text('install -y "pkg" (a|b) c* ~d e\\f +g') == \
        'install \\-y \\"pkg\\" \\(a\\|b\\) c\\* \\~d e\\\\f \\+g'
    assert simple_query_text("日本語の検索") == "日本語の検索"


def test_semantic_ranker_when_enabled():
    def answer(sent):
        return 200, {"value": [{**stored(1), "@search.rerankerScore": 2.5}]}

    index, service, _ = make(answer, semantic_ranker=True)
    hits = index.search("install on linux", [0.1, 0.2, 0.3, 0.4], k=1)
    body = service.sent[0].body
    assert (body["queryType"], body["semanticConfiguration"]) == ("semantic", "default")
    assert [h.score for h in hits] == [2.5]
    plain, service2, _ = make(lambda sent: (200, {"value": []}))
    plain.search("words", None, k=1)
    assert "queryType" not in service2.sent[0].body


def test_semantic_ranker_setting():
    from chunking.settings import Settings, SettingsError

    assert Settings.from_env({"AZURE_SEARCH_SEMANTIC_RANKER": "true"}).search_semantic_ranker is True
    assert Settings.from_env({}).search_semantic_ranker is False
    # The plan names azd and infra/ use for the same variable.
    assert [Settings.from_env({"AZURE_SEARCH_SEMANTIC_RANKER": plan}).search_semantic_ranker
            for plan in ("disabled", "free", "Standard")] == [False, True, True]
    with pytest.raises(SettingsError, match="must be disabled, free or standard .*, or true or false, got 'maybe'"):
        Settings.from_env({"AZURE_SEARCH_SEMANTIC_RANKER": "maybe"})
