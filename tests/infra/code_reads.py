"""What the code reads and calls, found without running Azure: the environment variables (recorded while
``Settings.from_env`` runs, plus ``os.environ``/``os.getenv`` calls and binding settings found in the source), the
Functions triggers of function_app.py, and the Azure SDK clients the package imports."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from tests.infra.bicep import ROOT

__all__ = ["RecordingEnv", "SdkClient", "env_reads_in_source", "function_triggers", "sdk_clients", "source_files"]


class RecordingEnv(dict):
    """A mapping that remembers every key looked up (``get``, ``[]``, ``in``), present or not."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.read: set[str] = set()

    def get(self, key, default=None):  # type: ignore[override]
        self.read.add(key)
        return super().get(key, default)

    def __getitem__(self, key):  # type: ignore[override]
        self.read.add(key)
        return super().__getitem__(key)

    def __contains__(self, key):  # type: ignore[override]
        self.read.add(key)
        return super().__contains__(key)


def source_files() -> list[Path]:
    """function_app.py and every module of the chunking package."""
    return [ROOT / "function_app.py", *sorted((ROOT / "chunking").rglob("*.py"))]


def _constants(tree: ast.Module) -> dict[str, str]:
    """Module-level ``NAME = "literal"`` assignments."""
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = node.value.value
    return found


def _literal(node: ast.AST, constants: dict[str, str]) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    return None


def _is_environ(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "environ" and isinstance(node.value, ast.Name) \
        and node.value.id == "os"


def env_reads_in_source(path: Path) -> dict[str, bool]:
    """Variables read in *path* through ``os.environ.get``/``os.getenv``/``os.environ[...]``/``binding_setting``:
    name -> whether the call gives a default. Names that are not literals (or module constants) are not found."""
    tree = ast.parse(path.read_text(), filename=str(path))
    constants = _constants(tree)
    reads: dict[str, bool] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            environ_get = isinstance(func, ast.Attribute) and func.attr == "get" and _is_environ(func.value)
            getenv = isinstance(func, ast.Attribute) and func.attr == "getenv"
            binding = (isinstance(func, ast.Name) and func.id == "binding_setting") or \
                (isinstance(func, ast.Attribute) and func.attr == "binding_setting")
            name = _literal(node.args[0], constants)
            if name and (environ_get or getenv):
                reads[name] = reads.get(name, False) or len(node.args) > 1
            elif name and binding:
                reads[name] = True  # binding_setting falls back to BINDING_DEFAULTS (KeyError otherwise)
        elif isinstance(node, ast.Subscript) and _is_environ(node.value):
            name = _literal(node.slice, constants)
            if name:
                reads.setdefault(name, False)
    return reads


@dataclass(frozen=True)
class Trigger:
    function: str
    kind: str  # blob_trigger, queue_trigger, timer_trigger, queue_output, ...
    arguments: dict[str, str]  # keyword arguments given as literals or module-level names


def function_triggers() -> list[Trigger]:
    """The decorators of every function in function_app.py: function name, binding kind, literal arguments
    (an f-string argument is given with its ``{}`` parts as the names they hold)."""
    path = ROOT / "function_app.py"
    tree = ast.parse(path.read_text(), filename=str(path))
    triggers = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        name = node.name
        bindings = []
        for decorator in node.decorator_list:
            if not (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute)):
                continue
            if decorator.func.attr == "function_name" and decorator.args:
                name = _literal(decorator.args[0], {}) or name
                continue
            arguments = {kw.arg: _source(kw.value) for kw in decorator.keywords if kw.arg}
            bindings.append((decorator.func.attr, arguments))
        triggers.extend(Trigger(name, kind, arguments) for kind, arguments in bindings)
    return triggers


def _source(node: ast.AST) -> str:
    if isinstance(node, ast.Constant):
        return str(node.value)
    if isinstance(node, ast.Name):
        return "{" + node.id + "}"
    if isinstance(node, ast.JoinedStr):
        return "".join(_source(part.value) if isinstance(part, ast.FormattedValue) else str(part.value)
                       for part in node.values)
    return ast.unparse(node)


@dataclass(frozen=True)
class SdkClient:
    module: str
    name: str
    path: Path


def sdk_clients() -> Iterator[SdkClient]:
    """Every SDK client class imported by the source files: a name ending in ``Client`` from ``azure.*``, or
    ``AzureOpenAI``/``OpenAI`` from ``openai``."""
    for path in source_files():
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or not node.module:
                continue
            for alias in node.names:
                azure_client = node.module.startswith("azure.") and alias.name.endswith("Client")
                openai_client = node.module.split(".")[0] == "openai" and alias.name in ("AzureOpenAI", "OpenAI")
                if azure_client or openai_client:
                    yield SdkClient(node.module, alias.name, path)
