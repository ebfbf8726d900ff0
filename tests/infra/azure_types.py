"""Azure's published resource types, and a check of every resource in infra/ against them.

The Bicep compiler type-checks a template against the type definitions Microsoft generates from the ARM REST
specifications and publishes in the open ``Azure/bicep-types-az`` repository (MIT licence):
``generated/<area>/<provider>/<api-version>/types.json``, a flat list of types that refer to each other by index
(``{"$ref": "#/12"}``). No Bicep CLI runs here, so this module does the part of that check the templates need:

- every ``type@apiVersion`` used exists in the published types;
- every property written is a property of its object (a misspelt or misplaced name fails), and is not read-only;
- every required property of an object written as a literal is present;
- every value has the property's type: strings, integers within their bounds, booleans, arrays, objects, and for
  an enum (a union of string literals) one of its values, exactly (Bicep's BCP036/BCP037/BCP035/BCP073 checks).

Values are those of the templates as deployed: :func:`parameter_sets` gives every combination of the boolean
parameters of ``main.bicep`` (the rest at their defaults), each module receives what its call passes, and a value
known only at deployment (a resource property, a module output) is not checked.

The definitions used live in ``tests/data/azure-types/`` (one file per provider and API version, cut down to the
resource types infra/ declares and the types they reach). Refresh them from a clone of bicep-types-az with::

    git clone --depth 1 https://github.com/Azure/bicep-types-az /tmp/bicep-types-az
    python -m tests.infra.azure_types --refresh /tmp/bicep-types-az

(the argument may also be a bare git directory). See docs/deploy.md#what-was-checked-here.
"""

from __future__ import annotations

import argparse
import difflib
import itertools
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.infra.bicep import MAIN, ROOT, Unresolved, bicep_files, evaluate, parse

TYPES_DIR = ROOT / "tests" / "data" / "azure-types"

# Flags of a property in types.json (bicep-types: ObjectTypePropertyFlags).
REQUIRED, READ_ONLY = 1, 2
# Keys of a resource body that are Bicep's own, not properties of the resource type.
BICEP_KEYWORDS = frozenset({"parent", "scope", "dependsOn"})

__all__ = ["Problem", "TypeLibrary", "check_value", "declarations", "library", "parameter_sets", "problems"]


@dataclass(frozen=True)
class Problem:
    """One finding: *where* (file, resource, property path) and *what* is wrong."""

    where: str
    what: str

    def __str__(self) -> str:
        return f"{self.where}: {self.what}"


@dataclass(frozen=True)
class Declaration:
    """A resource as declared in a Bicep file: its symbol, ``type@version``, body node and whether it is
    ``existing`` (only its type and version are checked then)."""

    file: Path
    symbol: str
    type_name: str
    api_version: str
    body: Any
    existing: bool


class TypeLibrary:
    """The published types of several ``types.json`` lists, looked up by resource ``type@version``.

    Each list keeps its own ``#/n`` references; a type is addressed as ``(list number, index)``.
    """

    def __init__(self, lists: list[list[dict[str, Any]]]) -> None:
        self.lists = lists
        self.resources: dict[str, tuple[int, int]] = {}
        for number, types in enumerate(lists):
            for index, item in enumerate(types):
                if item.get("$type") == "ResourceType":
                    self.resources[item["name"].lower()] = (number, index)

    def resource_body(self, type_name: str, api_version: str) -> tuple[int, int] | None:
        """The body type of ``type@version`` (case-insensitive, as ARM matches types), or None if unknown."""
        found = self.resources.get(f"{type_name}@{api_version}".lower())
        if found is None:
            return None
        number, index = found
        return number, _ref(self.lists[number][index]["body"])

    def get(self, address: tuple[int, int]) -> dict[str, Any]:
        """The type at *address*."""
        number, index = address
        return self.lists[number][index]

    def versions_of(self, type_name: str) -> list[str]:
        """The API versions known here for *type_name* (for messages)."""
        prefix = type_name.lower() + "@"
        return sorted(name[len(prefix):] for name in self.resources if name.startswith(prefix))


