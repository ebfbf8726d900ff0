"""A fake Event Grid namespace behind the real ``azure-eventgrid`` client: a transport that answers the namespace
topic's "Publish Cloud Events" data-plane call as the service does, and as unkindly.

Rules, with their sources (learn.microsoft.com):

- ``POST /topics/{topic}:publish?api-version=…`` with a JSON array of CloudEvents 1.0 (``Content-Type:
  application/cloudevents-batch+json``); 200 with an empty JSON object on success; an unknown topic is 404
  (REST reference "Event Grid data plane: Publish Cloud Events"; "Publish to namespace topics").
- each event needs ``specversion`` "1.0", ``id``, ``source`` and ``type`` (CloudEvents 1.0 specification, required
  context attributes); otherwise 400.
- an event is at most 1 MB, and so is the whole request ("Azure Event Grid quotas and limits": event size, and
  "Post size"); otherwise 413.
- authentication: ``Authorization: SharedAccessKey <key>`` with the namespace's key, or ``Authorization: Bearer
  …`` (Entra ID: "Authenticate publishing clients"); a wrong key is 401.
- throttling answers 429 and outages 503 ("Event Grid: delivery and retry" for the service's own throttling; the
  client's retry policy retries both, honouring ``Retry-After``): queued with ``throttle`` and ``fail``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from azure.core.pipeline.transport import HttpTransport

from tests.index.search_fakes import _Response

ENDPOINT = "https://fake-ns.westeurope-1.eventgrid.azure.net"
TOPIC = "document-events"
KEY = "ZmFrZS10b3BpYy1rZXktdmFsdWU="
MAX_BYTES = 1024 * 1024


@dataclass
class EventGridTopicFake(HttpTransport):
    """One custom topic: ``events`` holds every CloudEvent accepted, in order; ``requests`` counts every call."""

    events: list[dict[str, Any]] = field(default_factory=list)
    requests: int = 0
    _faults: list[tuple[int, dict[str, str]]] = field(default_factory=list)

    def throttle(self, n: int, retry_after_s: float = 0.01) -> None:
        """The next *n* requests are answered 429 with ``Retry-After``."""
        self._faults.extend([(429, {"Retry-After": f"{retry_after_s:g}"})] * n)

    def fail(self, n: int, status: int = 503) -> None:
        """The next *n* requests are answered *status*."""
        self._faults.extend([(status, {})] * n)

    def open(self) -> None: ...
    def close(self) -> None: ...

    def __enter__(self) -> "EventGridTopicFake":
        return self

    def __exit__(self, *args: Any) -> None: ...

    def send(self, request: Any, **kwargs: Any) -> _Response:
        self.requests += 1
        if self._faults:
            status, headers = self._faults.pop(0)
            return _Response(request, status, {"error": {"code": "ServerBusy" if status == 429 else "Unavailable",
                                                         "message": "fake topic fault"}}, headers)
        if request.method != "POST" or request.url.split("?")[0] != f"{ENDPOINT}/topics/{TOPIC}:publish":
            return _Response(request, 404, {"error": {"code": "NotFound", "message": request.url}}, {})
        auth = request.headers.get("Authorization", "")
        if auth != f"SharedAccessKey {KEY}" and not auth.startswith("Bearer "):
            return _Response(request, 401, {"error": {"code": "Unauthorized", "message": "bad key"}}, {})
        content = request.content or b""
        content = content.encode() if isinstance(content, str) else content
        if len(content) > MAX_BYTES:
            return _Response(request, 413, {"error": {"code": "RequestEntityTooLarge",
                                                      "message": "the request exceeds 1 MB"}}, {})
        if "cloudevents-batch+json" not in request.headers.get("Content-Type", ""):
            return _Response(request, 400, {"error": {"code": "BadRequest", "message": "not a CloudEvents batch"}},
                             {})
        events = json.loads(content)
        for event in events:
            if len(json.dumps(event).encode()) > MAX_BYTES:
                return _Response(request, 413, {"error": {"code": "RequestEntityTooLarge",
                                                          "message": "an event exceeds 1 MB"}}, {})
            if event.get("specversion") != "1.0" or not all(event.get(k) for k in ("id", "source", "type")):
                return _Response(request, 400, {"error": {"code": "BadRequest",
                                                          "message": "missing CloudEvents attribute"}}, {})
        self.events.extend(events)
        return _Response(request, 200, {}, {})
