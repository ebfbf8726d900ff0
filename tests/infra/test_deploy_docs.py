"""docs/deploy.md against the templates: what is created (resources, containers, queues, table), every app setting,
the roles of the app's identity and every azd parameter, each compared with what infra/ declares."""

from __future__ import annotations

import json
import re

import pytest

from tests.infra.azure_types import declarations
from tests.infra.bicep import INFRA, MAIN, ROOT, bicep_files, evaluate, parse
from tests.infra.test_roles import _assigned

DEPLOY = ROOT / "docs" / "deploy.md"
_CODE = re.compile(r"`([^`]+)`")

# Each resource type infra/ declares, and the words its row of "What is created" starts with.
RESOURCE_ROWS = {
    "Microsoft.Web/sites": "Function App",
    "Microsoft.Web/serverfarms": "Function App",
    "Microsoft.Web/sites/basicPublishingCredentialsPolicies": "Function App",
    "Microsoft.ManagedIdentity/userAssignedIdentities": "Function App",
    "Microsoft.Storage/storageAccounts": "Storage account",
    "Microsoft.Storage/storageAccounts/blobServices": "Storage account",
    "Microsoft.Storage/storageAccounts/blobServices/containers": "Storage account",
    "Microsoft.Storage/storageAccounts/queueServices": "Storage account",
    "Microsoft.Storage/storageAccounts/queueServices/queues": "Storage account",
    "Microsoft.Storage/storageAccounts/tableServices": "Storage account",
    "Microsoft.Storage/storageAccounts/tableServices/tables": "Storage account",
    "Microsoft.EventGrid/systemTopics": "Event Grid system topic",
    "Microsoft.EventGrid/systemTopics/eventSubscriptions": "Event Grid system topic",
    "Microsoft.Search/searchServices": "Azure AI Search",
    "Microsoft.Search/searchServices/sharedPrivateLinkResources": "Azure AI Search",
    "Microsoft.CognitiveServices/accounts": "Azure OpenAI",
    "Microsoft.CognitiveServices/accounts/deployments": "Azure OpenAI",
    "Microsoft.OperationalInsights/workspaces": "Log Analytics",
    "Microsoft.Insights/components": "Log Analytics",
    "Microsoft.Insights/workbooks": "Application Insights workbook",
    "Microsoft.Insights/scheduledQueryRules": "Application Insights workbook",
    "Microsoft.Insights/actionGroups": "Application Insights workbook",
    "Microsoft.EventGrid/namespaces": "Event Grid namespace",
    "Microsoft.EventGrid/namespaces/topics": "Event Grid namespace",
    "Microsoft.EventGrid/namespaces/topics/eventSubscriptions": "Event Grid namespace",
    "Microsoft.Network/virtualNetworks": "Virtual network",
    "Microsoft.Network/privateDnsZones": "Virtual network",
    "Microsoft.Network/privateDnsZones/virtualNetworkLinks": "Virtual network",
    "Microsoft.Network/privateEndpoints": "Private endpoints",
    "Microsoft.Network/privateEndpoints/privateDnsZoneGroups": "Private endpoints",
    "Microsoft.Authorization/roleAssignments": None,  # the roles table
}


def _section(title: str) -> str:
    text = DEPLOY.read_text(encoding="utf-8")
    start = text.index(f"\n### {title}\n")
    end = text.find("\n### ", start + 1)
    return text[start:end if end > 0 else None]


def _rows(title: str) -> list[list[str]]:
    """The body rows of the first table of a section, as lists of cells."""
    rows = [line for line in _section(title).splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows[2:]]


@pytest.fixture(scope="module")
def app_settings() -> dict:
    tree = parse(MAIN)
    return evaluate(tree, tree["variables"]["appSettings"]["value"])


def test_every_resource_type_has_its_row_in_what_is_created() -> None:
    declared = {d.type_name for path in bicep_files() for d in declarations(path) if not d.existing}
    assert declared <= set(RESOURCE_ROWS), f"add a row (and an entry here) for {declared - set(RESOURCE_ROWS)}"
    starts = [row[0] for row in _rows("What is created")]
    for type_name in declared:
        words = RESOURCE_ROWS[type_name]
        if words is not None:
            assert any(start.startswith(words) for start in starts), f"{type_name}: no row '{words} …'"


def _created_by_storage() -> dict[str, set[str]]:
    """Containers, queues and tables the storage module creates, with what main.bicep passes it."""
    main = parse(MAIN)
    call = main["modules"]["storage"]["config"]
    params = evaluate(main, call["params"])
    storage = parse(INFRA / "modules" / "storage.bicep")
    resources = storage["resources"]
    containers = evaluate(storage, resources["containers"]["config"]["loop_type"]["detail"]["array_name"], params)
    queues = evaluate(storage, "queueNames", params)
    tables = [evaluate(storage, resources["table"]["config"]["name"], params)]
    return {"containers": set(containers), "queues": set(queues), "table": set(tables)}


def test_the_storage_row_names_every_container_queue_and_table() -> None:
    row = next(r for r in _rows("What is created") if r[0].startswith("Storage account"))
    text = row[1]
    documented = {}
    for kind, follower in (("containers", "queues"), ("queues", "table"), ("table", None)):
        start = text.index(f"{kind} ")
        end = text.index(f"; {follower} ") if follower else len(text)
        documented[kind] = set(_CODE.findall(text[start:end]))
    assert documented == _created_by_storage()


def _documented_settings() -> set[str]:
    names = set()
    for row in _rows("App settings"):
        for name in _CODE.findall(row[0]):
            # "`AzureWebJobsStorage__accountName`, `__blobServiceUri`": the prefix of the first one.
            names.add(f"AzureWebJobsStorage{name}" if name.startswith("__") else name)
    return names


def test_the_app_settings_table_lists_exactly_what_infra_sets(app_settings: dict) -> None:
    assert _documented_settings() == set(app_settings)


def test_no_app_setting_that_flex_consumption_refuses_is_documented_as_one() -> None:
    assert "FUNCTIONS_WORKER_RUNTIME" not in _documented_settings()


def test_the_roles_table_gives_the_app_exactly_its_roles() -> None:
    documented = set()
    for identity, role, *_ in _rows("Roles"):
        if identity.startswith("the app"):
            documented.add(role)
    assert documented == set().union(*_assigned().values())


def test_the_parameters_table_lists_every_azd_variable() -> None:
    mapped = json.loads((INFRA / "main.parameters.json").read_text(encoding="utf-8"))["parameters"]
    variables = {match for spec in mapped.values() for match in re.findall(r"\$\{([A-Z_]+)", str(spec["value"]))}
    documented = {name for row in _rows("Parameters") for name in _CODE.findall(row[0])}
    assert documented == variables


def test_every_anchor_the_code_and_infra_point_to_exists() -> None:
    text = DEPLOY.read_text(encoding="utf-8")
    anchors = {re.sub(r"[^a-z0-9 -]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
               for line in text.splitlines() if line.startswith("#")}
    pointed = set()
    for path in [*bicep_files(), *(ROOT / "chunking").rglob("*.py")]:
        pointed |= set(re.findall(r"docs/deploy\.md#([a-z0-9-]+)", path.read_text(encoding="utf-8")))
    assert pointed and pointed <= anchors, pointed - anchors
