"""No secret in any output: fake secrets in every secret-bearing setting, in every form they take, must never
appear in what the CLI prints (stdout, stderr, verbose logs) or in a ledger reason, whatever fails."""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import sqlite3
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from chunking.redact import (describe_storage, install_log_redaction, mask_url, redact, register_secret,
                             register_settings, url_host)
from chunking.settings import Settings

ROOT = Path(__file__).resolve().parents[3]

ACCOUNT_KEY = "RkFLRWtleUZBS0VrZXlGQUtFa2V5RkFLRWtleUZBS0Vr" + "c2VjcmV0MDAx=="
SAS_SIG = "FAKEsig0123456789abcdefXYZ%3D"
OPENAI_KEY = "sk-fake0123456789abcdefghijklmnopqrstuv"
AZURE_OPENAI_KEY = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
SEARCH_KEY = "FAKEsearchAdminKey0123456789ABCDEFabcdef"
CLIENT_SECRET = "fake~client.secret_0123456789"
SECRETS = (ACCOUNT_KEY, SAS_SIG, OPENAI_KEY, AZURE_OPENAI_KEY, SEARCH_KEY, CLIENT_SECRET)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Echo(BaseHTTPRequestHandler):
    """An unkind service: every request gets the status the server was given, with the request's headers
    (keys and tokens included) echoed in the error body, as some proxies and debug endpoints do."""

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        self.rfile.read(length)
        body = json.dumps({"error": {"message": f"denied; you sent {dict(self.headers)} to {self.path}",
                                     "code": str(self.server.status)}}).encode()
        self.send_response(self.server.status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = _answer

    def log_message(self, *args) -> None:
        pass


@pytest.fixture()
def echo_401():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    server.status = 401
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _storage_forms(port: int) -> dict[str, dict[str, str]]:
    endpoints = "".join(f"{kind}Endpoint=http://127.0.0.1:{port}/fakeacct;" for kind in ("Blob", "Queue", "Table"))
    sas = f"sv=2022-11-02&ss=bqt&srt=sco&sp=rwdlacup&se=2030-01-01T00:00:00Z&sig={SAS_SIG}"
    return {
        "account key": {"AzureWebJobsStorage": f"DefaultEndpointsProtocol=http;AccountName=fakeacct;"
                                               f"AccountKey={ACCOUNT_KEY};{endpoints}"},
        "SAS connection string": {"AzureWebJobsStorage": f"{endpoints}SharedAccessSignature={sas}"},
        "service URIs with a SAS": {
            f"AzureWebJobsStorage__{kind}ServiceUri": f"https://127.0.0.1:{port}/fakeacct?{sas}"
            for kind in ("blob", "queue", "table")
        },
    }


def _run(args: list[str], cwd: Path, env_extra: dict[str, str]) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AZURE_", "OPENAI_", "AzureWebJobs"))}
    env.update(PYTHONPATH=str(ROOT), AZURE_CLIENT_ID="00000000-0000-0000-0000-000000000000",
               AZURE_TENANT_ID="00000000-0000-0000-0000-000000000001", AZURE_CLIENT_SECRET=CLIENT_SECRET,
               AZURE_AUTHORITY_HOST="https://127.0.0.1:9", **env_extra)
    done = subprocess.run([sys.executable, "-m", "chunking", "-v", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)
    return f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"


def _assert_clean(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"secret {secret[:6]}… printed in:\n{text[-2000:]}"


@pytest.mark.parametrize("form", ["account key", "SAS connection string", "service URIs with a SAS"])
def test_storage_secrets_are_never_printed_when_storage_is_unreachable(tmp_path, form):
    (tmp_path / "a.txt").write_text("Some text to ingest.\n")
    env = _storage_forms(_closed_port())[form]
    outputs = [_run(args, tmp_path, env) for args in (["reconcile"], ["status"], ["ingest", "a.txt"],
                                                       ["status", "--json"])]
    for output in outputs:
        _assert_clean(output)
        assert output.startswith("exit 2"), output
        assert "Traceback" not in output
        # named by account or host; identity-based URIs fail at the token before any storage call
        assert "fakeacct" in output or "127.0.0.1" in output or "Microsoft Entra ID: no token" in output, output


def test_api_keys_are_never_printed_nor_stored_when_services_refuse_them(tmp_path, echo_401):
    (tmp_path / "a.txt").write_text("Some text to ingest.\n")
    cases = [
        {"AZURE_OPENAI_ENDPOINT": echo_401, "AZURE_OPENAI_API_KEY": AZURE_OPENAI_KEY, "LEDGER_BACKEND": "local"},
        {"OPENAI_BASE_URL": echo_401 + "/v1", "OPENAI_API_KEY": OPENAI_KEY, "LEDGER_BACKEND": "local"},
        {"AZURE_SEARCH_ENDPOINT": echo_401, "AZURE_SEARCH_API_KEY": SEARCH_KEY, "LEDGER_BACKEND": "local"},
    ]
    for n, env in enumerate(cases):
        work = tmp_path / f"case{n}"
        work.mkdir()
        (work / "a.txt").write_text("Some text to ingest.\n")
        for args in (["ingest", "a.txt"], ["search", "text"], ["status", "--json"]):
            output = _run(args, work, env)
            _assert_clean(output)
            assert "Traceback" not in output, output
        ledger = work / ".chunking" / "ledger.sqlite3"
        if ledger.exists():
            with sqlite3.connect(ledger) as db:
                _assert_clean(repr(db.execute("SELECT * FROM ledger").fetchall()))


def test_redact_masks_every_form():
    register_secret(AZURE_OPENAI_KEY)
    text = (f"AccountName=a;AccountKey={ACCOUNT_KEY};EndpointSuffix=core.windows.net "
            f"https://a.blob.core.windows.net/c/b.pdf?sv=2024-05-04&sig={SAS_SIG} "
            f"SharedAccessSignature=sv=2022&sig={SAS_SIG} Authorization: Bearer eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dXJl "
            f"{{'api-key': '{AZURE_OPENAI_KEY}'}} bare {AZURE_OPENAI_KEY} and {OPENAI_KEY}")
    masked = redact(text)
    _assert_clean(masked)
    assert "AccountName=a;AccountKey=***;EndpointSuffix=core.windows.net" in masked
    assert "b.pdf?sv=2024-05-04&sig=***" in masked
    assert "Bearer ***" in masked


def test_storage_is_named_by_account_or_host():
    forms = _storage_forms(9)
    assert describe_storage(Settings.from_env(forms["account key"])) == "account fakeacct"
    assert describe_storage(Settings.from_env(forms["SAS connection string"])) == "127.0.0.1:9"
    assert describe_storage(Settings.from_env(forms["service URIs with a SAS"])) == "127.0.0.1:9"
    assert describe_storage(Settings.from_env({})) == "Azurite (UseDevelopmentStorage=true)"


def test_log_records_are_redacted(caplog):
    install_log_redaction()
    with caplog.at_level(logging.INFO):
        logging.getLogger("azure.core.test").info("request to %s failed", f"https://x/?sig={SAS_SIG}")
    assert caplog.records[-1].getMessage() == "request to https://x/?sig=*** failed"


# Every URL-valued setting (docs/settings.md), each with a password in its user-info and a secret in its query.
URL_SETTINGS = ("AZURE_OPENAI_ENDPOINT", "OPENAI_BASE_URL", "AZURE_SEARCH_ENDPOINT", "DOCUMENT_INTELLIGENCE_ENDPOINT",
                "ADLS_ACCOUNT_URL", "AzureWebJobsStorage__blobServiceUri", "AzureWebJobsStorage__queueServiceUri",
                "AzureWebJobsStorage__tableServiceUri", "OTEL_EXPORTER_OTLP_ENDPOINT", "COMPLETION_EVENTS_ENDPOINT")


def _url_secrets(name: str) -> tuple[str, str]:
    tag = "".join(c for c in name if c.isalnum())[-10:]
    return f"UserPw{tag}x9", f"QrySecret{tag}7"


def _secret_url(name: str, base: str, path: str = "") -> str:
    password, query = _url_secrets(name)
    scheme, rest = base.split("://", 1)
    return f"{scheme}://svcuser:{password}@{rest}{path}?api-version=2024-10-21&code={query}"


def _assert_no_url_secret(text: str) -> None:
    for name in URL_SETTINGS:
        for secret in _url_secrets(name):
            assert secret not in text, f"{name}'s secret {secret} printed in:\n{text[-3000:]}"
    assert "svcuser:" not in text, text[-3000:]


def test_every_url_valued_setting_of_the_docs_is_covered():
    names = set(re.findall(r"`([A-Za-z_]*(?:ENDPOINT|_URL|ServiceUri))`", (ROOT / "docs" / "settings.md").read_text()))
    assert names == set(URL_SETTINGS)


def test_mask_url_masks_user_info_and_query_secrets():
    assert mask_url("http://user:pw@host:8080/v1?api-version=1&code=abc") == \
        "http://***@host:8080/v1?api-version=1&code=***"
    assert mask_url("https://a.search.windows.net") == "https://a.search.windows.net"
    assert mask_url("https://h/c?sv=2022-11-02&sp=r&sig=XYZ") == "https://h/c?sv=2022-11-02&sp=r&sig=***"
    assert url_host("http://u:p@h:1/x") == "h:1"
    assert redact("GET http://u:p@h:1/x failed; ftp://anon@h2") == "GET http://***@h:1/x failed; ftp://***@h2"


def test_url_secrets_of_every_setting_are_registered_and_masked_bare():
    env = {name: _secret_url(name, "https://127.0.0.1:9") for name in URL_SETTINGS}
    settings = Settings.from_env({**env, "ACL_SOURCE": "adls", "LEDGER_BACKEND": "local"})
    register_settings(settings)
    bare = " ".join(f"{name}: {_secret_url(name, 'https://h')} / {' '.join(_url_secrets(name))}"
                    for name in URL_SETTINGS)
    _assert_no_url_secret(redact(bare))


def test_url_secrets_are_never_printed_logged_nor_stored(tmp_path, echo_401):
    pdf = (ROOT / "samples" / "amc-manual.en.pdf").read_bytes()
    cases = [  # each: the settings, then what runs (the echo server refuses everything, echoing the request)
        {"OPENAI_BASE_URL": _secret_url("OPENAI_BASE_URL", echo_401, "/v1"), "OPENAI_API_KEY": OPENAI_KEY},
        {"OPENAI_BASE_URL": _secret_url("OPENAI_BASE_URL", f"http://127.0.0.1:{_closed_port()}", "/v1")},
        {"AZURE_OPENAI_ENDPOINT": _secret_url("AZURE_OPENAI_ENDPOINT", echo_401),
         "AZURE_OPENAI_API_KEY": AZURE_OPENAI_KEY},
        {"AZURE_SEARCH_ENDPOINT": _secret_url("AZURE_SEARCH_ENDPOINT", echo_401), "AZURE_SEARCH_API_KEY": SEARCH_KEY},
        {"DOCUMENT_INTELLIGENCE_ENDPOINT": _secret_url("DOCUMENT_INTELLIGENCE_ENDPOINT", echo_401),
         "DOCUMENT_INTELLIGENCE_API_KEY": AZURE_OPENAI_KEY},
        {f"AzureWebJobsStorage__{kind}ServiceUri": _secret_url(f"AzureWebJobsStorage__{kind}ServiceUri",
                                                               echo_401.replace("http:", "https:"))
         for kind in ("blob", "queue", "table")} | {"ADLS_ACCOUNT_URL": _secret_url("ADLS_ACCOUNT_URL", echo_401),
                                                    "ACL_SOURCE": "adls"},
    ]
    for n, env in enumerate(cases):
        work = tmp_path / f"case{n}"
        work.mkdir()
        (work / "a.txt").write_text("Some text to ingest.\n")
        (work / "b.pdf").write_bytes(pdf)
        env = {"LEDGER_BACKEND": "local", **env} if n != 5 else env
        ingest = ["ingest", "a.txt", "b.pdf"] if n == 4 else ["ingest", "a.txt"]
        # What each case can print: every case ingests; search and status where the setting is shown there.
        for args in {0: [ingest, ["search", "text"]], 3: [ingest, ["search", "text"], ["status", "--json"]],
                     5: [ingest, ["status", "--json"]]}.get(n, [ingest]):
            output = _run(args, work, env)
            _assert_no_url_secret(output)
            _assert_clean(output)
            assert "Traceback" not in output, output
        ledger = work / ".chunking" / "ledger.sqlite3"
        if ledger.exists():
            with sqlite3.connect(ledger) as db:
                stored = repr(db.execute("SELECT * FROM ledger").fetchall())
            _assert_no_url_secret(stored)
    # Service URIs over plain HTTP cannot carry a token: one clean line naming the setting, no secret.
    env = {f"AzureWebJobsStorage__{kind}ServiceUri": _secret_url(f"AzureWebJobsStorage__{kind}ServiceUri",
                                                                 echo_401) for kind in ("blob", "queue", "table")}
    output = _run(["status"], tmp_path, env)
    _assert_no_url_secret(output)
    assert output.splitlines()[-1] == (
        "python -m chunking: AzureWebJobsStorage__blobServiceUri must be an https:// URL with a host (a token "
        "credential is sent only over HTTPS), got http://127.0.0.1/…"), output


def test_the_exception_raised_to_the_host_is_redacted(tmp_path, echo_401, monkeypatch):
    # The service echoes the request (api-key header, URL with its user-info and query) in its error text;
    # the exception the Functions handler raises to the host carries none of it, and keeps its type.
    import traceback
    from types import SimpleNamespace

    from chunking.app import functions as handlers
    from chunking.pipeline.stage_two import run_stage_one
    from chunking.services import make_embedder, make_index, make_ledger
    from chunking.storage.claim_check import MemoryPayloadStore

    env = {"CHUNKING_STATE_DIR": str(tmp_path), "AZURE_OPENAI_ENDPOINT": _secret_url("AZURE_OPENAI_ENDPOINT",
                                                                                     echo_401),
           "AZURE_OPENAI_API_KEY": AZURE_OPENAI_KEY, "AZURE_OPENAI_EMBEDDING_DEPLOYMENT": "emb",
           "LEDGER_BACKEND": "local"}
    settings = Settings.from_env(env)
    register_settings(settings)
    sent: list[str] = []
    services = SimpleNamespace(settings=settings, embedder=make_embedder(settings), index=make_index(settings),
                               payloads=MemoryPayloadStore(), ledger=make_ledger(settings), batches=None, jobs=None,
                               figures=None)
    services.index.ensure()
    monkeypatch.setattr(handlers, "services", lambda: services)
    run_stage_one(b"Some text to embed.", source="a.txt", container="c", settings=settings,
                  payloads=services.payloads, ledger=services.ledger, send=sent.extend)
    with pytest.raises(Exception) as caught:
        handlers.handle_batch(sent[0])
    shown = "".join(traceback.format_exception(caught.value)) + repr(caught.value.args)
    assert "denied; you sent" in shown  # the service's text is there, masked
    _assert_no_url_secret(shown)
    _assert_clean(shown)
    assert type(caught.value).__module__.startswith("openai")
    _assert_no_url_secret(repr([vars(e) for e in services.ledger.entries()]))


def test_every_key_setting_of_the_docs_is_registered_and_masked_bare():
    # A key printed without its name (an SDK's message, a log line) is masked only if register_settings knows it.
    names = set(re.findall(r"`([A-Z_]*_KEY)`", (ROOT / "docs" / "settings.md").read_text()))
    keys = {name: f"FAKE{name.lower().replace('_', '')}0123456789" for name in names}
    assert names == {"AZURE_OPENAI_API_KEY", "OPENAI_API_KEY", "AZURE_SEARCH_API_KEY", "DOCUMENT_INTELLIGENCE_API_KEY",
                     "COMPLETION_EVENTS_KEY"}
    register_settings(Settings.from_env(keys))
    assert {name: redact(f"refused: {key}") for name, key in keys.items()} == {
        name: "refused: ***" for name in keys}
