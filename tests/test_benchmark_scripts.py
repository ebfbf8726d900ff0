"""The scripts of ``benchmarks/`` start: each answers ``--help`` with its usage and exit status 0, so an import
that no longer exists (a renamed function of ``chunking``) or a script that reads its arguments by hand (taking
``--help`` for a path, or running everything) is found here rather than by the next person who runs it.

Nothing is timed and no benchmark is run (benchmarks/README.md); the peers the scripts compare with are imported
inside their functions, so ``--help`` needs only the test dependencies.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(path.name for path in (ROOT / "benchmarks").glob("*.py")
                 if 'if __name__ == "__main__":' in path.read_text(encoding="utf-8"))


def test_the_scripts_are_found():
    assert {"pdf_bench.py", "pdf_tables.py", "pdf_parsers.py", "hostile_inputs.py", "incremental_savings.py",
            "vector_compression.py"} <= set(SCRIPTS)
    assert "corpus_pages.py" not in SCRIPTS  # a module the scripts share, not a script


@pytest.mark.parametrize("script", SCRIPTS)
def test_each_script_answers_help_with_its_usage(script):
    done = subprocess.run([sys.executable, f"benchmarks/{script}", "--help"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith(f"usage: {script} [-h]")


@pytest.mark.parametrize("script", ["parse_isolation.py", "language_detection.py", "records_bench.py"])
def test_the_description_is_the_docstring_s_whole_first_paragraph(script):
    # The first line of these docstrings stops mid-sentence ("..., on"); the help shows the whole paragraph.
    done = subprocess.run([sys.executable, f"benchmarks/{script}", "--help"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    description = " ".join(done.stdout.split("\n\n")[1].split())
    assert description.endswith(".")
