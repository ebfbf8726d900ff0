"""Every role the code paths need is assigned to the function app's identity, on the resource the call goes to.

What is needed comes from the code: the Azure SDK clients the package imports and the triggers of
function_app.py (the Functions host's own needs: docs "Connecting to host storage with an identity" and the
storage binding pages list Storage Blob Data Owner and Storage Queue Data Contributor for the blob trigger and
host storage). A new client class fails the test until its role is added here and in infra/modules/roles.bicep,
which main.bicep calls with the function app's identity.
"""

from __future__ import annotations

import pytest

from tests.infra.bicep import INFRA, MAIN, dotted, evaluate, parse
from tests.infra.code_reads import function_triggers, sdk_clients

# Built-in role definition IDs (the same in every tenant).
ROLE_IDS = {
    "Storage Blob Data Owner": "b7e6dc6d-f1e8-4753-8033-0f276bb0955b",
    "Storage Blob Data Contributor": "ba92f5b4-2d11-453d-a403-e96b0029c9fe",
    "Storage Queue Data Contributor": "974c5e8b-45b9-4653-ba55-5f855dd0fb88",
    "Storage Queue Data Message Sender": "c6a89b2d-59bc-44d0-9896-0f6e12d7b80a",
    "Storage Table Data Contributor": "0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3",
    "Search Index Data Contributor": "8ebe5a00-799e-43f5-93ac-243d3dce84a7",
    "Search Service Contributor": "7ca78c08-252a-4471-8644-bb5ff32d4ba0",
    "Cognitive Services OpenAI User": "5e0bd9bd-7b93-4f28-af87-19fc36ad61bd",
    "Cognitive Services User": "a97b65f3-24c7-4388-baec-2e87135dc908",
    "Monitoring Metrics Publisher": "3913510d-42f4-4e42-8a64-420c390055eb",
    "EventGrid Data Sender": "d5a91429-5739-47e2-a06b-3470a27159e7",
}
NAMES = {guid: name for name, guid in ROLE_IDS.items()}

# SDK client -> (resource, roles any one of which allows every call the code makes with it).
CLIENT_ROLES = {
    # Documents, payloads, model cache: read, write, delete, list, create container.
    "BlobServiceClient": ("storage", {"Storage Blob Data Owner", "Storage Blob Data Contributor"}),
    "ContainerClient": ("storage", {"Storage Blob Data Owner", "Storage Blob Data Contributor"}),
    "BlobClient": ("storage", {"Storage Blob Data Owner", "Storage Blob Data Contributor"}),
    # ACL_SOURCE=adls: a path's ACL read (getAccessControl needs Owner, or being the path's owning user).
    "DataLakeFileClient": ("storage", {"Storage Blob Data Owner"}),
    # Chunk batches: send, and create the queue when missing.
    "QueueClient": ("storage", {"Storage Queue Data Contributor"}),
    "QueueServiceClient": ("storage", {"Storage Queue Data Contributor"}),
    # Ledger: entities read and written, table created when missing.
    "TableServiceClient": ("storage", {"Storage Table Data Contributor"}),
    "TableClient": ("storage", {"Storage Table Data Contributor"}),
    # Documents upserted, deleted, queried.
    "SearchClient": ("search", {"Search Index Data Contributor"}),
    # Index created and its schema updated.
    "SearchIndexClient": ("search", {"Search Service Contributor"}),
    # Embeddings and chat completions.
    "AzureOpenAI": ("openai", {"Cognitive Services OpenAI User"}),
    # Layout analysis: analyze requests and their results (Document Intelligence "Use Microsoft Entra ID").
    "DocumentIntelligenceClient": ("docintel", {"Cognitive Services User"}),
    # Completion events published to the Event Grid namespace topic (infra/modules/completion-events.bicep).
    "EventGridPublisherClient": ("eventgrid", {"EventGrid Data Sender"}),
    # Any OpenAI-compatible endpoint with its own key: no Azure role.
    "OpenAI": (None, set()),
}
TRIGGER_ROLES = {
    "blob_trigger": [{"Storage Blob Data Owner"}, {"Storage Queue Data Contributor"}],
    "queue_trigger": [{"Storage Queue Data Contributor"}],
    "queue_output": [{"Storage Queue Data Contributor"}],
    "blob_output": [{"Storage Blob Data Owner", "Storage Blob Data Contributor"}],
    "blob_input": [{"Storage Blob Data Owner", "Storage Blob Data Contributor"}],
    # The host keeps timer schedules and singleton locks in blobs of host storage.
    "timer_trigger": [{"Storage Blob Data Owner"}],
}
MODULE_RESOURCE = {
    "storage-roles.bicep": "storage",
    "search-roles.bicep": "search",
    "openai-roles.bicep": "openai",
    "docintel-roles.bicep": "docintel",
}
ROLES = INFRA / "modules" / "roles.bicep"
FUNCTION_IDENTITY = "functionPrincipalId"  # the parameter of roles.bicep main.bicep gives the identity's ID


