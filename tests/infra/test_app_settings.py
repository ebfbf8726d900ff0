"""The app settings of infra/ against what the code reads: every variable the code reads is set by infra/ or has
a default in code; every app setting is read by someone (no typo goes unnoticed); in Azure the settings select
the Azure services with identity-based connections and no keys; names of containers, queues, the table and the
blob-triggered function agree between infra/ and the code."""

from __future__ import annotations

import pytest

from chunking.settings import BINDING_DEFAULTS, Settings
from chunking.settings.metadata import ACL_SOURCES, MetadataSettings
from tests.infra.bicep import INFRA, MAIN, ROOT, Unresolved, as_app_env, evaluate, parse
from tests.infra.code_reads import RecordingEnv, env_reads_in_source, function_triggers, source_files

# App settings read by the Functions host or an SDK rather than by our code, and who reads them.
PLATFORM_SETTINGS = {
    "AzureWebJobsStorage__credential": "Functions host: identity-based host storage",
    "AzureWebJobsStorage__clientId": "Functions host: which user-assigned identity",
    "AZURE_CLIENT_ID": "azure-identity DefaultAzureCredential: which user-assigned identity",
    "APPLICATIONINSIGHTS_CONNECTION_STRING": "Functions host: telemetry destination",
    "APPLICATIONINSIGHTS_AUTHENTICATION_STRING": "Functions host: telemetry with Entra ID",
}
# Settings a Flex Consumption app must not have, or that would bring keys back.
FORBIDDEN = {
    "FUNCTIONS_WORKER_RUNTIME": "Flex Consumption sets the runtime in functionAppConfig",
    "FUNCTIONS_EXTENSION_VERSION": "not supported on Flex Consumption",
    "WEBSITE_RUN_FROM_PACKAGE": "Flex Consumption deploys from the deployment container",
    "WEBSITE_CONTENTAZUREFILECONNECTIONSTRING": "a storage key; not used on Flex Consumption",
    "AzureWebJobsStorage": "a connection string (with a key); identity-based settings are used",
    "AZURE_OPENAI_API_KEY": "a key; the identity has Cognitive Services OpenAI User",
    "AZURE_SEARCH_API_KEY": "a key; the identity has Search Index Data Contributor",
    "OPENAI_API_KEY": "a key",
}

# App settings that are parameters of infra/main.bicep (and azd variables of the same name), empty by default:
# an empty setting is one the code reads as not set, so its own default applies.
PARAMETER_SETTINGS = {
    "METADATA_FIELDS": "metadataFields",
    "ACL_SOURCE": "aclSource",
    "ACL_USERS_METADATA": "aclUsersMetadata",
    "ACL_GROUPS_METADATA": "aclGroupsMetadata",
    "ACL_DEFAULT": "aclDefault",
}
# Settings of chunking/settings/metadata.py that infra/ leaves out, and why.
NOT_IN_INFRA = {
    "ADLS_ACCOUNT_URL": "only for ACL_SOURCE=adls, which needs a hierarchical namespace the account of infra/ has not",
}


@pytest.fixture(scope="module")
def app_settings() -> dict[str, object]:
    tree = parse(MAIN)
    return evaluate(tree, tree["variables"]["appSettings"]["value"])


def _as_env(settings: dict[str, object]) -> dict[str, str]:
    """App settings as the app sees them (``tests.infra.bicep.as_app_env``)."""
    return as_app_env(settings)


def _settings_reads() -> set[str]:
    env = RecordingEnv()
    Settings.from_env(env)  # also proves every variable it reads has a default: an empty environment works
    return env.read


def _source_reads() -> dict[str, bool]:
    reads: dict[str, bool] = {}
    for path in source_files():
        for name, has_default in env_reads_in_source(path).items():
            reads[name] = reads.get(name, False) or has_default
    return reads


