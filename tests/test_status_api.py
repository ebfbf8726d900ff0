"""The status API (docs/operations.md#the-status-api): the HTTP-triggered functions of ``function_app`` called with
the Functions library's ``HttpRequest``, as the worker calls them, over a ledger holding a document in every
status; the answers equal ``chunking status --json`` (one function, ``chunking.ledger.views``)."""

from __future__ import annotations

import json
import os

import azure.functions as func
import pytest

from chunking.ids import doc_id
from chunking.ledger import MAX_PAGE_SIZE, STATUSES
from tests.functions_host import index_app

CONTAINER = "documents"
PATHS = {"sending": "a/sending.txt", "queued": "b/queued.txt", "throttled": "c/throttled.txt",
         "indexed": "d/indexed.pdf", "failed": "e/failed.docx", "deleted": "f/deleted.md"}


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """function_app on a local ledger (no storage setting) holding one document in each status."""
    import function_app
    from chunking.app import functions as handlers

    mp = pytest.MonkeyPatch()
    for key in list(os.environ):
        if key.startswith(("AzureWebJobs", "AZURE_", "OPENAI_", "LEDGER_", "COMPLETION_")):
            mp.delenv(key)
    mp.setenv("CHUNKING_STATE_DIR", str(tmp_path_factory.mktemp("state")))
    handlers.services.cache_clear()
    ledger = handlers.services().ledger
    for status, path in PATHS.items():
        did = doc_id(CONTAINER, path)
        ledger.begin_version(did, path, f"v-{status}", 12, 3, CONTAINER, status="sending" if status == "sending"
                             else "queued", note="fallback: sentence" if status == "queued" else "")
        if status == "throttled":
            ledger.mark_throttled(did, path, f"v-{status}", 30)
        elif status in ("indexed", "deleted"):
            ledger.mark_indexed(did, path, f"v-{status}", "offline")
        elif status == "failed":
            ledger.mark_failed(did, path, f"v-{status}", "stage 1: not a valid DOCX", container=CONTAINER)
        if status == "deleted":
            ledger.mark_deleted(did, path)
    assert sorted(e.status for e in ledger.entries()) == sorted(STATUSES)
    yield function_app
    handlers.services.cache_clear()
    mp.undo()


def _get(function, route: str, **params: str) -> tuple[int, dict]:
    response = function(func.HttpRequest(method="GET", url=f"http://localhost/api/{route}", params=params,
                                         body=b""))
    assert response.mimetype == "application/json"
    return response.status_code, json.loads(response.get_body())


def test_the_http_functions_are_get_routes_with_function_keys():
    bindings = index_app({})
    routes = {name: bindings[name][0] for name in ("status_summary", "status_documents", "status_document")}
    assert {name: (b["type"], b["route"], b["methods"], b["authLevel"]) for name, b in routes.items()} == {
        "status_summary": ("httpTrigger", "status", ["GET"], "FUNCTION"),
        "status_documents": ("httpTrigger", "status/documents", ["GET"], "FUNCTION"),
        "status_document": ("httpTrigger", "status/document", ["GET"], "FUNCTION")}


def test_the_summary_is_what_the_cli_prints(app, capsys):
    from chunking.app.cli import main

    status, body = _get(app.status_summary, "status")
    assert status == 200
    assert body["counts"] == {"indexed": 1, "queued": 1, "sending": 1, "failed": 1, "deleted": 1}
    [failed] = body["failed"]
    assert (failed["source"], failed["version"], failed["error"], failed["attempts"]) == (
        "e/failed.docx", "v-failed", "stage 1: not a valid DOCX", 1)
    assert body["notes"] == [{"source": "b/queued.txt", "status": "queued", "note": "fallback: sentence"}]
    capsys.readouterr()
    assert main(["status", "--json"]) == 1  # e/failed.docx is failed: status exits 1, the API still answers 200
    printed = json.loads(capsys.readouterr().out)
    assert body["retrying"] == []  # no attempt failed with an error that can go away
    assert {key: printed[key] for key in ("counts", "failed", "retrying", "notes")} == body


@pytest.mark.parametrize("status", STATUSES)
def test_one_document_in_each_status(app, status, capsys):
    from chunking.app.cli import main

    code, body = _get(app.status_document, "status/document", path=PATHS[status])
    assert code == 200
    capsys.readouterr()
    assert main(["status", "--document", PATHS[status]]) == (1 if status == "failed" else 0)  # as status exits
    assert json.loads(capsys.readouterr().out) == body  # the CLI prints the API's answer
    indexed = {"indexed": "v-indexed", "failed": "", "deleted": ""}.get(status, "")
    assert {k: body[k] for k in ("path", "container", "doc_id", "status", "version", "indexed_version",
                                 "chunk_count", "batch_count")} == {
        "path": PATHS[status], "container": CONTAINER, "doc_id": doc_id(CONTAINER, PATHS[status]), "status": status,
        "version": f"v-{status}", "indexed_version": indexed, "chunk_count": 12, "batch_count": 3}
    assert body["reason"] == ("stage 1: not a valid DOCX" if status == "failed" else "")
    assert body["created_at"] <= body["updated_at"] and body["updated_at"].endswith("+00:00")
    assert bool(body["retry_at"]) is (status == "throttled")


def test_listing_by_status_and_in_pages(app):
    for status in STATUSES:
        code, body = _get(app.status_documents, "status/documents", status=status)
        assert code == 200 and [d["path"] for d in body["documents"]] == [PATHS[status]] and body["next"] is None
    seen, cursor = [], None
    while True:
        code, body = _get(app.status_documents, "status/documents", limit="4", **({"cursor": cursor} if cursor
                                                                                   else {}))
        assert code == 200 and len(body["documents"]) <= 4
        seen += [d["path"] for d in body["documents"]]
        cursor = body["next"]
        if cursor is None:
            break
    assert seen == sorted(PATHS.values())


@pytest.mark.parametrize("params, message", [
    ({"status": "done"}, "unknown status 'done'"),
    ({"limit": "0"}, f"limit must be 1 to {MAX_PAGE_SIZE}, got 0"),
    ({"limit": "many"}, "limit must be a whole number, got 'many'"),
    ({"cursor": "%%%"}, "cursor is not one this API returned"),
])
def test_bad_queries_are_400_with_the_reason(app, params, message):
    code, body = _get(app.status_documents, "status/documents", **params)
    assert code == 400 and message in body["error"]


def test_a_document_the_ledger_does_not_know_is_404(app, capsys):
    from chunking.app.cli import main

    capsys.readouterr()
    assert main(["status", "--document", "nowhere.txt"]) == 1
    # The CLI also looks among the local files `chunking ingest` names (first, without storage settings).
    ledger = os.path.join(os.environ["CHUNKING_STATE_DIR"], "ledger.sqlite3")
    assert capsys.readouterr().err == (f"chunking status: no document local/nowhere.txt nor documents/nowhere.txt "
                                       f"in the ledger {ledger}\n")
    assert _get(app.status_document, "status/document", path="nowhere.txt") == (
        404, {"error": "no document documents/nowhere.txt in the ledger"})
    assert _get(app.status_document, "status/document") == (400, {"error": "give the document's path: "
                                                                           "?path=folder/name"})
    code, body = _get(app.status_document, "status/document", path=PATHS["indexed"], container="other")
    assert code == 404
