"""Back-pressure on Azurite with a lagging, throttling Azure AI Search fake: a batch throttled after the client's
own retries goes back on its queue with the service's Retry-After as visibility delay, is never poisoned by
throttling, and the ledger says ``throttled`` with the next attempt time."""

from __future__ import annotations

import datetime as dt
import hashlib
import json

import pytest

from chunking.ids import doc_id
from tests.functions_host import queue_message
from tests.test_incremental_azurite import Harness, _paragraphs

pytestmark = pytest.mark.integration


@pytest.fixture
def h(azurite, tmp_path, monkeypatch, request):
    name = "bp" + hashlib.sha256(request.node.name.encode()).hexdigest()[:12]
    harness = Harness(azurite, name, tmp_path, monkeypatch)
    yield harness
    harness.handlers.services.cache_clear()


def test_a_throttled_batch_is_deferred_with_retry_after_not_poisoned(h):
    messages = h.upload("slow.txt", _paragraphs(12, "slow"))
    h.queue.clear_messages()
    h.search.throttle(5, retry_after_s=2)  # the client's 5 attempts, each answered 429 Retry-After: 2
    before = datetime_now()
    assert h.app.index_chunk_batch(queue_message(messages[0])) is None  # no exception: nothing counts to poison
    entry = h.s.ledger.get(doc_id(h.cname, "slow.txt"))
    assert entry.status == "throttled"
    assert 2 <= (dt.datetime.fromisoformat(entry.retry_at) - before).total_seconds() <= 4
    assert h.sleeps[:4] == [2.0] * 4  # in-call retries honoured Retry-After first
    # The deferred copy is on the queue, invisible for Retry-After, with its deferral counted in the body.
    assert h.queue.peek_messages() == []
    for m in messages[1:]:
        h.queue.send_message(m)
    h.drain()
    entry = h.s.ledger.get(entry.doc_id)
    assert (entry.status, entry.indexed_version) == ("indexed", entry.version)
    h.assert_index_is_exactly_current()


def test_the_deferral_budget_is_bounded(h, monkeypatch):
    monkeypatch.setattr(h.handlers, "MAX_DEFERRALS", 2)
    messages = h.upload("cap.txt", _paragraphs(4, "cap"))
    h.queue.clear_messages()
    body = json.loads(messages[0])
    body["deferrals"] = 2
    h.search.throttle(5, retry_after_s=1)
    with pytest.raises(RuntimeError, match="HTTP 429"):
        h.app.index_chunk_batch(queue_message(json.dumps(body)))
    entry = h.s.ledger.get(doc_id(h.cname, "cap.txt"))
    assert "throttled 2 times" in entry.error and entry.failure == "transient"


def test_load_with_duplicates_lag_and_throttling_bursts_ends_exact(h):
    """200 documents, 10 % of their batches delivered twice and out of order, visibility lag on, throttling
    bursts while stage 2 runs: every document ends exactly current, none stuck, none poisoned."""
    import random

    rng = random.Random(12)
    sent = []
    for i in range(200):
        sent.extend(h.upload(f"load/{i:03d}.txt", _paragraphs(2 + i % 5, f"load{i}")))
    h.queue.clear_messages()
    duplicates = rng.sample(sent, len(sent) // 10)
    deliveries = sent + duplicates
    rng.shuffle(deliveries)
    for m in deliveries:
        h.queue.send_message(m)
    queries_before, requests_before = h.search.queries, h.search.requests
    throttled_calls = {"n": 0}
    real = h.app.index_chunk_batch

    def with_bursts(msg):
        throttled_calls["n"] += 1
        if throttled_calls["n"] % 40 == 0:
            h.search.throttle(6, retry_after_s=1)  # a burst longer than the client's in-call retries
        return real(msg)

    h.app.index_chunk_batch = with_bursts
    try:
        handled = h.drain()
    finally:
        h.app.index_chunk_batch = real
    entries = [e for e in h.s.ledger.entries()]
    statuses = {e.status for e in entries}
    poisoned = [e for e in entries if e.status == "failed"]
    stats = {"documents": len(entries), "batches": len(sent), "duplicated deliveries": len(duplicates),
             "handled": handled, "throttled answers": h.search.throttled,
             "search queries per batch": round((h.search.queries - queries_before) / handled, 2),
             "lag (requests)": h.search.lag_requests}
    print("load:", stats)
    assert statuses == {"indexed"} and poisoned == [] and len(entries) == 200
    assert h.search.throttled > 0
    h.assert_index_is_exactly_current()


def datetime_now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
