"""No secret in any output: fake secrets in every secret-bearing setting, in every form they take, must never
appear in what the CLI prints (stdout, stderr, verbose logs) or in a ledger reason, whatever fails."""

from __future__ import annotations

import json
import logging
import os
import socket
import sqlite3
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from chunking.redact import describe_storage, install_log_redaction, redact, register_secret
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