def _ref(pointer: dict[str, str]) -> int:
    return int(pointer["$ref"].removeprefix("#/"))


def library(directory: Path = TYPES_DIR) -> TypeLibrary:
    """The type lists under *directory* (every ``*.json`` but the manifest)."""
    lists = [json.loads(path.read_text(encoding="utf-8"))
             for path in sorted(directory.glob("*/*.json"))]
    return TypeLibrary(lists)


# ---- reading infra/ ----------------------------------------------------------------------------------------------

def _unwrap(config: Any) -> Any:
    """The body of a resource or module declaration, under a loop (``[for …]``) or a condition (``if (…)``)."""
    while isinstance(config, dict) and "config" in config and ("loop_type" in config or "condition" in config):
        config = config["config"]
    return config


def declarations(path: Path) -> Iterator[Declaration]:
    """Every resource declared in one Bicep file (nested child resources are not used in infra/)."""
    tree = parse(path)
    for symbol, resource in tree.get("resources", {}).items():
        yield Declaration(path, symbol, resource["type"], resource["api_version"], _unwrap(resource["config"]),
                          bool(resource.get("existing")))


def _bool_parameters(tree: dict[str, Any]) -> list[str]:
    return sorted(name for name, spec in tree.get("parameters", {}).items() if spec.get("type") == "bool")


def parameter_sets(main: Path = MAIN) -> list[dict[str, bool]]:
    """Every combination of the boolean parameters of *main* (2^n dictionaries)."""
    names = _bool_parameters(parse(main))
    return [dict(zip(names, values, strict=True)) for values in itertools.product((False, True), repeat=len(names))]


def _module_calls(path: Path, given: dict[str, Any]) -> Iterator[tuple[Path, dict[str, Any]]]:
    """Each module a file calls, with the parameters it passes (evaluated with *given*), when its condition holds
    or cannot be decided."""
    tree = parse(path)
    for module in tree.get("modules", {}).values():
        config = module.get("config", {})
        condition = config.get("condition") if isinstance(config, dict) else None
        if condition is not None and evaluate(tree, condition, given) is False:
            continue
        body = _unwrap(config)
        params = evaluate(tree, body.get("params", {}), given) if isinstance(body, dict) else {}
        target = (path.parent / module["detail"]["path"]).resolve()
        yield target, params if isinstance(params, dict) else {}


def _files_with_parameters(given: dict[str, Any], main: Path = MAIN) -> Iterator[tuple[Path, dict[str, Any]]]:
    """*main* with *given*, then every module reached from it with what its caller passes."""
    pending = [(main.resolve(), given)]
    while pending:
        path, params = pending.pop()
        yield path, params
        pending.extend(_module_calls(path, params))


def resource_bodies(given: dict[str, Any], main: Path = MAIN) -> Iterator[tuple[str, Any]]:
    """``(file:symbol, body)`` of every resource *main* declares with *given* (modules included, each with what
    its caller passes), the body evaluated as far as it can be offline; ``existing`` resources left out."""
    root = main.resolve().parent
    for path, params in _files_with_parameters(given, main):
        for declaration in declarations(path):
            if not declaration.existing:
                yield (f"{path.relative_to(root)}:{declaration.symbol}",
                       evaluate(parse(declaration.file), declaration.body, params))


# ---- the check ---------------------------------------------------------------------------------------------------

def _literals(types: TypeLibrary, number: int, item: dict[str, Any]) -> tuple[set[str], bool, list[tuple[int, int]]]:
    """For a union: its string literal values, whether any string is allowed, and its other members."""
    values: set[str] = set()
    open_string = False
    others: list[tuple[int, int]] = []
    for member in item.get("elements", []):
        address = (number, _ref(member))
        kind = types.get(address)
        if kind["$type"] == "StringLiteralType":
            values.add(kind["value"])
        elif kind["$type"] == "StringType":
            open_string = True
        else:
            others.append(address)
    return values, open_string, others


