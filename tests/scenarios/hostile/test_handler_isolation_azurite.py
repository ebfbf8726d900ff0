"""One document's crash in a handler never stops the others and always ends as its ledger reason: the handlers
on Azurite, driven the way the Functions host drives them (a blob trigger retried ``poisonBlobThreshold`` times
then reported on ``webjobs-blobtrigger-poison``; a queue message retried ``maxDequeueCount`` times then moved to
``-poison``)."""

from __future__ import annotations

import json
import time

import pytest

from chunking.ids import doc_id
from tests.azurite_harness import _paragraphs, harness_fixture
from tests.functions_host import queue_message

pytestmark = pytest.mark.integration

h = harness_fixture("is")

BLOB_ATTEMPTS = 3  # host.json: extensions.blobs.poisonBlobThreshold
QUEUE_ATTEMPTS = 5  # host.json: extensions.queues.maxDequeueCount


def _host_blob_trigger(h, path: str, data: bytes) -> str:
    """Upload *path* and run the blob function as the host does: retried while it raises, and after the last
    attempt its poison message is handled. Returns ``"ok"`` or ``"poisoned"``."""
    for _ in range(BLOB_ATTEMPTS):
        try:
            h.upload(path, data)
            return "ok"
        except Exception:  # the host logs the invocation as failed and tries again
            continue
    poison = {"FunctionId": "Host.Functions.ingest_document", "BlobType": "BlockBlob", "ContainerName": h.cname,
              "BlobName": path, "ETag": "\"0x1\""}
    h.app.record_blob_poison(queue_message(json.dumps(poison)))
    return "poisoned"


def _host_queue(h) -> int:
    """Deliver every message on the chunk-batch queue until none is left: a message whose function raises comes
    back after its visibility timeout, and after its last attempt goes to the poison function. Returns the
    number of messages poisoned."""
    poisoned = 0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        batch = list(h.queue.receive_messages(messages_per_page=16, visibility_timeout=60))  # a lease longer than a page takes
        if not batch:
            if h.queue.get_queue_properties().approximate_message_count == 0:
                return poisoned
            time.sleep(0.3)
            continue
        for m in batch:
            try:
                h.app.index_chunk_batch(queue_message(m.content, m.dequeue_count))
            except Exception:
                if m.dequeue_count < QUEUE_ATTEMPTS:
                    h.queue.update_message(m, visibility_timeout=1)  # back on the queue after 1 s
                    continue
                h.app.record_batch_poison(queue_message(m.content, m.dequeue_count))
                poisoned += 1
            h.queue.delete_message(m)
    raise AssertionError("the queue did not drain")


def _status(h, path: str) -> tuple[str, str]:
    entry = h.s.ledger.get(doc_id(h.cname, path))
    return entry.status, entry.error


def test_a_crash_in_stage_one_is_retried_then_a_reason_and_the_others_go_in(h, monkeypatch):
    import chunking.pipeline.stage_one as stage_one

    real = stage_one.document_records

    def crash_on_b(pages, chunks, **kwargs):
        if kwargs["source"] == "b.txt":
            raise KeyError("a bug in our code")
        return real(pages, chunks, **kwargs)

    monkeypatch.setattr(stage_one, "document_records", crash_on_b)

    outcomes = [_host_blob_trigger(h, path, _paragraphs(3, path[0])) for path in ("a.txt", "b.txt", "c.txt")]
    _host_queue(h)

    assert outcomes == ["ok", "poisoned", "ok"]
    assert _status(h, "b.txt") == ("failed", "stage 1 failed on every attempt (last error: stage 1: KeyError: "
                                             "'a bug in our code')")
    assert [_status(h, p)[0] for p in ("a.txt", "c.txt")] == ["indexed", "indexed"]


def _crash_on_bravo(real):
    def crashing(self, pages, *args, **kwargs):  # the sentence splitter, as stage 1 streams pages through it
        for chunk in real(self, pages, *args, **kwargs):
            if "bravo" in chunk.text:
                raise TypeError("a library failed")
            yield chunk

    return crashing


