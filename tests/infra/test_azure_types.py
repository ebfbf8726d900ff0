"""infra/ against Azure's published resource types (tests/infra/azure_types.py): every resource, every module,
every combination of main.bicep's boolean parameters; and planted mistakes that the check must catch."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.infra.azure_types import TYPES_DIR, check_value, declarations, library, parameter_sets, problems
from tests.infra.bicep import INFRA, MAIN, bicep_files


@pytest.fixture(scope="module")
def types():
    return library()


def test_every_resource_of_infra_fits_the_published_types(types):
    assert [str(p) for p in problems(types)] == []


def test_both_settings_of_every_boolean_parameter_are_checked():
    sets = parameter_sets()
    names = set(sets[0])
    assert {"blobWebhookEnabled", "documentIntelligenceEnabled", "usePrivateNetworking"} <= names
    assert len(sets) == 2 ** len(names)
    for name in names:
        assert {s[name] for s in sets} == {False, True}


def test_the_types_on_file_are_exactly_those_infra_declares():
    """A new resource type or API version in infra/ needs its definitions: `python -m tests.infra.azure_types
    --refresh <bicep-types-az clone>` (docs/deploy.md#what-was-checked-here)."""
    used = sorted({f"{d.type_name}@{d.api_version}" for path in bicep_files() for d in declarations(path)})
    manifest = json.loads((TYPES_DIR / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["types"] == used
    assert manifest["source"] == "https://github.com/Azure/bicep-types-az"
    assert "MIT License" in (TYPES_DIR / "LICENSE").read_text(encoding="utf-8")


def _planted(tmp_path: Path, file: str, old: str, new: str) -> Path:
    """A copy of infra/ with one mistake planted; returns its main.bicep."""
    copy = tmp_path / "infra"
    shutil.copytree(INFRA, copy)
    target = copy / file
    text = target.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} not found once in {file}"
    target.write_text(text.replace(old, new), encoding="utf-8")
    return copy / MAIN.name


def test_a_misspelt_property_fails(tmp_path, types):
    main = _planted(tmp_path, "modules/storage.bicep", "allowBlobPublicAccess: false", "allowBlobPublicAcess: false")
    assert [str(p) for p in problems(types, main)] == [
        "modules/storage.bicep:account.properties.allowBlobPublicAcess: "
        "StorageAccountPropertiesCreateParametersOrStorageAccountProperties has no property 'allowBlobPublicAcess'"
        " (did you mean 'allowBlobPublicAccess'?)"]


def test_an_unknown_enum_value_fails(tmp_path, types):
    main = _planted(tmp_path, "modules/storage.bicep", "accessTier: 'Hot'", "accessTier: 'Hottest'")
    assert [str(p) for p in problems(types, main)] == [
        "modules/storage.bicep:account.properties.accessTier: 'Hottest' is not one of 'Cold', 'Cool', 'Hot', 'Premium'"]


def test_an_enum_value_only_in_the_private_branch_fails(tmp_path, types):
    """The search service's publicNetworkAccess is 'enabled' | 'disabled' in 2023-11-01 (lower case): a
    capitalised value in the branch taken only with usePrivateNetworking=true is caught too."""
    main = _planted(tmp_path, "modules/search.bicep", "'disabled' : 'enabled'", "'Disabled' : 'enabled'")
    assert [str(p) for p in problems(types, main)] == [
        "modules/search.bicep:search.properties.publicNetworkAccess: 'Disabled' is not one of 'disabled', 'enabled'"]


def test_an_unpublished_api_version_fails(tmp_path, types):
    main = _planted(tmp_path, "modules/storage.bicep", "tableServices/tables@2023-05-01", "tableServices/tables@2023-05-02")
    found = [str(p) for p in problems(types, main)]
    assert found == ["modules/storage.bicep:table: Microsoft.Storage/storageAccounts/tableServices/tables@2023-05-02"
                     " is not a published resource type (versions here: 2023-05-01; refresh tests/data/azure-types)"]


def test_read_only_required_and_bounds(types):
    account = types.resource_body("Microsoft.Storage/storageAccounts", "2023-05-01")
    assert [str(p) for p in check_value(types, account, {"name": "st1", "location": "x"}, "a")] == [
        "a.kind: required by Microsoft.Storage/storageAccounts but missing",
        "a.sku: required by Microsoft.Storage/storageAccounts but missing"]
    body = {"name": "st1", "location": "x", "kind": "StorageV2", "sku": {"name": "Standard_LRS"},
            "properties": {"primaryEndpoints": {}, "allowSharedKeyAccess": "false"}}
    assert [str(p) for p in check_value(types, account, body, "a")] == [
        "a.properties.primaryEndpoints: is read-only",
        "a.properties.allowSharedKeyAccess: expected a boolean, got 'false'"]
    search = types.resource_body("Microsoft.Search/searchServices", "2023-11-01")
    body = {"name": "s", "location": "x", "sku": {"name": "basic"}, "properties": {"replicaCount": 13}}
    assert [str(p) for p in check_value(types, search, body, "s")] == ["s.properties.replicaCount: 13 is outside 1..12"]