def test_recording_finds_the_settings_reads() -> None:
    read = _settings_reads()
    assert {"AZURE_SEARCH_ENDPOINT", "AZURE_OPENAI_ENDPOINT", "DOCUMENTS_CONTAINER", "LEDGER_TABLE",
            "AzureWebJobsStorage", "AzureWebJobsStorage__accountName", "HIERARCHY_LEVELS"} <= read


def test_source_scan_finds_the_binding_settings() -> None:
    assert set(BINDING_DEFAULTS) <= set(env_reads_in_source(ROOT / "function_app.py"))


def test_every_variable_the_code_reads_is_set_by_infra_or_has_a_default(app_settings: dict) -> None:
    missing = sorted(name for name, has_default in _source_reads().items()
                     if not has_default and name not in app_settings)
    assert not missing, f"read without a default and not set by infra/main.bicep: {missing}"
    # Settings.from_env ran on an empty environment above, so each of its reads has a default; the binding
    # names have theirs in BINDING_DEFAULTS.
    for name in _source_reads():
        if name in BINDING_DEFAULTS:
            assert BINDING_DEFAULTS[name], name


def test_function_app_has_no_unresolved_binding_expression(app_settings: dict) -> None:
    # '%NAME%' needs the app setting when the host indexes the app (it knows no defaults), so a binding may use one
    # only for a setting infra/ sets; the code resolves the others itself (chunking.settings.binding_setting).
    import re

    for trigger in function_triggers():
        for value in trigger.arguments.values():
            for name in re.findall(r"%([A-Za-z_][A-Za-z0-9_]*)%", value):
                assert name in app_settings, f"{trigger.function}: %{name}% is not an app setting of infra/"


def test_every_app_setting_is_read_by_the_code_or_the_platform(app_settings: dict) -> None:
    read = _settings_reads() | set(_source_reads())
    unread = sorted(set(app_settings) - read - set(PLATFORM_SETTINGS))
    assert not unread, f"app settings nothing reads (a typo?): {unread}"


def test_no_forbidden_or_secret_app_setting(app_settings: dict) -> None:
    present = {name: FORBIDDEN[name] for name in app_settings if name in FORBIDDEN}
    assert not present, present
    text = MAIN.read_text() + "".join(p.read_text() for p in (INFRA / "modules").glob("*.bicep"))
    assert "AccountKey=" not in text
    assert "listKeys" not in MAIN.read_text()  # the only key read is the webhook's, inside blob-webhook.bicep
    for name, value in app_settings.items():
        assert "key=" not in str(value).lower().replace("instrumentationkey=", ""), name
    # The Application Insights connection string is not a secret once local authentication is off.
    monitoring = parse(INFRA / "modules" / "monitoring.bicep")
    assert monitoring["resources"]["appInsights"]["config"]["properties"]["DisableLocalAuth"] is True


def test_in_azure_the_settings_select_the_azure_services(app_settings: dict) -> None:
    settings = Settings.from_env(_as_env(app_settings))
    assert settings.index_backend == "azure"
    assert settings.embedding_backend == "azure_openai"
    assert settings.ledger_backend == "table"
    assert settings.storage_connection == ""  # identity-based, no connection string
    assert settings.storage_account and settings.storage_blob_uri and settings.storage_queue_uri
    assert settings.storage_table_uri
    assert settings.search_api_key == "" and settings.azure_openai_api_key == ""
    assert settings.search_endpoint.startswith("https://") and settings.search_endpoint.endswith(".search.windows.net")
    assert settings.azure_openai_endpoint
    assert settings.azure_openai_deployment == "text-embedding-3-small"
    assert settings.embedding_dimensions == 1536
    assert str(settings.state_dir).startswith("/tmp/")  # the package folder is read-only on Flex Consumption
    assert app_settings["AzureWebJobsStorage__credential"] == "managedidentity"
    assert app_settings["AzureWebJobsStorage__clientId"] == Unresolved("identity.properties.clientId")
    assert app_settings["AZURE_CLIENT_ID"] == Unresolved("identity.properties.clientId")
    assert app_settings["BLOB_TRIGGER_SOURCE"] == "EventGrid"  # the only blob trigger source on Flex Consumption


