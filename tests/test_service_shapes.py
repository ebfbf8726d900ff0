"""What the fakes answer has the shape the services publish: every operation our clients call, driven through the
real SDKs against ``tests/search_fake.py`` and ``tests/docintel_fake.py``, is checked against the response schema
of that operation and status in the REST specifications (``tests/data/specs/``, provenance in its NOTICE.md):
required properties present, types, enums and bounds as published, no property the schema does not define
(unless it is open), and every error in the service's error envelope. The spec's own examples are checked the
same way first, so a checker that accepts anything fails here. The OpenAI fakes (embeddings, chat completions)
are checked against the openai SDK's own response models, which are generated from the published API."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from chunking.index.azure import AzureSearchIndex
from chunking.parsers import ParseError, parse_document
from chunking.services import document_readers
from chunking.settings import Settings
from tests.docintel_fake import ENDPOINT as DI_ENDPOINT
from tests.docintel_fake import Cell, DocumentIntelligenceFake, Figure, LayoutDocument, Para, Table
from tests.index.search_fakes import record
from tests.search_fake import ENDPOINT as SEARCH_ENDPOINT
from tests.search_fake import SearchServiceFake

SPECS = Path(__file__).parent / "data" / "specs"
SEARCH = json.loads((SPECS / "search-2024-07-01.json").read_text())
DOCINTEL = json.loads((SPECS / "docintel-2024-11-30.json").read_text())

_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "integer": int, "number": (int, float)}


def shape_errors(value: Any, schema: dict, spec: dict, path: str = "$") -> list[str]:
    """Where *value* departs from *schema* (a Swagger 2.0 schema with ``$ref`` into ``spec["definitions"]``)."""
    if "$ref" in schema:
        schema = spec["definitions"][schema["$ref"].rsplit("/", 1)[-1]]
    kind = schema.get("type") or ("object" if "properties" in schema else None)
    if value is None:
        return []  # Swagger 2.0: an optional property may be null (required ones are checked by the parent)
    if kind and (not isinstance(value, _TYPES[kind]) or (kind in ("integer", "number") and isinstance(value, bool))):
        return [f"{path}: {type(value).__name__}, not {kind}"]
    errors = []
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} not in {schema['enum']}")
    if "minimum" in schema and value < schema["minimum"] or "maximum" in schema and value > schema["maximum"]:
        errors.append(f"{path}: {value} out of bounds")
    if kind == "array":
        for i, item in enumerate(value):
            errors += shape_errors(item, schema.get("items", {}), spec, f"{path}[{i}]")
    if kind == "object" and "properties" in schema:
        for name in schema.get("required", []):
            if value.get(name) is None:
                errors.append(f"{path}: required {name!r} missing")
        for name, item in value.items():
            if name in schema["properties"]:
                errors += shape_errors(item, schema["properties"][name], spec, f"{path}.{name}")
            elif schema.get("additionalProperties") is not True:
                errors.append(f"{path}: {name!r} is not in the schema")
    return errors


def test_the_checker_accepts_the_spec_examples_and_refuses_broken_copies():
    for name, status in (("SearchIndexIndexDocuments", "200"), ("SearchIndexIndexDocuments", "207"),
                         ("SearchIndexSearchDocumentsSemanticPost", "200"), ("SearchIndexGetDocument", "200")):
        example = json.loads((SPECS / "examples" / f"{name}.json").read_text())
        operation = {"SearchIndexIndexDocuments": "Documents_Index", "SearchIndexGetDocument": "Documents_Get",
                     "SearchIndexSearchDocumentsSemanticPost": "Documents_SearchPost"}[name]
        schema = SEARCH["operations"][operation]["responses"][status]
        assert shape_errors(example["responses"][status]["body"], schema, SEARCH) == [], name
    body = json.loads((SPECS / "examples" / "SearchIndexIndexDocuments.json").read_text())["responses"]["207"]["body"]
    del body["value"][1]["statusCode"]
    body["value"][2]["status"] = "yes"
    assert shape_errors(body, {"$ref": "#/definitions/IndexDocumentsResult"}, SEARCH) == [
        "$.value[1]: required 'statusCode' missing", "$.value[2].status: str, not boolean"]


# -- recording what a fake answers -------------------------------------------------------------------------------

class Recorder:
    """Wraps a fake transport's ``send``: every (method, path, status, headers, body) it answers."""

    def __init__(self, fake: Any, endpoint: str) -> None:
        self.answers: list[tuple[str, str, int, dict, Any]] = []
        original = fake.send

        def send(request: Any, **kwargs: Any) -> Any:
            response = original(request, **kwargs)
            body = response.content
            path = request.url.split("?")[0].removeprefix(endpoint)
            self.answers.append((request.method, path, response.status_code, dict(response.headers),
                                 json.loads(body) if body else None))
            return response

        fake.send = send


