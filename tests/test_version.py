"""The package version: one source (``chunking.__version__``), what pip records, and ``chunking --version``."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import chunking
from chunking.app.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_version_has_one_source_read_by_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))

    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "chunking.__version__"}
    assert chunking.__version__ == importlib.metadata.version("chunking")
    assert chunking.__version__.count(".") == 2 and all(p.isdigit() for p in chunking.__version__.split("."))


def test_version_option_prints_the_version_and_exits_0(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])

    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip().endswith(f" {chunking.__version__}")


def test_python_m_chunking_version():
    result = subprocess.run([sys.executable, "-m", "chunking", "--version"], cwd=ROOT, capture_output=True,
                            text=True, timeout=60)

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith(f" {chunking.__version__}")
    assert result.stderr == ""
