"""Reading the Bicep of infra/ for the tests: every file parsed once with pycep-parser, plus a small evaluator
for the expressions the cross-checks need (app settings, role IDs, module parameters).

pycep's JSON does not tell a string literal from a name (``'documents'`` and ``documentsContainer`` both become a
plain string), so a plain string that names a parameter or variable of the file is read as that name.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pycep import BicepParser

ROOT = Path(__file__).resolve().parents[2]
INFRA = ROOT / "infra"
MAIN = INFRA / "main.bicep"

__all__ = ["INFRA", "MAIN", "ROOT", "Unresolved", "as_app_env", "bicep_files", "dotted", "evaluate", "parse"]


@dataclass(frozen=True)
class Unresolved:
    """A value known only at deployment time (a resource property, a module output): *text* says which."""

    text: str

    def __str__(self) -> str:
        return f"<{self.text}>"


def bicep_files() -> list[Path]:
    """Every .bicep file under infra/, sorted."""
    return sorted(INFRA.rglob("*.bicep"))


@functools.lru_cache(maxsize=None)
def _parser() -> BicepParser:
    return BicepParser()


@functools.lru_cache(maxsize=None)
def parse(path: Path) -> dict[str, Any]:
    """The pycep JSON tree of one Bicep file (keys: parameters, variables, resources, modules, outputs)."""
    return _parser().parse(file_path=path)


def dotted(node: Any) -> str | None:
    """``a.b.c`` for a chain of property accessors (or a bare name), else None."""
    if isinstance(node, str):
        return node
    if isinstance(node, dict) and isinstance(node.get("operator"), dict) \
            and node["operator"].get("type") == "property_accessor":
        operands = node["operator"]["operands"]
        head, tail = dotted(operands["operand_1"]), dotted(operands["operand_2"])
        return None if head is None or tail is None else f"{head}.{tail}"
    return None


_INTERPOLATION = re.compile(r"\$\{([^}]*)\}")
# Bicep's integer operators (``/`` truncates, as in ARM's div()).
_BINARY = {
    "multiply": lambda a, b: a * b, "divide": lambda a, b: int(a / b), "add": lambda a, b: a + b,
    "subtract": lambda a, b: a - b, "greater_than": lambda a, b: a > b, "less_than": lambda a, b: a < b,
}


def evaluate(tree: dict[str, Any], node: Any, given: dict[str, Any] | None = None, _depth: int = 0) -> Any:
    """The value of *node* in the file *tree*, with the parameters in *given* (a module call's values) and every
    other parameter at its default.

    Handles literals, parameter and variable names, ``a.b`` on object variables, ``${...}`` interpolation,
    ``string()``, ``empty()``, ``min()``, ``max()``, ``concat()`` of arrays, ``loadJsonContent()`` (paths relative to infra/), ``!``,
    ``&&``, ``||``, ``==``, ``!=``, ``>``, ``<``, ``+ - * /`` and ``?:``. Anything else (resource properties, module
    outputs, other functions) is an ``Unresolved`` naming the expression.
    """
    if _depth > 50:
        raise RecursionError("variables refer to each other in a cycle")
    params, variables = tree.get("parameters", {}), tree.get("variables", {})

    given = given or {}

    def again(child: Any) -> Any:
        return evaluate(tree, child, given, _depth + 1)

    if isinstance(node, (bool, int, float, Unresolved)) or node is None:
        return node
    if isinstance(node, str):
        if node in given:
            return given[node]
        if node in params:
            default = params[node].get("default")
            return Unresolved(node) if default is None else again(default)
        if node in variables:
            return again(variables[node]["value"])
        if "${" in node:
            return _INTERPOLATION.sub(lambda m: str(again(_expression(m.group(1)))), node)
        return node
    if isinstance(node, list):
        return [again(item) for item in node]
    # An expression is {"operator": {"type", "operands"}}; a property named operator (an alert rule's criterion)
    # holds a plain value.
    if isinstance(node, dict) and isinstance(node.get("operator"), dict):
        kind, operands = node["operator"]["type"], node["operator"]["operands"]
        if kind == "property_accessor":
            name = dotted(node)
            if name is None:
                return Unresolved("expression")
            head, _, rest = name.partition(".")
            value = again(head) if head in variables else Unresolved(name)
            for key in rest.split("."):
                if not isinstance(value, dict):
                    return Unresolved(name)
                value = value.get(key, Unresolved(name))
            return value
        if kind == "conditional":
            condition = again(operands["condition"])
            if isinstance(condition, Unresolved):
                return Unresolved("conditional")
            return again(operands["true_value"] if condition else operands["false_value"])
        if kind in ("equals", "not_equals"):
            left, right = again(operands["operand_1"]), again(operands["operand_2"])
            if isinstance(left, Unresolved) or isinstance(right, Unresolved):
                return Unresolved(kind)
            return (left == right) if kind == "equals" else (left != right)
        if kind == "not":
            value = again(operands["bool_value"])
            return value if isinstance(value, Unresolved) else not value
        if kind in ("and", "or"):
            left, right = again(operands["operand_1"]), again(operands["operand_2"])
            if isinstance(left, Unresolved) or isinstance(right, Unresolved):
                return Unresolved(kind)
            return (left and right) if kind == "and" else (left or right)
        if kind in _BINARY:
            left, right = again(operands["operand_1"]), again(operands["operand_2"])
            if isinstance(left, Unresolved) or isinstance(right, Unresolved):
                return Unresolved(kind)
            return _BINARY[kind](left, right)
        return Unresolved(kind)
    if isinstance(node, dict) and "function" in node:
        function = node["function"]
        if function["type"] == "string":
            value = again(function["parameters"]["value_to_convert"])
            if isinstance(value, bool):
                return "true" if value else "false"
            return value if isinstance(value, Unresolved) else str(value)
        if function["type"] == "load_json_content":
            import json

            return json.loads((INFRA / str(function["parameters"]["file_path"])).read_text(encoding="utf-8"))
        if function["type"] in ("min", "max"):
            values = [again(v) for v in function["parameters"].values()]
            if any(isinstance(v, Unresolved) for v in values):
                return Unresolved(function["type"])
            return (min if function["type"] == "min" else max)(values)
        if function["type"] == "concat":
            values = [again(v) for v in function["parameters"].values()]
            if not all(isinstance(v, list) for v in values):
                return Unresolved("concat")
            return [item for value in values for item in value]
        if function["type"] == "empty":
            value = again(function["parameters"]["item_to_test"])
            return value if isinstance(value, Unresolved) else not value
        return Unresolved(function["type"])
    if isinstance(node, dict):
        return {key: again(value) for key, value in node.items()}
    return Unresolved(repr(node))


def _expression(text: str) -> Any:
    """A ``${...}`` body: a name or a dotted name (enough for the templates here)."""
    text = text.strip()
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", text):
        return text
    parts = text.split(".")
    if all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", part) for part in parts):
        node: Any = parts[-1]
        for part in reversed(parts[:-1]):
            node = {"operator": {"type": "property_accessor", "operands": {"operand_1": part, "operand_2": node}}}
        return node
    return Unresolved(text)


def as_app_env(settings: dict[str, Any]) -> dict[str, str]:
    """App settings as the app sees them: a value known only at deployment becomes a placeholder naming it,
    ``<storage.outputs.name>``, or for a service URI or endpoint (``…Uri``, ``…_ENDPOINT``) an https URL on a
    reserved host, ``https://storage-outputs-blobendpoint.deployment.invalid``, as the deployed value would be."""
    env = {}
    for name, value in settings.items():
        if isinstance(value, Unresolved) and name.endswith(("Uri", "_ENDPOINT")):
            host = re.sub(r"[^a-z0-9]+", "-", value.text.lower()).strip("-")
            env[name] = f"https://{host}.deployment.invalid"
        else:
            env[name] = str(value)
    return env
