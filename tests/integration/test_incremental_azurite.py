"""Incremental and exactly current. Every scenario runs the registered functions against Azurite (blob
container, base64 queue, ledger table) and the real Azure AI Search client over a fake service whose queries lag
its writes (``tests/search_fake.py``), and ends with: the index equals exactly the current versions of the
blobs in the container."""

from __future__ import annotations

import json
import time

import pytest

from chunking.ids import doc_id
from tests.azurite_harness import Harness, _paragraphs
from tests.functions_host import queue_message

pytestmark = pytest.mark.integration


@pytest.fixture
def h(azurite, tmp_path, monkeypatch, request):
    harness = Harness(azurite, request.node.name.replace("_", "")[4:20].lower(), tmp_path, monkeypatch)
    yield harness
    harness.handlers.services.cache_clear()


def test_upload_then_shorter_overwrite(h):
    assert len(h.upload("guide.txt", _paragraphs(30, "first"))) >= 2
    h.drain()
    first = h.s.ledger.get(doc_id(h.cname, "guide.txt"))
    assert first.status == "indexed" and first.chunk_count >= 10
    h.assert_index_is_exactly_current()

    h.upload("guide.txt", _paragraphs(5, "second"))
    h.drain()
    second = h.s.ledger.get(doc_id(h.cname, "guide.txt"))
    assert (second.status, second.indexed_version) == ("indexed", second.version)
    assert second.version != first.version and second.chunk_count < first.chunk_count
    h.assert_index_is_exactly_current()


def test_identical_bytes_cost_nothing(h):
    data = _paragraphs(12, "same")
    h.upload("same.txt", data)
    h.drain()
    calls = h.embedding_calls()
    assert calls > 0
    # Skipped before parsing; the upload's new last-modified time reaches the index as a field update.
    # Last-Modified is an HTTP date (whole seconds): the second upload comes in a later second than the first.
    time.sleep(1.1)
    [update] = h.upload("same.txt", data)
    assert json.loads(update)["type"] == "document-fields"
    assert h.drain() == 1
    assert h.embedding_calls() == calls
    h.assert_index_is_exactly_current()


def test_delete_event_removes_chunks(h):
    h.upload("gone.txt", _paragraphs(6, "gone"))
    h.upload("kept.txt", _paragraphs(6, "kept"))
    h.drain()
    blob = h.container.get_blob_client("gone.txt")
    url = blob.url
    blob.delete_blob()
    event = {"eventType": "Microsoft.Storage.BlobDeleted", "subject": "x", "data": {"url": url}}
    h.app.remove_deleted_blob(queue_message(json.dumps([event])))
    assert h.s.ledger.get(doc_id(h.cname, "gone.txt")).status == "deleted"
    h.assert_index_is_exactly_current()


def test_batches_delivered_twice(h):
    messages = h.upload("twice.txt", _paragraphs(20, "twice"))
    for m in messages:  # every batch delivered a second time
        h.queue.send_message(m)
    assert h.drain() == 2 * len(messages)
    assert h.s.ledger.get(doc_id(h.cname, "twice.txt")).status == "indexed"
    h.assert_index_is_exactly_current()


def test_old_batch_after_new_version_completed(h):
    old = h.upload("v.txt", _paragraphs(10, "old"))
    h.queue.clear_messages()  # hold the old version's batches back
    h.upload("v.txt", _paragraphs(8, "new"))
    h.drain()
    for m in old:  # late delivery of the old version's batches
        h.queue.send_message(m)
    h.drain()
    entry = h.s.ledger.get(doc_id(h.cname, "v.txt"))
    assert entry.status == "indexed"
    h.assert_index_is_exactly_current()


def test_batch_failing_half_way_is_retried(h, monkeypatch):
    index = h.s.index
    real = index.upsert
    calls = {"n": 0}

    def flaky(records):
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("search service unavailable (simulated)")
        return real(records)

    monkeypatch.setattr(index, "upsert", flaky)
    messages = h.upload("flaky.txt", _paragraphs(20, "flaky"))
    assert len(messages) >= 3
    h.drain()
    entry = h.s.ledger.get(doc_id(h.cname, "flaky.txt"))
    assert entry.status == "indexed" and entry.attempts >= 1
    h.assert_index_is_exactly_current()


