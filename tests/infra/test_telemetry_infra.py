"""The workbook, the alert rules and the completion-event namespace of infra/ against the code: every metric and span
their queries name is one chunking.telemetry records (and every attribute one it sets), the five alerts of
docs/operations.md#alerts exist with an optional e-mail action group, and the app settings point the app at the
namespace topic the module creates."""

from __future__ import annotations

import json
import re

from chunking import telemetry
from tests.infra.bicep import INFRA, MAIN, dotted, evaluate, parse

MODULES = INFRA / "modules"
SPANS = {"chunking.stage_one", "chunking.stage_two", "chunking.complete"}
# The attributes the queries read, as chunking/ sets them (tests/integration/test_telemetry_azurite.py checks
# the spans and metrics carry them).
ATTRIBUTES = {"chunking.outcome", "chunking.stage", "chunking.queue", "chunking.failure_kind", "chunking.status",
              "chunking.found", "chunking.upload_to_indexed_s", "chunking.path", "chunking.reason"}


def _queries() -> list[str]:
    workbook = json.loads((MODULES / "workbook.json").read_text())
    found = [item["content"]["query"] for item in workbook["items"] if item["type"] == 3]
    alerts = parse(MODULES / "alerts.bicep")
    found += [rule["query"] for rule in alerts["variables"]["rules"]["value"]]
    return found


def test_every_query_names_what_the_code_records():
    queries = _queries()
    assert len(queries) == 17
    for query in queries:
        tables = set(re.findall(r"^(customMetrics|dependencies)\b", query))
        assert tables, query
        names = set(re.findall(r'"(chunking\.[a-z_.]+)"', query))
        attributes = set(re.findall(r'customDimensions\["(chunking\.[a-z_]+)"\]', query))
        assert attributes <= ATTRIBUTES, (query, attributes - ATTRIBUTES)
        named = names - attributes
        if "customMetrics" in tables:
            assert named and named <= set(telemetry.INSTRUMENTS), (query, named - set(telemetry.INSTRUMENTS))
        else:
            assert named and named <= SPANS, query
    # Every instrument is on the dashboard.
    shown = set().union(*(re.findall(r'"(chunking\.[a-z_.]+)"', q) for q in queries))
    assert set(telemetry.INSTRUMENTS) <= shown, set(telemetry.INSTRUMENTS) - shown


def test_the_five_alerts_and_the_optional_action_group():
    alerts = parse(MODULES / "alerts.bicep")
    rules = alerts["variables"]["rules"]["value"]
    assert [r["name"] for r in rules] == ["failed-documents", "stuck-documents", "poison-messages",
                                          "sustained-throttling", "upload-to-indexed-p95"]
    assert all(r["window"].startswith("P") and r["frequency"].startswith("PT") for r in rules)
    group = alerts["resources"]["actionGroup"]
    assert "alertEmail" in str(group["config"]["condition"])
    assert alerts["parameters"]["alertEmail"]["default"] == ""
    main = parse(MAIN)
    params = main["modules"]["alerts"]["config"]["params"]
    assert (params["alertEmail"], params["uploadToIndexedP95Seconds"]) == ("alertEmail", "uploadToIndexedP95Seconds")
    assert dotted(params["applicationInsightsName"]) == "monitoring.outputs.applicationInsightsName"
    assert main["parameters"]["alertEmail"]["default"] == ""
    deployed = json.loads((INFRA / "main.parameters.json").read_text())["parameters"]
    assert deployed["alertEmail"] == {"value": "${ALERT_EMAIL=}"}


def test_the_workbook_is_loaded_from_its_json():
    workbook = parse(MODULES / "workbook.bicep")["resources"]["workbook"]["config"]["properties"]
    assert workbook["serializedData"]["function"] == {"type": "load_text_content",
                                                      "parameters": {"file_path": "workbook.json", "encoding": None}}
    assert workbook["category"] == "workbook" and dotted(workbook["sourceId"]) == "appInsights.id"
    assert json.loads((MODULES / "workbook.json").read_text())["version"] == "Notebook/1.0"


def test_the_app_publishes_to_the_topic_the_module_creates():
    main = parse(MAIN)
    settings = evaluate(main, main["variables"]["appSettings"]["value"])
    call = {name: evaluate(main, value) for name, value in main["modules"]["completionEvents"]["config"]["params"]
            .items()}
    assert settings["COMPLETION_EVENTS_TOPIC"] == call["topicName"] == "document-events"
    assert str(settings["COMPLETION_EVENTS_ENDPOINT"]) == "<completionEvents.outputs.endpoint>"
    module = parse(MODULES / "completion-events.bicep")
    topic = module["resources"]["topic"]["config"]["properties"]
    assert topic["inputSchema"] == "CloudEventSchemaV1_0"  # what chunking/messages/events.py sends
    assert "COMPLETION_EVENTS_KEY" not in settings  # keyless: the identity's EventGrid Data Sender role