def _assigned() -> dict[str, set[str]]:
    """resource -> role names assigned to the function app's identity in infra/modules/roles.bicep."""
    tree = parse(ROLES)
    roles: dict[str, set[str]] = {}
    for module in tree["modules"].values():
        config = module["config"]["config"] if "condition" in module["config"] else module["config"]
        resource = MODULE_RESOURCE.get(module["detail"]["path"])
        params = config.get("params", {})
        if resource is None or "roleIds" not in params:
            continue
        principal = params["principalId"]
        if dotted(principal) != FUNCTION_IDENTITY:
            continue
        for guid in evaluate(tree, params["roleIds"]):
            roles.setdefault(resource, set()).add(NAMES.get(guid, guid))
    for resource in tree["resources"].values():
        if resource["type"] != "Microsoft.Authorization/roleAssignments":
            continue
        properties = resource["config"]["properties"]
        if dotted(properties["principalId"]) != FUNCTION_IDENTITY:
            continue
        guid = evaluate(tree, properties["roleDefinitionId"]["function"]["parameters"]["resource_name_1"])
        target = {"appInsights": "monitoring"}.get(resource["config"]["scope"], resource["config"]["scope"])
        roles.setdefault(target, set()).add(NAMES.get(guid, guid))
    # The Event Grid namespace's module gives the identity its sender role itself (main.bicep passes it in).
    events = parse(INFRA / "modules" / "completion-events.bicep")
    assignment = events["resources"]["functionSendsEvents"]["config"]
    if dotted(assignment["properties"]["principalId"]) == FUNCTION_IDENTITY and assignment["scope"] == "namespace":
        guid = evaluate(events, assignment["properties"]["roleDefinitionId"]["function"]["parameters"][
            "resource_name_1"])
        roles.setdefault("eventgrid", set()).add(NAMES.get(guid, guid))
    return roles


def test_main_gives_the_roles_module_the_function_identity_and_what_it_runs_on() -> None:
    tree = parse(MAIN)
    call = tree["modules"]["roles"]
    assert call["detail"]["path"] == "modules/roles.bicep" and "condition" not in call["config"]
    params = call["config"]["params"]
    assert dotted(params["functionPrincipalId"]) == "identity.properties.principalId"
    assert dotted(params["identityId"]) == "identity.id"
    assert dotted(params["storageAccountName"]) == "storage.outputs.name"
    assert (params["searchServiceName"], params["openAiAccountName"], params["docIntelEnabled"]) == (
        "searchName", "openAiName", "useDocIntel")
    assert params["applicationInsightsName"] == "applicationInsightsName"
    # The accounts exist before their roles are assigned, and the app starts with its roles.
    assert set(call["config"]["dependsOn"]) == {"monitoring", "search", "openAi", "docIntel"}
    assert tree["modules"]["functionApp"]["config"]["dependsOn"] == ["roles", "network"]


def test_main_gives_the_completion_events_module_the_function_identity() -> None:
    params = parse(MAIN)["modules"]["completionEvents"]["config"]["params"]
    assert dotted(params["functionPrincipalId"]) == "identity.properties.principalId"


def test_role_ids_in_the_bicep_are_the_built_in_ones() -> None:
    tree = parse(ROLES)
    declared = evaluate(tree, tree["variables"]["roles"]["value"])
    assert set(declared.values()) <= set(NAMES), set(declared.values()) - set(NAMES)


def test_the_scan_finds_the_clients_the_code_uses() -> None:
    found = {client.name for client in sdk_clients()}
    assert {"BlobServiceClient", "QueueClient", "TableServiceClient", "SearchClient", "SearchIndexClient",
            "AzureOpenAI"} <= found


@pytest.mark.parametrize("client", sorted({c.name for c in sdk_clients()}))
def test_every_sdk_client_has_its_role_assigned(client: str) -> None:
    where = sorted({str(c.path.name) for c in sdk_clients() if c.name == client})
    assert client in CLIENT_ROLES, f"{client} (imported in {where}) has no known role: add it to CLIENT_ROLES and infra"
    resource, acceptable = CLIENT_ROLES[client]
    if resource is None:
        return
    assigned = _assigned().get(resource, set())
    assert assigned & acceptable, f"{client} needs one of {acceptable} on {resource}; assigned: {assigned}"


def test_every_trigger_has_its_roles_assigned() -> None:
    assigned = _assigned().get("storage", set())
    kinds = {t.kind for t in function_triggers()}
    assert {"blob_trigger", "queue_trigger", "timer_trigger"} <= kinds
    for trigger in function_triggers():
        for acceptable in TRIGGER_ROLES.get(trigger.kind, []):
            assert assigned & acceptable, f"{trigger.function} ({trigger.kind}) needs one of {acceptable}"
    for connection in {t.arguments.get("connection") for t in function_triggers()} - {None}:
        assert connection == "{_STORAGE}", "every binding uses host storage, which infra/ grants roles on"


def test_telemetry_and_event_grid_identities_have_their_roles() -> None:
    tree = parse(MAIN)
    settings = evaluate(tree, tree["variables"]["appSettings"]["value"])
    if "APPLICATIONINSIGHTS_AUTHENTICATION_STRING" in settings:
        assert "Monitoring Metrics Publisher" in _assigned().get("monitoring", set())
    # Event Grid writes BlobDeleted events to the queue with the system topic's identity (shared keys are off).
    events = parse(INFRA / "modules" / "events.bicep")
    sender = events["resources"]["topicSendsToQueue"]["config"]
    assert dotted(sender["properties"]["principalId"]) == "topic.identity.principalId"
    assert evaluate(events, sender["properties"]["roleDefinitionId"]["function"]["parameters"]["resource_name_1"]) \
        == ROLE_IDS["Storage Queue Data Message Sender"]
    assert events["resources"]["deletedToQueue"]["config"]["dependsOn"] == ["topicSendsToQueue"]


def test_the_exact_roles_of_the_function_identity() -> None:
    assert _assigned() == {
        "storage": {"Storage Blob Data Owner", "Storage Queue Data Contributor", "Storage Table Data Contributor"},
        "search": {"Search Index Data Contributor", "Search Service Contributor"},
        "openai": {"Cognitive Services OpenAI User"},
        "docintel": {"Cognitive Services User"},
        "monitoring": {"Monitoring Metrics Publisher"},
        "eventgrid": {"EventGrid Data Sender"},
    }
