"""Index ownership with the local index: two deployments (own ledgers, own state folders) writing into one local
index file never delete each other's chunks, whatever their cleanup mode or reconcile does; without the
namespace the same runs do (the demonstration that the test can fail)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from chunking.embeddings import OfflineLexicalEmbedder
from chunking.ids import doc_id
from chunking.index.local import LocalIndex
from chunking.ledger import Ledger, LocalLedgerStore
from chunking.pipeline.ingest import LOCAL_CONTAINER, ingest_files
from chunking.pipeline.namespaces import deployment_namespace, ledger_identity
from chunking.pipeline.reconcile import reconcile
from chunking.settings import Settings

DIMS = 64


def deployment(root: Path, name: str, index: LocalIndex) -> dict:
    state = root / name
    settings = Settings(state_dir=state, embedding_dimensions=DIMS)
    return {"settings": settings, "embedder": OfflineLexicalEmbedder(DIMS), "index": index,
            "ledger": Ledger(LocalLedgerStore(state / "ledger.sqlite3"))}


def files(root: Path, name: str, texts: dict[str, str]) -> list[tuple[Path, str]]:
    folder = root / f"{name}-files"
    folder.mkdir(exist_ok=True)
    out = []
    for source, text in texts.items():
        path = folder / source.replace("/", "_")
        path.write_text(text, encoding="utf-8")
        out.append((path, source))
    return out


def by_namespace(index: LocalIndex) -> dict[str, dict[str, set[str]]]:
    """``{namespace: {source: {content, …}}}`` of everything in the index."""
    found: dict[str, dict[str, set[str]]] = {}
    for did in index.doc_ids():
        for r in index.records_of(did):
            found.setdefault(r.namespace, {}).setdefault(r.source, set()).add(r.content)
    return found


def test_the_namespace_is_derived_from_container_and_ledger_or_set(tmp_path):
    a = Settings(state_dir=tmp_path / "a")
    b = Settings(state_dir=tmp_path / "b")
    ns_a = deployment_namespace(a, "documents")
    assert ns_a.startswith("documents-") and len(ns_a) == len("documents-") + 8
    assert ns_a == deployment_namespace(Settings(state_dir=tmp_path / "a"), "documents")  # stable
    assert ns_a != deployment_namespace(b, "documents")  # another ledger
    assert ns_a != deployment_namespace(a, "other")  # another container
    assert ledger_identity(a) == f"sqlite:{(tmp_path / 'a' / 'ledger.sqlite3').resolve()}"
    table = Settings(ledger_backend="table", ledger_table="ledgerx",
                     storage_connection="DefaultEndpointsProtocol=https;AccountName=prodstore;AccountKey=c2VjcmV0")
    assert ledger_identity(table) == "table:prodstore/ledgerx"  # never the key
    assert ledger_identity(Settings(ledger_backend="table", storage_connection="UseDevelopmentStorage=true")) == \
        "table:devstoreaccount1/chunkingledger"
    assert ledger_identity(Settings(ledger_backend="table", storage_connection="", storage_account="acct")) == \
        "table:acct/chunkingledger"


def test_two_deployments_sharing_a_local_index_never_delete_each_others_chunks(tmp_path):
    index = LocalIndex(tmp_path / "shared" / "index.sqlite3", DIMS)
    index.ensure()
    a, b = deployment(tmp_path, "a", index), deployment(tmp_path, "b", index)
    ns_a = deployment_namespace(a["settings"], LOCAL_CONTAINER)
    ns_b = deployment_namespace(b["settings"], LOCAL_CONTAINER)
    assert ns_a != ns_b
    # The same source names in both (so the same document ids), different texts; B has one document more.
    a_files = files(tmp_path, "a", {"guide.md": "Alpha guide text for the first team.",
                                    "notes.md": "Alpha notes about apples."})
    b_files = files(tmp_path, "b", {"guide.md": "Beta guide text for the second team.",
                                    "only-b.md": "Beta owns this document alone."})
    assert ingest_files(a_files, **a, cleanup="full").rows
    assert ingest_files(b_files, **b, cleanup="full").rows
    both = {ns_a: {"guide.md": {"Alpha guide text for the first team."}, "notes.md": {"Alpha notes about apples."}},
            ns_b: {"guide.md": {"Beta guide text for the second team."},
                   "only-b.md": {"Beta owns this document alone."}}}
    assert by_namespace(index) == both

    # A's full cleanup runs again (it prunes every version its ledger does not want): B's guide stays.
    assert ingest_files(a_files, **a, cleanup="full").deleted == []
    assert by_namespace(index) == both
    # A drops notes.md with a full run: only A's notes go.
    summary = ingest_files(a_files[:1], **a, cleanup="full")
    assert summary.deleted == ["notes.md"]
    del both[ns_a]["notes.md"]
    assert by_namespace(index) == both

    # A's reconcile: only guide.md is in its "container"; B's only-b.md is unknown to A's ledger, yet not A's.
    report = reconcile(container=LOCAL_CONTAINER, blob_paths=["guide.md"], index=index, ledger=a["ledger"],
                       enqueue=lambda path: None, stuck_after_seconds=3600, namespace=ns_a)
    assert (report.orphaned, report.swept, report.missing) == ([], [], [])
    assert by_namespace(index) == both

    # Without the namespace, the same reconcile takes B's document for an orphan of A's and deletes it, and B's
    # guide for a stale version of A's.
    report = reconcile(container=LOCAL_CONTAINER, blob_paths=["guide.md"], index=index, ledger=a["ledger"],
                       enqueue=lambda path: None, stuck_after_seconds=3600, namespace=None)
    assert (report.orphaned, report.swept) == ([doc_id(LOCAL_CONTAINER, "only-b.md")], ["guide.md: 1"])
    assert ns_b not in by_namespace(index)


def test_records_written_before_namespaces_stay_their_documents_own(tmp_path):
    """A record without a namespace (an index file from before the field) is deleted with its document by the
    deployment whose ledger knows it, and never taken for another deployment's orphan."""
    index = LocalIndex(tmp_path / "index.sqlite3", DIMS)
    index.ensure()
    a = deployment(tmp_path, "a", index)
    ns_a = deployment_namespace(a["settings"], LOCAL_CONTAINER)
    ingest_files(files(tmp_path, "a", {"old.md": "An old record without namespace."}), **a)
    did = doc_id(LOCAL_CONTAINER, "old.md")
    (record,) = index.records_of(did)
    index.upsert([dataclasses.replace(record, namespace="", embedding=(1.0,) * DIMS)])
    assert index.doc_ids(ns_a) == set() and index.keys_of(did, ns_a) == {record.id: record.version}
    report = reconcile(container=LOCAL_CONTAINER, blob_paths=[], index=index, ledger=a["ledger"],
                       enqueue=lambda path: None, stuck_after_seconds=3600, namespace=ns_a)
    assert report.orphaned == ["old.md"] and index.count() == 0
