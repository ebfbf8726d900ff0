"""The reconcile sweep for document fields: storage raises no event when only a blob's metadata, tags or ACL
change (Event Grid's blob events are ``BlobCreated``, ``BlobDeleted`` and tier or rename changes: "Azure Blob
Storage as an Event Grid source" on learn.microsoft.com), so the reconcile timer lists the documents container
with its metadata and sends a field update (``chunking.pipeline.fields``) for each indexed document whose fields no
longer hash to what the ledger recorded. Nothing is downloaded, parsed or embedded.
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from chunking.formats import format_of
from chunking.ids import doc_id as make_doc_id
from chunking.ledger import Ledger
from chunking.pipeline.fields import fields_message_if_changed
from chunking.pipeline.members import member_field_updates
from chunking.storage import storage_error
from chunking.storage.claim_check import PayloadStore
from chunking.storage.properties import listed_properties

__all__ = ["refresh_fields"]

log = logging.getLogger("chunking.pipeline.field_sweep")


def _listing(container_client: Any, with_tags: bool) -> list[Any]:
    from azure.core.exceptions import AzureError, HttpResponseError

    try:
        try:
            return list(container_client.list_blobs(include=["metadata", "tags"] if with_tags else ["metadata"]))
        except HttpResponseError:
            if not with_tags:
                raise
            # Accounts with a hierarchical namespace have no index tags: list without them.
            return list(container_client.list_blobs(include=["metadata"]))
    except AzureError as exc:
        raise storage_error(exc, container_client, f"container '{container_client.container_name}'") from None


def refresh_fields(container_client: Any, *, settings: Any, ledger: Ledger, payloads: PayloadStore,
                   send: Callable[[list[str]], None]) -> int:
    """Send a field update for every indexed document of *container_client* (a ``ContainerClient`` of the
    documents container) whose metadata, tags or access lists changed; returns how many were sent.

    Raises:
        StorageError: the container cannot be listed, or (``ACL_SOURCE=adls``) an ACL cannot be read.
    """
    container = container_client.container_name
    indexed = {e.doc_id: e for e in ledger.entries() if e.is_indexed and e.indexed_version == e.version}
    sent = 0
    for item in _listing(container_client, bool(settings.metadata.metadata_fields)):
        entry = indexed.get(make_doc_id(container, item.name))
        if entry is None:
            continue
        properties = listed_properties(settings, container_client, item)
        message = fields_message_if_changed(entry, properties, source=item.name, settings=settings,
                                            payloads=payloads)
        if message is not None:
            send([message])
            sent += 1
        if (fmt := format_of(item.name)) is not None and fmt.members:  # its members carry its fields too
            updates = member_field_updates(entry.doc_id, entry.indexed_version, container=container, ledger=ledger,
                                           properties=properties, settings=settings, payloads=payloads)
            if updates:
                send(updates)
                sent += len(updates)
    if sent:
        log.info("field sweep: %d documents of %s have new metadata or access lists", sent, container)
    return sent