def _unknown(value: Any) -> bool:
    """A value this check cannot know before deployment."""
    return isinstance(value, Unresolved) or (isinstance(value, str) and "<" in value and ">" in value)


def check_value(types: TypeLibrary, address: tuple[int, int], value: Any, where: str) -> list[Problem]:
    """The problems of *value* against the type at *address* (an empty list when it fits). A ``[for …]``
    expression is checked as an array of its item template."""
    if _unknown(value):
        return []
    if isinstance(value, dict) and "loop_type" in value and "config" in value:
        value = [value["config"]]
    number, _ = address
    item = types.get(address)
    kind = item["$type"]
    if kind == "AnyType":
        return []
    if kind == "StringType":
        if not isinstance(value, str):
            return [Problem(where, f"expected a string, got {value!r}")]
        problems = []
        if "maxLength" in item and len(value) > item["maxLength"]:
            problems.append(Problem(where, f"{value!r} is longer than {item['maxLength']} characters"))
        return problems
    if kind == "StringLiteralType":
        return [] if value == item["value"] else [Problem(where, f"expected {item['value']!r}, got {value!r}")]
    if kind == "IntegerType":
        if isinstance(value, bool) or not isinstance(value, int):
            return [Problem(where, f"expected an integer, got {value!r}")]
        low, high = item.get("minValue"), item.get("maxValue")
        if (low is not None and value < low) or (high is not None and value > high):
            return [Problem(where, f"{value} is outside {low}..{high}")]
        return []
    if kind == "BooleanType":
        return [] if isinstance(value, bool) else [Problem(where, f"expected a boolean, got {value!r}")]
    if kind == "ArrayType":
        if not isinstance(value, list):
            return [Problem(where, f"expected an array, got {value!r}")]
        member = (number, _ref(item["itemType"]))
        return [p for i, element in enumerate(value) for p in check_value(types, member, element, f"{where}[{i}]")]
    if kind == "UnionType":
        values, open_string, others = _literals(types, number, item)
        if isinstance(value, str) and (open_string or value in values):
            return []
        for other in others:
            if not check_value(types, other, value, where):
                return []
        if values and isinstance(value, str):
            allowed = ", ".join(repr(v) for v in sorted(values))
            return [Problem(where, f"{value!r} is not one of {allowed}")]
        return [Problem(where, f"{value!r} fits none of the union's members")]
    if kind in ("ObjectType", "DiscriminatedObjectType"):
        if not isinstance(value, dict):
            return [Problem(where, f"expected an object, got {value!r}")]
        return _check_object(types, address, value, where)
    return []


def _properties(types: TypeLibrary, address: tuple[int, int], value: dict[str, Any]
                ) -> tuple[dict[str, Any], Any, list[Problem], str]:
    """The properties an object may have (a discriminated object's base and chosen element merged), its
    additional-properties type, and a problem when the discriminator value is unknown."""
    number, _ = address
    item = types.get(address)
    if item["$type"] == "ObjectType":
        return item.get("properties", {}), item.get("additionalProperties"), [], item.get("name", "object")
    discriminator = item["discriminator"]
    chosen = value.get(discriminator)
    properties = dict(item.get("baseProperties", {}))
    if _unknown(chosen):
        return properties, {"any": True}, [], item.get("name", "object")
    element = item.get("elements", {}).get(chosen)
    if element is None:
        allowed = ", ".join(sorted(item.get("elements", {})))
        return properties, None, [Problem("", f"{discriminator} {chosen!r} is not one of {allowed}")], ""
    chosen_type = types.get((number, _ref(element)))
    properties.update(chosen_type.get("properties", {}))
    return properties, chosen_type.get("additionalProperties"), [], chosen_type.get("name", "object")


