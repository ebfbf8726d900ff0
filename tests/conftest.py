"""Shared fixtures: the real documents (all inside the repository) and an Azurite storage emulator on 127.0.0.1."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

# `make test` runs the same generated examples every time (a failure is reproducible on any clone, never a fluke
# of the draw); HYPOTHESIS_EXPLORE=1 lets hypothesis draw new examples on every run, to hunt for new failures.
hypothesis_settings.register_profile("repeatable", derandomize=True, deadline=None, print_blob=True)
hypothesis_settings.register_profile("explore", deadline=None, print_blob=True)
hypothesis_settings.load_profile("explore" if os.environ.get("HYPOTHESIS_EXPLORE") else "repeatable")

from tests.sample_documents import document_paths

# A skipped test fails the run unless its reason is listed in tests/allowed_skips.txt.
pytest_plugins = ["tests.skip_guard"]

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder holding every real test document (links to ``samples/`` and ``tests/data/``), no SOURCES.md."""
    folder = tmp_path_factory.mktemp("corpus")
    for path in document_paths():
        (folder / path.name).symlink_to(path)
    return folder


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass(frozen=True)
class Azurite:
    blob_port: int
    queue_port: int
    table_port: int

    @property
    def connection_string(self) -> str:
        key = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
        return (
            "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;"
            f"AccountKey={key};"
            f"BlobEndpoint=http://127.0.0.1:{self.blob_port}/devstoreaccount1;"
            f"QueueEndpoint=http://127.0.0.1:{self.queue_port}/devstoreaccount1;"
            f"TableEndpoint=http://127.0.0.1:{self.table_port}/devstoreaccount1;"
        )


def _azurite_binary() -> str:
    local = ROOT / "node_modules" / ".bin" / "azurite"
    if local.exists():
        return str(local)
    found = shutil.which("azurite")
    if not found:
        pytest.fail("azurite not installed: run `npm ci` in the repository (see docs/contributing.md#tests)")
    return found


@pytest.fixture(scope="session")
def azurite(tmp_path_factory: pytest.TempPathFactory):
    """An Azurite (blob, queue, table) on free 127.0.0.1 ports for the test session; stopped afterwards."""
    ports = Azurite(_free_port(), _free_port(), _free_port())
    workdir = tmp_path_factory.mktemp("azurite")
    proc = subprocess.Popen(
        [
            _azurite_binary(),
            "--blobHost", "127.0.0.1", "--blobPort", str(ports.blob_port),
            "--queueHost", "127.0.0.1", "--queuePort", str(ports.queue_port),
            "--tableHost", "127.0.0.1", "--tablePort", str(ports.table_port),
            "--location", str(workdir), "--skipApiVersionCheck", "--loose",
            "--silent", "--disableTelemetry",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "NODE_NO_WARNINGS": "1"},
    )
    deadline = time.monotonic() + 30
    try:
        for port in (ports.blob_port, ports.queue_port, ports.table_port):
            while True:
                if proc.poll() is not None:
                    pytest.fail(f"azurite exited early: {proc.stderr.read().decode(errors='replace')[:2000]}")
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        pytest.fail(f"azurite did not listen on 127.0.0.1:{port} within 30 s")
                    time.sleep(0.1)
        yield ports
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
