"""tests/skip_guard.py: a skip fails the run unless its reason is on the allow-list."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

TESTS = '''
import pytest

def test_runs():
    pass

def test_skipped():
    pytest.skip("needs the moon")

@pytest.mark.xfail(reason="known")
def test_expected_failure():
    assert False
'''


def run_pytest(folder: Path, allow_list: str | None) -> subprocess.CompletedProcess:
    (folder / "test_sample.py").write_text(TESTS)
    (folder / "pytest.ini").write_text("[pytest]\nallowed_skips = allowed.txt\n")
    if allow_list is not None:
        (folder / "allowed.txt").write_text(allow_list)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.skip_guard", "-q", "-p", "no:cacheprovider", str(folder)],
        cwd=folder, env={"PYTHONPATH": str(ROOT), "PATH": ""}, capture_output=True, text=True, timeout=120,
    )


def test_an_unlisted_skip_fails_the_run_and_is_named(tmp_path: Path):
    result = run_pytest(tmp_path, allow_list=None)

    assert result.returncode == 1, result.stdout
    assert "test_sample.py::test_skipped: needs the moon" in result.stdout
    assert "1 unlisted skip fails the run" in result.stdout
    assert "1 passed, 1 skipped, 1 xfailed" in result.stdout


def test_a_listed_skip_passes(tmp_path: Path):
    result = run_pytest(tmp_path, allow_list="# the moon is not on CI machines\nneeds the m*n\n")

    assert result.returncode == 0, result.stdout
    assert "unlisted" not in result.stdout


def test_a_pattern_for_another_reason_does_not_cover_it(tmp_path: Path):
    result = run_pytest(tmp_path, allow_list="needs the sun\n")

    assert result.returncode == 1, result.stdout