def _crash_reading_bravo(real):
    def crashing(data, *args, **kwargs):
        if b"bravo" in data:
            raise TypeError("a library failed")
        return real(data, *args, **kwargs)

    return crashing


@pytest.mark.parametrize(("patch", "reason"), [
    (lambda mp: mp.setitem(_parsers()._PARSERS, ".txt", _crash_reading_bravo(_parsers()._PARSERS[".txt"])),
     "could not parse: TypeError: a library failed"),
    (lambda mp: mp.setattr(_splitters().SentenceTextSplitter, "split_pages",
                           _crash_on_bravo(_splitters().SentenceTextSplitter.split_pages)),
     "could not split: TypeError: a library failed"),
], ids=["parser", "splitter"])
def test_a_crash_while_reading_or_splitting_is_a_reason_at_once(h, monkeypatch, patch, reason):
    monkeypatch.setenv("PARSE_ISOLATION", "inline")  # the patched parser lives in this process only
    patch(monkeypatch)

    outcomes = [_host_blob_trigger(h, path, _paragraphs(3, word)) for path, word in
                (("a.txt", "alpha"), ("b.txt", "bravo"), ("c.txt", "charlie"))]
    _host_queue(h)

    assert outcomes == ["ok", "ok", "ok"]  # no retry: the same bytes would fail the same way
    assert _status(h, "b.txt") == ("failed", reason)
    assert [_status(h, p)[0] for p in ("a.txt", "c.txt")] == ["indexed", "indexed"]


def test_a_parser_crashing_its_process_is_a_reason_and_the_worker_goes_on(h, monkeypatch):
    import chunking.parsers.sandbox as sandbox
    from tests.scenarios.hostile import child_parsers

    real = sandbox.read_pages_in_child

    def segfault_on_bravo(data, **kwargs):  # data: the path of the blob's local copy
        return real(data, **kwargs, **({"read": child_parsers.segfaults} if b"bravo" in data.read_bytes() else {}))

    monkeypatch.setattr(sandbox, "read_pages_in_child", segfault_on_bravo)

    outcomes = [_host_blob_trigger(h, path, _paragraphs(3, word)) for path, word in
                (("a.txt", "alpha"), ("b.txt", "bravo"), ("c.txt", "charlie"))]
    _host_queue(h)

    assert outcomes == ["ok", "ok", "ok"]
    assert _status(h, "b.txt") == ("failed", "the parser stopped without answering (a parsing library crashed on "
                                             "this file, or it needed more than STAGE1_MAX_MEMORY_MB = 1024 MB)")
    assert [_status(h, p)[0] for p in ("a.txt", "c.txt")] == ["indexed", "indexed"]


def _parsers():
    import chunking.parsers

    return chunking.parsers


def _splitters():
    import chunking.splitters

    return chunking.splitters


def test_a_crash_in_stage_two_poisons_only_that_document(h, monkeypatch):
    h.upload("a.txt", _paragraphs(2, "alpha"))
    h.upload("b.txt", _paragraphs(2, "bravo"))
    h.upload("c.txt", _paragraphs(2, "charlie"))
    embedder = h.s.embedder
    real = embedder.embed

    def crash_on_bravo(texts):
        if any("bravo" in text for text in texts):
            raise KeyError("a bug in stage 2")
        return real(texts)

    monkeypatch.setattr(embedder, "embed", crash_on_bravo)

    poisoned = _host_queue(h)

    assert poisoned == 1
    status, error = _status(h, "b.txt")
    assert status == "failed"
    assert error.startswith("batch 1 of 1 failed on every attempt; last error: batch 1 of 1: KeyError: "
                            "'a bug in stage 2'")
    assert [_status(h, p)[0] for p in ("a.txt", "c.txt")] == ["indexed", "indexed"]
