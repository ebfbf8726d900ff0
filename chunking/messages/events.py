"""Completion events: a document version became ``indexed``, ``failed`` or ``deleted``, told to applications as a
CloudEvents 1.0 event (docs/events.md has the schema), published to an Event Grid namespace topic on Azure or to
a storage queue otherwise.

The ledger decides when an event is due and gives it an id (``chunking.ledger.Ledger``: one per transition, in
the same conditional write); this module only shapes and sends it. Delivery is at least once: a consumer
deduplicates by the event ``id`` (stable across re-sends of one transition), or by ``(doc_id, version, status)``.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from chunking.messages.envelope import MessageError

__all__ = ["EVENT_TYPES", "MAX_EVENT_BYTES", "EventGridPublisher", "QueuePublisher", "completion_event",
           "decode_event"]

#: Ledger status → CloudEvents ``type``.
EVENT_TYPES: Mapping[str, str] = {"indexed": "Chunking.Document.Indexed", "failed": "Chunking.Document.Failed",
                                  "deleted": "Chunking.Document.Deleted"}
#: Event Grid refuses an event over 1 MB (learn.microsoft.com/azure/event-grid/quotas-limits: "Event size: 1 MB");
#: a storage queue message holds 64 KiB, 48 KiB of text once base64-encoded.
MAX_EVENT_BYTES = 49_152
_SOURCE = "/chunking/documents"
_MAX_REASON_CHARS = 2000


def completion_event(entry: Any) -> dict[str, Any]:
    """The CloudEvents 1.0 event (structured JSON mode, as a dict) of *entry*'s pending event: *entry* is a
    ``chunking.ledger.LedgerEntry`` whose ``event`` is set (any object with its attributes ``doc_id``,
    ``source``, ``container``, ``indexed_version``, ``chunk_count`` and ``event``).

    Raises:
        MessageError: *entry* has no pending event, or it is not the ledger's JSON.
    """
    try:
        pending = json.loads(entry.event)
        status = pending["status"]
        kind = EVENT_TYPES[status]
    except (ValueError, TypeError, KeyError):
        raise MessageError(f"no completion event pending for {entry.source!r}") from None
    data = {"doc_id": entry.doc_id, "container": entry.container, "path": entry.source,
            "version": pending["version"], "status": status, "reason": str(pending.get("reason", ""))[
                :_MAX_REASON_CHARS], "indexed_version": entry.indexed_version,
            "chunk_count": entry.chunk_count if status == "indexed" else 0}
    return {"specversion": "1.0", "id": pending["id"], "source": _SOURCE, "type": kind,
            "subject": f"{entry.container}/{entry.source}" if entry.container else entry.source,
            "time": pending["at"], "datacontenttype": "application/json", "data": data}


def decode_event(body: str | bytes) -> dict[str, Any]:
    """An event as a consumer of the local queue reads it (the JSON ``completion_event`` made).

    Raises:
        MessageError: not JSON, or not a completion event.
    """
    try:
        event = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise MessageError(f"completion event is not JSON: {exc}") from None
    if not isinstance(event, dict) or event.get("type") not in EVENT_TYPES.values() or "data" not in event:
        raise MessageError("not a completion event")
    return event


class QueuePublisher:
    """Completion events to a storage queue (``COMPLETION_EVENTS_QUEUE``), one JSON message each, base64-encoded as
    a Functions queue trigger reads them. *sender*: a ``chunking.storage.QueueSender``."""

    def __init__(self, sender: Any) -> None:
        self.sender = sender

    def __call__(self, entry: Any) -> None:
        """Send *entry*'s event (``completion_event``).

        Raises:
            StorageError: the queue cannot be written. MessageError: the event is over ``MAX_EVENT_BYTES``.
        """
        text = _text(completion_event(entry))
        self.sender.send([text])


class EventGridPublisher:
    """Completion events to an Event Grid namespace topic (input schema CloudEvents 1.0) with the
    ``azure-eventgrid`` SDK's ``EventGridPublisherClient``: authenticated by *key* (``AzureKeyCredential``) or,
    without one, by ``DefaultAzureCredential`` (the Functions app's identity, role EventGrid Data Sender).
    Applications read the events from the topic's subscriptions: pulled (``EventGridConsumerClient``) or pushed
    to a webhook, Event Hubs, a queue (docs/events.md).

    Args:
        endpoint: the namespace's HTTP endpoint, ``https://<namespace>.<region>-1.eventgrid.azure.net``.
        topic: the namespace topic.
        client_kwargs: passed to the client (``transport=``, ``retry_total=`` in tests). The SDK's retry policy
            retries 408, 429, 500, 502, 503 and 504 with back-off, honouring ``Retry-After``.
    """

    def __init__(self, endpoint: str, topic: str, key: str = "", **client_kwargs: Any) -> None:
        self.endpoint, self.topic, self._key, self._kwargs = endpoint, topic, key, client_kwargs
        self._client = None

    @property
    def client(self) -> Any:
        if self._client is None:
            from azure.eventgrid import EventGridPublisherClient

            if self._key:
                from azure.core.credentials import AzureKeyCredential

                credential: Any = AzureKeyCredential(self._key)
            else:
                from azure.identity import DefaultAzureCredential

                credential = DefaultAzureCredential()
            self._client = EventGridPublisherClient(self.endpoint, credential, namespace_topic=self.topic,
                                                    **self._kwargs)
        return self._client

    def __call__(self, entry: Any) -> None:
        """Publish *entry*'s event (``completion_event``) as one CloudEvent.

        Raises:
            azure.core.exceptions.HttpResponseError: the topic refused it after the SDK's retries (401/403: the
                role or key; 413: too large). MessageError: the event is over ``MAX_EVENT_BYTES``.
        """
        from azure.core.messaging import CloudEvent

        event = completion_event(entry)
        _text(event)
        self.client.send([CloudEvent(source=event["source"], type=event["type"], data=event["data"],
                                     subject=event["subject"], id=event["id"], time=_time(event["time"]),
                                     datacontenttype=event["datacontenttype"])])


def _text(event: dict[str, Any]) -> str:
    text = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
    if len(text.encode("utf-8")) > MAX_EVENT_BYTES:
        raise MessageError(f"completion event of {event['subject']!r} is over {MAX_EVENT_BYTES} bytes")
    return text


def _time(at: str) -> Any:
    import datetime as dt

    try:
        return dt.datetime.fromisoformat(at)
    except ValueError:
        return None
