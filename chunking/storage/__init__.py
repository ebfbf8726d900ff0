"""Storage clients (blobs, queues, tables) from the app's storage settings: a connection string
(``AzureWebJobsStorage``, Azurite's ``UseDevelopmentStorage=true`` included) or, for identity-based connections,
the account name / service URIs (``AzureWebJobsStorage__accountName``, ``__blobServiceUri``,
``__queueServiceUri``, ``__tableServiceUri``) with ``DefaultAzureCredential`` (managed identity in Azure).

Identity-based connections need both the blob and the queue service
(docs/architecture.md#platform-facts-and-their-sources): set the account name, or every service URI the app uses.

May import: core, errors.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from chunking.errors import StorageError  # the one exception this adapter raises for a failed call

__all__ = [
    "BlobChangedError", "BlobFile", "QueueSender", "blob_container", "blob_service", "create_container", "create_queue",
    "download_to_file", "ensure_reachable", "queue_client", "queue_depth", "storage_error", "table_service",
]

# Roles an identity-based connection needs for every call this app makes (docs/deploy.md#pointing-it-at-azure).
_ROLES = "Storage Blob Data Owner, Storage Queue Data Contributor and Storage Table Data Contributor"


class BlobChangedError(RuntimeError):
    """The blob is no longer the one asked for: it was overwritten (its ETag changed) or deleted meanwhile."""


def storage_error(exc: Exception, client: Any, resource: str) -> StorageError:
    """A ``StorageError`` explaining *exc*, raised by a call of *client* (any storage SDK client) on *resource*
    (e.g. ``"queue 'chunk-batches'"``): not reachable, does not exist, access refused, or the service's reason."""
    from azure.core.exceptions import ClientAuthenticationError, HttpResponseError, ServiceRequestError

    url = str(getattr(client, "url", "") or "").split("?")[0].rstrip("/")
    where = f"storage account {getattr(client, 'account_name', None) or '?'} ({url})"
    reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    if isinstance(exc, ServiceRequestError):
        local = any(h in url for h in ("127.0.0.1", "localhost"))
        hint = "; is Azurite running? Start it with `make azurite`" if local else ""
        return StorageError(f"storage not reachable: {resource} at {url}: {reason}{hint}")
    code = getattr(exc, "error_code", None) or ""
    code = str(getattr(code, "value", code))  # the SDKs give a StorageErrorCode enum or a string
    status = getattr(exc, "status_code", None)
    if status == 404 or str(code).endswith("NotFound"):
        return StorageError(f"{resource} does not exist in {where}")
    if isinstance(exc, ClientAuthenticationError) or status == 403:
        return StorageError(f"{where} refused access to {resource}: {code or reason} (an identity-based connection "
                            f"needs the roles {_ROLES})")
    if isinstance(exc, HttpResponseError):
        return StorageError(f"{resource} in {where}: {code or status}: {reason}")
    return StorageError(f"{resource} in {where}: {type(exc).__name__}: {reason}")


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
    """Create the blob container *container* (a ``ContainerClient``) unless it exists.

    Raises:
        StorageError: the storage cannot be reached or refuses (the message names the container and account).
    """
    _create(container, container.create_container, f"container '{container.container_name}'")


def create_queue(queue: Any) -> None:
    """Create the queue *queue* (a ``QueueClient``) unless it exists.

    Raises:
        StorageError: the storage cannot be reached or refuses (the message names the queue and account).
    """
    _create(queue, queue.create_queue, f"queue '{queue.queue_name}'")


def queue_depth(settings: Any, queue: str) -> int:
    """The approximate number of messages in *queue*, visible or not (the ``x-ms-approximate-messages-count`` of
    the "Get Queue Metadata" REST operation: never lower than the real number, so 0 means empty); 0 when the queue
    does not exist yet.

    Raises:
        StorageError: the queue service cannot be reached or refuses.
    """
    from azure.core.exceptions import AzureError, ResourceNotFoundError

    client = queue_client(settings, queue)
    try:
        return int(client.get_queue_properties().approximate_message_count or 0)
    except ResourceNotFoundError:
        return 0
    except AzureError as exc:
        raise storage_error(exc, client, f"queue '{queue}'") from None


def _create(client: Any, create: Any, resource: str) -> None:
    from azure.core.exceptions import AzureError, ResourceExistsError

    try:
        create()
    except ResourceExistsError:
        pass
    except AzureError as exc:
        raise storage_error(exc, client, resource) from None


def ensure_reachable(settings: Any, *, container: str | None = None, table: str | None = None) -> None:
    """One call without retries to the blob service (creating *container* if missing) and/or the table service
    (creating *table* if missing), so that storage that is not running fails in seconds instead of after the
    SDK's retries (about half a minute).

    Raises:
        StorageError: not reachable, or refused (the message names the resource and the account).
    """
    quick = {"retry_total": 0, "connection_timeout": 5}
    if container:
        create_container(blob_service(settings, **quick).get_container_client(container))
    if table:
        from azure.core.exceptions import AzureError

        service = table_service(settings, **quick)
        try:
            service.create_table_if_not_exists(table)
        except AzureError as exc:
            raise storage_error(exc, service, f"ledger table '{table}'") from None


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



