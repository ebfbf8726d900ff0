"""infra/ and Document Intelligence: optional account, its role, the app setting the code reads, all agreeing."""

from __future__ import annotations

from chunking.settings import Settings
from tests.infra.bicep import INFRA, MAIN, as_app_env, evaluate, parse


def _app_settings(**params) -> dict:
    tree = parse(MAIN)
    return evaluate(tree, tree["variables"]["appSettings"]["value"], params)


def test_off_by_default_so_every_format_is_parsed_locally():
    settings = _app_settings()
    assert settings["DOCUMENT_INTELLIGENCE_ENDPOINT"] == ""
    assert Settings.from_env(as_app_env(settings)).document_intelligence.endpoint == ""
    assert parse(MAIN)["parameters"]["documentIntelligenceEnabled"]["default"] is False


def test_enabled_the_app_gets_the_new_accounts_endpoint_and_no_key():
    settings = _app_settings(documentIntelligenceEnabled=True)
    endpoint = settings["DOCUMENT_INTELLIGENCE_ENDPOINT"]
    # The new account's name holds the deployment's token (uniqueString), known only when deploying.
    assert endpoint == "https://di-<to_lower>.cognitiveservices.azure.com"
    assert "DOCUMENT_INTELLIGENCE_API_KEY" not in settings


def test_an_existing_account_is_used_by_name():
    settings = _app_settings(documentIntelligenceAccountName="acme-di")
    assert settings["DOCUMENT_INTELLIGENCE_ENDPOINT"] == "https://acme-di.cognitiveservices.azure.com"
    parsed = Settings.from_env({"DOCUMENT_INTELLIGENCE_ENDPOINT": "https://acme-di.cognitiveservices.azure.com"})
    assert parsed.document_intelligence.uses_service(".pdf")


def test_the_new_account_is_keyless_with_the_subdomain_the_endpoint_names():
    module = parse(INFRA / "modules" / "docintel.bicep")
    account = module["resources"]["account"]["config"]
    assert module["resources"]["account"]["type"] == "Microsoft.CognitiveServices/accounts"
    assert account["kind"] == "FormRecognizer"
    assert account["properties"]["disableLocalAuth"] is True
    assert account["properties"]["customSubDomainName"] == "name"
    tree = parse(MAIN)
    call = tree["modules"]["docIntel"]["config"]
    assert evaluate(tree, call["condition"]) is False
    assert evaluate(tree, call["condition"], {"documentIntelligenceEnabled": True}) is True
    assert evaluate(tree, call["condition"], {"documentIntelligenceEnabled": True,
                                              "documentIntelligenceAccountName": "acme-di"}) is False
    assert call["config"]["params"]["name"] == "newDocIntelName"


def test_azd_parameters_map_the_environment():
    text = (INFRA / "main.parameters.json").read_text()
    assert '"documentIntelligenceEnabled": { "value": "${DOCUMENT_INTELLIGENCE_ENABLED=false}" }' in text
    assert '"documentIntelligenceAccountName": { "value": "${DOCUMENT_INTELLIGENCE_ACCOUNT_NAME=}" }' in text
