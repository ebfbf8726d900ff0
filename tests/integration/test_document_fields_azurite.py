"""Document fields and access control end to end: the registered functions on Azurite (blob metadata and index
tags, base64 queue, ledger table) and the real Azure AI Search client over the stateful fake. A change of the
blob's ACL metadata alone reaches the index as a merge of fields, found by the reconcile sweep (storage raises no
event for it) or by the trigger seeing the same bytes again, with 0 embedding calls."""

from __future__ import annotations

import pytest

from chunking.ids import doc_id
from chunking.index.security import security_filter
from tests.integration.test_incremental_azurite import Harness
from tests.search_fake import ENDPOINT

pytestmark = pytest.mark.integration

TEXT = ("Travel policy. Economy class is booked for flights under six hours. Hotels are booked through the travel "
        "desk. Receipts are kept for seven years. ").encode() * 6


@pytest.fixture
def h(azurite, tmp_path, monkeypatch, request):
    harness = Harness(azurite, request.node.name.replace("_", "")[4:20].lower(), tmp_path, monkeypatch)
    monkeypatch.setenv("METADATA_FIELDS", "category,department:dept")
    from chunking.index.azure import AzureSearchIndex

    monkeypatch.setattr("chunking.services.make_index", lambda settings: AzureSearchIndex(
        ENDPOINT, "chunks", settings.embedding_dimensions, "test-key", transport=harness.search,
        sleep=harness.sleeps.append, metadata_fields=settings.metadata.field_names))
    harness.handlers.services.cache_clear()
    yield harness
    harness.handlers.services.cache_clear()


def trigger(h, path: str) -> list[str]:
    """Run the blob function as the host does: it gets the blob's ``BlobClient`` (SDK-type binding) and reads the
    properties, metadata and tags from storage."""
    before = len(h.queues[-1].sent) if h.queues else 0
    h.app.ingest_document(h.container.get_blob_client(path))
    return h.queues[-1].sent[before:] if h.queues else []


def visible(h, **who) -> list[str]:
    h.settle()
    flt = security_filter(who.get("user"), who.get("groups", []), "deny")
    return sorted({hit.record.source for hit in h.s.index.search("travel policy receipts", None, k=10, filter=flt)})


def test_fields_reach_the_index_and_an_acl_change_costs_no_embedding(h):
    h.container.upload_blob("travel.txt", TEXT, metadata={"acl_groups": "staff", "category": "policy"},
                            content_settings=_text())
    h.container.get_blob_client("travel.txt").set_blob_tags({"department": "Finance"})
    h.container.upload_blob("board.txt", TEXT.replace(b"Travel", b"Board"), metadata={"acl_users": "ceo"},
                            content_settings=_text())
    assert trigger(h, "travel.txt") and trigger(h, "board.txt")
    h.drain()
    h.settle()
    travel = h.s.index.records_of(doc_id(h.cname, "travel.txt"))
    blob = h.container.get_blob_client("travel.txt")
    assert {(r.title, r.storage_url, r.content_type, r.size_bytes, r.language, r.acl_groups, r.metadata)
            for r in travel} == {("travel", blob.url, "text/plain", len(TEXT), "en", ("staff",),
                                  (("category", "policy"), ("dept", "Finance")))}  # dept from the index tag
    assert visible(h, groups=["staff"]) == ["travel.txt"]
    assert visible(h, user="ceo") == ["board.txt"]
    assert visible(h, user="guest") == []
    keys, calls = {r.id for r in travel}, h.embedding_calls()

    # Only the ACL metadata changes: no storage event; the reconcile sweep finds it.
    blob.set_blob_metadata({"acl_groups": "contractors", "category": "policy"})
    h.handlers.handle_reconcile()
    assert h.drain() >= 1
    assert h.embedding_calls() == calls  # nothing embedded
    h.settle()
    after = h.s.index.records_of(doc_id(h.cname, "travel.txt"))
    assert {r.id for r in after} == keys and {r.acl_groups for r in after} == {("contractors",)}
    assert visible(h, groups=["staff"]) == [] and visible(h, groups=["contractors"]) == ["travel.txt"]

    # The same bytes seen again by the trigger with other metadata: one field update, still 0 embeddings.
    blob.set_blob_metadata({"acl_groups": "staff", "acl_users": "auditor"})
    messages = trigger(h, "travel.txt")
    assert len(messages) == 1 and '"type":"document-fields"' in messages[0]
    h.drain()
    assert h.embedding_calls() == calls
    assert visible(h, user="auditor") == ["travel.txt"] and visible(h, groups=["contractors"]) == []
    assert {r.metadata for r in h.s.index.records_of(doc_id(h.cname, "travel.txt"))} == {
        (("dept", "Finance"),)}  # category removed from the metadata: cleared in the index
    h.assert_index_is_exactly_current()


def _text():
    from azure.storage.blob import ContentSettings

    return ContentSettings(content_type="text/plain")


def test_upload_sets_metadata_and_content_type(azurite, tmp_path, capsys):
    import argparse

    from azure.storage.blob import BlobServiceClient

    from chunking.app.cli import upload
    from chunking.settings import Settings

    (tmp_path / "pay.md").write_text("# Pay\n", encoding="utf-8")
    settings = Settings.from_env({"AzureWebJobsStorage": azurite.connection_string,
                                  "DOCUMENTS_CONTAINER": "uploadmetadata"})
    args = argparse.Namespace(paths=[tmp_path / "pay.md"], prefix="hr", watch=False, prog="chunking upload",
                              metadata=[("acl_groups", "hr,finance"), ("category", "policy")])
    assert upload.run(args, settings) == 0
    container = BlobServiceClient.from_connection_string(azurite.connection_string).get_container_client(
        "uploadmetadata")
    [item] = list(container.list_blobs(include=["metadata"]))
    assert (item.metadata, item.content_settings.content_type) == (
        {"acl_groups": "hr,finance", "category": "policy"}, "text/markdown")
    printed = capsys.readouterr()
    assert printed.out.startswith(f"uploaded {tmp_path / 'pay.md'} -> uploadmetadata/")
    # category is no field of these settings (the Functions app's may name it): uploaded, with a warning
    assert printed.err.startswith("chunking upload: warning: --metadata category=policy: no index field")
