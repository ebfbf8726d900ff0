"""A blob's properties as ``SourceProperties`` (URL, content type, last-modified time, size, metadata, index
tags, and with ``ACL_SOURCE=adls`` the path ACL's readers), from one ``Get Blob Properties`` call, one ``Get Blob
Tags`` call when ``METADATA_FIELDS`` is set, and one ``getAccessControl`` call on the Data Lake endpoint for
``adls``; or from a container listing (``list_blobs(include=["metadata", "tags"])``) for the reconcile sweep.

Index tags are not available on accounts with a hierarchical namespace (ADLS Gen2: "Manage and find Azure Blob
data with blob index tags" on learn.microsoft.com): there the tags are read as none instead of failing.
"""

from __future__ import annotations

import logging
from typing import Any

from chunking.model import SourceProperties, iso_utc
from chunking.storage import _account_url, storage_error
from chunking.storage.adls_acl import path_access_lists

__all__ = ["listed_properties", "read_properties"]

log = logging.getLogger("chunking.storage.properties")
# Error codes meaning "this account has no blob index tags" (hierarchical namespace, or an emulator without them).
_NO_TAGS = {"FeatureNotSupportedForAccount", "BlobTagsNotSupportedForAccountType", "NotImplemented",
            "FeatureNotYetSupportedForHierarchicalNamespaceAccounts"}


def _plain_url(url: str) -> str:
    return url.split("?", 1)[0]  # never a SAS token


def _tags(blob_client: Any) -> dict[str, str]:
    from azure.core.exceptions import HttpResponseError

    try:
        return dict(blob_client.get_blob_tags())
    except HttpResponseError as exc:
        code = str(getattr(exc, "error_code", "") or "")
        if code in _NO_TAGS or exc.status_code in (409, 501):
            log.info("no index tags for %s: %s", _plain_url(blob_client.url), code or exc.status_code)
            return {}
        raise


def _adls_lists(settings: Any, container: str, path: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    from azure.storage.filedatalake import DataLakeFileClient

    url = settings.metadata.adls_account_url or _account_url(settings, "blob").replace(".blob.", ".dfs.")
    if settings.storage_connection and not settings.metadata.adls_account_url:
        client = DataLakeFileClient.from_connection_string(settings.storage_connection, container, path)
    else:
        from azure.identity import DefaultAzureCredential

        client = DataLakeFileClient(url, container, path, credential=DefaultAzureCredential())
    return path_access_lists(client)


def read_properties(settings: Any, container_client: Any, path: str) -> SourceProperties:
    """The properties of blob *path* in *container_client* (a ``ContainerClient``) for the document fields that
    *settings* ask for.

    Raises:
        StorageError: a call failed (the message names the blob and the account), except tags that the account
            does not support.
    """
    from azure.core.exceptions import AzureError

    blob = container_client.get_blob_client(path)
    what = f"properties of blob '{path}' in container '{container_client.container_name}'"
    try:
        props = blob.get_blob_properties()
        tags = _tags(blob) if settings.metadata.metadata_fields else {}
    except AzureError as exc:
        raise storage_error(exc, container_client, what) from None
    users = groups = None
    if settings.metadata.acl_source == "adls":
        users, groups = _adls_lists(settings, container_client.container_name, path)
    return _from_blob(props, _plain_url(blob.url), tags, users, groups, settings.metadata.acl_source)


def listed_properties(settings: Any, container_client: Any, item: Any) -> SourceProperties:
    """The properties of one item of ``container_client.list_blobs(include=["metadata", "tags"])`` (a
    ``BlobProperties``), with the ADLS ACL read for it when ``ACL_SOURCE=adls``."""
    url = _plain_url(container_client.get_blob_client(item.name).url)
    users = groups = None
    if settings.metadata.acl_source == "adls":
        users, groups = _adls_lists(settings, container_client.container_name, item.name)
    return _from_blob(item, url, dict(getattr(item, "tags", None) or {}), users, groups,
                      settings.metadata.acl_source)


def _from_blob(props: Any, url: str, tags: dict[str, str], users, groups, acl_source: str) -> SourceProperties:
    content = getattr(props, "content_settings", None)
    if acl_source == "none":
        users, groups = (), ()
    return SourceProperties(
        storage_url=url,
        content_type=(getattr(content, "content_type", None) or "") if content is not None else "",
        last_modified=iso_utc(getattr(props, "last_modified", None)),
        size_bytes=getattr(props, "size", None),
        metadata=dict(getattr(props, "metadata", None) or {}),
        tags=tags,
        acl_users=users,
        acl_groups=groups,
    )
