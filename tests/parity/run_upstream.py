"""Run LangChain's own splitter unit tests against ``chunking.splitters`` and count the outcomes (by hand).

Usage: ``.venv/bin/python tests/parity/run_upstream.py PATH`` where PATH is the unpacked
``langchain_text_splitters-1.1.3`` sdist (``pip download langchain-text-splitters==1.1.3 --no-deps
--no-binary :all:``). Their test files are copied into a temporary folder, never into this repository.

How: a temporary package named ``langchain_text_splitters`` (and each of its submodules) resolves every name to
``chunking.splitters``; a name we lack resolves to a placeholder that raises :class:`MissingInChunking` when used,
so a test of a missing class fails on its own instead of stopping the whole file. ``langchain_core.documents``'s
``Document`` is replaced by ``chunking.model.Document`` in the copied files (the only other edit).
Each failing test is then classified: *missing* (it touched a placeholder), *documented* (listed in
:data:`DOCUMENTED` with the README/docstring reason) or *undocumented* (a defect to fix).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

#: test name (without parameters) -> the documented difference that makes it fail (README "Coming from LangChain").
DOCUMENTED: dict[str, str] = {}

_SUBMODULES = ("base", "character", "html", "json", "jsx", "markdown", "python", "latex", "konlpy", "nltk",
               "sentence_transformers", "spacy")

_SHIM = '''
import chunking.splitters as _ours


class MissingInChunking(NotImplementedError):
    pass


class _Missing:
    def __init__(self, name):
        self._name = name

    def __call__(self, *args, **kwargs):
        raise MissingInChunking(self._name)

    def __getattr__(self, attribute):
        raise MissingInChunking(f"{self._name}.{attribute}")

    def __mro_entries__(self, bases):
        raise MissingInChunking(self._name)


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return getattr(_ours, name)
    except AttributeError:
        return _Missing(name)
'''

_REPORT = '''
import json, os
_results = {}

def pytest_runtest_logreport(report):
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        text = str(report.longrepr) if report.longrepr else ""
        _results[report.nodeid] = {"outcome": report.outcome, "missing": "MissingInChunking" in text,
                                   "error": text.strip().splitlines()[-1] if text.strip() else ""}

def pytest_sessionfinish(session):
    with open(os.environ["UPSTREAM_REPORT"], "w") as handle:
        json.dump(_results, handle)
'''


def main(source: str) -> int:
    import json

    tests = Path(source) / "tests" / "unit_tests"
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        shim = root / "shim" / "langchain_text_splitters"
        shim.mkdir(parents=True)
        (shim / "__init__.py").write_text(_SHIM)
        for name in _SUBMODULES:
            (shim / f"{name}.py").write_text("from langchain_text_splitters import __getattr__, MissingInChunking\n")
        run = root / "run"
        run.mkdir()
        for name in ("test_text_splitters.py", "test_html_security.py", "conftest.py"):
            text = (tests / name).read_text()
            text = text.replace("from langchain_core.documents import Document",
                                "from chunking.model import Document")
            (run / name).write_text(text)
        if (Path(source) / "tests" / "test_data").exists():
            shutil.copytree(Path(source) / "tests" / "test_data", root / "test_data")
        (run / "upstream_report.py").write_text(_REPORT)
        report_path = root / "report.json"
        env = {"PYTHONPATH": f"{root / 'shim'}:{run}", "UPSTREAM_REPORT": str(report_path), "PATH": "/usr/bin:/bin"}
        subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "upstream_report",
             "--rootdir", str(run), "-o", "addopts=", str(run)],
            cwd=run, env=env, check=False, capture_output=True, text=True,
        )
        results = json.loads(report_path.read_text())
    counts = {"run": 0, "passed": 0, "missing": 0, "documented": 0, "undocumented": 0, "skipped": 0}
    undocumented = []
    for nodeid, result in sorted(results.items()):
        base = re.sub(r"\[.*\]$", "", nodeid.split("::")[-1])
        if result["outcome"] == "skipped":
            counts["skipped"] += 1
            continue
        if result["missing"]:
            counts["missing"] += 1
            continue
        counts["run"] += 1
        if result["outcome"] == "passed":
            counts["passed"] += 1
        elif base in DOCUMENTED:
            counts["documented"] += 1
        else:
            counts["undocumented"] += 1
            undocumented.append(f"{nodeid}: {result['error'][:160]}")
    print(json.dumps(counts))
    for line in undocumented:
        print("UNDOCUMENTED", line)
    return 1 if undocumented or counts["missing"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
