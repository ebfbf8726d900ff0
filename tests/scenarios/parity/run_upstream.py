"""Run LangChain's own splitter unit tests against ``chunking.splitters`` and count the outcomes (by hand).

Usage: ``.venv/bin/python tests/scenarios/parity/run_upstream.py PATH`` where PATH is the unpacked
``langchain_text_splitters-1.1.3`` sdist (``pip download langchain-text-splitters==1.1.3 --no-deps
--no-binary :all:``). Their test files are copied into a temporary folder, never into this repository.

How: a temporary package named ``langchain_text_splitters`` (and each of its submodules) resolves every name to
``chunking.splitters``; a name we lack resolves to a placeholder that raises :class:`MissingInChunking` when used,
so a test of a missing class fails on its own instead of stopping the whole file. ``langchain_core.documents``'s
``Document`` is replaced by ``chunking.model.Document`` in the copied files (the only other edit).
Each failing test is then classified: *missing* (it touched a placeholder), *documented* (listed in
:data:`DOCUMENTED` with the docs/splitters.md or docstring reason) or *undocumented* (a defect to fix).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

_OVERSIZE = "a piece over chunk_size is cut (at whitespace, else a character); LangChain emits it whole"
_PUNCTUATION = "keep_separator=True ends a chunk with the sentence punctuation that closes it"
_VERBATIM_MD = ("Markdown sections are verbatim (LangChain strips lines and joins them with '  \\n'); a heading "
                "indented by 4+ spaces is code (CommonMark)")
_HTML_SECTIONS = ("HTML: the header is the first line of its section (LangChain: a Document of its own); lines are "
                  "joined by '\\n' (LangChain: '  \\n')")
_PRESETS = ("code presets are our own regular expressions (whole words, any indentation, RST titles kept with "
            "their underline); chunk edges on code differ from LangChain's literal separators")

#: test name (without parameters) -> the documented difference that makes it fail
#: (docs/splitters.md#coming-from-langchain).
DOCUMENTED: dict[str, str] = {
    "test_character_text_splitter_empty_doc": _OVERSIZE,
    "test_character_text_splitter_longer_words": _OVERSIZE,
    "test_character_text_splitter_chunk_size_effect": _OVERSIZE,
    "test_character_text_splitter_discard_separator_regex": _OVERSIZE,
    "test_character_text_splitter_keep_separator_regex_start": _OVERSIZE,
    "test_character_text_splitter_keep_separator_regex_end": _OVERSIZE,
    "test_character_text_splitter_keep_separator_regex": _PUNCTUATION + "; " + _OVERSIZE,
    "test_recursive_character_text_splitter_keep_separators": _OVERSIZE,
    "test_jsx_text_splitter": _OVERSIZE,
    "test_vue_text_splitter": _OVERSIZE,
    "test_svelte_text_splitter": _OVERSIZE,
    "test_md_header_text_splitter_1": _VERBATIM_MD,
    "test_md_header_text_splitter_2": _VERBATIM_MD,
    "test_md_header_text_splitter_3": _VERBATIM_MD,
    "test_md_header_text_splitter_preserve_headers_1": _VERBATIM_MD,
    "test_md_header_text_splitter_preserve_headers_2": _VERBATIM_MD,
    "test_markdown_code_splitter": "the Markdown preset never cuts inside a fenced code block (the fence stays whole)",
    "test_rst_code_splitter": _PRESETS,
    "test_haskell_code_splitter": _PRESETS,
    "test_html_header_text_splitter": _HTML_SECTIONS,
    "test_additional_html_header_text_splitter": _HTML_SECTIONS,
    "test_html_no_headers_with_multiple_splitters": _HTML_SECTIONS,
    "test_no_heavy_imports_on_package_load": "tiktoken is a core dependency (token counts, shipped offline)",
    # HTMLSemanticPreservingSplitter splits an oversized section with our recursive splitter (max_chunk_size=10).
    "test_html_splitter_keep_separator_true": _PUNCTUATION + "; " + _OVERSIZE,
    "test_html_splitter_keep_separator_default": _PUNCTUATION + "; " + _OVERSIZE,
    "test_html_splitter_keep_separator_false": _OVERSIZE,
    "test_html_splitter_keep_separator_start": _OVERSIZE,
    "test_html_splitter_keep_separator_end": _OVERSIZE,
}

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


_LANGCHAIN_NAMES = set(__LANGCHAIN_NAMES__)


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return getattr(_ours, name)
    except AttributeError:
        if name in _LANGCHAIN_NAMES:
            return _Missing(name)
        raise AttributeError(f"module 'langchain_text_splitters' has no attribute {name!r}") from None
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


def _langchain_names(source: str) -> set[str]:
    """The public names of LangChain's package and modules (top-level classes, functions, ``__all__``)."""
    import ast

    names: set[str] = set()
    for path in (Path(source) / "langchain_text_splitters").glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and not node.name.startswith("_"):
                names.add(node.name)
            elif isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets):
                names.update(ast.literal_eval(node.value))
    return names


def main(source: str) -> int:
    import json

    tests = Path(source) / "tests" / "unit_tests"
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        shim = root / "shim" / "langchain_text_splitters"
        shim.mkdir(parents=True)
        (shim / "__init__.py").write_text(_SHIM.replace("__LANGCHAIN_NAMES__", repr(sorted(_langchain_names(source)))))
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
        completed = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "upstream_report",
             "--rootdir", str(run), "-o", "addopts=", str(run)],
            cwd=run, env=env, check=False, capture_output=True, text=True,
        )
        if not report_path.exists():
            print(completed.stdout[-4000:], completed.stderr[-4000:], file=sys.stderr)
            return 2
        results = json.loads(report_path.read_text())
        if not results:  # e.g. an import error while collecting: nothing ran, which is no success
            print(completed.stdout[-4000:], completed.stderr[-4000:], file=sys.stderr)
            return 2
    counts = {"run": 0, "passed": 0, "missing": 0, "documented": 0, "undocumented": 0, "skipped": 0}
    undocumented = []
    documented: list[str] = []
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
            documented.append(base)
        else:
            counts["undocumented"] += 1
            undocumented.append(f"{nodeid}: {result['error'][:160]}")
    print(json.dumps(counts))
    for nodeid, result in sorted(results.items()):
        if result["missing"]:
            print("MISSING", nodeid, result["error"][:120])
    for base in sorted(set(documented)):  # parametrised tests once, with how many of their cases
        print(f"DOCUMENTED {base} (x{documented.count(base)}): {DOCUMENTED[base]}")
    for line in undocumented:
        print("UNDOCUMENTED", line)
    return 1 if undocumented or counts["missing"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
