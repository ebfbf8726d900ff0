"""Back-pressure on Azurite with a lagging, throttling Azure AI Search fake: a batch throttled after the client's
own retries goes back on its queue with the service's Retry-After as visibility delay, is never poisoned by
throttling, and the ledger says ``throttled`` with the next attempt time."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from chunking.ids import doc_id
from tests.azurite_harness import _paragraphs, harness_fixture
from tests.functions_host import queue_message

pytestmark = pytest.mark.integration


h = harness_fixture("bp")


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
    bursts while stage 2 runs; then 40 of them changed (one paragraph each) and run the same way: every
    document ends exactly current, none stuck, none poisoned, and stage 2 issues no search query (vectors of
    unchanged paragraphs are reused through the ledger and lookups by key)."""
    import random

    rng = random.Random(12)
    first = {f"load/{i:03d}.txt": _paragraphs(2 + i % 5, f"load{i}") for i in range(200)}
    figures = [_run(h, rng, [h.upload(path, data) for path, data in first.items()], "200 new")]
    changed = {path: data.replace(b"Paragraph 0 of", b"Changed paragraph 0 of") for path, data in
               list(first.items())[4::5]}
    figures.append(_run(h, rng, [h.upload(path, data) for path, data in changed.items()], "40 changed"))
    print("load:", figures)
    for row in figures:
        assert (row["lost"], row["stale"], row["duplicated"], row["stuck"], row["poisoned"]) == (0, 0, 0, 0, 0)
        assert row["search queries per batch"] == 0
        assert row["throttled answers"] > 0
    assert figures[1]["vectors reused"] >= figures[1]["embedded"] > 0  # unchanged paragraphs not re-embedded
    h.assert_index_is_exactly_current()


def _run(h, rng, uploads: list[list[str]], what: str) -> dict:
    """Deliver the batches of *uploads* with 10 % duplicated, all shuffled, throttling bursts on; the figures."""
    sent = [m for messages in uploads for m in messages]
    h.queue.clear_messages()
    duplicates = rng.sample(sent, len(sent) // 10)
    deliveries = sent + duplicates
    rng.shuffle(deliveries)
    for m in deliveries:
        h.queue.send_message(m)
    queries, throttled = h.search.queries, h.search.throttled
    calls = {"n": 0, "embedded": 0, "reused": 0}
    real = h.handlers.handle_batch  # what the registered queue function calls

    def with_bursts(body):
        calls["n"] += 1
        if calls["n"] % 40 == 0:
            h.search.throttle(6, retry_after_s=1)  # a burst longer than the client's in-call retries
        result = real(body)
        if result is not None:
            calls["embedded"] += result.embedded
            calls["reused"] += result.reused
        return result

    h.handlers.handle_batch = with_bursts
    try:
        handled = h.drain()
    finally:
        h.handlers.handle_batch = real
    entries = h.s.ledger.entries()
    return {"run": what, "documents": len(entries), "batches": len(sent), "duplicated deliveries": len(duplicates),
            "handled": handled, "throttled answers": h.search.throttled - throttled,
            "search queries per batch": round((h.search.queries - queries) / handled, 2),
            "embedded": calls["embedded"], "vectors reused": calls["reused"],
            "stuck": sum(1 for e in entries if e.status in ("queued", "sending", "throttled")),
            "poisoned": sum(1 for e in entries if e.status == "failed"), **h.drift(),
            "lag (requests)": h.search.lag_requests}


def datetime_now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