def _storage_call() -> dict:
    return parse(MAIN)["modules"]["storage"]["config"]["params"]


def test_storage_module_creates_what_the_code_uses(app_settings: dict) -> None:
    tree = parse(MAIN)
    params = {name: evaluate(tree, value) for name, value in _storage_call().items()}
    defaults = Settings()
    assert params["documentsContainer"] == app_settings["DOCUMENTS_CONTAINER"] == defaults.documents_container
    assert params["payloadContainer"] == app_settings["PAYLOAD_CONTAINER"] == defaults.payload_container
    assert params["figuresContainer"] == app_settings["FIGURES_CONTAINER"] == defaults.figure_images.container
    assert params["batchQueue"] == app_settings["CHUNK_BATCH_QUEUE"] == defaults.batch_queue
    assert params["blobEventsQueue"] == app_settings["BLOB_EVENTS_QUEUE"] == BINDING_DEFAULTS["BLOB_EVENTS_QUEUE"]
    assert params["ledgerTable"] == app_settings["LEDGER_TABLE"] == defaults.ledger_table
    assert params["stageOneJobQueue"] == app_settings["STAGE1_JOB_QUEUE"] == defaults.stage_one.job_queue

    storage = parse(INFRA / "modules" / "storage.bicep")
    resolved = evaluate(storage, storage["variables"]["queueNames"]["value"], params)
    # Every queue a trigger reads exists (poison queues included).
    env = {**BINDING_DEFAULTS, **{k: str(v) for k, v in app_settings.items() if isinstance(v, str)}}
    for trigger in function_triggers():
        if trigger.kind == "queue_trigger":
            queue = trigger.arguments["queue_name"].replace("{_BATCHES}", env["CHUNK_BATCH_QUEUE"]) \
                .replace("{_EVENTS}", env["BLOB_EVENTS_QUEUE"]).replace("{_JOBS}", env["STAGE1_JOB_QUEUE"])
            assert queue in resolved, f"{trigger.function} reads queue {queue!r}, which infra/ does not create"
    assert f"{params['blobEventsQueue']}-poison" in resolved


def test_event_grid_feeds_the_functions_that_read_it(app_settings: dict) -> None:
    tree = parse(MAIN)
    events = {name: evaluate(tree, value) for name, value in tree["modules"]["events"]["config"]["params"].items()}
    assert events["blobEventsQueue"] == app_settings["BLOB_EVENTS_QUEUE"]
    assert events["documentsContainer"] == app_settings["DOCUMENTS_CONTAINER"]
    webhook_call = tree["modules"]["blobWebhook"]["config"]
    assert webhook_call["condition"] == "blobWebhookEnabled"
    webhook = {name: evaluate(tree, value) for name, value in webhook_call["config"]["params"].items()}
    blob_functions = {t.function for t in function_triggers() if t.kind == "blob_trigger"}
    assert webhook["functionName"] in blob_functions
    assert webhook["documentsContainer"] == app_settings["DOCUMENTS_CONTAINER"]

    module = parse(INFRA / "modules" / "blob-webhook.bicep")
    subscription = module["resources"]["createdToWebhook"]["config"]["properties"]
    url = subscription["destination"]["properties"]["endpointUrl"]
    assert url.startswith("https://${site.properties.defaultHostName}/runtime/webhooks/blobs?")
    assert "functionName=Host.Functions.${functionName}" in url and "code=${blobsExtensionKey}" in url
    assert subscription["filter"]["includedEventTypes"] == ["Microsoft.Storage.BlobCreated"]
    assert subscription["filter"]["subjectBeginsWith"] == "/blobServices/default/containers/${documentsContainer}/"

    deleted = parse(INFRA / "modules" / "events.bicep")["resources"]["deletedToQueue"]["config"]["properties"]
    assert deleted["filter"]["includedEventTypes"] == ["Microsoft.Storage.BlobDeleted"]
    assert deleted["deliveryWithResourceIdentity"]["destination"]["endpointType"] == "StorageQueue"
    assert deleted["deliveryWithResourceIdentity"]["destination"]["properties"]["queueName"] == "blobEventsQueue"


