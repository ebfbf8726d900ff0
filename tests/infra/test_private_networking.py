"""usePrivateNetworking (docs/deploy.md#private-networking): what each resource lets in from the public network, for
every combination of main.bicep's other boolean parameters, and the private endpoint each service gets."""

from __future__ import annotations

import pytest

from tests.infra.azure_types import parameter_sets, resource_bodies
from tests.infra.bicep import MAIN, evaluate, parse

# The two exceptions docs/deploy.md#private-networking explains: the storage account keeps its public endpoint
# behind a firewall (default action Deny, the trusted-services bypass Event Grid's BlobDeleted delivery needs), and
# the function app keeps public inbound access for Event Grid's blob-trigger webhook.
PRIVATE = {
    "modules/completion-events.bicep:namespace": "Disabled",
    "modules/functionapp.bicep:site": "Enabled",
    "modules/openai.bicep:account": "Disabled",
    "modules/search.bicep:search": "disabled",
    "modules/storage.bicep:account": "Enabled",
}


def _public_access(given: dict[str, bool]) -> dict[str, str]:
    found = {}
    for where, body in resource_bodies(given):
        properties = body.get("properties") if isinstance(body, dict) else None
        if isinstance(properties, dict) and "publicNetworkAccess" in properties:
            found[where] = properties["publicNetworkAccess"]
    return found


@pytest.mark.parametrize("given", parameter_sets(), ids=lambda g: ",".join(k for k, v in g.items() if v) or "none")
def test_public_network_access_of_every_resource(given):
    expected = dict(PRIVATE) if given["usePrivateNetworking"] else {where: "enabled" if "search" in where else
                                                                     "Enabled" for where in PRIVATE}
    if given["documentIntelligenceEnabled"]:
        expected["modules/docintel.bicep:account"] = "Disabled" if given["usePrivateNetworking"] else "Enabled"
    assert _public_access(given) == expected


@pytest.mark.parametrize("docintel", [False, True])
def test_each_service_has_its_private_endpoint_in_its_dns_zone(docintel):
    given = {"blobWebhookEnabled": False, "documentIntelligenceEnabled": docintel, "usePrivateNetworking": True}
    tree = parse(MAIN)
    zones = evaluate(tree, "privateDnsZoneNames", given)
    endpoints = evaluate(tree, "privateEndpoints", given)
    found = sorted((entry["name"].split("-")[1], entry["groupId"], zones[entry["zone"]]) for entry in endpoints)
    assert found == sorted([
        ("blob", "blob", "privatelink.blob.<environment().suffixes.storage>"),
        ("queue", "queue", "privatelink.queue.<environment().suffixes.storage>"),
        ("table", "table", "privatelink.table.<environment().suffixes.storage>"),
        ("search", "searchService", "privatelink.search.windows.net"),
        ("openai", "account", "privatelink.openai.azure.com"),
        # Event Grid namespaces: sub-resource 'topic' in privatelink.eventgrid.azure.net (Azure Private Endpoint
        # private DNS zone values, https://learn.microsoft.com/azure/private-link/private-endpoint-dns).
        ("events", "topic", "privatelink.eventgrid.azure.net"),
    ] + ([("docintel", "account", "privatelink.cognitiveservices.azure.com")] if docintel else []))
