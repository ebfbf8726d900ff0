"""Storage clients (blobs, queues, tables) from the app's storage settings: a connection string
(``AzureWebJobsStorage``, Azurite's ``UseDevelopmentStorage=true`` included) or, for identity-based connections,
the account name / service URIs (``AzureWebJobsStorage__accountName``, ``__blobServiceUri``,
``__queueServiceUri``, ``__tableServiceUri``) with ``DefaultAzureCredential`` (managed identity in Azure).

Identity-based connections need both the blob and the queue service (pitfall 15 of
shared/reference/azure-functions.md): set the account name, or every service URI the app uses.
"""

from __future__ import annotations

from typing import Any

__all__ = ["blob_container", "blob_service", "create_container", "describe", "queue_client", "table_service"]


def _account_url(settings: Any, service: str) -> str:
    explicit = getattr(settings, f"storage_{service}_uri")
    if explicit:
        return explicit
    if settings.storage_account:
        return f"https://{settings.storage_account}.{service}.core.windows.net"
    raise ValueError(f"no storage connection for the {service} service: set AzureWebJobsStorage, or "
                     f"AzureWebJobsStorage__accountName / AzureWebJobsStorage__{service}ServiceUri")


def _credential() -> Any:
    from azure.identity import DefaultAzureCredential

    return DefaultAzureCredential()


def blob_service(settings: Any, **kwargs: Any) -> Any:
    """A ``BlobServiceClient`` for *settings* (extra keyword arguments go to the client, e.g. ``retry_total``)."""
    from azure.storage.blob import BlobServiceClient

    if settings.storage_connection:
        return BlobServiceClient.from_connection_string(settings.storage_connection, **kwargs)
    return BlobServiceClient(_account_url(settings, "blob"), credential=_credential(), **kwargs)


def blob_container(storage: Any, name: str) -> Any:
    """The ``ContainerClient`` *name* of *storage*: a connection string or a ``BlobServiceClient``."""
    from azure.storage.blob import BlobServiceClient

    service = BlobServiceClient.from_connection_string(storage) if isinstance(storage, str) else storage
    return service.get_container_client(name)


def create_container(container: Any) -> None:
    """Create the blob container *container* (a ``ContainerClient``) unless it exists."""
    from azure.core.exceptions import ResourceExistsError

    try:
        container.create_container()
    except ResourceExistsError:
        pass


def queue_client(settings: Any, queue: str, **kwargs: Any) -> Any:
    """A ``QueueClient`` for *queue* that base64-encodes, as the Functions queue trigger expects by default (the
    SDK does not encode by default: pitfall 3)."""
    from azure.storage.queue import QueueClient, TextBase64DecodePolicy, TextBase64EncodePolicy

    policies = {"message_encode_policy": TextBase64EncodePolicy(),
                "message_decode_policy": TextBase64DecodePolicy(), **kwargs}
    if settings.storage_connection:
        return QueueClient.from_connection_string(settings.storage_connection, queue, **policies)
    return QueueClient(_account_url(settings, "queue"), queue, credential=_credential(), **policies)


def table_service(settings: Any, **kwargs: Any) -> Any:
    """A ``TableServiceClient`` for *settings*."""
    from azure.data.tables import TableServiceClient

    if settings.storage_connection:
        return TableServiceClient.from_connection_string(settings.storage_connection, **kwargs)
    return TableServiceClient(_account_url(settings, "table"), credential=_credential(), **kwargs)


def describe(settings: Any) -> str:
    """Where storage is, for messages (no secrets): the connection string's first part, or the account."""
    if settings.storage_connection:
        return settings.storage_connection.split(";")[0]
    return settings.storage_account or settings.storage_blob_uri or "(no storage configured)"
