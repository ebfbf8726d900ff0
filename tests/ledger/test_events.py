"""Completion events of the ledger (docs/events.md): which operation, from which status, makes an event (an exact
table over the state machine's operations, on both stores), once per transition however often it is repeated,
kept pending while publishing fails and published again by ``publish_pending``; the CloudEvent they become."""

import json

import pytest

from chunking.ledger import EVENT_STATUSES, FAILED, INDEXED, Ledger
from chunking.messages.envelope import MessageError
from chunking.messages.events import EVENT_TYPES, QueuePublisher, completion_event, decode_event
from tests.ledger.test_state_machine import OPERATIONS, SRC, STARTS, _start


class Recorder:
    """A publisher that keeps what it was given, and fails while ``failing`` is set."""

    def __init__(self) -> None:
        self.events: list[dict] = []
        self.failing = False

    def __call__(self, entry) -> None:
        if self.failing:
            raise ConnectionError("topic unreachable, key=abcdef123456")
        self.events.append(completion_event(entry))


# The event an operation makes from each start (a status, with the version when it is not v1), or "" for none.
# Only a move to another (version, status) among indexed, failed and deleted makes one: "mark_failed v1" on a
# failed v1, "mark_indexed v1" on an indexed one and "mark_deleted" on a deleted document are repeats.
E = ""
EVENTS = {
    # operation                     none          sending     queued      throttled   indexed     failed      deleted
    "mark_indexed v1":             (E,            "indexed",  "indexed",  "indexed",  E,          "indexed",  E),
    "mark_failed v1":              ("failed",     "failed",   "failed",   "failed",   "failed",   E,          "failed"),
    "mark_failed v2":              ("failed v2",) * 7,
    "mark_failed v1 if current":   (E,            "failed",   "failed",   "failed",   "failed",   E,          "failed"),
    "mark_deleted":                ("deleted -",  "deleted",  "deleted",  "deleted",  "deleted",  "deleted",  E),
}


@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_which_operations_make_an_event(ledger, operation):
    got = []
    for n, start in enumerate(STARTS):
        doc_id = f"d{n}"
        ledger.publish = lambda entry: None  # the events of getting to *start* are published and forgotten
        _start(ledger, doc_id, start)
        recorder = Recorder()
        ledger.publish = recorder
        OPERATIONS[operation](ledger, doc_id)
        OPERATIONS[operation](ledger, doc_id)  # a duplicate delivery: no second event
        ledger.publish = None
        assert len(recorder.events) <= 1 and not getattr(ledger.get(doc_id), "event", "")
        data = recorder.events[0]["data"] if recorder.events else None
        got.append("" if data is None else data["status"] + ("" if data["version"] == "v1" else
                                                             f" {data['version'] or '-'}"))
    assert dict(zip(STARTS, got)) == dict(zip(STARTS, EVENTS.get(operation, (E,) * len(STARTS))))


def test_an_event_stays_pending_until_published_and_keeps_its_id(ledger):
    recorder = Recorder()
    ledger.publish = recorder
    ledger.begin_version("d", SRC, "v1", 4, 2)
    recorder.failing = True
    assert ledger.mark_indexed("d", SRC, "v1")  # the transition stands although the topic is down
    pending = json.loads(ledger.get("d").event)
    assert (pending["status"], pending["version"], recorder.events) == (INDEXED, "v1", [])
    assert ledger.publish_pending() == 0 and ledger.get("d").event  # still down
    ledger.mark_indexed("d", SRC, "v1")  # a duplicate completion makes no second event
    assert json.loads(ledger.get("d").event) == pending
    recorder.failing = False
    assert ledger.publish_pending() == 1 and ledger.publish_pending() == 0
    [event] = recorder.events
    assert event["id"] == pending["id"] and not ledger.get("d").event
    # A new transition of the same document gets an id of its own.
    ledger.mark_failed("d", SRC, "v1", "bad")
    assert recorder.events[1]["id"] != event["id"] and recorder.events[1]["data"]["reason"] == "bad"


