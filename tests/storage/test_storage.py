"""Storage clients from connection strings and from identity-based settings (no request is sent)."""

import pytest

from chunking.redact import describe_storage as describe
from chunking.settings import Settings
from chunking.storage import blob_service, queue_client, table_service


def test_identity_based_settings_use_account_urls_and_a_credential():
    settings = Settings.from_env({"AzureWebJobsStorage__accountName": "contosodocs"})
    assert settings.storage_connection == ""
    assert settings.ledger_backend == "table"
    blob, queue, table = blob_service(settings), queue_client(settings, "chunk-batches"), table_service(settings)
    assert blob.url == "https://contosodocs.blob.core.windows.net/"
    assert queue.url == "https://contosodocs.queue.core.windows.net/chunk-batches"
    assert table.url.startswith("https://contosodocs.table.core.windows.net")
    assert type(blob.credential).__name__ == "DefaultAzureCredential"
    assert type(queue._message_encode_policy).__name__ == "TextBase64EncodePolicy"
    assert describe(settings) == "account contosodocs"


def test_service_uris_override_the_account_and_missing_ones_are_named():
    settings = Settings.from_env({"AzureWebJobsStorage__blobServiceUri": "https://x.blob.example.net"})
    assert blob_service(settings).url == "https://x.blob.example.net/"
    with pytest.raises(ValueError, match="AzureWebJobsStorage__queueServiceUri"):
        queue_client(settings, "q")


def test_connection_string_default_is_azurite():
    settings = Settings.from_env({})
    assert settings.storage_connection == "UseDevelopmentStorage=true" and settings.ledger_backend == "local"
    assert blob_service(settings).url == "http://127.0.0.1:10000/devstoreaccount1/"
    assert describe(settings) == "Azurite (UseDevelopmentStorage=true)"
