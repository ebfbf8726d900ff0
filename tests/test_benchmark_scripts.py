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


@pytest.mark.parametrize(("args", "message"), [
    (["html_bench.py", "--rounds", "0"], "argument --rounds: must be at least 1, got 0"),
    (["docx_bench.py", "--rounds", "x"], "argument --rounds: must be a whole number, got 'x'"),
    (["parse_isolation.py", "--runs", "0"], "argument --runs: must be at least 1, got 0"),
    (["records_bench.py", "--repeats", "0"], "argument --repeats: must be at least 1, got 0"),
    (["fuzz_parsers.py", "--examples", "0"], "argument --examples: must be at least 1, got 0"),
    (["chunk_quality.py", "--max-tokens", "0"], "argument --max-tokens: must be at least 1, got 0"),
    (["pdf_bench.py", "--corpus", "no-such-folder"], "argument --corpus: no such file or folder: no-such-folder"),
    (["language_detection.py", "--corpus", "no-such-folder"],
     "argument --corpus: no such file or folder: no-such-folder"),
    (["pdf_tables.py", "no-such.pdf"], "argument FILE.pdf: no such file or folder: no-such.pdf"),
    (["strategies_report.py", "--pdf", "no-such.pdf"], "argument --pdf: no such file or folder: no-such.pdf"),
])
def test_a_bad_argument_stops_the_script_with_its_usage(args, message):
    # Before: a traceback after the work (no median of zero rounds), a table of inf and nan, or a missing
    # --corpus folder passed over in silence (0 documents, 0.0% accuracy).
    done = subprocess.run([sys.executable, f"benchmarks/{args[0]}", *args[1:]], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(f"usage: {args[0]} [-h]")
    assert done.stderr.endswith(f"{args[0]}: error: {message}\n")
