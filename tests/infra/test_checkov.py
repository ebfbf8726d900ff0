"""checkov finds no failed check in infra/, and every skipped check carries a written reason in the Bicep.

checkov runs offline: ``--skip-download`` and ``BC_SKIP_MAPPING`` keep it from fetching guidelines or policies
(it then makes no network connection at all), so the scan takes a few seconds of CPU.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.infra.bicep import INFRA, ROOT, bicep_files

_SKIP = re.compile(r"#checkov:skip=(?P<id>CKV2?_[A-Z]+_\d+)(?P<rest>[^\n]*)")


def _checkov() -> str:
    beside = Path(sys.executable).with_name("checkov")
    found = str(beside) if beside.is_file() else shutil.which("checkov")
    assert found, "checkov is not installed: it comes with requirements-dev.txt (make test installs it)"
    return found


def _scan(directory: Path) -> dict:
    env = {**os.environ, "BC_SKIP_MAPPING": "TRUE", "CHECKOV_NO_OUTPUT_COLOR": "1", "LOG_LEVEL": "WARNING"}
    done = subprocess.run(
        [_checkov(), "--directory", str(directory), "--framework", "bicep", "--skip-download", "--output", "json",
         "--compact"],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=600,
    )
    # Exit code 1 means failed checks; anything else but 0 is checkov itself failing.
    assert done.returncode in (0, 1), done.stderr[-2000:]
    data = json.loads(done.stdout)
    assert isinstance(data, dict) and data.get("check_type") == "bicep", done.stdout[:500]
    return data


@pytest.fixture(scope="module")
def report() -> dict:
    """checkov on infra/ as deployed by default (usePrivateNetworking off)."""
    return _scan(INFRA)


@pytest.fixture(scope="module")
def private_report(tmp_path_factory) -> dict:
    """checkov on a copy of infra/ whose usePrivateNetworking defaults to true."""
    copy = tmp_path_factory.mktemp("private") / "infra"
    shutil.copytree(INFRA, copy)
    main = copy / "main.bicep"
    text = main.read_text(encoding="utf-8")
    assert text.count("param usePrivateNetworking bool = false") == 1
    main.write_text(text.replace("param usePrivateNetworking bool = false", "param usePrivateNetworking bool = true"),
                    encoding="utf-8")
    return _scan(copy)


def test_checkov_reports_no_failed_check(report: dict) -> None:
    failed = [f"{c['check_id']} {c['resource']} ({c['file_path']}): {c['check_name']}"
              for c in report["results"]["failed_checks"]]
    assert not failed, "checkov failed checks:\n" + "\n".join(failed)
    assert report["summary"]["passed"] > 0
    assert report["summary"]["parsing_errors"] == 0


def test_checkov_reports_no_failed_check_with_private_networking(private_report: dict) -> None:
    failed = [f"{c['check_id']} {c['resource']} ({c['file_path']}): {c['check_name']}"
              for c in private_report["results"]["failed_checks"]]
    assert not failed, "checkov failed checks with usePrivateNetworking=true:\n" + "\n".join(failed)
    scanned = {Path(c["file_path"]).name for kind in ("passed_checks", "skipped_checks")
               for c in private_report["results"][kind]}
    assert "network.bicep" in scanned  # checkov has no check of private endpoints themselves


def test_checkov_scans_every_bicep_file_with_resources(report: dict) -> None:
    scanned = {Path(c["file_path"]).name for kind in ("passed_checks", "skipped_checks")
               for c in report["results"][kind]}
    for name in ("storage.bicep", "search.bicep", "openai.bicep"):
        assert name in scanned, f"checkov did not scan {name}"


def test_every_skip_has_a_reason_and_is_used(report: dict) -> None:
    written = {}
    for path in bicep_files():
        for match in _SKIP.finditer(path.read_text()):
            reason = match.group("rest").lstrip(":").strip()
            assert len(reason) >= 20, f"{path.name}: skip of {match.group('id')} needs a written reason"
            written.setdefault(match.group("id"), path.name)
    skipped = {c["check_id"] for c in report["results"]["skipped_checks"]}
    assert skipped <= set(written), f"skips without a reason in the Bicep: {skipped - set(written)}"
    # A skip of a check that does not apply (anymore) is noise that hides the real list.
    assert set(written) <= skipped, f"skip comments for checks checkov does not run here: {set(written) - skipped}"
