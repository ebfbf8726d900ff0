"""One document's failure never stops the others in a batch run, and always becomes its ledger reason; a
service that refuses the credentials stops the run (every other document would fail the same way)."""

from __future__ import annotations

import httpx2 as httpx
import pytest

import chunking.pipeline.ingest as ingest_module
from chunking.embeddings import OfflineLexicalEmbedder, OpenAIEmbedder
from chunking.ids import doc_id
from chunking.index.local import LocalIndex
from chunking.ledger import Ledger, LocalLedgerStore
from chunking.pipeline.ingest import LOCAL_CONTAINER, collect_files, ingest_files
from chunking.settings import Settings
from tests.openai_fakes import ScriptedEndpoint


@pytest.fixture
def folder(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Alpha apples are red.")
    (docs / "b.json").write_text("[" * 900 + "]" * 900)  # a RecursionError traceback before the depth limit
    (docs / "c.txt").write_text("Gamma grapes are green.")
    (docs / "d.pdf").write_bytes(b"%PDF-1.4 truncated")
    return tmp_path


def _services(tmp_path, embedder=None, dims=64):
    index = LocalIndex(tmp_path / "state" / "index.sqlite3", dims)
    index.ensure()
    return {"settings": Settings(state_dir=tmp_path / "state", embedding_dimensions=dims,
                                 embedding_backend="azure_openai" if embedder else "offline",
                                 azure_openai_endpoint="https://unit.openai.azure.com" if embedder else ""),
            "embedder": embedder or OfflineLexicalEmbedder(dims), "index": index,
            "ledger": Ledger(LocalLedgerStore(tmp_path / "state" / "ledger.sqlite3"))}


def _run(tmp_path, services):
    files, scopes, _ = collect_files([tmp_path / "docs"], cwd=tmp_path)
    return ingest_files(files, scopes=scopes, **services)


def _ledger(services, source):
    return services["ledger"].get(doc_id(LOCAL_CONTAINER, source))


def test_failures_and_a_crash_are_reasons_and_the_other_documents_go_in(folder, monkeypatch):
    real = ingest_module.run_stage_one

    def crash_on_c(data, *, source, **kw):
        if source == "docs/c.txt":
            raise KeyError("a bug in our code")
        return real(data, source=source, **kw)

    monkeypatch.setattr(ingest_module, "run_stage_one", crash_on_c)
    services = _services(folder)

    summary = _run(folder, services)

    assert [(r.source, r.outcome, r.error) for r in summary.rows] == [
        ("docs/a.txt", "added", None),
        ("docs/b.json", "failed", "JSON nested more than 100 levels deep (MAX_NESTING_DEPTH)"),
        ("docs/c.txt", "failed", "crashed: KeyError: 'a bug in our code'"),
        ("docs/d.pdf", "failed", "not a valid PDF: not a PDF, or damaged beyond repair"),
    ]
    assert summary.stopped == ""
    assert (_ledger(services, "docs/c.txt").status, _ledger(services, "docs/c.txt").error) == (
        "failed", "crashed: KeyError: 'a bug in our code'")
    assert _ledger(services, "docs/a.txt").status == "indexed"


class _Refusing(ScriptedEndpoint):
    def __init__(self, status: int, headers: dict[str, str] | None = None) -> None:
        super().__init__()
        self.status, self.headers = status, headers or {}

    def reply(self, request):
        return httpx.Response(self.status, headers=self.headers,
                              json={"error": {"code": str(self.status), "message": "Access denied due to invalid "
                                              "subscription key or wrong API endpoint."}})


def _azure_embedder(api) -> OpenAIEmbedder:
    return OpenAIEmbedder.azure(endpoint="https://unit.openai.azure.com", deployment="text-embedding-3-small",
                                dimensions=64, api_key="unit-test-key-0123456789", max_retries=0,
                                http_client=httpx.Client(transport=httpx.MockTransport(api)))


def test_an_auth_error_fails_the_document_with_what_to_check_and_stops_the_run(folder):
    services = _services(folder, _azure_embedder(_Refusing(401)))

    summary = _run(folder, services)

    line = ("Azure OpenAI at unit.openai.azure.com: HTTP 401, not authorised (Error code: 401 - Access denied due to "
            "invalid subscription key or wrong API endpoint.): check AZURE_OPENAI_API_KEY, or that the signed-in "
            "identity has the role Cognitive Services OpenAI User")
    assert [(r.source, r.outcome, r.error) for r in summary.rows] == [("docs/a.txt", "failed", line)]
    assert summary.stopped == line
    entry = _ledger(services, "docs/a.txt")
    assert (entry.status, entry.error) == ("failed", line)


@pytest.mark.parametrize(("status", "headers", "what"), [
    (500, {}, "HTTP 500, service error after retries"),
    (429, {"retry-after": "30"}, "HTTP 429, throttled"),
])
def test_a_retryable_service_error_leaves_the_document_queued_and_the_run_goes_on(folder, status, headers, what):
    services = _services(folder, _azure_embedder(_Refusing(status, headers)))

    summary = _run(folder, services)

    outcomes = [(r.source, r.outcome) for r in summary.rows]
    assert outcomes == [("docs/a.txt", "failed"), ("docs/b.json", "failed"), ("docs/c.txt", "failed"),
                        ("docs/d.pdf", "failed")]
    assert summary.stopped == ""
    entry = _ledger(services, "docs/c.txt")
    assert entry.status == "queued"
    assert entry.error.startswith(f"Azure OpenAI at unit.openai.azure.com: {what} (")
    assert entry.error.endswith("; next attempt: the next ingest run")
