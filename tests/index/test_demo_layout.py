"""An index written by our pipeline in azure-search-openai-demo's layout answers the queries that app's backend sends
(docs/integrations.md): hybrid search with a text vector query for the index's vectorizer, semantic ranking with
the configuration ``default``, a category filter, and its security filter, either the OData one over ``oids`` and
``groups`` or the service's own permission filters with the user's token. Ingested with the real pipeline into
the Azure AI Search fake, queried with the SDK as the app queries."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from azure.core.credentials import AzureKeyCredential
from azure.search.documents import SearchClient
from azure.search.documents.models import VectorizableTextQuery

from chunking.embeddings import OfflineLexicalEmbedder
from chunking.index.azure import AzureSearchIndex
from chunking.index.design import Vectorizer
from chunking.pipeline.ingest import ingest_files
from chunking.services import index_design, make_embedder, make_ledger
from chunking.settings import Settings
from tests.index.test_index_design import token
from tests.search_fake import ENDPOINT, SearchServiceFake

# The fields the app reads from each result (its Document: id, content, category, sourcepage, sourcefile, oids,
# groups) plus storageUrl for its citations.
APP_FIELDS = ["id", "content", "category", "sourcepage", "sourcefile", "storageUrl", "oids", "groups"]
DOCUMENTS = {
    "benefits/health-plan.md": ("# Health plan\n\nThe health plan covers dental cleanings twice a year and eye exams "
                                "once a year.", {"category": "benefits"}),
    "hr/salary-bands.md": ("# Salary bands\n\nSalary bands for engineering levels are reviewed every spring.",
                           {"acl_users": "alice-oid", "category": "hr"}),
    "handbook/remote-work.md": ("# Remote work\n\nRemote work is allowed three days a week with a manager's approval.",
                                {"acl_groups": "staff-group"}),
}


def ingest(tmp_path: Path, fake: SearchServiceFake, **env: str) -> None:
    settings = Settings.from_env({"CHUNKING_STATE_DIR": str(tmp_path / "state"), "EMBEDDING_DIMENSIONS": "64",
                                  "PARSE_ISOLATION": "inline", "INDEX_LAYOUT": "azure-search-openai-demo", "METADATA_FIELDS": "category",
                                  "INDEX_CATEGORY": "general", "SEARCH_VECTOR_COMPRESSION": "scalar", **env})
    design = index_design(settings)
    # The offline embedder has no vectorizer the service could call; the test declares one as the Azure OpenAI
    # embedder would, and the fake embeds query text with the same offline embedder.
    design = dataclasses.replace(design, vectorizer=Vectorizer("https://acct.openai.azure.com", "emb",
                                                               "text-embedding-3-small"))
    index = AzureSearchIndex(ENDPOINT, settings.search_index_name, 64, "key", transport=fake, sleep=lambda s: None,
                             design=design, metadata_fields=settings.metadata.field_names)
    index.ensure()
    embedder, ledger = make_embedder(settings), make_ledger(settings)
    for name, (text, metadata) in DOCUMENTS.items():
        path = tmp_path / "docs" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        summary = ingest_files([(path, name)], settings=settings, embedder=embedder, index=index, ledger=ledger,
                               metadata=metadata)
        assert [row.outcome for row in summary.rows] == ["added"], summary.rows


def app_query(fake: SearchServiceFake, question: str, *, filter: str | None = None,
              user_token: str | None = None) -> list[dict]:
    """The query the app's backend sends for *question*: text + a text vector query (k 50) on ``embedding``,
    semantic ranking with the configuration ``default``, its filter, top 3."""
    client = SearchClient(ENDPOINT, "chunks", AzureKeyCredential("key"), transport=fake, retry_total=0,
                          **({"api_version": "2025-11-01-preview"} if user_token else {}))
    headers = {"x-ms-query-source-authorization": user_token} if user_token else {}
    return list(client.search(search_text=question, filter=filter, top=3, query_type="semantic",
                              semantic_configuration_name="default", select=APP_FIELDS, headers=headers,
                              vector_queries=[VectorizableTextQuery(text=question, k_nearest_neighbors=50,
                                                                    fields="embedding")]))


def _vectorizer_fake() -> SearchServiceFake:
    embedder = OfflineLexicalEmbedder(64)
    return SearchServiceFake(vectorize=lambda text: embedder.embed([text])[0])


def test_the_apps_hybrid_semantic_query_with_its_odata_security_filter(tmp_path):
    fake = _vectorizer_fake()
    ingest(tmp_path, fake)
    # The app's security filter (AZURE_USE_AUTHENTICATION with AZURE_ENFORCE_ACCESS_CONTROL, before the
    # service's permission filters), for alice in no group, then for a member of staff-group.
    alice = "(oids/any(g:search.in(g, 'alice-oid')) or groups/any(g:search.in(g, '')))"
    staff = "(oids/any(g:search.in(g, 'bob-oid')) or groups/any(g:search.in(g, 'staff-group')))"
    hits = app_query(fake, "How often are salary bands reviewed?", filter=alice)
    assert hits[0]["sourcefile"] == "salary-bands.md" and hits[0]["sourcepage"] == "hr/salary-bands.md"
    assert hits[0]["category"] == "hr" and hits[0]["oids"] == ["alice-oid"]
    assert "Salary bands for engineering levels are reviewed every spring." in hits[0]["content"]
    assert hits[0]["storageUrl"].startswith("file://") and hits[0]["storageUrl"].endswith("salary-bands.md")
    # Staff may not read the salary bands; a hybrid query still returns its nearest vectors among the rest.
    assert "salary-bands.md" not in {h["sourcefile"] for h in app_query(fake, "How often are salary bands reviewed?",
                                                                        filter=staff)}
    remote = app_query(fake, "How many days of remote work?", filter=staff)
    assert [h["sourcefile"] for h in remote] == ["remote-work.md"]
    assert remote[0]["category"] == "general"  # INDEX_CATEGORY: the document had no category metadata
    # With AZURE_ENABLE_GLOBAL_DOCUMENT_ACCESS the app also shows documents with neither list (ACL_DEFAULT=public).
    public = f"({staff} or (not oids/any() and not groups/any()))"
    assert {h["sourcefile"] for h in app_query(fake, "remote work health plan dental", filter=public)} == {
        "remote-work.md", "health-plan.md"}
    # The category filter the app's settings panel sends (exclude_category).
    dental = app_query(fake, "Does the health plan cover dental cleanings?", filter="category ne 'hr'")
    assert dental[0]["sourcefile"] == "health-plan.md" and dental[0]["category"] == "benefits"
    # The index the app reads: semantic configuration default titled by sourcepage, a vectorizer on embedding.
    semantic = fake.definitions["chunks"]["semantic"]["configurations"][0]
    assert semantic["name"] == "default" and semantic["prioritizedFields"]["titleField"] == {"fieldName": "sourcepage"}


def test_the_apps_query_with_the_services_permission_filters_and_the_users_token(tmp_path):
    fake = _vectorizer_fake()
    ingest(tmp_path, fake, SEARCH_PERMISSION_FILTERS="true")
    question = "How often are salary bands reviewed?"
    assert [h["sourcefile"] for h in app_query(fake, question, user_token=token("alice-oid"))][:1] == [
        "salary-bands.md"]
    seen_by_bob = {h["sourcefile"] for h in app_query(fake, question, user_token=token("bob-oid", ("staff-group",)))}
    assert "salary-bands.md" not in seen_by_bob and seen_by_bob <= {"remote-work.md", "health-plan.md"}
    # Without the user's token the service returns only what everyone may read (the health plan: no lists).
    anonymous = {h["sourcefile"] for h in app_query(fake, "health plan salary remote work", user_token=None)}
    assert anonymous == {"health-plan.md"}
    stored = fake.committed
    assert {d["sourcefile"]: (d["oids"], d["groups"]) for d in stored.values()} == {
        "health-plan.md": (["all"], []), "salary-bands.md": (["alice-oid"], []),
        "remote-work.md": ([], ["staff-group"])}
