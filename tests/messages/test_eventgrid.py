"""Completion events through the real ``azure-eventgrid`` client to a fake namespace topic
(``tests/eventgrid_fake.py``):
what the topic receives, the client's retries on 429 and 503, the ledger keeping an event the topic refused
until reconcile publishes it, one event per transition under duplicate deliveries, and the 1 MB limit."""

from __future__ import annotations

import pytest
from azure.core.exceptions import HttpResponseError

from chunking.ledger import Ledger, LocalLedgerStore
from chunking.messages.events import EventGridPublisher
from tests.eventgrid_fake import ENDPOINT, KEY, TOPIC, EventGridTopicFake


@pytest.fixture
def topic():
    return EventGridTopicFake()


@pytest.fixture
def ledger(tmp_path, topic):
    publisher = EventGridPublisher(ENDPOINT, TOPIC, KEY, transport=topic, retry_total=2, retry_backoff_factor=0.01)
    return Ledger(LocalLedgerStore(tmp_path / "ledger.sqlite3"), publish=publisher)


def test_the_topic_receives_one_cloudevent_per_transition(ledger, topic):
    ledger.begin_version("d1", "a/b.pdf", "v1", 5, 2, container="docs")
    for _ in range(3):  # the last batch delivered three times
        ledger.mark_indexed("d1", "a/b.pdf", "v1")
    ledger.mark_deleted("d1", "a/b.pdf")
    ledger.mark_deleted("d1", "a/b.pdf")
    assert [(e["type"], e["subject"], e["data"]["version"]) for e in topic.events] == [
        ("Chunking.Document.Indexed", "docs/a/b.pdf", "v1"), ("Chunking.Document.Deleted", "docs/a/b.pdf", "v1")]
    first = topic.events[0]
    assert (first["specversion"], first["source"], first["datacontenttype"]) == (
        "1.0", "/chunking/documents", "application/json")
    assert first["data"] == {"doc_id": "d1", "container": "docs", "path": "a/b.pdf", "version": "v1",
                             "status": "indexed", "reason": "", "indexed_version": "v1", "chunk_count": 5}
    assert first["time"].startswith(ledger.get("d1").created_at[:10])
    assert topic.requests == 2 and not ledger.get("d1").event


def test_throttling_and_outages_are_retried_by_the_client(ledger, topic):
    topic.throttle(1)
    topic.fail(1, 503)
    ledger.begin_version("d1", "a.txt", "v1", 1, 1)
    ledger.mark_indexed("d1", "a.txt", "v1")
    assert len(topic.events) == 1 and topic.requests == 3


def test_an_event_the_topic_refuses_waits_for_reconcile(ledger, topic):
    topic.fail(3, 503)  # more than the client's two retries
    ledger.begin_version("d1", "a.txt", "v1", 1, 1)
    ledger.mark_failed("d1", "a.txt", "v1", "stage 1: file is empty")
    assert topic.events == [] and ledger.get("d1").event  # the transition stands; its event is pending
    assert ledger.publish_pending() == 1
    [event] = topic.events
    assert (event["type"], event["data"]["reason"]) == ("Chunking.Document.Failed", "stage 1: file is empty")
    assert ledger.publish_pending() == 0 and len(topic.events) == 1


def test_a_wrong_key_is_refused_and_kept_pending(tmp_path, topic):
    ledger = Ledger(LocalLedgerStore(tmp_path / "l.sqlite3"),
                    publish=EventGridPublisher(ENDPOINT, TOPIC, "d3Jvbmcta2V5", transport=topic, retry_total=0))
    ledger.begin_version("d1", "a.txt", "v1", 1, 1)
    ledger.mark_indexed("d1", "a.txt", "v1")
    assert topic.events == [] and ledger.get("d1").event


def test_the_fake_refuses_an_event_over_1_mb():
    from azure.core.credentials import AzureKeyCredential
    from azure.core.messaging import CloudEvent
    from azure.eventgrid import EventGridPublisherClient

    topic = EventGridTopicFake()
    client = EventGridPublisherClient(ENDPOINT, AzureKeyCredential(KEY), namespace_topic=TOPIC, transport=topic,
                                      retry_total=0)
    with pytest.raises(HttpResponseError) as refused:
        client.send([CloudEvent(source="/t", type="t", data={"x": "y" * (1024 * 1024)})])
    assert refused.value.status_code == 413 and topic.events == []
    client.send([CloudEvent(source="/t", type="t", data={"x": "y" * 1000})])
    assert len(topic.events) == 1
