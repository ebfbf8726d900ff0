"""The package layout: no import cycle in ``chunking/``, the settings import no strategy, old module names still
import, one format table for parsers and splitters, and the README's Layout box names what is in the tree.

The import graph is read with the standard library's ``ast``: every ``import``/``from … import`` anywhere in a
module (inside functions too, since a cycle there is only postponed), relative imports resolved, and an import of
``a.b.c`` counted as an import of the packages ``a`` and ``a.b`` as well, because their ``__init__`` runs first.
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "chunking"

#: Old module name → the module it re-exports (kept so that existing imports keep working).
MOVED = {
    "chunking.pipeline.ingest": "chunking.pipeline.ingest",
    "chunking.messages.batches": "chunking.messages.batches",
    "chunking.storage.claim_check": "chunking.storage.claim_check",
    "chunking.documents.records": "chunking.documents.records",
    "chunking.strategies.units": "chunking.strategies.units",
    "chunking.index.protocol": "chunking.index.protocol",
}


def modules(package: Path) -> dict[str, tuple[Path, bool]]:
    """Dotted module name → (file, is a package ``__init__``) for every ``.py`` file under *package*."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def import_graph(package: Path) -> dict[str, set[str]]:
    """Module → the modules of the same package it imports (see the module docstring for what counts)."""
    known = modules(package)
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, (path, is_package) in known.items():
        here = name if is_package else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here.split(".")[: len(here.split(".")) - node.level + 1]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                # ``from pkg import sub`` imports the submodule ``pkg.sub`` when there is one.
                targets = [module, *(f"{module}.{alias.name}" for alias in node.names)]
            else:
                continue
            for target in targets:
                parts = target.split(".")
                for end in range(1, len(parts) + 1):
                    imported = ".".join(parts[:end])
                    # A module's own packages are initialised before it: importing them is no dependency.
                    if imported in known and imported != name and not name.startswith(imported + "."):
                        graph[name].add(imported)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph[node]:
                    found.append(sorted(component))
    return sorted(found)


def test_chunking_has_no_import_cycle():
    graph = import_graph(PACKAGE)
    assert len(graph) > 70 and "chunking.splitters.markdown.fences" in graph["chunking.documents.records"]
    found = cycles(graph)
    assert not found, "import cycles (each line a set of modules that import each other):\n" + "\n".join(
        ", ".join(component) for component in found)