def test_a_newer_transition_replaces_an_unpublished_one(ledger):
    ledger.begin_version("d", SRC, "v1", 4, 2)
    ledger.mark_indexed("d", SRC, "v1")  # no publisher: the event waits in the entry
    ledger.mark_deleted("d", SRC)
    recorder = Recorder()
    ledger.publish = recorder
    assert ledger.publish_pending() == 1
    assert [e["type"] for e in recorder.events] == ["Chunking.Document.Deleted"]


def test_the_cloudevent_of_each_status(tmp_path):
    from chunking.ledger import LocalLedgerStore

    recorder = Recorder()
    ledger = Ledger(LocalLedgerStore(tmp_path / "l.sqlite3"), publish=recorder)
    ledger.begin_version("d1", "manuals/a.pdf", "v1", 7, 2, container="docs")
    ledger.mark_indexed("d1", "manuals/a.pdf", "v1")
    ledger.begin_version("d1", "manuals/a.pdf", "v2", 3, 1, container="docs")
    ledger.mark_failed("d1", "manuals/a.pdf", "v2", "stage 1: AccountKey=c2VjcmV0c2VjcmV0 refused")
    ledger.mark_deleted("d1", "manuals/a.pdf")
    indexed, failed, deleted = recorder.events
    assert set(indexed) == {"specversion", "id", "source", "type", "subject", "time", "datacontenttype", "data"}
    assert (indexed["specversion"], indexed["type"], indexed["subject"], indexed["source"]) == (
        "1.0", "Chunking.Document.Indexed", "docs/manuals/a.pdf", "/chunking/documents")
    assert indexed["data"] == {"doc_id": "d1", "container": "docs", "path": "manuals/a.pdf", "version": "v1",
                               "status": "indexed", "reason": "", "indexed_version": "v1", "chunk_count": 7}
    assert failed["data"] | {"reason": ""} == {"doc_id": "d1", "container": "docs", "path": "manuals/a.pdf",
                                               "version": "v2", "status": "failed", "reason": "",
                                               "indexed_version": "v1", "chunk_count": 0}
    assert failed["data"]["reason"] == "stage 1: AccountKey=*** refused"  # the ledger's redaction holds
    assert (deleted["type"], deleted["data"]["version"], deleted["data"]["indexed_version"]) == (
        "Chunking.Document.Deleted", "v2", "")
    assert len({e["id"] for e in recorder.events}) == 3
    assert set(EVENT_TYPES) == set(EVENT_STATUSES) and FAILED in EVENT_TYPES


def test_the_queue_publisher_sends_what_a_consumer_decodes():
    class Sender:
        sent: list[str] = []

        def send(self, messages, visibility_timeout=None):
            self.sent.extend(messages)

    from chunking.ledger import LedgerEntry

    entry = LedgerEntry("d1", "a.txt", container="docs", version="v1", status=INDEXED, indexed_version="v1",
                        chunk_count=2, event=json.dumps({"id": "x1", "status": "indexed", "version": "v1",
                                                         "reason": "", "at": "2026-01-02T03:04:05+00:00"}))
    sender = Sender()
    QueuePublisher(sender)(entry)
    assert decode_event(sender.sent[0]) == completion_event(entry)
    assert completion_event(entry)["time"] == "2026-01-02T03:04:05+00:00"
    with pytest.raises(MessageError, match="not a completion event"):
        decode_event('{"type": "chunk-batch"}')
    with pytest.raises(MessageError, match="no completion event pending"):
        completion_event(LedgerEntry("d1", "a.txt"))


def test_racing_completions_make_one_event(ledger):
    # Eight invocations finishing the last batch at once: the conditional write lets one make the transition.
    import threading

    recorder = Recorder()
    ledger.publish = recorder
    ledger.begin_version("d", SRC, "v1", 4, 2)
    start = threading.Barrier(8)

    def complete():
        start.wait()
        ledger.mark_indexed("d", SRC, "v1")

    threads = [threading.Thread(target=complete) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [e["data"]["status"] for e in recorder.events] == ["indexed"]
