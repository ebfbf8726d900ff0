"""Incremental and exactly current. Every scenario runs the registered functions against Azurite (blob
container, base64 queue, ledger table) and the real Azure AI Search client over a fake service whose queries lag
its writes (``tests/search_fake.py``), and ends with: the index equals exactly the current versions of the
blobs in the container."""

from __future__ import annotations

import json
import time

import pytest
from azure.functions.blob import InputStream
from azure.storage.blob import BlobServiceClient
from azure.storage.queue import QueueClient, TextBase64DecodePolicy, TextBase64EncodePolicy

from chunking.claim_check import MemoryPayloadStore
from chunking.ids import doc_id
from chunking.pipeline import run_stage_one
from tests.functions_host import queue_message, record_batches
from tests.search_fake import ENDPOINT, SearchServiceFake

pytestmark = pytest.mark.integration


def _paragraphs(n: int, tag: str) -> bytes:
    """*n* distinct sentences-rich paragraphs (≈ 1 chunk each at 60 tokens)."""
    return "\n\n".join(
        f"Paragraph {i} of {tag} explains step number {i} in plain words. It adds detail {i * 7} for the reader."
        for i in range(n)
    ).encode()


# Writes and deletes become visible to index queries only after this many further requests to the service.
VISIBILITY_LAG_REQUESTS = 6


class Harness:
    def __init__(self, azurite, name: str, state_dir, monkeypatch, lag_requests: int = VISIBILITY_LAG_REQUESTS) -> None:
        from chunking import handlers
        from chunking.index.azure_search import AzureSearchIndex

        env = {
            "AzureWebJobsStorage": azurite.connection_string,
            "DOCUMENTS_CONTAINER": f"docs{name}",
            "CHUNK_BATCH_QUEUE": f"batches{name}",
            "PAYLOAD_CONTAINER": f"payloads{name}",
            "LEDGER_TABLE": f"ledger{name}",
            "CHUNKING_STATE_DIR": str(state_dir),
            "SPLIT_MAX_TOKENS": "60",
            "SPLIT_MAX_CHARS": "300",
            "BATCH_MAX_CHUNKS": "4",
        }
        self.env, self._monkeypatch = env, monkeypatch
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        self.queues = record_batches(monkeypatch)
        self.search = SearchServiceFake(lag_requests=lag_requests)
        self.sleeps: list[float] = []
        monkeypatch.setattr(handlers, "make_index", lambda settings: AzureSearchIndex(
            ENDPOINT, "chunks", settings.embedding_dimensions, "test-key", transport=self.search,
            sleep=self.sleeps.append))
        handlers.services.cache_clear()
        self.handlers = handlers
        import function_app

        self.app = function_app
        service = BlobServiceClient.from_connection_string(azurite.connection_string)
        self.container = service.create_container(env["DOCUMENTS_CONTAINER"])
        self.queue = QueueClient.from_connection_string(
            azurite.connection_string, env["CHUNK_BATCH_QUEUE"],
            message_encode_policy=TextBase64EncodePolicy(), message_decode_policy=TextBase64DecodePolicy())
        self.queue.create_queue()
        self.cname = env["DOCUMENTS_CONTAINER"]
        self.sent: list[str] = []

    @property
    def s(self):
        return self.handlers.services()

    def activate(self) -> None:
        """Make this harness's settings the process's again (a test may run several deployments)."""
        for key, value in self.env.items():
            self._monkeypatch.setenv(key, value)
        self.handlers.services.cache_clear()

    def upload(self, path: str, data: bytes) -> list[str]:
        """Upload, then run the blob function as the host would; it sends its messages to the real queue, and
        they are returned."""
        self.container.upload_blob(path, data, overwrite=True)
        blob = self.container.get_blob_client(path)
        before = len(self.queues[-1].sent) if self.queues else 0
        self.app.ingest_document(InputStream(data=blob.download_blob().readall(), name=f"{self.cname}/{path}",
                                             length=len(data), uri=blob.url))
        messages = self.queues[-1].sent[before:] if self.queues else []
        self.sent.extend(messages)
        return messages

    def drain(self, fail_first: set[int] | None = None) -> int:
        """Receive and handle every queued message; messages whose handler raises stay on the queue and come
        back after 1 s, as with the host's retries.

        A received message stays invisible for 60 s, longer than handling its page of 16 takes even on a loaded
        machine: with a shorter lease it becomes visible again while the page is still being handled, and its
        pop receipt no longer deletes it."""
        handled = 0
        for _ in range(200):
            batch = list(self.queue.receive_messages(messages_per_page=16, visibility_timeout=60))
            if not batch:
                if self.queue.get_queue_properties().approximate_message_count == 0:
                    break
                time.sleep(0.5)
                continue
            for m in batch:
                try:
                    self.app.index_chunk_batch(queue_message(m.content, m.dequeue_count))
                except RuntimeError:
                    self.queue.update_message(m, visibility_timeout=1)
                    continue
                self.queue.delete_message(m)
                handled += 1
        return handled

    def embedding_calls(self) -> int:
        return self.s.embedder.requests

    def settle(self) -> None:
        """Let the index's queries catch up with its writes (as a little waiting does on the service)."""
        self.search.settle()

    def assert_index_is_exactly_current(self) -> None:
        """The index holds, for every blob in the container, exactly the chunks of its current bytes (ids,
        contents, version), and nothing else (once its queries have caught up)."""
        expected, actual = self.expected_and_actual()
        assert actual == expected

    def drift(self) -> dict[str, int]:
        """How far the index is from exactly current: ``lost`` (chunks of current bytes missing or wrong),
        ``stale`` (chunks that are not of a blob's current bytes), ``duplicated`` (stale chunks whose text a
        current chunk of the same document holds too: the same passage returned twice)."""
        expected, actual = self.expected_and_actual()
        current = {(key.split("-", 1)[0], content) for key, content in expected.items()}
        stale = [k for k in actual if k not in expected]
        return {"lost": sum(1 for k, c in expected.items() if actual.get(k) != c), "stale": len(stale),
                "duplicated": sum(1 for k in stale if (k.split("-", 1)[0], actual[k]) in current)}

    def expected_and_actual(self) -> tuple[dict[str, str], dict[str, str]]:
        """``({key: content} the index must hold, {key: content} it holds)`` once its queries caught up."""
        self.settle()
        expected: dict[str, str] = {}
        for item in self.container.list_blobs():
            data = self.container.get_blob_client(item.name).download_blob().readall()
            store = MemoryPayloadStore()
            probe = run_stage_one(data, source=item.name, container=self.cname, settings=self.s.settings,
                                  payloads=store, ledger=_NoLedger())
            if probe.error:
                continue
            from chunking.queue_messages import decode_message, load_records

            for m in probe.messages:
                for r in load_records(decode_message(m), store):
                    expected[r.id] = r.content
        actual: dict[str, str] = {}
        for did in self.s.index.doc_ids():
            for r in self.s.index.records_of(did):
                actual[r.id] = r.content
        return expected, actual


class _NoLedger:
    """A ledger that knows nothing: stage 1 then always splits (to compute the expected records)."""

    def get(self, doc_id):
        return None

    def begin_version(self, *a, **k):
        return None

    def mark_failed(self, *a, **k):
        return None


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
    assert h.upload("same.txt", data) == []  # skipped before parsing
    assert h.drain() == 0
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
