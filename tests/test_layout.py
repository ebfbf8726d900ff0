"""The package layout (docs/architecture.md#layers): the layer table and the rules that keep it.

``LAYERS`` is the table: each unit of ``chunking/`` (a top-level package or module) with its layer and the units
it may import. The import graph is read with the standard library's ``ast``: every ``import``/``from … import``
anywhere in a module (inside functions too, since an import there still couples the two), relative imports
resolved, and an import of ``a.b.c`` counted as an import of the packages ``a`` and ``a.b`` as well, because their
``__init__`` runs first. The tests also check: no module-level import cycle, no ``_private`` name imported from
another unit, no lazy re-export (``importlib`` or a module ``__getattr__``), function-level imports of ``chunking``
only where ``FUNCTION_LEVEL`` gives the reason, at most 8 modules at the top of ``chunking/``, every package's
docstring saying what it may import, file extensions only in the format table and the parsers, ledger statuses
compared only in the ledger, and docs/architecture.md's layer table equal to ``LAYERS``.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from chunking.app.cli.app import COMMANDS

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "chunking"

#: Layers 0 and 1 without the failure kinds and the tokenizer: what "core" means in the table and the docstrings.
CORE = frozenset({"model", "ids", "formats", "redact", "settings", "telemetry"})


def _below(layer: int) -> frozenset[str]:
    """Every unit of the table on a layer below *layer*."""
    return frozenset(unit for unit, (level, _) in LAYERS.items() if level < layer)


#: unit → (layer, the units it may import). A unit imports only units of lower layers (never up, never sideways).
LAYERS: dict[str, tuple[int, frozenset[str]]] = {
    **{unit: (0, frozenset()) for unit in CORE - {"settings", "telemetry"}},
    "settings": (1, frozenset({"formats"})),
    "telemetry": (1, frozenset({"redact"})),
    "errors": (1, frozenset({"redact"})),
    "tokens": (1, frozenset()),
    "parsers": (2, CORE | {"errors"}),
    "splitters": (2, CORE | {"tokens"}),
    "embeddings": (3, CORE | {"errors", "tokens"}),
    "storage": (3, CORE | {"errors"}),
    "index": (3, CORE | {"errors", "tokens"}),
    "ledger": (4, CORE | {"errors", "storage"}),
    "messages": (4, CORE | {"errors", "storage"}),
    "chat": (4, CORE | {"errors", "tokens", "embeddings", "storage"}),
    "strategies": (5, CORE | {"errors", "tokens", "splitters", "embeddings", "chat"}),
    "services": (6, CORE | {"errors", "tokens", "parsers", "embeddings", "storage", "index", "ledger", "messages",
                            "chat", "strategies"}),
    "documents": (7, CORE | {"errors", "tokens", "parsers", "splitters", "strategies", "services"}),
}
LAYERS["pipeline"] = (8, _below(8))
LAYERS["retrieval"] = (8, CORE | {"errors", "tokens", "embeddings", "index"})
LAYERS["evaluation"] = (9, _below(9))
LAYERS["app"] = (10, _below(10))
LAYERS["__main__"] = (11, frozenset({"app"}))

#: (importing module, imported module) → why the import sits inside a function. Nothing else may.
_ON_USE = "a command's module is imported when that command runs, so `chunking --help` loads none of them"
FUNCTION_LEVEL: dict[tuple[str, str], str] = {
    ("chunking.services", "chunking.index.azure"):
        "the Azure AI Search backend imports azure-search-documents: only a process that chooses it pays for that",
    ("chunking.services", "chunking.parsers.docintel"):
        "the Document Intelligence reader loads every parser: `chunking status` and `search` never need one",
    ("chunking.services", "chunking.strategies.offline_chat"):
        "the offline chat client loads every strategy and splitter: only a model-based strategy asks for it",
    **{("chunking.app.cli.app", f"chunking.app.cli.{name}"): _ON_USE for name in COMMANDS},
}


def modules(package: Path) -> dict[str, tuple[Path, bool]]:
    """Dotted module name → (file, is a package ``__init__``) for every ``.py`` file under *package*."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def _imports(name: str, path: Path, is_package: bool):
    """``(node, [(imported module, imported name or None)], inside a function)`` for each import of the module."""
    here = name if is_package else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    nested = {id(sub) for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
              for sub in ast.walk(node) if sub is not node}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")[: len(here.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            targets = [(module, alias.name) for alias in node.names]
        else:
            continue
        yield node, targets, id(node) in nested


