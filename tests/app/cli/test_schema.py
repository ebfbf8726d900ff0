"""`chunking schema`: the index definition the settings create, printed without contacting any service, is the
one ensure() sends (docs/search.md#the-index-definition); and `chunking search --token` (docs/security.md)."""

from __future__ import annotations

import io
import json

from chunking.embeddings import OfflineLexicalEmbedder
from chunking.index.azure import AzureSearchIndex
from chunking.services import index_design
from chunking.settings import Settings
from tests.index.test_index_design import record, token
from tests.search_fake import ENDPOINT, SearchServiceFake

AOAI = {"EMBEDDING_BACKEND": "azure_openai", "AZURE_OPENAI_ENDPOINT": "https://acct.openai.azure.com/",
        "AZURE_OPENAI_EMBEDDING_DEPLOYMENT": "emb"}


def test_schema_json_is_the_definition_ensure_creates(cli, monkeypatch):
    for name, value in {**AOAI, "INDEX_LAYOUT": "azure-search-openai-demo", "SEARCH_VECTOR_COMPRESSION": "binary",
                        "SEARCH_VECTOR_TRUNCATION_DIMENSIONS": "1024", "SEARCH_VECTOR_OVERSAMPLING": "10",
                        "SEARCH_PERMISSION_FILTERS": "true", "SEARCH_LANGUAGES": "es,ja"}.items():
        monkeypatch.setenv(name, value)
    run = cli("schema", "--json")
    assert run.status == 0, run.err
    printed = json.loads(run.out)
    vector = printed["vectorSearch"]
    assert vector["profiles"] == [{"name": "hnsw-cosine", "algorithm": "hnsw", "vectorizer": "openai-vectorizer",
                                   "compression": "embedding-compression"}]
    assert vector["vectorizers"] == [{"name": "openai-vectorizer", "kind": "azureOpenAI", "azureOpenAIParameters": {
        "resourceUri": "https://acct.openai.azure.com", "deploymentId": "emb", "modelName": "text-embedding-3-small"}}]
    assert vector["compressions"] == [{"name": "embedding-compression", "kind": "binaryQuantization",
                                       "truncationDimension": 1024, "rescoringOptions": {
                                           "enableRescoring": True, "defaultOversampling": 10.0,
                                           "rescoreStorageMethod": "preserveOriginals"}}]
    fields = {f["name"]: f for f in printed["fields"]}
    assert {n: fields[n].get("permissionFilter") for n in ("oids", "groups")} == {"oids": "userIds",
                                                                                 "groups": "groupIds"}
    assert printed["permissionFilterOption"] == "enabled"
    assert {n: fields[n]["analyzer"] for n in ("content_es", "content_ja")} == {"content_es": "es.microsoft",
                                                                                "content_ja": "ja.microsoft"}
    assert {"sourcefile", "category", "storageUrl", "sourcepage", "embedding", "content", "id"} <= set(fields)
    assert "acl_users" not in fields and "storage_url" not in fields
    assert printed["semantic"]["configurations"] == [{"name": "default", "prioritizedFields": {
        "titleField": {"fieldName": "sourcepage"}, "prioritizedContentFields": [{"fieldName": "content"}]}}]
    # The same function creates the index: the service receives exactly what was printed.
    fake = SearchServiceFake()
    settings = Settings.from_env(dict(AOAI, INDEX_LAYOUT="azure-search-openai-demo", SEARCH_VECTOR_COMPRESSION="binary",
                                      SEARCH_VECTOR_TRUNCATION_DIMENSIONS="1024", SEARCH_VECTOR_OVERSAMPLING="10",
                                      SEARCH_PERMISSION_FILTERS="true", SEARCH_LANGUAGES="es,ja"))
    index = AzureSearchIndex(ENDPOINT, "chunks", 1536, "key", transport=fake, design=index_design(settings),
                             metadata_fields=settings.metadata.field_names)
    index.ensure()
    assert fake.definitions["chunks"] == printed


def test_schema_of_the_default_settings_needs_no_service(cli):
    run = cli("schema")
    assert run.status == 0, run.err
    lines = run.out.splitlines()
    assert lines[0] == "index chunks"
    assert "  vectorizer: none (queries must bring their own vector)" in lines
    assert "  compression scalar, rescoring x4: 256 bytes per vector (float32: 1024)" in lines
    assert lines[-2:] == ["semantic configuration default: content content", "permission filtering: off"]


def test_schema_refuses_settings_that_make_no_valid_definition(cli, monkeypatch):
    monkeypatch.setenv("SEARCH_QUERY_VECTORIZATION", "service")
    run = cli("schema")
    assert run.status == 2
    assert "SEARCH_QUERY_VECTORIZATION=service needs the Azure OpenAI embedder" in run.err
    monkeypatch.delenv("SEARCH_QUERY_VECTORIZATION")
    for name, value in {**AOAI, "EMBEDDING_MODEL": "text-embedding-ada-002",
                        "SEARCH_VECTOR_TRUNCATION_DIMENSIONS": "512"}.items():
        monkeypatch.setenv(name, value)
    run = cli("schema")
    assert run.status == 2 and "applies to text-embedding-3-small and text-embedding-3-large" in run.err


def test_search_token_is_refused_on_the_local_index(cli):
    run = cli("search", "salary", "--token", "eyJ.e30.sig")
    assert run.status == 2
    assert run.err == ("chunking search: --token is for Azure AI Search with SEARCH_PERMISSION_FILTERS (the local "
                       "index trims with --user and --groups)\n")
    assert "eyJ" not in run.out + run.err


def test_search_token_trims_to_what_the_user_may_read(cli, monkeypatch):
    """`chunking search --token -` against Azure AI Search with permission filters: the token read from stdin goes
    to the service, which returns only the user's documents and the public ones."""
    monkeypatch.setenv("AZURE_SEARCH_ENDPOINT", ENDPOINT)
    monkeypatch.setenv("AZURE_SEARCH_API_KEY", "key")
    monkeypatch.setenv("SEARCH_PERMISSION_FILTERS", "true")
    fake = SearchServiceFake()

    def make_index(settings):
        return AzureSearchIndex(ENDPOINT, settings.search_index_name, settings.embedding_dimensions, "key",
                                transport=fake, sleep=lambda s: None, design=index_design(settings))

    monkeypatch.setattr("chunking.app.cli.search.make_index", make_index)
    index = make_index(Settings.from_env({"SEARCH_PERMISSION_FILTERS": "true"}))
    index.ensure()
    embedder = OfflineLexicalEmbedder(256)
    index.upsert([record("salaries", "salary bands of the board", embedder, acl_users=("alice-oid",)),
                  record("handbook", "salary payment dates for everyone", embedder)])
    monkeypatch.setattr("sys.stdin", io.StringIO(f"Bearer {token('alice-oid')}\n"))
    run = cli("search", "salary", "--token", "-", "--json")
    assert run.status == 0, run.err
    assert sorted(hit["source"] for hit in json.loads(run.out)) == ["folder/handbook.pdf", "folder/salaries.pdf"]
    run = cli("search", "salary", "--token", token("mallory-oid"), "--json")
    assert [hit["source"] for hit in json.loads(run.out)] == ["folder/handbook.pdf"]
    assert "alice-oid" not in run.err