def _check_object(types: TypeLibrary, address: tuple[int, int], value: dict[str, Any], where: str) -> list[Problem]:
    number, _ = address
    properties, additional, found, name = _properties(types, address, value)
    problems = [Problem(where, p.what) for p in found]
    if isinstance(additional, dict) and additional.get("any"):
        return problems
    for key, child in value.items():
        if key in BICEP_KEYWORDS:
            continue
        path = f"{where}.{key}"
        spec = properties.get(key)
        if spec is None:
            if additional is not None:
                problems += check_value(types, (number, _ref(additional)), child, path)
                continue
            near = difflib.get_close_matches(key, list(properties), n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            problems.append(Problem(path, f"{name} has no property {key!r}{hint}"))
            continue
        if spec.get("flags", 0) & READ_ONLY:
            problems.append(Problem(path, "is read-only"))
            continue
        if child is None:  # Bicep leaves a null property out of the request
            if spec.get("flags", 0) & REQUIRED:
                problems.append(Problem(path, f"required by {name} but null"))
            continue
        problems += check_value(types, (number, _ref(spec["type"])), child, path)
    for key, spec in properties.items():
        flags = spec.get("flags", 0)
        if flags & REQUIRED and not flags & READ_ONLY and key not in value:
            problems.append(Problem(f"{where}.{key}", f"required by {name} but missing"))
    return problems


def _check_declaration(types: TypeLibrary, declaration: Declaration, params: dict[str, Any], root: Path
                       ) -> list[Problem]:
    where = f"{declaration.file.relative_to(root)}:{declaration.symbol}"
    found = types.resource_body(declaration.type_name, declaration.api_version)
    if found is None:
        known = types.versions_of(declaration.type_name)
        return [Problem(where, f"{declaration.type_name}@{declaration.api_version} is not a published resource type"
                               f" (versions here: {', '.join(known) or 'none'}; refresh tests/data/azure-types)")]
    if declaration.existing:
        return []
    body = evaluate(parse(declaration.file), declaration.body, params)
    if not isinstance(body, dict):
        return []
    return check_value(types, found, body, where)


def problems(types: TypeLibrary | None = None, main: Path = MAIN) -> list[Problem]:
    """Every problem of the templates under *main* (infra/main.bicep) against the published types, over every
    combination of its boolean parameters (each problem once)."""
    types = types or library()
    root = main.resolve().parent
    seen: dict[str, Problem] = {}
    for given in parameter_sets(main):
        for path, params in _files_with_parameters(given, main):
            for declaration in declarations(path):
                for problem in _check_declaration(types, declaration, params, root):
                    seen.setdefault(str(problem), problem)
    return list(seen.values())


# ---- refreshing tests/data/azure-types from bicep-types-az -------------------------------------------------------

def _used_types() -> set[tuple[str, str]]:
    return {(d.type_name, d.api_version) for path in bicep_files() for d in declarations(path)}


class _Source:
    """A clone (work tree) or bare git directory of Azure/bicep-types-az."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.bare = not (root / "generated").is_dir()

    def paths(self) -> list[str]:
        if not self.bare:
            return [str(p.relative_to(self.root)) for p in (self.root / "generated").glob("*/*/*/types.json")]
        listing = subprocess.run(["git", "--git-dir", str(self.root), "ls-tree", "-r", "--name-only", "HEAD",
                                  "generated/"], check=True, capture_output=True, text=True).stdout
        return [line for line in listing.splitlines() if line.endswith("/types.json")]

    def read(self, path: str) -> list[dict[str, Any]]:
        if not self.bare:
            return json.loads((self.root / path).read_text(encoding="utf-8"))
        text = subprocess.run(["git", "--git-dir", str(self.root), "show", f"HEAD:{path}"], check=True,
                              capture_output=True, text=True).stdout
        return json.loads(text)

    def commit(self) -> str:
        args = ["git", "--git-dir", str(self.root if self.bare else self.root / ".git"), "rev-parse", "HEAD"]
        return subprocess.run(args, check=True, capture_output=True, text=True).stdout.strip()


def _closure(types: list[dict[str, Any]], roots: list[int]) -> list[dict[str, Any]]:
    """The types reachable from *roots*, renumbered from 0 in the order first reached."""
    order: list[int] = []
    index_of: dict[int, int] = {}
    pending = list(roots)
    while pending:
        index = pending.pop(0)
        if index in index_of:
            continue
        index_of[index] = len(order)
        order.append(index)
        pending.extend(_ref({"$ref": r}) for r in _refs(types[index]))

    def renumber(node: Any) -> Any:
        if isinstance(node, dict):
            if set(node) == {"$ref"}:
                return {"$ref": f"#/{index_of[_ref(node)]}"}
            return {key: renumber(value) for key, value in node.items() if key != "description"}
        if isinstance(node, list):
            return [renumber(value) for value in node]
        return node

    return [renumber(types[index]) for index in order]


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        if set(node) == {"$ref"}:
            yield node["$ref"]
            return
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def refresh(source: Path, used: set[tuple[str, str]] | None = None, target: Path = TYPES_DIR) -> list[Path]:
    """Write the published types of every ``type@version`` infra/ uses (or *used*) under *target*, one file per
    provider and API version, descriptions dropped; return the files written. Raises LookupError naming a type
    the source does not publish."""
    used = used if used is not None else _used_types()
    bicep_types = _Source(source)
    paths = bicep_types.paths()
    wanted: dict[tuple[str, str], set[str]] = {}
    for type_name, version in used:
        wanted.setdefault((type_name.split("/")[0].lower(), version), set()).add(f"{type_name}@{version}".lower())
    written = []
    for (provider, version), names in sorted(wanted.items()):
        candidates = [p for p in paths if p.split("/")[2] == provider and p.split("/")[3] == version]
        roots: dict[str, tuple[str, int]] = {}
        lists: dict[str, list[dict[str, Any]]] = {}
        for path in candidates:
            types = bicep_types.read(path)
            for index, item in enumerate(types):
                if item.get("$type") == "ResourceType" and item["name"].lower() in names:
                    roots.setdefault(item["name"].lower(), (path, index))
                    lists[path] = types
        missing = names - set(roots)
        if missing:
            raise LookupError(f"not published in bicep-types-az: {', '.join(sorted(missing))}")
        merged: list[dict[str, Any]] = []
        for path, types in sorted(lists.items()):
            merged_offset = len(merged)
            part = _closure(types, [index for p, index in roots.values() if p == path])
            merged.extend(_shift(item, merged_offset) for item in part)
        out = target / provider / f"{version}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(merged, indent=1, sort_keys=True) + "\n",
                       encoding="utf-8")
        written.append(out)
    manifest = {"source": "https://github.com/Azure/bicep-types-az", "commit": bicep_types.commit(),
                "licence": "MIT (LICENSE in this folder)",
                "types": sorted(f"{t}@{v}" for t, v in used)}
    (target / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return written


def _shift(node: Any, offset: int) -> Any:
    if isinstance(node, dict):
        if set(node) == {"$ref"}:
            return {"$ref": f"#/{_ref(node) + offset}"}
        return {key: _shift(value, offset) for key, value in node.items()}
    if isinstance(node, list):
        return [_shift(value, offset) for value in node]
    return node


def main(argv: list[str] | None = None) -> int:
    """``--refresh SOURCE``: rewrite tests/data/azure-types; ``--check`` (default): print the problems of infra/."""
    parser = argparse.ArgumentParser(prog="python -m tests.infra.azure_types", description=__doc__.split("\n\n")[0])
    parser.add_argument("--refresh", type=Path, metavar="SOURCE",
                        help="a clone or bare git directory of Azure/bicep-types-az to read the types from")
    args = parser.parse_args(argv)
    if args.refresh:
        for path in refresh(args.refresh):
            print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size} bytes)")
        return 0
    found = problems()
    for problem in found:
        print(problem)
    print(f"{len(found)} problem(s) in infra/")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
