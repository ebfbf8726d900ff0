"""Print how the parity inputs compared (equal, or which documented difference explained them) after a run."""

from __future__ import annotations


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # noqa: ARG001 (pytest's hook signature)
    from tests.scenarios.parity.differences import TALLY

    if not TALLY:
        return
    terminalreporter.section("parity with LangChain 1.1.3 (inputs compared)")
    for test, outcomes in sorted(TALLY.items()):
        total = sum(outcomes.values())
        detail = ", ".join(f"{name} {count}" for name, count in outcomes.most_common())
        terminalreporter.write_line(f"{test}: {total} inputs: {detail}")