def _search_operation(method: str, path: str) -> str:
    if path.startswith("/indexes('") and "/docs" in path:
        rest = path.split("/docs", 1)[1]
        return {"/$count": "Documents_Count", "/search.post.search": "Documents_SearchPost",
                "/search.index": "Documents_Index"}.get(rest, "Documents_Get")
    if path == "/indexes":
        return "Indexes_Create"
    return {"GET": "Indexes_Get", "PUT": "Indexes_CreateOrUpdate"}[method]


def _check(answers: list, spec: dict, classify) -> set[str]:
    seen = set()
    for method, path, status, headers, body in answers:
        operation = classify(method, path)
        seen.add(f"{operation} {status}")
        if status >= 400:
            error = body.get("error") if spec is SEARCH else body
            assert shape_errors(error, spec["error"]["schema"], spec) == [], (operation, status, body)
            continue
        responses = spec["operations"][operation]["responses"]
        assert str(status) in responses, f"{operation} answered {status}; the spec declares {sorted(responses)}"
        expected = responses[str(status)]
        for header in expected.get("headers", []):
            assert header.lower() in {h.lower() for h in headers}, (operation, header)
        if "$ref" in expected or "type" in expected:
            assert shape_errors(body, expected, spec) == [], (operation, status)
    return seen


def test_every_search_operation_the_client_calls_answers_in_the_spec_shape():
    fake = SearchServiceFake(semantic_queries_left=1)
    recorder = Recorder(fake, SEARCH_ENDPOINT)
    index = AzureSearchIndex(SEARCH_ENDPOINT, "chunks", 4, "key", transport=fake, sleep=[].append,
                             semantic_ranker=True)
    index.ensure()  # Indexes_Get 404, Indexes_Create 201
    index.upsert([record(0, "install on linux"), record(1, "install on windows")])  # Documents_Index 200
    index.ensure()  # Indexes_Get 200
    index.upsert([dataclasses.replace(record(2, "a child"), level=1)])  # strategy fields added: PUT 200
    index.update_fields(["d-000000", "gone"], {"content_type": "text/plain"})  # 207: a merge of a missing key
    index.search("install linux", [0.5] * 4, k=2)  # semantic: rerankerScore
    index.search("install", [0.5] * 4, k=2)  # the quota is spent: 402, then plain hybrid
    index.vectors_by_key(["d-000000", "missing"])  # Documents_Get 200 and 404
    index.keys_of("d")
    index.count()  # Documents_Count
    fake.throttle(1)
    index.count()  # 429 in the error envelope, then 200
    with pytest.raises(Exception):
        index.search("x", None, filter="colour eq 'red'")  # refused by the client's own check first
    from azure.core.credentials import AzureKeyCredential
    from azure.search.documents import SearchClient

    with pytest.raises(Exception):
        list(SearchClient(SEARCH_ENDPOINT, "chunks", AzureKeyCredential("key"), transport=fake,
                          retry_total=0).search("*", filter="colour eq 'red'"))  # 400 from the service

    seen = _check(recorder.answers, SEARCH, _search_operation)

    assert {s.split()[0] for s in seen} == set(SEARCH["operations"])  # every operation the clients call
    assert {"Documents_Index 207", "Documents_SearchPost 402", "Documents_Get 404", "Documents_Count 429",
            "Documents_SearchPost 400", "Indexes_Get 404"} <= seen