def test_azure_yaml_deploys_the_tagged_app_and_runs_stage_two() -> None:
    import os

    import yaml

    config = yaml.safe_load((ROOT / "azure.yaml").read_text())
    (service_name, service), = config["services"].items()
    assert service == {"project": ".", "language": "python", "host": "function"}
    site = parse(INFRA / "modules" / "functionapp.bicep")["resources"]["site"]["config"]
    assert f"'azd-service-name': '{service_name}'" in (INFRA / "modules" / "functionapp.bicep").read_text()
    assert site["kind"] == "functionapp,linux"
    hook = config["hooks"]["postdeploy"]
    posix = ROOT / hook["posix"]["run"]
    assert posix.is_file() and os.access(posix, os.X_OK)
    assert (ROOT / hook["windows"]["run"]).is_file()
    assert "BLOB_WEBHOOK_ENABLED" in posix.read_text()
    parameters = (INFRA / "main.parameters.json").read_text()
    assert '"blobWebhookEnabled": { "value": "${BLOB_WEBHOOK_ENABLED=false}" }' in parameters


def test_document_field_and_acl_settings_are_parameters_with_the_code_defaults(app_settings: dict) -> None:
    import json

    env = RecordingEnv()
    MetadataSettings.from_env(env)
    assert env.read == set(PARAMETER_SETTINGS) | set(NOT_IN_INFRA)
    assert not set(NOT_IN_INFRA) & set(app_settings)
    tree = parse(MAIN)
    azd = json.loads((INFRA / "main.parameters.json").read_text())["parameters"]
    for setting, parameter in PARAMETER_SETTINGS.items():
        assert tree["parameters"][parameter]["default"] == "" and app_settings[setting] == "", setting
        assert azd[parameter] == {"value": f"${{{setting}=}}"}, parameter
    # Left empty, the app gets the code's defaults.
    assert MetadataSettings.from_env(_as_env(app_settings)) == MetadataSettings()
    # Given, each value reaches its app setting and the code reads it.
    given = {"metadataFields": "category,department:dept", "aclSource": "none", "aclUsersMetadata": "readers",
             "aclGroupsMetadata": "teams", "aclDefault": "deny"}
    deployed = evaluate(tree, tree["variables"]["appSettings"]["value"], given)
    assert MetadataSettings.from_env(_as_env(deployed)) == MetadataSettings(
        metadata_fields=(("category", "category"), ("department", "dept")), acl_source="none",
        acl_users_key="readers", acl_groups_key="teams", acl_default="deny")
    # The choices offered are the code's, less adls (no hierarchical namespace on the account infra/ creates).
    allowed = {name: next(d["argument"] for d in tree["parameters"][name]["decorators"] if d["type"] == "allowed")
               for name in ("aclSource", "aclDefault")}
    assert allowed == {"aclSource": ["", *(s for s in ACL_SOURCES if s != "adls")], "aclDefault": ["", "public", "deny"]}


@pytest.mark.parametrize("plan", ["disabled", "free", "standard"])
def test_the_semantic_ranker_plan_means_the_same_to_azd_infra_and_the_app(plan: str) -> None:
    """azd's AZURE_SEARCH_SEMANTIC_RANKER is the plan of the search service; infra passes it on under the same
    name, and the app (and the CLI, when the azd environment is exported) reads it as off or on."""
    tree = parse(MAIN)
    decorators = tree["parameters"]["searchSemanticRanker"]["decorators"]
    assert plan in next(d["argument"] for d in decorators if d["type"] == "allowed")
    value = evaluate(tree, tree["variables"]["appSettings"]["value"], {"searchSemanticRanker": plan})
    assert value["AZURE_SEARCH_SEMANTIC_RANKER"] == plan
    assert Settings.from_env({"AZURE_SEARCH_SEMANTIC_RANKER": plan}).search_semantic_ranker is (plan != "disabled")
