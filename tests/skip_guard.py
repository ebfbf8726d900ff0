"""A pytest plugin: the run fails when a test is skipped for a reason that is not on the allow-list.

A fresh clone must run every test, so a skip is a defect unless someone wrote down why it is expected. The
allow-list is ``tests/allowed_skips.txt`` (ini option ``allowed_skips``, relative to the rootdir). Each
non-comment line is a shell-style pattern (``fnmatch``) matched against the skip reason: the text given to
``pytest.skip``, ``pytest.importorskip`` or a ``skipif`` mark. Expected failures (``xfail``) are not skips.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path

import pytest

_UNLISTED = pytest.StashKey[list[tuple[str, str]]]()  # (test id, reason) of each skip the allow-list misses
_PATTERNS = pytest.StashKey[list[str]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("allowed_skips", "file listing the skip reasons that do not fail the run",
                  default="tests/allowed_skips.txt")


def allowed_patterns(path: Path) -> list[str]:
    """The patterns of an allow-list file: one per line, ``#`` starts a comment; no file means no pattern."""
    if not path.is_file():
        return []
    lines = (line.split("#", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines())
    return [line for line in lines if line]


def skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    """The reason of a skipped report, without pytest's ``Skipped: `` prefix."""
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return reason.removeprefix("Skipped: ")


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_PATTERNS] = allowed_patterns(config.rootpath / config.getini("allowed_skips"))
    config.stash[_UNLISTED] = []
    config.pluginmanager.register(_Recorder(config), "skip_guard_recorder")


class _Recorder:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def _record(self, report: pytest.TestReport | pytest.CollectReport) -> None:
        if not report.skipped or hasattr(report, "wasxfail"):
            return
        reason = skip_reason(report)
        if not any(fnmatch.fnmatchcase(reason, p) for p in self.config.stash[_PATTERNS]):
            self.config.stash[_UNLISTED].append((report.nodeid, reason))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self._record(report)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        self._record(report)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.config.stash[_UNLISTED] and exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter) -> None:
        unlisted = self.config.stash[_UNLISTED]
        if not unlisted:
            return
        terminalreporter.section(f"skips not listed in {self.config.getini('allowed_skips')}", red=True, bold=True)
        for nodeid, reason in unlisted:
            terminalreporter.line(f"{nodeid}: {reason}")
        count = "1 unlisted skip fails" if len(unlisted) == 1 else f"{len(unlisted)} unlisted skips fail"
        terminalreporter.line(f"{count} the run: fix the cause, or list the reason (with why it is expected) "
                              f"in {self.config.getini('allowed_skips')}")