def import_graph(package: Path, *, function_level: bool = True) -> dict[str, set[str]]:
    """Module → the modules of the same package it imports (see the module docstring for what counts)."""
    known = modules(package)
    graph: dict[str, set[str]] = {name: set() for name in known}
    for name, (path, is_package) in known.items():
        for _, targets, nested in _imports(name, path, is_package):
            if nested and not function_level:
                continue
            for module, imported_name in targets:
                # ``from pkg import sub`` imports the submodule ``pkg.sub`` when there is one.
                for target in (module, f"{module}.{imported_name}") if imported_name else (module,):
                    parts = target.split(".")
                    for end in range(1, len(parts) + 1):
                        imported = ".".join(parts[:end])
                        # A module's own packages are initialised before it: importing them is no dependency.
                        if imported in known and imported != name and not name.startswith(imported + "."):
                            graph[name].add(imported)
    return graph


def unit_of(module: str) -> str:
    """The unit of the layer table a dotted module belongs to: ``chunking.index.azure.schema`` → ``index``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def layer_violations(package: Path, layers: dict[str, tuple[int, frozenset[str]]]) -> list[str]:
    """``"importer -> imported (unit -> unit)"`` for each import, at module or function level, the table refuses.

    The package root itself (``chunking/__init__.py``, the version) is importable from anywhere."""
    found = []
    for module, imported in sorted((m, i) for m, deps in import_graph(package).items() for i in deps):
        source, target = unit_of(module), unit_of(imported)
        if target and source != target and target not in layers.get(source, (0, frozenset()))[1]:
            found.append(f"{module} -> {imported} ({source} -> {target})")
    return found


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


def _units() -> set[str]:
    return {p.stem if p.suffix == ".py" else p.name for p in PACKAGE.iterdir()
            if (p.suffix == ".py" and p.name != "__init__.py") or (p / "__init__.py").exists()}


# --- the table ------------------------------------------------------------------------------------------------------

def test_the_layer_table_names_every_unit_and_only_looks_down():
    assert set(LAYERS) == _units()
    for unit, (layer, allowed) in LAYERS.items():
        assert allowed <= set(LAYERS), unit
        upward = sorted(other for other in allowed if LAYERS[other][0] >= layer)
        assert not upward, f"{unit} (layer {layer}) may import {upward}, which are not below it"


def test_every_import_follows_the_layer_table():
    wrong = layer_violations(PACKAGE, LAYERS)
    assert not wrong, "imports the layer table refuses (docs/architecture.md#layers):\n" + "\n".join(wrong)


def _toy_package(tmp_path: Path) -> Path:
    pkg = tmp_path / "chunking"
    for folder in ("model", "index", "pipeline"):
        (pkg / folder).mkdir(parents=True)
        (pkg / folder / "__init__.py").write_text('"""x"""\n')
    (pkg / "__init__.py").write_text("")
    (pkg / "model" / "types.py").write_text("X = 1\n")
    (pkg / "index" / "local.py").write_text("from chunking.model.types import X\n")
    (pkg / "pipeline" / "run.py").write_text("from ..index import local\n\ndef f():\n    from chunking import model\n")
    return pkg


TOY_LAYERS = {"model": (0, frozenset()), "index": (1, frozenset({"model"})),
              "pipeline": (2, frozenset({"model", "index"}))}


def test_the_layer_check_fails_on_a_wrong_import(tmp_path):
    pkg = _toy_package(tmp_path)
    assert layer_violations(pkg, TOY_LAYERS) == []
    # Up, at module level: the data model importing the index.
    (pkg / "model" / "types.py").write_text("from chunking.index.local import X\n")
    assert layer_violations(pkg, TOY_LAYERS) == ["chunking.model.types -> chunking.index (model -> index)",
                                                 "chunking.model.types -> chunking.index.local (model -> index)"]
    # Up and hidden inside a function, through a relative import.
    (pkg / "model" / "types.py").write_text("X = 1\n")
    (pkg / "index" / "local.py").write_text("def f():\n    from ..pipeline import run\n")
    assert layer_violations(pkg, TOY_LAYERS) == ["chunking.index.local -> chunking.pipeline (index -> pipeline)",
                                                 "chunking.index.local -> chunking.pipeline.run (index -> pipeline)"]
    # Sideways: two units of one layer (the table never lets a unit import its own layer).
    (pkg / "index" / "local.py").write_text("X = 1\n")
    (pkg / "storage").mkdir()
    (pkg / "storage" / "__init__.py").write_text("from chunking.index import local\n")
    sideways = {**TOY_LAYERS, "storage": (1, frozenset({"model"}))}
    assert layer_violations(pkg, sideways) == ["chunking.storage -> chunking.index (storage -> index)",
                                               "chunking.storage -> chunking.index.local (storage -> index)"]


def test_chunking_has_no_import_cycle():
    graph = import_graph(PACKAGE)
    assert len(graph) > 150 and "chunking.splitters.markdown" in graph["chunking.documents.records"]
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
    assert cycles(import_graph(pkg, function_level=False)) == []
    (pkg / "a.py").write_text("from . import leaf\n")
    assert cycles(import_graph(pkg)) == []


def test_settings_load_only_the_format_table():
    # The settings are read first by every entry point: loading them loads no parser, splitter or service.
    code = "import sys, chunking.settings; print(sorted(m for m in sys.modules if m.startswith('chunking')))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    loaded = ast.literal_eval(done.stdout)
    assert {"chunking", "chunking.settings", "chunking.settings.values"} <= set(loaded)
    assert [m for m in loaded if m != "chunking" and not m.startswith("chunking.settings")] == ["chunking.formats"]


# --- the rules ------------------------------------------------------------------------------------------------------

def test_no_private_name_is_imported_from_another_package():
    # A ``_private`` name is shared only among the modules of one package (``chunking.index.azure`` and its
    # ``schema``), never with another package, a subpackage or a parent.
    known = modules(PACKAGE)
    crossing = []
    for name, (path, is_package) in known.items():
        here = name if is_package else name.rpartition(".")[0]
        for node, targets, _ in _imports(name, path, is_package):
            for module, imported in targets:
                private = imported and imported.startswith("_") and not imported.startswith("__")
                home = module if known.get(module, (None, False))[1] else module.rpartition(".")[0]
                if private and module.startswith("chunking.") and home != here:
                    crossing.append(f"{name}:{node.lineno} imports {module}.{imported}")
    assert crossing == []


def test_no_lazy_re_export_or_import_by_string():
    found = []
    for name, (path, _) in modules(PACKAGE).items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [f"{name}: module __getattr__" for node in tree.body
                  if isinstance(node, ast.FunctionDef) and node.name in ("__getattr__", "__dir__")]
        for node in ast.walk(tree):
            called = node.func if isinstance(node, ast.Call) else None
            label = (called.attr if isinstance(called, ast.Attribute) else
                     called.id if isinstance(called, ast.Name) else "")
            argument = called and node.args and node.args[0]
            # An optional third-party library may be imported by name (spaCy, KoNLPy); a chunking module not.
            if label in ("import_module", "__import__", "reload") and isinstance(argument, ast.Constant) \
                    and str(argument.value).startswith(("chunking", ".")):
                found.append(f"{name}:{node.lineno} {label}({argument.value})")
    assert found == []


def _function_level_imports() -> dict[tuple[str, str], int]:
    """(importer, imported module) → how many function-level imports of it; ``from pkg import sub`` counts as an
    import of the submodule ``pkg.sub``."""
    known = modules(PACKAGE)
    found: dict[tuple[str, str], int] = {}
    for name, (path, is_package) in known.items():
        for node, targets, nested in _imports(name, path, is_package):
            if nested:
                for module, imported in targets:
                    if imported and f"{module}.{imported}" in known:
                        module = f"{module}.{imported}"
                    if module == "chunking" or module.startswith("chunking."):
                        found[(name, module)] = found.get((name, module), 0) + 1
    return found


def test_function_level_imports_of_chunking_are_few_and_each_has_its_reason():
    found = _function_level_imports()
    unlisted = sorted(f"{a} imports {b}" for a, b in set(found) - set(FUNCTION_LEVEL))
    assert unlisted == [], "hoist these imports to the top of the module, or give the reason in FUNCTION_LEVEL"
    assert sorted(set(FUNCTION_LEVEL) - set(found)) == [], "FUNCTION_LEVEL lists imports that are gone"
    assert sum(found.values()) <= 20 and all(len(reason) > 20 for reason in FUNCTION_LEVEL.values())


def test_every_name_a_module_exports_is_its_own():
    # A name listed in ``__all__`` exists, and is defined by the module or by its own package: a module does not
    # export what it imported from another unit (that unit is where to import it from).
    import importlib

    wrong = []
    for name in sorted(modules(PACKAGE)):
        if name == "chunking.__main__":
            continue
        module = importlib.import_module(name)
        for exported in getattr(module, "__all__", ()):
            value = getattr(module, exported, wrong)
            home = getattr(value, "__module__", None)
            if value is wrong or (home and home.startswith("chunking.") and unit_of(home) != unit_of(name)):
                wrong.append(f"{name}.{exported}")
    assert wrong == []


def test_the_top_of_the_package_holds_few_modules():
    top = sorted(p.name for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "__main__.py"))
    assert len(top) <= 8, top


def _may_import(docstring: str) -> str | None:
    found = re.search(r"May import: (.*?)(?:\.\s*$|\.\s+[A-Z]|\n\n)", docstring, re.S)
    return " ".join(found.group(1).split()) if found else None


def _listed(text: str) -> frozenset[str]:
    if text.startswith("nothing"):
        return frozenset()
    if text.startswith("everything"):
        return LAYERS_BY_PHRASE[text]
    names = set()
    for item in re.split(r",\s*|\s+and\s+", text):
        item = item.strip().strip("`").removeprefix("chunking.").rstrip("/")
        names |= CORE if item == "core" else {item}
    return frozenset(names)


LAYERS_BY_PHRASE = {"everything of layers 0-7": _below(8), "everything but app": _below(9),
                    "everything": _below(10)}


@pytest.mark.parametrize("unit", sorted(u for u in LAYERS if (PACKAGE / u / "__init__.py").exists()))
def test_each_package_says_what_it_holds_and_what_it_may_import(unit):
    docstring = ast.get_docstring(ast.parse((PACKAGE / unit / "__init__.py").read_text(encoding="utf-8"))) or ""
    assert len(docstring.split()) >= 12, f"chunking/{unit}/__init__.py: say what the package holds"
    listed = _may_import(docstring)
    assert listed is not None, f"chunking/{unit}/__init__.py: say 'May import: …' as in the layer table"
    assert _listed(listed) == LAYERS[unit][1], unit
    for init in sorted((PACKAGE / unit).rglob("__init__.py")):
        assert ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))), f"{init} has no docstring"


def _string_constants(path: Path):
    """The string literals of a module, but not the pieces of an f-string (``f"{batch_no}.json"`` names a file of
    ours, not a document format)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    pieces = {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in node.values}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in pieces:
            yield node