REPORT = LayoutDocument(pages=[
    [Para("Annual report", "title"), Para("Sales grew.", continues=True),
     Table(rows=[[Cell("Region", "columnHeader"), Cell("Q1", "columnHeader")], [Cell("North"), Cell("10")]],
           caption="Table 1")],
    [Figure(caption="Figure 1", texts=["2024"]), Para("Page 2", "pageFooter")],
])


def _docintel_operation(method: str, path: str) -> str:
    return "DocumentIntelligence_AnalyzeDocument" if method == "POST" else "DocumentIntelligence_GetAnalyzeResult"


@pytest.mark.parametrize("office", [False, True])
def test_every_document_intelligence_operation_answers_in_the_spec_shape(office):
    fake = DocumentIntelligenceFake(REPORT, running_polls=1, office=office, max_bytes=10_000)
    recorder = Recorder(fake, DI_ENDPOINT + "/documentintelligence")
    settings = Settings.from_env({"DOCUMENT_INTELLIGENCE_ENDPOINT": DI_ENDPOINT,
                                  "DOCUMENT_INTELLIGENCE_API_KEY": "test-key"})
    readers = document_readers(settings, transport=fake, retry_total=1)

    def parse(data: bytes = b"PK office") -> Any:
        return parse_document(data, source="report.docx" if office else "scan.png", readers=readers)

    parse()  # POST 202, GET 200 running, GET 200 succeeded
    fake.fail_operation("InvalidContentDimensions", "The input image dimensions are out of range.", target="2")
    with pytest.raises(ParseError):
        parse()  # GET 200 failed, the error in details
    fake.fail_operation("InvalidContent", "The file is corrupted.")
    with pytest.raises(ParseError):
        parse()  # GET 200 failed, the error in innererror
    with pytest.raises(ParseError):
        parse(b"x" * 20_000)  # 400 InvalidContentLength
    fake.throttle(1, retry_after_s=1)
    parse()  # 429 in the error envelope, then as the first

    seen = _check(recorder.answers, DOCINTEL, _docintel_operation)

    assert {s.split()[0] for s in seen} == set(DOCINTEL["operations"])
    assert {"DocumentIntelligence_AnalyzeDocument 202", "DocumentIntelligence_AnalyzeDocument 400",
            "DocumentIntelligence_AnalyzeDocument 429", "DocumentIntelligence_GetAnalyzeResult 200"} <= seen


# -- Azure OpenAI / OpenAI: the operations the clients call (embeddings, chat completions) -----------------------

def test_the_openai_fakes_answer_in_the_shape_of_the_sdk_models():
    """The openai SDK's response models are generated from the published API; a fake's answer must validate
    against them strictly (no coercion), and its errors carry the ``error`` envelope with a message."""
    import httpx2 as httpx
    from openai.types import CreateEmbeddingResponse
    from openai.types.chat import ChatCompletion

    from tests.embeddings.test_embeddings import FakeEmbeddingsAPI
    from tests.strategies.test_chat import FakeChatAPI

    embed = FakeEmbeddingsAPI(4, plan=[(429, {"retry-after": "1"})])
    request = httpx.Request("POST", "http://x.invalid/v1/embeddings",
                            json={"model": "text-embedding-3-small", "input": ["a", "b"], "dimensions": 4})
    error = embed(request)
    assert error.status_code == 429 and isinstance(error.json()["error"]["message"], str)
    CreateEmbeddingResponse.model_validate(embed(request).json(), strict=True)
    refused = embed(httpx.Request("POST", "http://x.invalid/v1/embeddings", json={"model": "m", "input": [""]}))
    assert refused.status_code == 400 and isinstance(refused.json()["error"]["message"], str)

    for content in ('{"ok": true}', None):
        chat = FakeChatAPI(content)
        answer = chat(httpx.Request("POST", "http://x.invalid/v1/chat/completions", json={"model": "m"}))
        ChatCompletion.model_validate(answer.json(), strict=True)