class QueueSender:
    """Sends text messages to one queue (a ``QueueClient`` from ``queue_client``, so base64-encoded as the queue
    trigger expects), creating the queue on first use."""

    def __init__(self, queue: Any) -> None:
        self.queue = queue
        self._created = False

    def send(self, messages: Sequence[str], visibility_timeout: int | None = None) -> None:
        """Send *messages* in order (invisible for *visibility_timeout* seconds, if given).

        Raises:
            StorageError: the queue cannot be created or written (the message names the queue and account).
        """
        from azure.core.exceptions import AzureError

        if not self._created:
            create_queue(self.queue)
            self._created = True
        try:
            for message in messages:
                if visibility_timeout:
                    self.queue.send_message(message, visibility_timeout=visibility_timeout)
                else:
                    self.queue.send_message(message)
        except AzureError as exc:
            raise storage_error(exc, self.queue, f"queue '{self.queue.queue_name}'") from None


#: Bytes per ranged read of a blob: the most of it held in memory at once while it is copied to a local file.
DOWNLOAD_RANGE_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class BlobFile:
    """A blob's bytes copied to a local file, with what was learned on the way.

    Attributes:
        path: the local file. size_bytes: its length. sha256: hex digest of the bytes. etag: the blob's ETag
            (every range was read under it, so the file is one version of the blob).
    """

    path: Path
    size_bytes: int
    sha256: str
    etag: str

    def read_bytes(self) -> bytes:
        return self.path.read_bytes()


def download_to_file(blob: Any, path: Path, *, etag: str = "", max_bytes: int | None = None) -> BlobFile:
    """Copy *blob* (a ``BlobClient``) to the local file *path* in ranges of ``DOWNLOAD_RANGE_BYTES``, each read
    under the blob's ETag (*etag* if given, else the one its first read returns), hashing as it goes. Memory: one
    range, whatever the blob's size.

    Returns:
        The ``BlobFile``; when the blob is larger than *max_bytes*, nothing is copied and ``path`` is left empty
        (``size_bytes`` says how large it is, ``sha256`` is ``""``).

    Raises:
        BlobChangedError: the blob does not exist, or its ETag is not (or no longer) *etag*.
        StorageError: storage not reachable or refusing (the message names the blob and the account).
    """
    from azure.core.exceptions import AzureError, ResourceModifiedError, ResourceNotFoundError

    what = f"blob '{blob.blob_name}' of container '{blob.container_name}'"
    digest, offset = hashlib.sha256(), 0
    try:
        with open(path, "wb") as out:
            stream = _first_range(blob, etag)
            size, etag = _blob_size(stream.properties), str(stream.properties.etag)
            if max_bytes is not None and size > max_bytes:
                return BlobFile(path, size, "", etag)
            while True:
                piece = stream.readall()
                out.write(piece)
                digest.update(piece)
                offset += len(piece)
                if offset >= size:
                    break
                if not piece:
                    raise BlobChangedError(f"{what} was truncated while it was read")
                stream = blob.download_blob(offset=offset, length=min(DOWNLOAD_RANGE_BYTES, size - offset),
                                            max_concurrency=1, **_unchanged(etag))
    except (ResourceModifiedError, ResourceNotFoundError):
        raise BlobChangedError(f"{what} was overwritten or deleted") from None
    except AzureError as exc:
        if getattr(exc, "status_code", None) == 412:
            raise BlobChangedError(f"{what} was overwritten") from None
        raise storage_error(exc, blob, what) from None
    return BlobFile(path, size, digest.hexdigest(), etag)


def _blob_size(properties: Any) -> int:
    """The whole blob's size from a ranged read's properties (``size`` is the range's: the total is after the
    ``/`` of ``content_range``, ``bytes 0-999/10496``)."""
    content_range = str(getattr(properties, "content_range", "") or "")
    total = content_range.rpartition("/")[2]
    return int(total) if total.isdigit() else int(properties.size)


def _unchanged(etag: str) -> dict:
    from azure.core import MatchConditions

    return {"etag": etag, "match_condition": MatchConditions.IfNotModified} if etag else {}


def _first_range(blob: Any, etag: str) -> Any:
    """The first read: the blob's properties (size, ETag) and up to one range of its bytes."""
    from azure.core.exceptions import HttpResponseError

    try:
        return blob.download_blob(offset=0, length=DOWNLOAD_RANGE_BYTES, max_concurrency=1, **_unchanged(etag))
    except HttpResponseError as exc:
        if getattr(exc, "status_code", None) != 416:  # 416: the blob is empty, it has no range to read
            raise
        return blob.download_blob(max_concurrency=1, **_unchanged(etag))
