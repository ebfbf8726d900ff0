"""Traces, metrics and completion events of a two-stage run on Azurite (docs/operations.md#telemetry,
docs/events.md): the registered functions driven as the host would (``tests/azurite_harness.py``), the SDK's
in-memory span exporter and metric reader installed as the global providers (``tests/telemetry_capture.py``).
One trace per document version: stage 1 is its root, every stage-2 batch a child of it across the queue hop,
completion a child of the batch that completed it, the Azure SDK calls children of the stage that made them."""

from __future__ import annotations

import json

import pytest
from azure.storage.queue import QueueClient, TextBase64DecodePolicy, TextBase64EncodePolicy

from chunking.ids import doc_id
from chunking.messages.events import decode_event
from tests.azurite_harness import Harness, _paragraphs
from tests.functions_host import queue_message
from tests.telemetry_capture import capturing

pytestmark = pytest.mark.integration

SECRET = "c2VjcmV0LWtleS12YWx1ZQ=="


@pytest.fixture
def h(azurite, tmp_path, monkeypatch, request):
    harness = Harness(azurite, "tel" + request.node.name.replace("_", "")[4:16].lower(), tmp_path, monkeypatch)
    harness.env["COMPLETION_EVENTS_QUEUE"] = harness.env["CHUNK_BATCH_QUEUE"].replace("batches", "events")
    harness.activate()
    yield harness
    harness.handlers.services.cache_clear()


def _events(h, azurite) -> list[dict]:
    queue = QueueClient.from_connection_string(
        azurite.connection_string, h.env["COMPLETION_EVENTS_QUEUE"],
        message_encode_policy=TextBase64EncodePolicy(), message_decode_policy=TextBase64DecodePolicy())
    return [decode_event(m.content) for m in queue.peek_messages(max_messages=32)]


def _attrs(span) -> dict:
    return dict(span.attributes)


def test_one_trace_per_version_across_the_queue_hop(h, azurite):
    path = "manuals/guide.txt"
    with capturing() as got:
        messages = h.upload(path, _paragraphs(14, "guide"))
        assert h.drain() == len(messages) > 1
    did = doc_id(h.cname, path)
    entry = h.s.ledger.get(did)
    assert entry.is_indexed

    [one] = got.named("chunking.stage_one")
    assert one.parent is None  # the root of the version's trace
    assert _attrs(one) == {"chunking.container": h.cname, "chunking.path": path, "chunking.doc_id": did,
                           "chunking.version": entry.version, "chunking.pages": 1, "chunking.chunks":
                           entry.chunk_count, "chunking.outcome": "added", "chunking.size_bytes": len(
                               _paragraphs(14, "guide"))}
    trace_id, one_id = one.context.trace_id, one.context.span_id
    # Every message carries the stage-1 span's context (W3C traceparent: version-trace-span-flags; flags 01 is
    # "sampled", 03 adds the "random trace id" flag of Trace Context level 2).
    assert {json.loads(m)["trace"]["traceparent"][:-3] for m in messages} == {f"00-{trace_id:032x}-{one_id:016x}"}
    assert {json.loads(m)["trace"]["traceparent"][-2:] for m in messages} <= {"01", "03"}

    twos = got.named("chunking.stage_two")
    assert len(twos) == len(messages)
    assert {(s.context.trace_id, s.parent.span_id) for s in twos} == {(trace_id, one_id)}
    assert sorted(_attrs(s)["chunking.batch_no"] for s in twos) == list(range(len(messages)))
    assert sum(_attrs(s)["chunking.records"] for s in twos) == entry.chunk_count
    outcomes = sorted(_attrs(s)["chunking.outcome"] for s in twos)
    assert outcomes == ["completed"] + ["written"] * (len(messages) - 1)
    assert {_attrs(s)["chunking.version"] for s in twos} == {entry.version}

    [complete] = got.named("chunking.complete")
    [completing] = [s for s in twos if _attrs(s)["chunking.outcome"] == "completed"]
    assert (complete.context.trace_id, complete.parent.span_id) == (trace_id, completing.context.span_id)
    assert _attrs(complete)["chunking.outcome"] == "indexed" and _attrs(complete)["chunking.upload_to_indexed_s"] >= 0

    # The SDK calls as child spans (azure-core's tracing): the blob's download, the ledger's table and the queue
    # sends of stage 1; the ledger and the index writes of stage 2.
    children: dict[int, set[str]] = {}
    for s in got.spans:
        if s.parent is not None and "." in s.name and not s.name.startswith("chunking."):
            children.setdefault(s.parent.span_id, set()).add(s.name)
    assert {"BlobClient.download_blob", "QueueClient.send_message", "TableClient.update_entity"} <= children[one_id]
    assert "_SearchClientOperationsMixin.index_documents" in set().union(
        *(children.get(s.context.span_id, set()) for s in twos))

    # Metrics of the run.
    assert got.metrics("chunking.documents") == {frozenset({("chunking.outcome", "indexed")}): 1}
    assert got.metrics("chunking.chunks") == {frozenset(): entry.chunk_count}
    assert got.metrics("chunking.pages") == {frozenset(): 1}
    assert got.metrics("chunking.stage.duration") == {frozenset({("chunking.stage", "stage_one")}): 1,
                                                      frozenset({("chunking.stage", "stage_two")}): len(messages)}
    tokens = sum(_attrs(s)["chunking.embedding_tokens"] for s in twos)
    assert tokens > 0 and got.metrics("chunking.embedding.tokens") == {frozenset(): tokens}
    assert got.metrics("chunking.embedding.requests") == {frozenset(): h.embedding_calls()}
    assert got.metrics("chunking.upload_to_indexed") == {frozenset(): 1}

    # The completion event, once, on the local queue.
    [event] = _events(h, azurite)
    assert (event["type"], event["subject"], event["data"]["version"], event["data"]["chunk_count"]) == (
        "Chunking.Document.Indexed", f"{h.cname}/{path}", entry.version, entry.chunk_count)


