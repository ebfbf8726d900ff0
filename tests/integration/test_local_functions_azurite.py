"""The local Functions path of docs/deploy.md, step by step, against Azurite: `make azurite` with the pinned SDKs,
local.settings.json read by the CLI as `func start` reads it, `chunking upload`, the functions (run here as the
host would run them: Core Tools cannot be installed on the test machine), and `chunking status --watch`."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
from azure.data.tables import TableServiceClient
from azure.storage.blob import BlobServiceClient
from azure.storage.queue import QueueClient, TextBase64DecodePolicy, TextBase64EncodePolicy

from chunking.settings import Settings
from tests.app.cli.test_cli import run
from tests.functions_host import queue_message

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = json.loads((ROOT / "local.settings.sample.json").read_text())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_make_azurite_serves_the_pinned_sdks(tmp_path):
    ports = [_free_port() for _ in range(3)]
    flags = f"--blobPort {ports[0]} --queuePort {ports[1]} --tablePort {ports[2]}"
    proc = subprocess.Popen(["make", "-s", "azurite", f"AZURITE_DIR={tmp_path / 'data'}", f"AZURITE_FLAGS={flags}"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        for port in ports:
            while True:
                assert proc.poll() is None, proc.stdout.read().decode()
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                    break
                except OSError:
                    assert time.monotonic() < deadline, f"azurite did not listen on {port}"
                    time.sleep(0.2)
        conn = (f"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;"
                f"AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;"
                f"BlobEndpoint=http://127.0.0.1:{ports[0]}/devstoreaccount1;"
                f"QueueEndpoint=http://127.0.0.1:{ports[1]}/devstoreaccount1;"
                f"TableEndpoint=http://127.0.0.1:{ports[2]}/devstoreaccount1;")
        # Each SDK sends its newest API version; without --skipApiVersionCheck Azurite answers 400.
        container = BlobServiceClient.from_connection_string(conn, retry_total=0).create_container("documents")
        container.upload_blob("a.txt", b"hello")
        assert [b.name for b in container.list_blobs()] == ["a.txt"]
        QueueClient.from_connection_string(conn, "chunk-batches", retry_total=0).create_queue()
        TableServiceClient.from_connection_string(conn, retry_total=0).create_table("chunkingledger")
        assert (tmp_path / "data").is_dir()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)
        proc.stdout.close()


def test_the_sample_settings_choose_backends_by_endpoints_only():
    values = SAMPLE["Values"]
    assert not {k for k in values if k.endswith("_BACKEND")}
    local = Settings.from_env(values)
    assert (local.index_backend, local.embedding_backend, local.embedding_dimensions, local.chat_backend,
            local.ledger_backend) == ("local", "offline", 256, "offline", "table")
    azure = Settings.from_env({**values, "AZURE_SEARCH_ENDPOINT": "https://s.search.windows.net",
                               "AZURE_OPENAI_ENDPOINT": "https://o.openai.azure.com"})
    assert (azure.index_backend, azure.embedding_backend, azure.embedding_dimensions) == ("azure", "azure_openai",
                                                                                         1536)


def _settings_read() -> set[str]:
    """Every variable ``Settings.from_env`` reads (recorded as it asks), and the binding settings."""
    from chunking.settings import BINDING_DEFAULTS

    asked: set[str] = set()

    class Recorder(dict):
        def get(self, key, default=None):
            asked.add(key)
            return default

        def __contains__(self, key):
            asked.add(key)
            return False

    Settings.from_env(Recorder())
    return asked | set(BINDING_DEFAULTS)


def test_every_setting_and_every_sample_value_is_in_the_deploy_page_table():
    import re

    page = (ROOT / "docs" / "deploy.md").read_text()
    table = page[page.index("| setting | meaning | default |"):]
    table = table[:table.index("\n\n")]
    named = {name for row in table.splitlines() for name in re.findall(r"`([A-Za-z][A-Za-z0-9_]*)`",
                                                                        row.split(" | ")[0])}
    read = _settings_read()
    assert {"INDEX_BACKEND", "EMBEDDING_BACKEND", "CHAT_BACKEND", "LEDGER_BACKEND", "MAX_MESSAGE_BYTES",
            "BLOB_TRIGGER_SOURCE", "RECONCILE_SCHEDULE", "AzureWebJobsStorage__accountName"} <= read
    assert sorted(read - named) == []
    assert sorted(set(SAMPLE["Values"]) - named) == []


@pytest.fixture
def workdir(azurite, tmp_path):
    """A working directory with a local.settings.json made from the sample, pointing at the test's Azurite."""
    values = {**SAMPLE["Values"], "AzureWebJobsStorage": azurite.connection_string,
              "DOCUMENTS_CONTAINER": "docs-" + tmp_path.name[-12:].lower().replace("_", ""),
              "CHUNK_BATCH_QUEUE": "batches-" + tmp_path.name[-12:].lower().replace("_", ""),
              "STAGE1_JOB_QUEUE": "jobs-" + tmp_path.name[-12:].lower().replace("_", ""),
              "LEDGER_TABLE": "ledger" + "".join(c for c in tmp_path.name[-12:] if c.isalnum()),
              "CHUNKING_STATE_DIR": str(tmp_path / ".chunking")}
    (tmp_path / "local.settings.json").write_text(json.dumps({"IsEncrypted": False, "Values": values}))
    (tmp_path / "docs").mkdir()
    shutil.copy(ROOT / "samples" / "pyenv-README.md", tmp_path / "docs")
    shutil.copy(ROOT / "samples" / "debian-releases.csv", tmp_path / "docs")
    (tmp_path / "docs" / "broken.pdf").write_bytes(b"%PDF-1.4 nonsense")
    (tmp_path / "docs" / "LICENSE").write_text("not a document type")
    return tmp_path, values


