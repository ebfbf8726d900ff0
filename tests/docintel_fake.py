"""A fake Azure AI Document Intelligence service behind an azure-core transport, as unkind as the service.

* **Long-running operation.** ``POST /documentintelligence/documentModels/{model}:analyze`` answers 202 with an
  ``Operation-Location`` (REST API 2024-11-30, "Analyze Document"); ``GET …/analyzeResults/{id}`` answers
  ``{"status": "running"}`` with ``Retry-After`` for ``running_polls`` polls, then ``succeeded`` with the
  ``analyzeResult`` ("Get Analyze Result": status notStarted, running, succeeded, failed).
* **Throttling and faults.** ``throttle(n, retry_after_s)`` answers the next *n* requests 429 with
  ``Retry-After`` ("Service quotas and limits": requests over the transactions-per-second limit get 429);
  ``fail(n, status)`` answers them 5xx; ``fail_operation(code)`` makes the next operation end ``failed``.
* **Limits.** A body over ``max_bytes`` is refused 400 ``InvalidContentLength`` (500 MB on S0, 4 MB on F0); at most
  ``max_pages_per_request`` pages are analysed per request (2,000 on S0, 2 on F0), the first ones of the range,
  as the service does.
* **Office results** (``office=True``): for DOCX, PPTX and XLSX the layout model (v4.0, 2024-11-30) returns no
  bounding regions or polygons on any element and no page ``angle``, ``width``, ``height`` or ``unit``
  ("Service quotas and limits", v4.0, https://learn.microsoft.com/azure/ai-services/document-intelligence/
  service-limits, the restrictions listed for Office documents); ``pages[].spans`` still place every element.
* **Free tier** (``DocumentIntelligenceFake.free_tier(document)``): 4 MB per request and only the first two pages
  of a request analysed (the F0 column of "Service quotas and limits").
* **Errors** in the documented envelope (Error guide v4.0, https://learn.microsoft.com/azure/ai-services/
  document-intelligence/v3-error-guide): a generic top-level ``code`` (``InvalidRequest``, ``InternalServerError``)
  with the specific reason in ``innererror``; for a failed long-running operation the individual errors in
  ``error.details``, each with a ``target`` (the guide's own example: top-level ``InternalServerError`` with an
  ``InvalidContentDimensions`` detail whose target is page ``"2"``). ``fail_operation`` ends the next operation so.
* **Offsets** in the unit the request asks for (``stringIndexType``: ``textElements``, the service's default, counts
  user-perceived characters, Unicode grapheme clusters; ``unicodeCodePoint`` counts code points as Python
  strings do; ``utf16CodeUnit``; the ``StringIndexType`` enum of the 2024-11-30 spec), and declared so in the
  result's ``stringIndexType``.
* **Results** are built from a ``LayoutDocument`` (pages of paragraphs, tables and figures) in the documented
  ``AnalyzeResult`` shape, for the requested ``pages`` range only, with ``content`` and every ``spans`` offset
  counted within that request's content, as the service's are. The layout features: paragraph roles (title,
  sectionHeading, pageHeader, pageFooter, pageNumber, footnote), a paragraph running on to the next page (bounding
  regions on both), tables with header cells, row and column spans and a caption, a table continued on the next
  page (bounding regions on both, and with the furniture between its pages, one span per page), figures with a
  caption, the paragraphs inside them and a bounding region.

``sleeps`` records every wait the SDK asked the transport for (retry back-off, ``Retry-After``, polling
interval) instead of sleeping, so the tests check them without waiting.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlparse

from azure.core.pipeline.transport import HttpTransport

from tests.index.search_fakes import _Response

ENDPOINT = "https://fake-docintel.cognitiveservices.azure.com"


@dataclass
class Para:
    text: str
    role: str | None = None
    continues: bool = False  # the paragraph runs on to the next page (bounding regions on both)


@dataclass
class Cell:
    text: str
    kind: str | None = None  # "columnHeader", "rowHeader", …
    row_span: int = 1
    column_span: int = 1


@dataclass
class Table:
    rows: list[list[Cell | None]]  # None: covered by a span
    caption: str = ""
    rows_on_next_page: int = 0  # the last n rows are on the next page (a table continued over two pages)
    # Page furniture read between the two pages' rows (page 1's footer, page 2's header): in ``content`` it sits
    # between them, so the table has one span per page, around it, as the service's multi-page tables do.
    between_pages: list[Para] = field(default_factory=list)


@dataclass
class Figure:
    caption: str = ""
    texts: list[str] = field(default_factory=list)
    polygon: tuple[float, ...] = (1.0, 2.0, 5.0, 2.0, 5.0, 4.5, 1.0, 4.5)


@dataclass
class LayoutDocument:
    """What the service "sees" in a document: per page, its elements in reading order."""

    pages: list[list[Para | Table | Figure]]

    def result(self, first: int, last: int, model_id: str) -> dict[str, Any]:
        """The ``AnalyzeResult`` of pages *first*..*last* (1-based, inclusive)."""
        builder = _Builder()
        for number in range(first, last + 1):
            builder.page(number, self.pages[number - 1])
        return {"apiVersion": "2024-11-30", "modelId": model_id, "stringIndexType": "textElements",
                "content": builder.content, "pages": builder.pages, "paragraphs": builder.paragraphs,
                "tables": builder.tables, "figures": builder.figures}


class _Builder:
    def __init__(self) -> None:
        self.content = ""
        self.pages: list[dict] = []
        self.paragraphs: list[dict] = []
        self.tables: list[dict] = []
        self.figures: list[dict] = []

    def _add(self, text: str, pages: list[int], role: str | None = None) -> dict:
        if self.content:
            self.content += "\n"
        span = {"offset": len(self.content), "length": len(text)}
        self.content += text
        paragraph = {"content": text, "spans": [span],
                     "boundingRegions": [{"pageNumber": p, "polygon": [1, 1, 7, 1, 7, 1.3, 1, 1.3]} for p in pages]}
        if role:
            paragraph["role"] = role
        self.paragraphs.append(paragraph)
        return span

    def page(self, number: int, elements: list) -> None:
        start = len(self.content) + (1 if self.content else 0)
        for element in elements:
            if isinstance(element, Para):
                self._add(element.text, [number, number + 1] if element.continues else [number], element.role)
            elif isinstance(element, Table):
                self._table(number, element)
            else:
                self._figure(number, element)
        self.pages.append({"pageNumber": number, "width": 8.5, "height": 11, "unit": "inch", "angle": 0,
                           "spans": [{"offset": start, "length": len(self.content) - start}]})

    def _table(self, number: int, table: Table) -> None:
        first = len(self.content) + (1 if self.content else 0)
        caption = {"content": table.caption, "spans": [self._add(table.caption, [number])]} if table.caption else None
        cells = []
        spans = [{"offset": first}]
        split_at = len(table.rows) - table.rows_on_next_page
        for r, row in enumerate(table.rows):
            if r == split_at and table.between_pages:
                spans[-1]["length"] = len(self.content) - first
                for para in table.between_pages:
                    self._add(para.text, [number + 1 if para.role == "pageHeader" else number], para.role)
                spans.append({"offset": len(self.content) + 1})
            for c, cell in enumerate(row):
                if cell is None:
                    continue
                page = number + 1 if r >= split_at else number
                span = self._add(cell.text, [page])
                entry = {"rowIndex": r, "columnIndex": c, "content": cell.text, "spans": [span],
                         "boundingRegions": [{"pageNumber": page, "polygon": [1, 1, 2, 1, 2, 2, 1, 2]}]}
                if cell.kind:
                    entry["kind"] = cell.kind
                if cell.row_span > 1:
                    entry["rowSpan"] = cell.row_span
                if cell.column_span > 1:
                    entry["columnSpan"] = cell.column_span
                cells.append(entry)
        regions = [{"pageNumber": number, "polygon": [1, 3, 7, 3, 7, 8, 1, 8]}]
        if table.rows_on_next_page:
            regions.append({"pageNumber": number + 1, "polygon": [1, 1, 7, 1, 7, 3, 1, 3]})
        spans[-1]["length"] = len(self.content) - spans[-1]["offset"]
        entry = {"rowCount": len(table.rows), "columnCount": max(len(row) for row in table.rows), "cells": cells,
                 "boundingRegions": regions, "spans": spans}
        if caption:
            entry["caption"] = caption
        self.tables.append(entry)

    def _figure(self, number: int, figure: Figure) -> None:
        first = len(self.content) + (1 if self.content else 0)
        elements = []
        for text in figure.texts:
            self._add(text, [number])
            elements.append(f"/paragraphs/{len(self.paragraphs) - 1}")
        entry = {"id": f"{number}.{len(self.figures) + 1}", "elements": elements,
                 "boundingRegions": [{"pageNumber": number, "polygon": list(figure.polygon)}]}
        if figure.caption:
            span = self._add(figure.caption, [number])
            entry["caption"] = {"content": figure.caption, "spans": [span]}
        entry["spans"] = [{"offset": first, "length": len(self.content) - first}]
        self.figures.append(entry)


@dataclass
class DocumentIntelligenceFake(HttpTransport):
    """One Document Intelligence account analysing ``document`` (whatever bytes are sent)."""

    document: LayoutDocument
    running_polls: int = 1
    poll_retry_after_s: int = 1
    max_bytes: int = 500 * 1024 * 1024
    max_pages_per_request: int = 2000
    office: bool = False  # an Office file's result: no bounding regions, no page geometry (module docstring)
    requests: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    sleeps: list[float] = field(default_factory=list)
    pages_analysed: int = 0
    _faults: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    _failing: list[str] = field(default_factory=list)
    _operations: dict[str, dict[str, Any]] = field(default_factory=dict)
    _ids: Any = field(default_factory=itertools.count)

    def throttle(self, n: int, retry_after_s: int = 7) -> None:
        self._faults.extend([(429, {"Retry-After": str(retry_after_s)})] * n)

    def fail(self, n: int, status: int = 503) -> None:
        self._faults.extend([(status, {})] * n)

    @classmethod
    def free_tier(cls, document: LayoutDocument, **kwargs: Any) -> DocumentIntelligenceFake:
        """An F0 account: 4 MB per request, the first 2 pages of each request analysed (module docstring)."""
        return cls(document, max_bytes=4 * 1024 * 1024, max_pages_per_request=2, **kwargs)

    def fail_operation(self, code: str = "InvalidContent", message: str = "The file is corrupted.", *,
                       target: str | None = None, top_code: str | None = None) -> None:
        """End the next operation ``failed`` with *code* in the documented envelope (module docstring): in
        ``innererror`` under a top-level ``InvalidRequest``; with *target* (a page number) as one of the
        ``details`` under a top-level ``InternalServerError``, as the error guide's example. *top_code* replaces
        the top-level code."""
        self._failing.append(json.dumps(documented_error(code, message, target=target, top_code=top_code)))

    def analyses(self) -> list[str | None]:
        """The ``pages`` parameter of each analyze request that was accepted."""
        return [query.get("pages") for method, path, query in self.requests if method == "POST"]

    def open(self) -> None: ...
    def close(self) -> None: ...
    def __enter__(self) -> "DocumentIntelligenceFake":
        return self

    def __exit__(self, *args: Any) -> None: ...

    def sleep(self, duration: float) -> None:
        self.sleeps.append(duration)

    def send(self, request: Any, **kwargs: Any) -> _Response:
        url = urlparse(request.url)
        query = {key: values[0] for key, values in parse_qs(url.query).items()}
        if self._faults:
            status, headers = self._faults.pop(0)
            code = "TooManyRequests" if status == 429 else "ServiceUnavailable"
            return _Response(request, status, {"error": {"code": code, "message": "fake fault"}}, headers)
        self.requests.append((request.method, url.path, query))
        if request.method == "POST" and url.path.endswith(":analyze"):
            return self._analyze(request, url.path, query)
        operation = self._operations.get(url.path.rsplit("/", 1)[-1])
        if request.method != "GET" or operation is None:
            return _Response(request, 404, {"error": {"code": "NotFound", "message": url.path}}, {})
        if operation["polls"] < self.running_polls:
            operation["polls"] += 1
            # The spec's AnalyzeOperation requires both times in every answer, a running one too.
            running = {"status": "running", "createdDateTime": "2026-01-01T00:00:00Z",
                       "lastUpdatedDateTime": "2026-01-01T00:00:01Z"}
            return _Response(request, 200, running, {"Retry-After": str(self.poll_retry_after_s)})
        return _Response(request, 200, operation["body"], {})

    def _analyze(self, request: Any, path: str, query: dict[str, str]) -> _Response:
        body = request.content or b""
        if len(body) > self.max_bytes:
            return _Response(request, 400, {"error": {"code": "InvalidRequest", "message": "Invalid request.",
                             "innererror": {"code": "InvalidContentLength",
                                            "message": "The input document is too large."}}}, {})
        model_id = path.rsplit("/", 1)[-1].removesuffix(":analyze")
        count = len(self.document.pages)
        first, last = 1, count
        if "pages" in query:
            low, _, high = query["pages"].partition("-")
            first, last = int(low), min(int(high or low), count)
        last = min(last, first + self.max_pages_per_request - 1)
        operation_id = f"op{next(self._ids)}"
        if self._failing:
            outcome = {"status": "failed", "createdDateTime": "2026-01-01T00:00:00Z",
                       "lastUpdatedDateTime": "2026-01-01T00:00:02Z", "error": json.loads(self._failing.pop(0))}
        else:
            result = in_string_index_type(self.document.result(first, last, model_id),
                                          query.get("stringIndexType", "textElements"))
            outcome = {"status": "succeeded", "createdDateTime": "2026-01-01T00:00:00Z",
                       "lastUpdatedDateTime": "2026-01-01T00:00:02Z",
                       "analyzeResult": office_result(result) if self.office else result}
            self.pages_analysed += last - first + 1
        self._operations[operation_id] = {"polls": 0, "body": outcome}
        location = (f"{ENDPOINT}/documentintelligence/documentModels/{model_id}/analyzeResults/{operation_id}"
                    f"?api-version={query.get('api-version', '')}")
        return _Response(request, 202, None, {"Operation-Location": location, "Retry-After": "1"})


# -- service modes (module docstring: Office results, errors) -----------------------------------------------------

_PAGE_GEOMETRY = ("angle", "width", "height", "unit")


def office_result(result: dict[str, Any]) -> dict[str, Any]:
    """*result* as the layout model returns it for DOCX, PPTX and XLSX: every ``boundingRegions`` and
    ``polygon`` removed, and the pages' ``angle``, ``width``, ``height`` and ``unit`` (their ``spans`` stay)."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in ("boundingRegions", "polygon")}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    stripped = strip(result)
    stripped["pages"] = [{k: v for k, v in page.items() if k not in _PAGE_GEOMETRY} for page in stripped["pages"]]
    return stripped


