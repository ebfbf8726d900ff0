"""Index ownership on Azurite with the lagging Azure AI Search fake: two deployments (own containers, queues,
ledger tables) sharing one index never delete each other's chunks, through reconcile, delete events and
clean-up; the same reconcile without the namespace does (the old behaviour, shown to fail)."""

from __future__ import annotations

import json

import pytest

from chunking.ids import doc_id
from chunking.pipeline.namespaces import deployment_namespace
from chunking.pipeline.reconcile import reconcile
from tests.azurite_harness import Harness, _paragraphs
from tests.functions_host import queue_message

pytestmark = pytest.mark.integration


@pytest.fixture
def pair(azurite, tmp_path, monkeypatch, request):
    tag = str(abs(hash(request.node.name)) % 10**8)
    a = Harness(azurite, f"nsa{tag}", tmp_path / "a", monkeypatch)
    b = Harness(azurite, f"nsb{tag}", tmp_path / "b", monkeypatch)
    b.search = a.search  # one search service, one index "chunks": shared
    yield a, b
    a.handlers.services.cache_clear()


def contents(h, namespace: str) -> dict[str, set[str]]:
    """``{source: {content, …}}`` of the index's records of *namespace* (once queries caught up)."""
    h.settle()
    index = h.s.index
    return {r.source: {x.content for x in index.records_of(did) if x.namespace == namespace}
            for did in index.doc_ids(namespace) for r in index.records_of(did)[:1]}


def expected(h, sources: list[str]) -> dict[str, set[str]]:
    """What the index must hold for *sources* of *h*'s container: the chunks of their current bytes."""
    from chunking.messages.batches import decode_message, load_records
    from chunking.pipeline.stage_two import run_stage_one
    from chunking.storage.claim_check import MemoryPayloadStore
    from tests.azurite_harness import _NoLedger

    out = {}
    for source in sources:
        data = h.container.get_blob_client(source).download_blob().readall()
        store = MemoryPayloadStore()
        probe = run_stage_one(data, source=source, container=h.cname, settings=h.s.settings, payloads=store,
                              ledger=_NoLedger())
        out[source] = {r.content for m in probe.messages for r in load_records(decode_message(m), store)}
    return out


def test_two_deployments_sharing_one_index_never_delete_each_others_chunks(pair):
    a, b = pair
    a.activate()
    ns_a = deployment_namespace(a.s.settings, a.cname)
    a.upload("guide.txt", _paragraphs(6, "alpha guide"))
    a.upload("gone.txt", _paragraphs(3, "alpha gone"))
    a.upload("evented.txt", _paragraphs(3, "alpha evented"))
    a.drain()
    b.activate()
    ns_b = deployment_namespace(b.s.settings, b.cname)
    assert ns_a != ns_b
    b.upload("guide.txt", _paragraphs(5, "beta guide"))
    b.upload("beta.txt", _paragraphs(4, "beta own"))
    b.drain()
    assert contents(b, ns_b) == expected(b, ["guide.txt", "beta.txt"])

    # A: one blob deleted without an event (reconcile's orphan), one with an event; then A reconciles.
    a.activate()
    assert contents(a, ns_a) == expected(a, ["guide.txt", "gone.txt", "evented.txt"])
    a.container.delete_blob("gone.txt")
    blob = a.container.get_blob_client("evented.txt")
    url = blob.url
    blob.delete_blob()
    a.app.remove_deleted_blob(queue_message(json.dumps([{"eventType": "Microsoft.Storage.BlobDeleted",
                                                         "subject": "x", "data": {"url": url}}])))
    a.settle()
    report = a.handlers.handle_reconcile()
    assert (report.orphaned, report.missing, report.swept) == (["gone.txt"], [], [])
    assert contents(a, ns_a) == expected(a, ["guide.txt"])

    # B's documents, unknown to A's ledger and in the same index, are all still there; B's reconcile agrees.
    b.activate()
    assert contents(b, ns_b) == expected(b, ["guide.txt", "beta.txt"])
    b.settle()
    again = b.handlers.handle_reconcile()
    assert (again.orphaned, again.missing, again.stuck, again.swept) == ([], [], [], [])
    assert contents(b, ns_b) == expected(b, ["guide.txt", "beta.txt"])

    # The old reconcile (no namespace) takes B's documents for orphans of A's container and deletes them.
    a.activate()
    a.settle()
    old = reconcile(container=a.cname, blob_paths=["guide.txt"], index=a.s.index, ledger=a.s.ledger,
                    enqueue=lambda path: None, stuck_after_seconds=3600)
    assert sorted(old.orphaned) == sorted([doc_id(b.cname, "guide.txt"), doc_id(b.cname, "beta.txt")])
    assert contents(a, ns_b) == {}


def test_the_same_container_name_path_and_bytes_in_two_deployments_keep_apart(azurite, tmp_path, monkeypatch):
    """Two deployments whose containers have the same name (on two storage accounts; one Azurite here, so one
    container), the same blob path and bytes, and one shared index: the namespace is in every chunk key, so
    B's upsert does not overwrite A's chunks, and B's delete leaves them."""
    from chunking.pipeline.reconcile import delete_document

    a = Harness(azurite, "nskeya", tmp_path / "a", monkeypatch)
    b = Harness(azurite, "nskeyb", tmp_path / "b", monkeypatch)
    b.search = a.search  # one search service, one index "chunks": shared
    b.env["DOCUMENTS_CONTAINER"], b.cname, b.container = a.cname, a.cname, a.container
    data = _paragraphs(6, "shared guide")
    did = doc_id(a.cname, "guide.txt")
    a.activate()
    ns_a = deployment_namespace(a.s.settings, a.cname)
    a.upload("guide.txt", data)
    a.drain()
    keys_a = {k for r in a.s.ledger.batch_records(did) for k in r.keys}
    b.activate()
    ns_b = deployment_namespace(b.s.settings, b.cname)
    b.upload("guide.txt", data)
    b.drain()
    keys_b = {k for r in b.s.ledger.batch_records(did) for k in r.keys}

    assert ns_a != ns_b and len(keys_a) == len(keys_b) > 1 and not keys_a & keys_b
    assert contents(b, ns_b) == expected(b, ["guide.txt"])
    a.activate()
    assert contents(a, ns_a) == expected(a, ["guide.txt"])  # not overwritten by B's upsert

    b.activate()
    delete_document(did, "guide.txt", index=b.s.index, ledger=b.s.ledger, payloads=b.s.payloads, namespace=ns_b)
    assert contents(b, ns_b) == {}
    a.activate()
    assert contents(a, ns_a) == expected(a, ["guide.txt"])  # B's delete removed only B's chunks
    a.settle()
    report = a.handlers.handle_reconcile()
    assert (report.orphaned, report.missing, report.swept) == ([], [], [])