def _run_functions(values: dict, monkeypatch) -> None:
    """What `func start` would do with these settings: the blob function for every blob, then the queue
    function for every message."""
    import function_app
    from chunking.app import functions as handlers

    for key, value in values.items():
        monkeypatch.setenv(key, value)
    handlers.services.cache_clear()
    try:
        container = BlobServiceClient.from_connection_string(values["AzureWebJobsStorage"]).get_container_client(
            values["DOCUMENTS_CONTAINER"])
        for item in container.list_blobs():
            function_app.ingest_document(container.get_blob_client(item.name))
        queue = QueueClient.from_connection_string(values["AzureWebJobsStorage"], values["CHUNK_BATCH_QUEUE"],
                                                   message_encode_policy=TextBase64EncodePolicy(),
                                                   message_decode_policy=TextBase64DecodePolicy())
        while batch := list(queue.receive_messages(messages_per_page=16, visibility_timeout=30)):
            for m in batch:
                function_app.index_chunk_batch(queue_message(m.content, m.dequeue_count))
                queue.delete_message(m)
    finally:
        handlers.services.cache_clear()


def test_upload_then_the_functions_then_watch_and_status(workdir, monkeypatch):
    cwd, values = workdir
    up = run(["upload", "docs"], cwd)
    assert up.returncode == 0, up.stderr
    container = values["DOCUMENTS_CONTAINER"]
    assert up.stdout.splitlines()[:3] == [
        f"uploaded docs/broken.pdf -> {container}/docs/broken.pdf (17 bytes)",
        f"uploaded docs/debian-releases.csv -> {container}/docs/debian-releases.csv "
        f"({(cwd / 'docs' / 'debian-releases.csv').stat().st_size:,} bytes)",
        f"uploaded docs/pyenv-README.md -> {container}/docs/pyenv-README.md "
        f"({(cwd / 'docs' / 'pyenv-README.md').stat().st_size:,} bytes)"]
    assert "1 files of unsupported types passed over: docs/LICENSE" in up.stdout
    assert up.stdout.rstrip().endswith("follow them with: chunking status --watch")

    env = {k: v for k, v in os.environ.items() if not k.startswith(("AZURE_", "OPENAI_", "AzureWebJobs"))}
    env["PYTHONPATH"] = str(ROOT)
    env["PYTHONUNBUFFERED"] = "1"  # each line reaches the test as it is printed
    import sys

    watch = subprocess.Popen([sys.executable, "-m", "chunking", "status", "--watch", "--interval", "0.3",
                              "--timeout", "120"], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    try:
        # The functions run only once the watcher has reported the uploads waiting for the blob trigger (a fixed
        # sleep lost that race on a loaded machine: the watcher then saw nothing in progress and exited 0).
        seen = ""
        while seen.count("waiting for the blob trigger") < 3 and watch.poll() is None:
            seen += watch.stdout.readline()  # type: ignore[union-attr]
        _run_functions(values, monkeypatch)
        rest, err = watch.communicate(timeout=120)
        out = seen + rest
    finally:
        if watch.poll() is None:
            watch.kill()
    assert watch.returncode == 1, err  # one document failed
    lines = [line.split("  ", 1)[1] for line in out.splitlines() if line[:2].isdigit()]
    for name in ("docs/pyenv-README.md", "docs/debian-releases.csv", "docs/broken.pdf"):
        assert lines[[l.split(":")[0] for l in lines].index(name)] == f"{name}: waiting for the blob trigger"
    final = {line.split(":")[0]: line for line in lines}
    assert final["docs/pyenv-README.md"].startswith("docs/pyenv-README.md: indexed (")
    assert final["docs/broken.pdf"].startswith("docs/broken.pdf: failed (not a valid PDF")
    assert out.splitlines()[-1] == "nothing in progress: 2 indexed, 1 failed (3 followed, 1 of them failed)"

    # The CLI's status reads the ledger the functions wrote (the table named in local.settings.json).
    status = json.loads(run(["status", "--json"], cwd).stdout)
    assert status["counts"] == {"indexed": 2, "queued": 0, "sending": 0, "failed": 1, "deleted": 0}
    # Nothing in progress any more: the watch ends at once, with the exit status of `status` (a failed document).
    again = run(["status", "--watch", "--timeout", "5"], cwd)
    assert (again.returncode, again.stdout.splitlines()[-1]) == (1, "nothing in progress: 2 indexed, 1 failed")
    assert run(["status"], cwd).returncode == 1


def test_the_environment_wins_over_local_settings(workdir):
    cwd, values = workdir
    up = run(["upload", "docs/pyenv-README.md", "--prefix", "guides"], cwd, {"DOCUMENTS_CONTAINER": "from-env"})
    assert up.returncode == 0, up.stderr
    assert up.stdout.splitlines()[0] == (f"uploaded docs/pyenv-README.md -> from-env/guides/docs/pyenv-README.md "
                                         f"({(cwd / 'docs' / 'pyenv-README.md').stat().st_size:,} bytes)")
    service = BlobServiceClient.from_connection_string(values["AzureWebJobsStorage"])
    assert [b.name for b in service.get_container_client("from-env").list_blobs()] == ["guides/docs/pyenv-README.md"]


def test_reconcile_on_fresh_storage_then_status(workdir):
    cwd, values = workdir
    first = run(["reconcile"], cwd)
    assert (first.returncode, first.stdout.splitlines()[0]) == (
        0, "checked 0 blobs: 0 missing (enqueued), 0 stuck (enqueued), 0 failed by a transient cause (retried), 0 orphaned (deleted), 0 with stray chunks (swept), 0 indexed with other settings (enqueued)"), first.stderr
    run(["upload", "docs/pyenv-README.md"], cwd)
    second = run(["reconcile"], cwd)
    assert second.stdout.splitlines() == [
        "checked 1 blob: 1 missing (enqueued), 0 stuck (enqueued), 0 failed by a transient cause (retried), 0 orphaned (deleted), 0 with stray chunks (swept), 0 indexed with other settings (enqueued)",
        "  missing: docs/pyenv-README.md"]
    # Reconcile parsed nothing: a forced stage-1 job is on the job queue, for the queue-triggered stage 1.
    jobs = QueueClient.from_connection_string(values["AzureWebJobsStorage"], values["STAGE1_JOB_QUEUE"],
                                              message_decode_policy=TextBase64DecodePolicy())
    [job] = [json.loads(m.content) for m in jobs.peek_messages(max_messages=32)]
    assert (job["path"], job["force"], job["reason"]) == ("docs/pyenv-README.md", True, "reconcile")
    # Its entry says queued (a job waits for it), so reconcile run again with no host enqueues nothing more.
    assert json.loads(run(["status", "--json"], cwd).stdout)["counts"].get("queued", 0) == 1
    assert run(["reconcile"], cwd).stdout.splitlines()[0].startswith("checked 1 blob: 0 missing (enqueued)")
    assert len(jobs.peek_messages(max_messages=32)) == 1


def test_unreachable_storage_is_one_clear_line(workdir):
    cwd, values = workdir
    port = _free_port()
    dead = (f"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=c2VjcmV0;"
            f"BlobEndpoint=http://127.0.0.1:{port}/devstoreaccount1;"
            f"QueueEndpoint=http://127.0.0.1:{port}/devstoreaccount1;"
            f"TableEndpoint=http://127.0.0.1:{port}/devstoreaccount1;")
    for command in (["status"], ["upload", "docs"], ["reconcile"], ["ingest", "docs"]):
        done = run(command, cwd, {"AzureWebJobsStorage": dead})
        assert done.returncode == 2, (command, done.stdout, done.stderr)
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
        assert "storage not reachable: " in done.stderr and f"http://127.0.0.1:{port}/devstoreaccount1" in done.stderr
        assert done.stderr.rstrip().endswith("is Azurite running? Start it with `make azurite`")
        assert "c2VjcmV0" not in done.stderr


def test_encrypted_or_broken_local_settings_are_named(tmp_path):
    (tmp_path / "local.settings.json").write_text(json.dumps({"IsEncrypted": True, "Values": {"A": "x"}}))
    done = run(["status"], tmp_path)
    assert done.returncode == 2
    assert "local.settings.json: the values are encrypted (IsEncrypted)" in done.stderr
    (tmp_path / "local.settings.json").write_text(json.dumps({"Values": {"SPLIT_MAX_TOKENS": 300}}))
    done = run(["status"], tmp_path)
    assert done.returncode == 2 and "local.settings.json: Values.SPLIT_MAX_TOKENS must be a string, got 300" in \
        done.stderr
