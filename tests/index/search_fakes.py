"""A fake Azure AI Search service behind the real SDK: an azure-core transport that records every request and
answers it from a handler, and the records the tests send. Nothing leaves the process."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Callable

from azure.core.pipeline.transport import HttpTransport
from azure.core.rest._http_response_impl import HttpResponseImpl
from azure.core.utils import case_insensitive_dict

from chunking.index.azure import AzureSearchIndex
from chunking.model import ChunkRecord

ENDPOINT = "https://unit-test.search.windows.net"


class _Response(HttpResponseImpl):
    def __init__(self, request: Any, status: int, body: Any, headers: dict[str, str]) -> None:
        merged = case_insensitive_dict({"Content-Type": "application/json; charset=utf-8", **headers})
        super().__init__(
            request=request,
            internal_response=None,
            status_code=status,
            reason="fake",
            content_type=merged["Content-Type"],
            headers=merged,
            stream_download_generator=None,
        )
        self._content = b"" if body is None else json.dumps(body).encode()

    def close(self) -> None:
        self._is_closed = True


@dataclass
class Sent:
    method: str
    path: str
    body: Any
    size: int
    headers: dict[str, str]


@dataclass
class FakeService(HttpTransport):
    """Answers each request with ``handler(Sent) -> (status, json_body[, headers])`` and records it."""

    handler: Callable[[Sent], tuple]
    sent: list[Sent] = field(default_factory=list)

    def send(self, request: Any, **kwargs: Any) -> _Response:
        content = request.content or b""
        content = content.encode() if isinstance(content, str) else content
        sent = Sent(
            request.method,
            request.url.split("?")[0].removeprefix(ENDPOINT),
            json.loads(content or "null"),
            len(content),
            dict(request.headers),
        )
        self.sent.append(sent)
        status, body, *headers = self.handler(sent)
        return _Response(request, status, body, headers[0] if headers else {})

    def open(self) -> None: ...
    def close(self) -> None: ...
    def __enter__(self) -> "FakeService":
        return self

    def __exit__(self, *args: Any) -> None: ...

    def to(self, path_end: str) -> list[Sent]:
        return [s for s in self.sent if s.path.endswith(path_end)]


def make(handler: Callable[[Sent], tuple], dims: int = 4, **kwargs: Any) -> tuple[AzureSearchIndex, FakeService, list]:
    service, sleeps = FakeService(handler), []
    index = AzureSearchIndex(ENDPOINT, "chunks", dims, "test-key", transport=service, sleep=sleeps.append, **kwargs)
    return index, service, sleeps


def record(i: int, content: str = "", dims: int = 4, doc: str = "d") -> ChunkRecord:
    content = content or f"chunk {i}"
    return ChunkRecord(
        id=f"{doc}-{i:06d}",
        doc_id=doc,
        version="v1",
        source="a/b.pdf",
        sourcepage="a/b.pdf#page=1",
        ordinal=i,
        page_start=0,
        page_end=0,
        char_start=0,
        char_end=len(content),
        content=content,
        content_hash=hashlib.sha256(content.encode()).hexdigest(),
        token_count=2,
        headings=("Install", "Linux"),
        embedding=tuple([0.5] * dims),
    )


def ok_for_all(sent: Sent) -> tuple:
    return 200, {
        "value": [{"key": a["id"], "status": True, "errorMessage": None, "statusCode": 200} for a in sent.body["value"]]
    }


def stored(i: int, **extra: Any) -> dict[str, Any]:
    doc = record(i).to_dict()
    del doc["embedding"]
    return {"@search.score": 1.0 / (i + 1), **doc, **extra}


def created_definition(dims: int) -> dict[str, Any]:
    """The index definition ``ensure()`` sends when the index is missing (after checking its two requests)."""

    def handler(sent: Sent) -> tuple:
        if sent.method == "GET":
            return 404, {"error": {"code": "ResourceNotFound", "message": "No index with the name 'chunks'"}}
        return 201, sent.body

    index, service, _ = make(handler, dims)
    index.ensure()
    assert [(s.method, s.path) for s in service.sent] == [("GET", "/indexes('chunks')"), ("POST", "/indexes")]
    assert service.sent[0].headers["api-key"] == "test-key"
    return service.sent[1].body
