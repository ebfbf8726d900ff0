"""Every Bicep file of infra/ parses with pycep-parser, and every module call matches the module's parameters
(a name passed that the module does not declare, or a required parameter left out, fails the deployment)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pycep import BicepParser

from tests.infra.bicep import INFRA, bicep_files, parse

FILES = bicep_files()


def test_infra_has_the_main_template_and_its_modules() -> None:
    names = {path.relative_to(INFRA).as_posix() for path in FILES}
    assert {"main.bicep", "modules/functionapp.bicep", "modules/storage.bicep", "modules/events.bicep",
            "modules/blob-webhook.bicep", "modules/search.bicep", "modules/openai.bicep"} <= names


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(INFRA).as_posix())
def test_bicep_file_parses(path: Path) -> None:
    tree = parse(path)
    assert tree.get("resources") or tree.get("modules"), f"{path.name} declares nothing"


def test_parser_rejects_broken_bicep() -> None:
    with pytest.raises(Exception):
        BicepParser().parse(text="resource account 'Microsoft.Storage/storageAccounts@2023-05-01' = {\n  name: \n")


def _module_calls() -> list[tuple[Path, str, dict]]:
    calls = []
    for path in FILES:
        for symbol, module in parse(path).get("modules", {}).items():
            calls.append((path, symbol, module))
    return calls


def _call_config(module: dict) -> dict:
    """The ``{name, params, ...}`` of a module call (a conditional call nests it one level deeper)."""
    config = module["config"]
    return config["config"] if "condition" in config else config


@pytest.mark.parametrize("path,symbol,module", _module_calls(), ids=lambda v: v if isinstance(v, str) else "")
def test_module_call_matches_module_parameters(path: Path, symbol: str, module: dict) -> None:
    assert module["type"] == "local", f"{symbol}: only local modules are used"
    target = (path.parent / module["detail"]["path"]).resolve()
    assert target.is_file(), f"{path.name}: module {symbol} points at a missing file {target}"
    declared = parse(target).get("parameters", {})
    passed = set(_call_config(module).get("params", {}))
    unknown = passed - set(declared)
    missing = {name for name, spec in declared.items() if "default" not in spec} - passed
    assert not unknown, f"{path.name}: module {symbol} passes parameters {target.name} does not declare: {unknown}"
    assert not missing, f"{path.name}: module {symbol} leaves out required parameters of {target.name}: {missing}"


def test_azd_parameters_file_names_only_declared_parameters() -> None:
    import json

    parameters = json.loads((INFRA / "main.parameters.json").read_text())["parameters"]
    declared = parse(INFRA / "main.bicep")["parameters"]
    assert set(parameters) <= set(declared), set(parameters) - set(declared)
    required = {name for name, spec in declared.items() if "default" not in spec}
    assert required <= set(parameters), required - set(parameters)
