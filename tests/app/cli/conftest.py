"""The ``cli`` fixture: ``chunking.app.cli.main`` run in-process in an empty working directory with no Azure
settings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

from chunking.app.cli import main

ROOT = Path(__file__).resolve().parents[3]


class Run(NamedTuple):
    """What one run printed, and its exit status (compares equal to a plain ``(status, out, err)`` tuple)."""

    status: int
    out: str
    err: str


@pytest.fixture
def cli(tmp_path, monkeypatch, capsys):
    """``cli("ingest", "notes")`` -> ``Run(status, out, err)``, in *tmp_path* (also ``cli.cwd``)."""
    for key in list(os.environ):
        if key.startswith(("AZURE_", "OPENAI_", "AzureWebJobs", "CHUNKING_", "SPLIT", "INDEX_", "LEDGER_",
                           "EMBEDDING_", "CHAT_")):
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)

    def call(*args: str) -> Run:
        capsys.readouterr()
        try:
            status = main(list(args))
        except SystemExit as exc:  # argparse: --help, bad usage
            status = exc.code
        captured = capsys.readouterr()
        return Run(status, captured.out, captured.err)

    call.cwd = tmp_path
    return call


def run_process(args: list[str], cwd: Path, *, executable: list[str] | None = None,
                shell_tail: str = "") -> subprocess.CompletedProcess:
    """The CLI as a user starts it, in a subprocess: ``python -m chunking ARGS`` (or *executable*), optionally
    piped through *shell_tail* (``"| head -1"``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AZURE_", "OPENAI_", "AzureWebJobs"))}
    env["PYTHONPATH"] = str(ROOT)
    command = [*(executable or [sys.executable, "-m", "chunking"]), *args]
    if shell_tail:
        import shlex

        return subprocess.run(["bash", "-o", "pipefail", "-c", f"{shlex.join(command)} {shell_tail}"], cwd=cwd,
                              env=env, capture_output=True, text=True, timeout=120)
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
