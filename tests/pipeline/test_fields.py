"""A change of metadata or access lists alone (same bytes) reaches the stored chunks as a field update, with no
parsing and no embedding: through ``chunking ingest`` on the local index, and message by message through both
stages; messages of a superseded version are dropped, and long access lists go by claim check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chunking.embeddings import OfflineLexicalEmbedder
from chunking.index.local import LocalIndex
from chunking.index.security import security_filter
from chunking.ledger import Ledger, LocalLedgerStore
from chunking.messages.fields import decode_fields_message, is_fields_message
from chunking.model import SourceProperties
from chunking.pipeline.ingest import collect_files, ingest_files
from chunking.pipeline.stage_two import run_stage_one, run_stage_two
from chunking.settings import Settings
from chunking.settings.metadata import MetadataSettings
from chunking.storage.claim_check import MemoryPayloadStore

TEXT = ("# Payroll policy\n\nSalaries are paid on the last working day of each month. Overtime is paid with the "
        "next salary. Expense claims are reimbursed within ten days of approval.\n")


@pytest.fixture
def env(tmp_path):
    settings = Settings(state_dir=tmp_path / "state", embedding_dimensions=64,
                        metadata=MetadataSettings(metadata_fields=(("category", "category"), ("department", "dept"))))
    index = LocalIndex(tmp_path / "state" / "index.sqlite3", 64, metadata_fields=settings.metadata.field_names)
    index.ensure()
    services = {"settings": settings, "embedder": OfflineLexicalEmbedder(64), "index": index,
                "ledger": Ledger(LocalLedgerStore(tmp_path / "state" / "ledger.sqlite3"))}
    docs = tmp_path / "policies"
    docs.mkdir()
    (docs / "pay.md").write_text(TEXT, encoding="utf-8")
    return tmp_path, docs, services


def ingest(tmp_path: Path, docs: Path, services, **metadata):
    files, scopes, _ = collect_files([docs], cwd=tmp_path)
    return ingest_files(files, scopes=scopes, metadata=metadata, **services)


def hits(services, **who) -> list[str]:
    flt = security_filter(who.get("user"), who.get("groups", []), who.get("default", "public"))
    return [h.record.source for h in services["index"].search("salaries", None, filter=flt)]


def test_ingest_with_new_metadata_updates_fields_without_embedding(env):
    tmp_path, docs, services = env
    first = ingest(tmp_path, docs, services, acl_groups="hr", category="policy")
    assert (first.count("added"), first.to_dict()["embedding_requests"] > 0) == (1, True)
    index, embedder = services["index"], services["embedder"]
    stored = index.records_of(next(iter(index.doc_ids())))
    assert {(r.title, r.language, r.acl_groups, r.metadata) for r in stored} == {
        ("Payroll policy", "en", ("hr",), (("category", "policy"),))}
    assert hits(services, groups=["hr"]) == ["policies/pay.md"] and hits(services, groups=["sales"]) == []
    keys, requests = {r.id for r in stored}, embedder.requests

    second = ingest(tmp_path, docs, services, acl_groups="sales; finance", department="Finance")
    row = second.rows[0]
    assert (row.outcome, row.embedding_requests, embedder.requests) == ("skipped", 0, requests)
    assert (row.fields_updated, second.to_dict()["fields_updated"]) == (len(stored), 1)
    now = index.records_of(stored[0].doc_id)
    assert {r.id for r in now} == keys  # the same chunks, same version, updated in place
    assert {(r.acl_groups, r.metadata, r.version) for r in now} == {
        (("finance", "sales"), (("dept", "Finance"),), stored[0].version)}
    assert hits(services, groups=["hr"]) == [] and hits(services, groups=["finance"]) == ["policies/pay.md"]
    assert services["ledger"].get(stored[0].doc_id).fields_hash  # recorded: the next run sends nothing
    third = ingest(tmp_path, docs, services, acl_groups="sales; finance", department="Finance")
    assert (third.rows[0].outcome, third.rows[0].fields_updated, embedder.requests) == ("skipped", 0, requests)


def test_the_stages_message_by_message(env):
    tmp_path, _, services = env
    settings, index, ledger, embedder = (services[k] for k in ("settings", "index", "ledger", "embedder"))
    payloads = MemoryPayloadStore()
    props = SourceProperties(storage_url="https://acct.blob.core.windows.net/docs/pay.md", content_type="text/markdown",
                             last_modified="2024-05-01T10:20:30Z", metadata={"acl_users": "alice"})
    one = run_stage_one(TEXT.encode(), source="pay.md", container="docs", settings=settings, payloads=payloads,
                        ledger=ledger, properties=props)
    for message in one.messages:
        run_stage_two(message, settings=settings, embedder=embedder, index=index, payloads=payloads, ledger=ledger)
    requests = embedder.requests
    # Same bytes, same properties: nothing at all.
    again = run_stage_one(TEXT.encode(), source="pay.md", container="docs", settings=settings, payloads=payloads,
                          ledger=ledger, properties=props)
    assert (again.outcome, again.messages) == ("skipped", [])
    # New access list: one field-update message, exact in its content.
    moved = SourceProperties(**{**props.__dict__, "last_modified": "2024-06-01T00:00:00Z",
                                "metadata": {"acl_users": "bob", "acl_groups": "hr"}})
    update = run_stage_one(TEXT.encode(), source="pay.md", container="docs", settings=settings, payloads=payloads,
                           ledger=ledger, properties=moved)
    assert update.outcome == "skipped" and len(update.messages) == 1 and is_fields_message(update.messages[0])
    body = json.loads(update.messages[0])
    assert body["fields"] == {"storage_url": "https://acct.blob.core.windows.net/docs/pay.md",
                              "content_type": "text/markdown", "last_modified": "2024-06-01T00:00:00Z",
                              "acl_users": ["bob"], "acl_groups": ["hr"], "metadata": {}}
    two = run_stage_two(update.messages[0], settings=settings, embedder=embedder, index=index, payloads=payloads,
                        ledger=ledger)
    assert (two.records, two.embedded, two.dropped, embedder.requests) == (one.chunks, 0, "", requests)
    assert {r.acl_users for r in index.records_of(one.doc_id)} == {("bob",)}
    # A duplicate delivery changes nothing; a message of a version that is no longer current is dropped.
    dup = run_stage_two(update.messages[0], settings=settings, embedder=embedder, index=index, payloads=payloads,
                        ledger=ledger)
    assert (dup.records, dup.dropped) == (0, "unchanged")
    run_stage_one((TEXT + "More text.\n").encode(), source="pay.md", container="docs", settings=settings,
                  payloads=payloads, ledger=ledger, properties=props)
    late = run_stage_two(update.messages[0], settings=settings, embedder=embedder, index=index, payloads=payloads,
                         ledger=ledger)
    assert (late.records, late.dropped) == (0, "superseded")


def test_long_access_lists_go_by_claim_check(env):
    tmp_path, _, services = env
    settings = services["settings"].replace(max_message_bytes=2_000)
    payloads = MemoryPayloadStore()
    ledger = services["ledger"]
    groups = ",".join(f"group-{i:04d}" for i in range(300))
    first = run_stage_one(TEXT.encode(), source="pay.md", container="docs", settings=settings, payloads=payloads,
                          ledger=ledger, properties=SourceProperties())
    for message in first.messages:
        run_stage_two(message, settings=settings, embedder=services["embedder"], index=services["index"],
                      payloads=payloads, ledger=ledger)
    update = run_stage_one(TEXT.encode(), source="pay.md", container="docs", settings=settings, payloads=payloads,
                           ledger=ledger, properties=SourceProperties(metadata={"acl_groups": groups}))
    assert len(update.messages[0].encode()) <= 2_000 and '"payload":' in update.messages[0]
    assert len(decode_fields_message(update.messages[0], payloads).fields["acl_groups"]) == 300


def test_a_version_without_batch_records_is_updated_through_the_index_keys(env):
    tmp_path, _, services = env
    settings, index, ledger, embedder = (services[k] for k in ("settings", "index", "ledger", "embedder"))
    payloads = MemoryPayloadStore()
    one = run_stage_one(TEXT.encode(), source="pay.md", container="docs", settings=settings, payloads=payloads,
                        ledger=ledger, properties=SourceProperties())
    for message in one.messages:
        run_stage_two(message, settings=settings, embedder=embedder, index=index, payloads=payloads, ledger=ledger)
    ledger.forget_batches(one.doc_id, one.version)  # as in a ledger written before batch records were kept
    update = run_stage_one(TEXT.encode(), source="pay.md", container="docs", settings=settings, payloads=payloads,
                           ledger=ledger, properties=SourceProperties(metadata={"acl_groups": "hr"}))
    two = run_stage_two(update.messages[0], settings=settings, embedder=embedder, index=index, payloads=payloads,
                        ledger=ledger)
    assert (two.records, two.embedded, two.dropped) == (one.chunks, 0, "")
    assert {r.acl_groups for r in index.records_of(one.doc_id)} == {("hr",)}


def test_a_version_indexed_before_the_document_fields_is_read_again_once(env):
    tmp_path, _, services = env
    settings, index, ledger, embedder = (services[k] for k in ("settings", "index", "ledger", "embedder"))
    payloads = MemoryPayloadStore()

    def stage_one():
        return run_stage_one(TEXT.encode(), source="pay.md", container="docs", settings=settings, payloads=payloads,
                             ledger=ledger, properties=SourceProperties(metadata={"acl_groups": "hr"}))

    def stage_two(messages):
        for message in messages:
            run_stage_two(message, settings=settings, embedder=embedder, index=index, payloads=payloads,
                          ledger=ledger)

    one = stage_one()
    stage_two(one.messages)
    ledger.record_fields(one.doc_id, "pay.md", one.version, "")  # as the ledger of an index of schema 1 says
    again = stage_one()  # the same bytes: read again for the fields only the bytes give, not skipped
    assert (again.outcome, again.version, len(again.messages)) == ("updated", one.version, len(one.messages))
    assert not any(is_fields_message(m) for m in again.messages)
    stage_two(again.messages)
    assert {(r.title, r.language, r.acl_groups) for r in index.records_of(one.doc_id)} == {
        ("Payroll policy", "en", ("hr",))}
    entry = ledger.get(one.doc_id)
    assert (entry.status, bool(entry.fields_hash)) == ("indexed", True)
    assert (stage_one().outcome, stage_one().messages) == ("skipped", [])  # once only
