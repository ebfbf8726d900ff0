"""Healing in minutes (docs/operations.md#healing-time): with the repair timer every 5 minutes, a transient
failure heals within 15 minutes of its cause ending, whatever the cause lasted, with no person. Time is
simulated: the ledger's clock is moved 5 minutes per timer tick, and the handlers run on Azurite as the host
runs them (5 deliveries of a failing message, then its poison handler)."""

from __future__ import annotations

import pytest

from chunking.errors import StorageError
from chunking.ids import doc_id
from chunking.ledger import clock
from tests.azurite_harness import _paragraphs, harness_fixture
from tests.functions_host import queue_message

pytestmark = pytest.mark.integration

h = harness_fixture("heal")

TICK_MIN = 5  # REPAIR_SCHEDULE's default interval
BOUND_MIN = 15


def _run_queues(h) -> None:
    """Every message on the stage-1 job and chunk-batch queues, as the host handles them: up to 5 deliveries,
    then the poison handler; until both queues are empty."""
    for _ in range(50):
        jobs = list(h.jobs.receive_messages(messages_per_page=16, visibility_timeout=60)) if h._jobs_exist() else []
        batches = list(h.queue.receive_messages(messages_per_page=16, visibility_timeout=60))
        if not jobs and not batches:
            return
        for queue, messages, handle, poison in ((h.jobs, jobs, h.app.run_stage_one_job, h.app.record_stage_one_poison),
                                                (h.queue, batches, h.app.index_chunk_batch, h.app.record_batch_poison)):
            for m in messages:
                for attempt in range(1, 6):
                    try:
                        handle(queue_message(m.content, attempt))
                        break
                    except Exception:
                        if attempt == 5:
                            poison(queue_message(m.content, attempt))
                queue.delete_message(m)
    raise AssertionError("the queues never emptied")


def _heal(h, monkeypatch, did: str, cause_ends_min: int, stop_cause) -> int:
    """Tick the repair timer every 5 simulated minutes (running the queues after each tick) until *did* is
    indexed; *stop_cause* runs once the clock passes *cause_ends_min*. Returns the minutes from the end of the
    cause to the tick after which the document was indexed."""
    stopped = False
    for tick in range(1, 200):
        minutes = tick * TICK_MIN
        monkeypatch.setattr(clock, "offset_s", minutes * 60.0)
        if not stopped and minutes >= cause_ends_min:
            stop_cause()
            stopped = True
        h.handlers.handle_repair()
        _run_queues(h)
        entry = h.s.ledger.get(did)
        if stopped and entry.is_indexed:
            print(f"healed {minutes - cause_ends_min} min after the cause ended at {cause_ends_min} min "
                  f"({entry.source}, {tick} ticks)")
            return minutes - cause_ends_min
    raise AssertionError(f"never healed: {h.s.ledger.get(did)}")


@pytest.mark.parametrize("outage_min", [3, 37, 121])
def test_an_index_outage_heals_within_15_minutes_of_its_end(h, monkeypatch, outage_min):
    h.upload("out.txt", _paragraphs(4, "before"))
    h.drain()
    did = doc_id(h.cname, "out.txt")
    down = h.index_outage(monkeypatch)
    h.upload("out.txt", _paragraphs(12, "after"))
    _run_queues(h)  # every batch poisoned: failed, transient
    entry = h.s.ledger.get(did)
    assert (entry.status, entry.failure, entry.failures) == ("failed", "transient", 1)
    late = _heal(h, monkeypatch, did, outage_min, lambda: down.update(on=False))
    assert late <= BOUND_MIN, late
    entry = h.s.ledger.get(did)
    assert (entry.status, entry.indexed_version, entry.error) == ("indexed", entry.version, "")
    h.assert_index_is_exactly_current()


def test_a_dead_sender_heals_within_15_minutes(h, monkeypatch):
    sender = h.s.batches.inner
    real = sender.send

    def down(messages):
        raise StorageError("storage not reachable: queue (simulated)")

    monkeypatch.setattr(sender, "send", down)
    with pytest.raises(StorageError):
        h.upload("send.txt", _paragraphs(12, "send"))
    did = doc_id(h.cname, "send.txt")
    assert h.s.ledger.get(did).status == "sending"
    late = _heal(h, monkeypatch, did, 0, lambda: monkeypatch.setattr(sender, "send", real))
    assert late <= 10, late
    h.assert_index_is_exactly_current()


def test_lost_messages_heal_within_15_minutes(h, monkeypatch):
    h.upload("lost.txt", _paragraphs(12, "lost"))
    h.queue.clear_messages()  # every batch lost
    did = doc_id(h.cname, "lost.txt")
    assert h.s.ledger.get(did).status == "queued"
    late = _heal(h, monkeypatch, did, 0, lambda: None)
    assert late == TICK_MIN  # the queues are empty: stuck after 2 minutes, enqueued by the first tick
    h.assert_index_is_exactly_current()


def test_a_half_written_version_is_gone_after_one_tick(h, monkeypatch):
    h.upload("half.txt", _paragraphs(4, "v0"))
    h.drain()
    did = doc_id(h.cname, "half.txt")
    messages = h.upload("half.txt", _paragraphs(12, "v1"))
    h.queue.clear_messages()
    h.app.index_chunk_batch(queue_message(messages[0]))  # one batch in, the others lost
    h.upload("half.txt", b"")  # then a rejected upload
    # v0 (2 chunks) stays searchable beside the rejected bytes, as it should; v1's 4 do not belong anywhere
    assert h.drift()["stale"] == 2 + 4
    monkeypatch.setattr(clock, "offset_s", TICK_MIN * 60.0)
    assert h.handlers.handle_repair().swept == ["half.txt: 4"]
    entry = h.s.ledger.get(did)
    h.settle()
    assert set(h.s.index.keys_of(did).values()) == {entry.indexed_version}
    assert h.drift()["stale"] == 2
