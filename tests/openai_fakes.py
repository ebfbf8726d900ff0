"""A scripted OpenAI-compatible endpoint for ``httpx.MockTransport``, shared by the embedding and chat tests."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx2 as httpx  # the HTTP client of openai 3.x


class ScriptedEndpoint:
    """Answers the statuses of *plan* first (each ``(status, headers)``, with an OpenAI-style error body), then
    whatever :meth:`reply` builds; records every request and when it arrived (``time.monotonic``)."""

    def __init__(self, plan: list[tuple[int, dict[str, str]]] | None = None) -> None:
        self.plan = list(plan or [])
        self.requests: list[httpx.Request] = []
        self.times: list[float] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        self.times.append(time.monotonic())
        if self.plan:
            status, headers = self.plan.pop(0)
            return httpx.Response(status, headers=headers, json={"error": {"message": "busy", "code": str(status)}})
        return self.reply(request)

    def reply(self, request: httpx.Request) -> httpx.Response:
        raise NotImplementedError

    def body(self, n: int = -1) -> dict[str, Any]:
        """The JSON body of request *n* (the last by default)."""
        return json.loads(self.requests[n].content)
