"""The index definition beyond its fields (docs/search.md#the-index-definition): what `chunking schema` prints is
what ensure() creates; the search fake refuses wrong definitions as the service does; the query vectorizer embeds
query text; compression is declared with rescoring; native permission filters trim every query to the caller's
token; an existing index takes in place what it can."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest
from azure.core.credentials import AzureKeyCredential
from azure.core.exceptions import HttpResponseError
from azure.search.documents import SearchClient
from azure.search.documents.indexes import SearchIndexClient
from azure.search.documents.models import VectorizableTextQuery

from chunking.embeddings import OfflineLexicalEmbedder
from chunking.errors import IndexError_
from chunking.index.azure import AzureSearchIndex, index_definition
from chunking.index.design import IndexDesign, Vectorizer, bytes_per_vector, rename_filter
from chunking.model import ChunkRecord
from chunking.services import index_design, index_schema
from chunking.settings import Settings
from tests.search_fake import ENDPOINT, SearchServiceFake

AOAI = {"EMBEDDING_BACKEND": "azure_openai", "AZURE_OPENAI_ENDPOINT": "https://acct.openai.azure.com/",
        "AZURE_OPENAI_EMBEDDING_DEPLOYMENT": "emb"}
VECTORIZER = Vectorizer("https://acct.openai.azure.com", "emb", "text-embedding-3-small")


def token(oid: str, groups: tuple[str, ...] = ()) -> str:
    """An unsigned JWT with an ``oid`` and a ``groups`` claim (the fake reads claims, it does not verify)."""
    def part(value: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    return f"{part({'alg': 'none'})}.{part({'oid': oid, 'groups': list(groups)})}.sig"


def record(doc: str, text: str, embedder: OfflineLexicalEmbedder, **fields) -> ChunkRecord:
    return ChunkRecord(id=f"{doc}-v1-000000", doc_id=doc, version="v1", source=f"folder/{doc}.pdf",
                       sourcepage=f"{doc}.pdf#page=1", ordinal=0, page_start=0, page_end=0, char_start=0,
                       char_end=len(text), content=text, content_hash=hashlib.sha256(text.encode()).hexdigest(),
                       token_count=len(text.split()), headings=(), embedding=tuple(embedder.embed([text])[0]),
                       **fields)


def make(fake: SearchServiceFake, design: IndexDesign, dims: int = 64, **kwargs) -> AzureSearchIndex:
    return AzureSearchIndex(ENDPOINT, "chunks", dims, "key", transport=fake, sleep=lambda s: None, design=design,
                            **kwargs)


def test_a_vectorizer_only_for_the_azure_openai_embedder():
    assert index_design(Settings.from_env({})).vectorizer is None
    assert index_design(Settings.from_env({"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})).vectorizer is None
    assert index_design(Settings.from_env(AOAI)).vectorizer == VECTORIZER
    definition = index_schema(Settings.from_env({"SEARCH_VECTOR_COMPRESSION": "none"})).as_dict()
    assert definition["vectorSearch"]["profiles"] == [{"name": "hnsw-cosine", "algorithm": "hnsw"}]


def test_bytes_per_vector_follow_the_documented_sizes():
    assert [bytes_per_vector(1536, kind) for kind in ("none", "scalar", "binary")] == [6144, 1536, 192]
    assert bytes_per_vector(3072, "binary", 1024) == 128
    assert bytes_per_vector(384, "scalar", 128) == 128
    with pytest.raises(ValueError):
        bytes_per_vector(1536, "none", 1024)


def test_filters_are_renamed_outside_string_literals():
    assert rename_filter("acl_users/any(u: u eq 'acl_users') or storage_url eq 'x'",
                         {"acl_users": "oids", "storage_url": "storageUrl"}) == (
        "oids/any(u: u eq 'acl_users') or storageUrl eq 'x'")


# -- the fake refuses what the service refuses ------------------------------------------------------------------


def _refusal(definition, api_version: str | None = None) -> str:
    fake = SearchServiceFake()
    kwargs = {"api_version": api_version} if api_version else {}
    client = SearchIndexClient(ENDPOINT, AzureKeyCredential("key"), transport=fake, retry_total=0, **kwargs)
    with pytest.raises(HttpResponseError) as caught:
        client.create_index(definition)
    assert caught.value.status_code == 400 and "chunks" not in fake.definitions
    return caught.value.message


def test_the_fake_refuses_a_profile_naming_an_undefined_vectorizer_or_compression():
    definition = index_definition("chunks", 8, design=IndexDesign(vectorizer=VECTORIZER, compression="scalar"))
    definition.vector_search.vectorizers = []
    assert "The field 'embedding' uses a vectorizer 'openai-vectorizer' which is not defined." in _refusal(definition)
    definition = index_definition("chunks", 8, design=IndexDesign(compression="scalar"))
    definition.vector_search.compressions = []
    assert ("The field 'embedding' uses a vector compression configuration 'embedding-compression' which is not "
            "defined.") in _refusal(definition)
    definition = index_definition("chunks", 8)
    definition.vector_search.algorithms = []
    assert "uses a vector search algorithm configuration 'hnsw' which is not defined." in _refusal(definition)


def test_the_fake_refuses_a_vectorizer_without_model_and_truncation_not_below_the_dimensions():
    definition = index_definition("chunks", 8, design=IndexDesign(vectorizer=VECTORIZER))
    definition.vector_search.vectorizers[0].parameters.model_name = None
    assert "Error in Vectorizer 'openai-vectorizer' : 'modelName' parameter is required" in _refusal(definition)
    definition = index_definition("chunks", 8, design=IndexDesign(compression="binary", truncation_dimensions=4))
    definition.vector_search.compressions[0].truncation_dimension = 8
    assert "truncates to 8 dimensions, which must be fewer than the 8" in _refusal(definition)
    with pytest.raises(ValueError, match="must be below the embedding's 8 dimensions"):
        index_definition("chunks", 8, design=IndexDesign(compression="binary", truncation_dimensions=8))


def test_the_fake_refuses_permission_filters_on_a_ga_version_and_on_an_unfilterable_field():
    definition = index_definition("chunks", 8, design=IndexDesign(permission_filters=True))
    message = _refusal(definition)  # the SDK's GA 2026-04-01
    assert "The property 'permissionFilter" in message and "does not exist on type" in message
    definition = index_definition("chunks", 8, design=IndexDesign(permission_filters=True))
    next(f for f in definition.fields if f.name == "acl_users").filterable = False
    assert ("The field 'acl_users' used as a permission filter must be a filterable field"
            in _refusal(definition, "2025-11-01-preview"))


# -- the query vectorizer ---------------------------------------------------------------------------------------


def test_service_vectorization_sends_the_query_text_and_the_vectorizer_embeds_it():
    embedder = OfflineLexicalEmbedder(64)
    fake = SearchServiceFake(vectorize=lambda text: embedder.embed([text])[0])
    index = make(fake, IndexDesign(vectorizer=VECTORIZER, service_vectorization=True))
    index.ensure()
    index.upsert([record("harbour", "the harbour master opens the lock gates", embedder),
                  record("orchard", "apple trees blossom in the orchard", embedder)])
    assert index.vectorizes_queries
    hits = index.search("lock gates", None, k=1)
    assert [h.record.doc_id for h in hits] == ["harbour"]
    # What the service received: the text, for its vectorizer; no vector.
    client = SearchClient(ENDPOINT, "chunks", AzureKeyCredential("key"), transport=fake, retry_total=0)
    found = list(client.search(search_text=None, vector_queries=[
        VectorizableTextQuery(text="blossom apple", k_nearest_neighbors=1, fields="embedding")], top=1))
    assert [d["doc_id"] for d in found] == ["orchard"]


def test_a_text_query_on_an_index_without_vectorizer_is_refused_as_the_service_refuses_it():
    fake = SearchServiceFake(vectorize=lambda text: [1.0] * 64)
    make(fake, IndexDesign()).ensure()
    client = SearchClient(ENDPOINT, "chunks", AzureKeyCredential("key"), transport=fake, retry_total=0)
    with pytest.raises(HttpResponseError) as caught:
        list(client.search(search_text=None, vector_queries=[VectorizableTextQuery(text="x", fields="embedding")]))
    assert "Field 'embedding' does not have a vectorizer defined in it's vector profile." in caught.value.message


# -- native document-level security -----------------------------------------------------------------------------


def _secured(fake: SearchServiceFake, acl_default: str = "public") -> tuple[AzureSearchIndex, OfflineLexicalEmbedder]:
    embedder = OfflineLexicalEmbedder(64)
    index = make(fake, IndexDesign(permission_filters=True, api_version="2025-11-01-preview",
                                   acl_default=acl_default))
    index.ensure()
    index.upsert([
        record("salaries", "salary bands of the board", embedder, acl_users=("alice-oid",)),
        record("roadmap", "salary review on the roadmap", embedder, acl_groups=("eng-group",)),
        record("handbook", "salary payment dates for everyone", embedder),
        record("allhands", "salary questions at the all hands", embedder, acl_groups=("*",)),
    ])
    return index, embedder


def test_permission_filters_trim_every_query_to_the_callers_token():
    fake = SearchServiceFake()
    index, embedder = _secured(fake)
    vector = embedder.embed(["salary"])[0]

    def found(user_token: str | None) -> list[str]:
        index.authorize_queries(user_token)
        return sorted(h.record.doc_id for h in index.search("salary", vector, k=10))

    assert found(token("alice-oid")) == ["allhands", "handbook", "salaries"]
    assert found(token("bob-oid", ("eng-group",))) == ["allhands", "handbook", "roadmap"]
    assert found(token("mallory-oid")) == ["allhands", "handbook"]
    assert found(None) == ["allhands", "handbook"]  # no token: what everyone may read
    # What was written: the service's special values, read back as ours.
    assert fake.committed["handbook-v1-000000"]["acl_users"] == ["all"]
    assert fake.committed["allhands-v1-000000"]["acl_groups"] == ["all"]
    assert index.records_by_id(["allhands-v1-000000"])["allhands-v1-000000"].acl_groups == ("*",)
    # The pipeline's own reads see every document (elevated read), whoever queries.
    assert index.doc_ids() == {"salaries", "roadmap", "handbook", "allhands"} and index.count() == 4
    assert set(index.vectors_by_key(["salaries-v1-000000"])) == {"salaries-v1-000000"}


def test_acl_default_deny_writes_no_public_documents():
    fake = SearchServiceFake()
    index, embedder = _secured(fake, acl_default="deny")
    index.authorize_queries(token("mallory-oid"))
    assert sorted(h.record.doc_id for h in index.search("salary", embedder.embed(["salary"])[0], k=10)) == [
        "allhands"]
    assert fake.committed["handbook-v1-000000"]["acl_users"] == []


# -- migration of an existing index ------------------------------------------------------------------------------


def test_an_existing_index_gains_a_vectorizer_and_semantic_title_in_place():
    fake = SearchServiceFake()
    make(fake, IndexDesign(compression="scalar")).ensure()
    assert "vectorizers" not in fake.definitions["chunks"]["vectorSearch"]
    make(fake, IndexDesign(layout="chunking", vectorizer=VECTORIZER, compression="scalar",
                           languages=("es",))).ensure()
    vector = fake.definitions["chunks"]["vectorSearch"]
    assert vector["profiles"][0]["vectorizer"] == "openai-vectorizer"
    assert [v["name"] for v in vector["vectorizers"]] == ["openai-vectorizer"]
    assert fake.definitions["chunks"]["fields"][-1] == {
        "name": "content_es", "type": "Edm.String", "key": False, "retrievable": False, "searchable": True,
        "filterable": False, "sortable": False, "facetable": False, "analyzer": "es.microsoft"}


def test_an_existing_index_keeps_its_compression_and_refuses_permission_filters_it_cannot_add(caplog):
    fake = SearchServiceFake()
    make(fake, IndexDesign(compression="none")).ensure()
    make(fake, IndexDesign(compression="binary")).ensure()  # kept as it is, with a warning
    assert "compressions" not in fake.definitions["chunks"]["vectorSearch"]
    assert "keeps its own compression of field embedding: the index has none, the settings want" in caplog.text
    with pytest.raises(IndexError_) as caught:
        make(fake, IndexDesign(permission_filters=True, api_version="2025-11-01-preview")).ensure()
    assert str(caught.value) == (
        "index 'chunks' cannot take the settings in place: permission filter of field acl_users: the index has "
        "none, the settings want userIds (SEARCH_PERMISSION_FILTERS); a field's attributes are fixed when it is "
        "created; permission filter of field acl_groups: the index has none, the settings want groupIds "
        "(SEARCH_PERMISSION_FILTERS); a field's attributes are fixed when it is created. Either keep the index's "
        "choice (set the setting back), or name a new index (AZURE_SEARCH_INDEX) and run `chunking reprocess "
        "--all` to fill it")


def test_field_updates_in_the_demo_layout_rename_and_keep_the_default_category():
    embedder = OfflineLexicalEmbedder(64)
    fake = SearchServiceFake()
    index = make(fake, IndexDesign(layout="azure-search-openai-demo", category="general"),
                 metadata_fields=("category",))
    index.ensure()
    index.upsert([record("plan", "the health plan", embedder, metadata=(("category", "benefits"),))])
    stored = fake.committed["plan-v1-000000"]
    assert (stored["category"], stored["sourcefile"], stored["oids"], stored["groups"]) == (
        "benefits", "plan.pdf", [], [])
    assert "acl_users" not in stored and "storage_url" not in stored
    # The blob lost its category metadata and gained a reader: a merge, nothing embedded again.
    index.update_fields(["plan-v1-000000"], {"metadata": {}, "acl_users": ["alice-oid"], "acl_groups": []})
    stored = fake.committed["plan-v1-000000"]
    assert (stored["category"], stored["oids"], stored["groups"]) == ("general", ["alice-oid"], [])
    assert index.search("", None, k=1, filter="acl_users/any(u: u eq 'alice-oid')") == []  # no vector, no text
    hits = index.search("health", None, k=1, filter="acl_users/any(u: u eq 'alice-oid')")
    assert [h.record.acl_users for h in hits] == [("alice-oid",)]


def test_a_chunk_is_written_to_the_content_field_of_its_documents_language():
    embedder = OfflineLexicalEmbedder(64)
    fake = SearchServiceFake()
    index = make(fake, IndexDesign(languages=("es", "ja")))
    index.ensure()
    index.upsert([record("guia", "la configuración del sistema", embedder, language="es"),
                  record("guide", "the system configuration", embedder, language="en")])
    assert {k: fake.committed["guia-v1-000000"][k] for k in ("content_es", "content_ja")} == {
        "content_es": "la configuración del sistema", "content_ja": None}
    assert {k: fake.committed["guide-v1-000000"][k] for k in ("content_es", "content_ja")} == {
        "content_es": None, "content_ja": None}
    # Read back as our records: the language fields are the index's, not the record's.
    assert index.records_by_id(["guia-v1-000000"])["guia-v1-000000"].content == "la configuración del sistema"


# -- the local index's equivalent of the language analyzers ------------------------------------------------------


def test_the_local_index_stems_the_languages_asked_for(tmp_path):
    from chunking.index.local import LocalIndex
    from chunking.index.local.fts import fts_query, stem_tokens

    assert stem_tokens("Configuraciones del sistema", "es-ES") == ["zqesconfigur", "zqessistem"]  # del: no stem
    assert stem_tokens("東京 configuration", "ja") == []
    assert fts_query("apagar sistemas", ["es"]) == '"apagar" OR "sistemas" OR "zqesapag" OR "zqessistem"'
    embedder = OfflineLexicalEmbedder(64)
    records = [record("guia", "Para apagar el equipo, ejecute poweroff", embedder, language="es"),
               record("guide", "How to change the system settings", embedder, language="en")]
    plain = LocalIndex(tmp_path / "plain.sqlite3", 64)
    plain.upsert(records)
    assert plain.search("apago", None, k=3) == []  # porter does not stem Spanish verbs: apago ≠ apagar
    stemmed = LocalIndex(tmp_path / "stemmed.sqlite3", 64, languages=("es", "ja", "en"))
    assert stemmed.languages == ("es",)  # Japanese has no stemmer; English is the tokenizer's own (porter)
    stemmed.upsert(records)
    hits = stemmed.search("apago", None, k=3)
    assert [h.record.doc_id for h in hits] == ["guia"]
    assert hits[0].record.content == "Para apagar el equipo, ejecute poweroff"  # stored text unchanged
    # An English query ranks as without stems: its Spanish stems match nothing here and count for nothing.
    english = [(h.record.doc_id, round(h.score, 6)) for h in stemmed.search("system settings", None, k=3)]
    assert english == [(h.record.doc_id, round(h.score, 6)) for h in plain.search("system settings", None, k=3)]


def test_an_existing_index_takes_a_new_deployment_but_not_another_layout():
    fake = SearchServiceFake()
    make(fake, IndexDesign(vectorizer=VECTORIZER)).ensure()
    moved = Vectorizer("https://other.openai.azure.com", "emb-2", "text-embedding-3-small")
    make(fake, IndexDesign(vectorizer=moved)).ensure()
    assert fake.definitions["chunks"]["vectorSearch"]["vectorizers"] == [{
        "name": "openai-vectorizer", "kind": "azureOpenAI", "azureOpenAIParameters": {
            "resourceUri": "https://other.openai.azure.com", "deploymentId": "emb-2",
            "modelName": "text-embedding-3-small"}}]
    with pytest.raises(IndexError_) as caught:
        make(fake, IndexDesign(layout="azure-search-openai-demo", vectorizer=moved)).ensure()
    assert str(caught.value).startswith(
        "index 'chunks' cannot take the settings in place: field acl_users: the index was created with the "
        "chunking layout, the settings want the other (INDEX_LAYOUT); field names are fixed when the index is "
        "created. Either keep the index's choice")
    assert "oids" not in {f["name"] for f in fake.definitions["chunks"]["fields"]}


def test_ensure_on_an_index_that_has_the_design_changes_nothing():
    fake = SearchServiceFake()
    design = IndexDesign(layout="azure-search-openai-demo", vectorizer=VECTORIZER, compression="binary",
                         truncation_dimensions=32, permission_filters=True, api_version="2025-11-01-preview",
                         languages=("es",))
    make(fake, design).ensure()
    before, definition = fake.requests, json.dumps(fake.definitions["chunks"], sort_keys=True)
    make(fake, design).ensure()
    assert fake.requests - before == 1  # the definition read; nothing written
    assert json.dumps(fake.definitions["chunks"], sort_keys=True) == definition


def test_settings_refuse_choices_the_embedder_cannot_serve():
    from chunking.settings import SettingsError

    with pytest.raises(SettingsError, match="SEARCH_QUERY_VECTORIZATION=service needs the Azure OpenAI embedder"):
        Settings.from_env({"SEARCH_QUERY_VECTORIZATION": "service", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    with pytest.raises(SettingsError, match=r"needs SEARCH_VECTOR_COMPRESSION scalar or binary"):
        Settings.from_env({**AOAI, "SEARCH_VECTOR_COMPRESSION": "none", "SEARCH_VECTOR_TRUNCATION_DIMENSIONS": "512"})
    with pytest.raises(SettingsError, match=r"\(1536\) must be below the embedding's 1536 dimensions"):
        Settings.from_env({**AOAI, "SEARCH_VECTOR_TRUNCATION_DIMENSIONS": "1536"})
    with pytest.raises(SettingsError, match="SEARCH_LANGUAGES must be"):
        Settings.from_env({"SEARCH_LANGUAGES": "es,xx"})
    with pytest.raises(SettingsError, match="SEARCH_PREVIEW_API_VERSION must be a preview version"):
        Settings.from_env({"SEARCH_PREVIEW_API_VERSION": "2026-04-01"})
    settings = Settings.from_env({**AOAI, "SEARCH_QUERY_VECTORIZATION": "service",
                                  "SEARCH_VECTOR_TRUNCATION_DIMENSIONS": "512", "SEARCH_LANGUAGES": "ES, ja"})
    assert (settings.index_design.languages, index_design(settings).service_vectorization) == (("es", "ja"), True)