def test_parse_failure_keeps_the_good_version(h):
    h.upload("report.pdf", _pdf_bytes())
    h.drain()
    good = h.s.ledger.get(doc_id(h.cname, "report.pdf"))
    assert good.status == "indexed"
    h.upload("report.pdf", b"%PDF-1.7\nbroken")
    entry = h.s.ledger.get(doc_id(h.cname, "report.pdf"))
    assert entry.status == "failed" and "not a valid PDF" in entry.error
    assert entry.indexed_version == good.version
    h.settle()
    keys = h.s.index.keys_of(doc_id(h.cname, "report.pdf"))
    assert keys and set(keys.values()) == {good.version}
    hits = h.s.index.search("lighthouse keeper", None, k=3)
    assert "report.pdf" in {x.record.source for x in hits}


def _pdf_bytes() -> bytes:
    """A one-page PDF made with pypdf (a test dependency)."""
    import io

    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    page = writer.add_blank_page(612, 792)
    font = DictionaryObject({NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
                             NameObject("/BaseFont"): NameObject("/Helvetica")})
    page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): DictionaryObject(
        {NameObject("/F1"): writer._add_object(font)})})
    stream = DecodedStreamObject()
    stream.set_data(b"BT /F1 12 Tf 72 720 Td (The lighthouse keeper wrote a report about the storm.) Tj ET")
    page[NameObject("/Contents")] = writer._add_object(stream)
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


def test_changed_paragraph_reuses_the_other_vectors(h):
    paragraphs = _paragraphs(16, "reuse").decode().split("\n\n")
    h.upload("r.txt", "\n\n".join(paragraphs).encode())
    h.drain()
    # Reuse finds stored vectors with an index query, so it sees what the index has made visible: a re-upload
    # minutes later finds them all (a re-upload within the lag re-embeds, and still ends exact: see below).
    h.settle()
    before = h.embedding_calls()
    paragraphs[7] = "An entirely new paragraph replaces the eighth one. It talks about lighthouses."
    h.upload("r.txt", "\n\n".join(paragraphs).encode())
    h.drain()
    entry = h.s.ledger.get(doc_id(h.cname, "r.txt"))
    assert entry.status == "indexed"
    # Only the chunk holding the new paragraph needed a vector: one request for one input.
    assert h.embedding_calls() - before == 1
    h.assert_index_is_exactly_current()


def test_reupload_within_the_visibility_lag_reuses_vectors_by_key_and_ends_exact(h):
    paragraphs = _paragraphs(16, "hurry").decode().split("\n\n")
    h.upload("q.txt", "\n\n".join(paragraphs).encode())
    h.drain()
    before = h.embedding_calls()
    paragraphs[3] = "A replaced paragraph about harbours. It comes right after the first upload."
    h.upload("q.txt", "\n\n".join(paragraphs).encode())
    h.drain()
    # The stored vectors are read by key, which the lag does not delay: only the changed chunk is embedded.
    assert h.embedding_calls() - before == 1
    assert h.s.ledger.get(doc_id(h.cname, "q.txt")).status == "indexed"
    h.assert_index_is_exactly_current()


def test_blob_names_are_documents_exactly_as_storage_names_them(h):
    names = ["dir/x.txt", "dir//x.txt", "/abs/x.txt", "abs/x.txt"]
    for i, name in enumerate(names):
        h.upload(name, _paragraphs(3, f"blob{i}"))
    h.drain()
    assert sorted(b.name for b in h.container.list_blobs()) == sorted(names)
    assert len({doc_id(h.cname, n) for n in names}) == 4
    assert all(h.s.ledger.get(doc_id(h.cname, n)).status == "indexed" for n in names)
    for name in ("dir//x.txt", "/abs/x.txt"):
        blob = h.container.get_blob_client(name)
        url = blob.url
        blob.delete_blob()
        event = {"eventType": "Microsoft.Storage.BlobDeleted", "subject": "x", "data": {"url": url}}
        h.app.remove_deleted_blob(queue_message(json.dumps([event])))
    assert {n: h.s.ledger.get(doc_id(h.cname, n)).status for n in names} == {
        "dir/x.txt": "indexed", "dir//x.txt": "deleted", "/abs/x.txt": "deleted", "abs/x.txt": "indexed"}
    h.assert_index_is_exactly_current()