def test_file_extensions_appear_only_in_the_format_table_and_the_parsers():
    from chunking.formats import FORMATS

    extensions = set(FORMATS) | {".doc", ".xls", ".ppt", ".zip", ".eml", ".msg", ".epub", ".odt", ".rtf"}
    found = []
    for name, (path, _) in modules(PACKAGE).items():
        if name == "chunking.formats" or name.startswith("chunking.parsers"):
            continue
        found += [f"{name}:{node.lineno} {node.value!r}" for node in _string_constants(path)
                  if node.value.lower() in extensions]
    assert found == []


def test_ledger_statuses_are_compared_only_in_the_ledger():
    from typing import get_args

    from chunking.ledger.state import Status

    statuses = set(get_args(Status))
    found = []
    for name, (path, _) in modules(PACKAGE).items():
        if name.startswith("chunking.ledger"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left, *node.comparators]
            status_side = any(isinstance(s, ast.Attribute) and s.attr in ("status", "state") for s in sides)
            literals = {c.value for s in sides for c in ast.walk(s) if isinstance(c, ast.Constant)}
            if status_side and literals & statuses:
                found.append(f"{name}:{node.lineno}")
    assert found == []


# --- the docs -------------------------------------------------------------------------------------------------------

def test_the_architecture_page_shows_the_layer_table():
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = re.search(r"^## Layers\n(.*?)^## ", text, re.S | re.M)
    assert section, "docs/architecture.md has no '## Layers' section"
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")]
            for line in section.group(1).splitlines() if line.startswith("|")]
    assert rows[0] == ["layer", "package", "holds", "may import"]
    documented = {}
    for layer, units, holds, may_import in rows[2:]:
        for unit in re.findall(r"`([^`]+)`", units):
            documented[unit.rstrip("/")] = (int(layer), _listed(may_import))
        assert len(holds.split()) >= 3, units
    assert documented == {u: v for u, v in LAYERS.items() if u != "__main__"}