def test_duplicates_make_no_second_completion_or_event(h, azurite):
    messages = h.upload("twice.txt", _paragraphs(10, "twice"))
    h.drain()
    with capturing() as got:
        for m in messages:  # every batch delivered again, after the version completed
            h.app.index_chunk_batch(queue_message(m))
        h.app.index_chunk_batch(queue_message(messages[-1]))
    assert {_attrs(s)["chunking.outcome"] for s in got.named("chunking.stage_two")} == {"already indexed"}
    assert got.named("chunking.complete") == [] and got.metrics("chunking.documents") == {}
    assert len(_events(h, azurite)) == 1


def test_a_message_without_trace_context_starts_its_own_trace(h):
    # A batch from a sender of before the "trace" field: decoded as before, its span a root.
    [message] = h.upload("old.txt", _paragraphs(2, "old"))
    data = json.loads(message)
    del data["trace"]
    h.s.ledger.begin_version(data["doc_id"], "old.txt", data["version"], data["chunk_count"], 1, h.cname)
    with capturing() as got:
        h.app.index_chunk_batch(queue_message(json.dumps(data)))
    [two] = got.named("chunking.stage_two")
    assert two.parent is None and _attrs(two)["chunking.outcome"] == "completed"


def test_failures_poison_reconcile_gauges_and_no_secret_in_attributes(h, azurite, monkeypatch):
    h.upload("good.txt", _paragraphs(3, "good"))
    h.drain()
    name = f"bad sig={SECRET}.txt"  # a secret-looking value in a path: masked in every attribute
    with capturing() as got:
        h.upload(name, b"")  # rejected: empty
        h.app.record_batch_poison(queue_message(h.sent[0]))  # good.txt's only batch poisoned: its version fails
        h.app.reconcile_index(None)
    [rejected] = [s for s in got.named("chunking.stage_one") if _attrs(s)["chunking.outcome"] == "failed"]
    assert _attrs(rejected)["chunking.path"] == "bad sig=***"  # the value up to the next separator goes
    assert _attrs(rejected)["chunking.reason"] == "file is empty"
    assert all(SECRET not in str(v) for s in got.spans for v in s.attributes.values())
    assert got.metrics("chunking.documents") == {frozenset({("chunking.outcome", "failed")}): 2}
    assert got.metrics("chunking.failures") == {frozenset({("chunking.stage", "stage_one"),
                                                           ("chunking.failure_kind", "permanent")}): 1}
    poison = f"{h.env['CHUNK_BATCH_QUEUE']}-poison"
    assert got.metrics("chunking.poison") == {frozenset({("chunking.queue", poison)}): 1}
    ledger = got.metrics("chunking.ledger.documents")
    assert {dict(k)["chunking.status"]: v for k, v in ledger.items()} == {
        "sending": 0, "queued": 0, "throttled": 0, "indexed": 0, "failed": 2, "deleted": 0}
    found = {dict(k)["chunking.found"]: v for k, v in got.metrics("chunking.reconcile").items()}
    assert found == {"checked": 2, "missing": 0, "stuck": 0, "retried": 0, "orphaned": 0, "swept": 0,
                     "backfilled": 0, "backfill_left": 0, "failed": 0, "figures_swept": 0}
    depths = {dict(k)["chunking.queue"]: v for k, v in got.metrics("chunking.queue.depth").items()}
    assert depths[h.env["CHUNK_BATCH_QUEUE"]] == 0 and depths["webjobs-blobtrigger-poison"] == 0
    assert sorted(e["data"]["status"] for e in _events(h, azurite)) == ["failed", "failed", "indexed"]


def test_a_throttled_batch_counts_a_deferral_and_its_delay(h):
    messages = h.upload("slow.txt", _paragraphs(6, "slow"))
    h.queue.clear_messages()
    h.search.throttle(5, retry_after_s=2)  # every in-call attempt answered 429 Retry-After: 2
    with capturing(azure_sdk=False) as got:
        assert h.app.index_chunk_batch(queue_message(messages[0])) is None  # deferred, not raised
    assert got.metrics("chunking.throttling.deferrals") == {frozenset(): 1}
    assert got.metrics("chunking.throttling.delay") == {frozenset(): 1}  # one value recorded: the 2 s wait
    assert got.metrics("chunking.failures") == {frozenset({("chunking.stage", "stage_two"),
                                                           ("chunking.failure_kind", "transient")}): 1}
    [two] = got.named("chunking.stage_two")
    assert two.status.status_code.name == "ERROR" and dict(two.attributes)["exception.type"] == "IndexError_"