def documented_error(code: str, message: str, *, target: str | None = None,
                     top_code: str | None = None) -> dict[str, Any]:
    """The ``error`` object of the error guide (module docstring) for the specific *code*: in ``innererror``
    under ``InvalidRequest``, or (with *target*) in ``details`` under ``InternalServerError``."""
    if target is None:
        return {"code": top_code or "InvalidRequest", "message": "Invalid request.",
                "innererror": {"code": code, "message": message}}
    return {"code": top_code or "InternalServerError", "message": "An unexpected error occurred.",
            "details": [{"code": "InternalServerError", "message": "An unexpected error occurred."},
                        {"code": code, "message": message, "target": target}]}


def in_string_index_type(result: dict[str, Any], index_type: str) -> dict[str, Any]:
    """*result* (offsets counted in code points, as it is built) with every span's ``offset`` and ``length``
    counted in *index_type* (module docstring, "Offsets"), and ``stringIndexType`` set to it."""
    import regex  # grapheme clusters (\\X); a dependency of tiktoken, listed in requirements-dev.txt

    content = result["content"]
    position = [0] * (len(content) + 1)  # code point offset -> offset in the unit
    if index_type == "textElements":
        cursor = 0
        for index, cluster in enumerate(regex.findall(r"\X", content)):
            position[cursor:cursor + len(cluster)] = [index] * len(cluster)
            cursor += len(cluster)
            position[cursor] = index + 1
    elif index_type == "utf16CodeUnit":
        for i, char in enumerate(content):
            position[i + 1] = position[i] + (2 if ord(char) > 0xFFFF else 1)
    else:
        return {**result, "stringIndexType": index_type}

    def convert(value: Any) -> Any:
        if isinstance(value, dict):
            if set(value) == {"offset", "length"}:
                start, end = value["offset"], value["offset"] + value["length"]
                return {"offset": position[start], "length": position[end] - position[start]}
            return {k: convert(v) for k, v in value.items()}
        if isinstance(value, list):
            return [convert(v) for v in value]
        return value

    return {**convert(result), "stringIndexType": index_type}
