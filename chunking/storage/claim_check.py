"""Claim-check payload stores: where a chunk batch too large for a queue message is parked.

A queue message holds at most 64 KiB, i.e. 49,152 bytes of raw JSON once the Functions host base64-encodes it
(docs/architecture.md#the-claim-check). A batch that cannot fit is written here and the message carries
only a pointer (the *claim check*).
"""

from __future__ import annotations

from typing import Any, Protocol

from chunking.storage import blob_container, create_container

__all__ = ["BlobPayloadStore", "MemoryPayloadStore", "PayloadMissingError", "PayloadStore"]


class PayloadMissingError(LookupError):
    """The payload a claim check points at does not exist (already cleaned up, or never written)."""


class PayloadStore(Protocol):
    """Named byte payloads. Names are ``/``-separated paths without a container."""

    location: str  # where payloads live, for pointers and messages (e.g. a container name)

    def put(self, name: str, data: bytes) -> None: ...

    def get(self, name: str) -> bytes:
        """Raises ``PayloadMissingError`` if *name* does not exist."""

    def delete_prefix(self, prefix: str) -> int:
        """Delete every payload whose name starts with *prefix*; return how many."""


class MemoryPayloadStore:
    """Payloads in a dict: for in-process runs (the CLI) and unit tests."""

    def __init__(self) -> None:
        self.location = "memory"
        self._data: dict[str, bytes] = {}

    def put(self, name: str, data: bytes) -> None:
        self._data[name] = bytes(data)

    def get(self, name: str) -> bytes:
        try:
            return self._data[name]
        except KeyError:
            raise PayloadMissingError(name) from None

    def delete_prefix(self, prefix: str) -> int:
        names = [n for n in self._data if n.startswith(prefix)]
        for n in names:
            del self._data[n]
        return len(names)


class BlobPayloadStore:
    """Payloads as blobs of one container (created on first write), via ``azure-storage-blob``.

    Args:
        storage: a storage connection string (``UseDevelopmentStorage=true`` works with Azurite) or a
            ``BlobServiceClient`` (see ``chunking.storage``).
        container: the container name (setting ``PAYLOAD_CONTAINER``).
    """

    def __init__(self, storage: Any, container: str) -> None:
        self.location = container
        self._container = blob_container(storage, container)
        self._created = False

    def put(self, name: str, data: bytes) -> None:
        if not self._created:
            create_container(self._container)
            self._created = True
        self._container.upload_blob(name, data, overwrite=True)

    def get(self, name: str) -> bytes:
        from azure.core.exceptions import ResourceNotFoundError

        try:
            return self._container.download_blob(name).readall()
        except ResourceNotFoundError:
            raise PayloadMissingError(f"{self.location}/{name}") from None

    def delete_prefix(self, prefix: str) -> int:
        from azure.core.exceptions import ResourceNotFoundError

        count = 0
        try:
            for item in self._container.list_blobs(name_starts_with=prefix):
                self._container.delete_blob(item.name)
                count += 1
        except ResourceNotFoundError:
            return count
        return count
