"""Figure image stores: the PNG files of a document version's figures, which its chunks point to
(``ChunkRecord.image_urls``; docs/parsers.md#figure-images).

Names are ``<doc_id>/<version>/<sha256 of the PNG>.png``: a new version of a document stores its own images beside
the old version's (the old chunks keep pointing at existing files until they are deleted with their version), and
an image met twice in one version is written once. Two stores:

* ``BlobFigureStore``: blobs of one container (setting ``FIGURES_CONTAINER``), created on first write, each with
  the content type ``image/png``; a URL is the blob's URL without a SAS (reading it needs a role on the account,
  or a SAS the reader adds).
* ``LocalFigureStore``: files under a folder (``CHUNKING_STATE_DIR/figures``); a URL is the file's ``file://`` URL.

Lifecycle (callers in ``chunking.pipeline``): a version's images are deleted with its chunks when it is retired,
a document's when it is deleted (``delete_prefix``), and reconcile deletes those of versions the ledger no longer
wants once they are older than a grace period (``versions`` says when each version's newest image was written).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Protocol

from chunking.storage import blob_container, create_container, storage_error

__all__ = ["BlobFigureStore", "FigureStore", "LocalFigureStore", "figure_name"]

_FORMAT = "png"  # every image is stored as PNG


def figure_name(doc_id: str, version: str, png: bytes) -> str:
    """``<doc_id>/<version>/<sha256 hex of png>.png``, the name of a figure image in every store."""
    return f"{doc_id}/{version}/{hashlib.sha256(png).hexdigest()}.{_FORMAT}"


class FigureStore(Protocol):
    """Where figure images go. ``location`` names it (a container, or a folder) for messages."""

    location: str

    def put(self, doc_id: str, version: str, png: bytes) -> str:
        """Store *png* as ``figure_name(doc_id, version, png)`` unless it is there already; return its URL.

        Raises:
            StorageError: the store cannot be written.
        """

    def delete_prefix(self, prefix: str) -> int:
        """Delete every image whose name starts with *prefix* (``doc_id/`` or ``doc_id/version/``); return how
        many."""

    def versions(self) -> dict[tuple[str, str], dt.datetime]:
        """``(doc_id, version)`` → when its newest image was written (UTC), for every version holding images."""


class BlobFigureStore:
    """Figure images as blobs of one container (created on first write), via ``azure-storage-blob``.

    Args:
        storage: a storage connection string (``UseDevelopmentStorage=true`` works with Azurite) or a
            ``BlobServiceClient`` (``chunking.storage.blob_service``).
        container: the container name (setting ``FIGURES_CONTAINER``).
    """

    def __init__(self, storage: Any, container: str) -> None:
        self.location = container
        self._container = blob_container(storage, container)
        self._created = False

    def put(self, doc_id: str, version: str, png: bytes) -> str:
        from azure.core.exceptions import AzureError, ResourceExistsError
        from azure.storage.blob import ContentSettings

        name = figure_name(doc_id, version, png)
        blob = self._container.get_blob_client(name)
        if not self._created:
            create_container(self._container)
            self._created = True
        try:
            blob.upload_blob(png, overwrite=False, content_settings=ContentSettings(content_type="image/png"))
        except ResourceExistsError:
            pass  # the same image of the same version: written once
        except AzureError as exc:
            raise storage_error(exc, self._container, f"blob '{self.location}/{name}'") from None
        return blob.url.split("?")[0]

    def delete_prefix(self, prefix: str) -> int:
        from azure.core.exceptions import AzureError, ResourceNotFoundError

        count = 0
        try:
            for item in self._container.list_blobs(name_starts_with=prefix):
                try:
                    self._container.delete_blob(item.name)
                except ResourceNotFoundError:
                    continue  # deleted meanwhile by another cleanup
                count += 1
        except ResourceNotFoundError:
            return count  # no container yet: nothing was ever stored
        except AzureError as exc:
            raise storage_error(exc, self._container, f"container '{self.location}'") from None
        return count

    def versions(self) -> dict[tuple[str, str], dt.datetime]:
        from azure.core.exceptions import AzureError, ResourceNotFoundError

        found: dict[tuple[str, str], dt.datetime] = {}
        try:
            for item in self._container.list_blobs():
                key = _version_of(item.name)
                if key is not None:
                    moment = item.last_modified.astimezone(dt.timezone.utc)
                    found[key] = max(found.get(key, moment), moment)
        except ResourceNotFoundError:
            return {}
        except AzureError as exc:
            raise storage_error(exc, self._container, f"container '{self.location}'") from None
        return found


class LocalFigureStore:
    """Figure images as files under *folder* (created on first write): ``folder/<doc_id>/<version>/<sha>.png``."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.location = str(self.folder)

    def put(self, doc_id: str, version: str, png: bytes) -> str:
        path = self.folder / figure_name(doc_id, version, png)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".part")
            with os.fdopen(handle, "wb") as file:
                file.write(png)
            os.replace(temporary, path)  # whole or absent, even if two writers race
        return path.resolve().as_uri()

    def delete_prefix(self, prefix: str) -> int:
        target = self.folder / prefix.rstrip("/")
        if not target.is_dir() or not prefix.endswith("/"):
            return 0
        count = sum(1 for path in target.rglob(f"*.{_FORMAT}") if path.is_file())
        shutil.rmtree(target, ignore_errors=True)
        return count

    def versions(self) -> dict[tuple[str, str], dt.datetime]:
        found: dict[tuple[str, str], dt.datetime] = {}
        if not self.folder.is_dir():
            return found
        for path in self.folder.glob(f"*/*/*.{_FORMAT}"):
            key = (path.parent.parent.name, path.parent.name)
            moment = dt.datetime.fromtimestamp(path.stat().st_mtime, dt.timezone.utc)
            found[key] = max(found.get(key, moment), moment)
        return found


def _version_of(name: str) -> tuple[str, str] | None:
    """``(doc_id, version)`` of a figure image's blob name; ``None`` for a name not made by ``figure_name``."""
    parts = name.split("/")
    if len(parts) != 3 or not parts[2].endswith(f".{_FORMAT}"):
        return None
    return parts[0], parts[1]