def test_the_cycle_finder_sees_relative_package_and_function_level_imports(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "leaf.py").write_text("import os\n")
    (pkg / "a.py").write_text("from . import leaf\n\ndef f():\n    from .sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("from pkg.sub.c import C\n")
    (pkg / "sub" / "b.py").write_text("from ..leaf import *\n")
    (pkg / "sub" / "c.py").write_text("from ..a import f\nC = 1\n")
    graph = import_graph(pkg)
    assert graph["pkg.a"] == {"pkg.leaf", "pkg.sub", "pkg.sub.b"}
    assert graph["pkg.sub.b"] == {"pkg.leaf"} and graph["pkg.sub"] == {"pkg.sub.c"}
    # a -> sub.b runs sub/__init__ -> sub.c -> a: one cycle through a package __init__ and a function's import.
    assert cycles(graph) == [["pkg.a", "pkg.sub", "pkg.sub.c"]]
    (pkg / "a.py").write_text("from . import leaf\n")
    assert cycles(import_graph(pkg)) == []


def test_settings_import_no_other_chunking_module():
    graph = import_graph(PACKAGE)
    own = {m for m in graph if m == "chunking.settings" or m.startswith("chunking.settings.")}
    assert all(graph[m] <= own for m in own), "chunking.settings imports only its own modules"
    code = "import sys, chunking.settings; print(sorted(m for m in sys.modules if m.startswith('chunking')))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    loaded = ast.literal_eval(done.stdout)
    assert {"chunking", "chunking.settings", "chunking.settings.values"} <= set(loaded)
    assert [m for m in loaded if m != "chunking" and not m.startswith("chunking.settings")] == []


#: The bottom layer: these import nothing of ``chunking`` outside this set.
BASE = {"chunking.model", "chunking.ids", "chunking.settings", "chunking.settings.metadata",
        "chunking.settings.strategy", "chunking.settings.values", "chunking.settings.docintel", "chunking.formats",
        "chunking.tokens", "chunking.tokens.backends"}


def test_low_level_modules_stay_low():
    graph = import_graph(PACKAGE)
    base = BASE | {m for m in graph if m.startswith("chunking.settings.")}  # every settings group is low
    for module in sorted(base & set(graph)):
        assert graph[module] <= base, f"{module} imports {sorted(graph[module] - base)}"
    assert graph["chunking.formats"] == set()
    # Parsers know the data model and the format table, nothing else; splitters know no pipeline module.
    parsers = {m: deps for m, deps in graph.items() if m.startswith("chunking.parsers")}
    assert set().union(*parsers.values()) - set(parsers) <= {"chunking.formats", "chunking.model"}
    splitters = {m: deps for m, deps in graph.items() if m.startswith("chunking.splitters")}
    # chunking.splitters re-exports the strategies' chunkers by name on first use, hence the strategies package.
    assert set().union(*splitters.values()) - set(splitters) <= base | {"chunking.strategies"}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_old_module_names_re_export_their_new_module(old):
    new = importlib.import_module(MOVED[old])
    shim = importlib.import_module(old)
    assert shim.__all__ == new.__all__ and len(new.__all__) >= 3
    assert all(getattr(shim, name) is getattr(new, name) for name in new.__all__)


def test_moved_names_are_still_exported_where_they_were():
    from chunking.documents import splitter as format_splitters
    from chunking import formats, parsers, settings
    from chunking.splitters import encodings, token
    from chunking.documents import strategy as adapters
    from chunking import settings as options
    from chunking.strategies import StrategyOptions

    assert options.StrategyOptions is StrategyOptions is settings.StrategyOptions
    assert formats.splitter_for is format_splitters.splitter_for
    assert formats.DocumentSplitter is format_splitters.DocumentSplitter
    assert (adapters.STRATEGY_NAMES, adapters.is_strategy) == (formats.STRATEGY_NAMES, formats.is_strategy)
    assert parsers.SUPPORTED_EXTENSIONS is formats.SUPPORTED_EXTENSIONS
    assert token.resolve_encoding is encodings.resolve_encoding
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        formats.nope  # noqa: B018


def test_one_format_table_gives_each_extension_its_parser_and_splitter():
    from chunking.documents import splitter as format_splitters
    from chunking import formats, parsers
    from chunking.strategies.semantic import THRESHOLD_TYPES
    from chunking.settings import SEMANTIC_THRESHOLD_TYPES

    assert parsers._PARSERS == {ext: parsers._MODULES[fmt.parser] for ext, fmt in formats.FORMATS.items()}
    assert {fmt.parser for fmt in formats.FORMATS.values()} == set(parsers._MODULES)
    assert tuple(format_splitters._FAMILIES) == formats.FAMILY_NAMES
    for ext, fmt in formats.FORMATS.items():
        assert fmt.splitter in formats.FAMILY_NAMES or fmt.splitter.startswith("code:"), ext
        assert formats.splitter_name(f"a{ext.upper()}") == fmt.splitter
    assert formats.PAGINATED_EXTENSIONS == {".pdf", ".pptx", ".xlsx", ".xlsm", *formats.IMAGE_EXTENSIONS}
    assert formats.HEADING_EXTENSIONS == {".md", ".markdown", ".html", ".htm", ".docx", ".pptx"}
    assert THRESHOLD_TYPES is SEMANTIC_THRESHOLD_TYPES


def _layout_box(document: str, heading: str) -> list[str]:
    text = (ROOT / document).read_text(encoding="utf-8")
    box = re.search(rf"^## {heading}\n\n```\n(.*?)^```", text, re.S | re.M)
    assert box, f"{document} has no '## {heading}' section with a box"
    return box.group(1).splitlines()


@pytest.mark.parametrize(("document", "heading"), [("README.md", "Layout"),
                                                   ("docs/architecture.md", "Layout of the package")])
def test_layout_boxes_match_the_tree(document, heading):
    named, folder = set(), ""
    for line in _layout_box(document, heading):
        entries = re.split(r"\s{2,}", line.strip())[0].split(", ")  # "tokens.py, _bpe/" names two
        for entry in entries:
            if line.startswith("  "):
                entry = folder + entry
            elif entry.endswith("/"):
                folder = entry
            assert (ROOT / entry).exists(), f"{document}'s layout box names {entry}, which is not in the tree"
            named.add(entry.rstrip("/"))
    old = {m.removeprefix("chunking.") + ".py" for m in MOVED if m.count(".") == 1}
    present = {f"chunking/{p.name}" for p in PACKAGE.iterdir()
               if (p.suffix == ".py" or (p / "__init__.py").exists()) and not p.name.startswith("_")}
    missing = sorted(p for p in present - named if p.removeprefix("chunking/") not in old)
    assert not missing, f"{document}'s layout box does not name {missing}: add a line for each"
