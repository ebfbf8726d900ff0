"""Field updates: a change of a document's metadata, tags or access lists alone (same bytes, same version) is
applied to its stored chunks by updating those fields, without parsing, splitting or embedding anything
(docs/architecture.md#document-fields).

Stage 1 (or the reconcile sweep) notices that the ``SOURCE_FIELDS`` of an indexed version no longer hash to the
ledger's ``fields_hash`` and sends one message on the chunk-batch queue::

    {"type": "document-fields", "schema": 1, "doc_id": "d…", "version": "…", "source": "a/b.pdf",
     "fields_hash": "…", "fields": {"storage_url": …, "content_type": …, "last_modified": …,
                                    "acl_users": […], "acl_groups": […], "metadata": {"category": …}}}

Stage 2 updates those fields of every key the ledger recorded for the version (``merge`` on Azure AI Search, an
``UPDATE`` locally) and records the hash. A message for a version that is no longer current is dropped: the
newer version's records carry the newer fields.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from chunking.documents.fields import settings_source_fields
from chunking.index.protocol import IndexWriter
from chunking.ledger import Ledger, LedgerEntry
from chunking.messages.batches import MessageError
from chunking.model import SourceProperties
from chunking.storage.claim_check import PayloadStore

__all__ = ["FIELDS_MESSAGE", "FieldsMessage", "apply_fields_body", "apply_fields_message", "decode_fields_message",
           "encode_fields_message", "fields_message_if_changed", "is_fields_message"]

FIELDS_MESSAGE = "document-fields"
_SCHEMA = 1

log = logging.getLogger("chunking.pipeline.fields")


@dataclass(frozen=True)
class FieldsMessage:
    """A decoded field-update message; ``fields`` are the ``SOURCE_FIELDS`` values (``metadata`` a dict)."""

    doc_id: str
    version: str
    source: str
    fields_hash: str
    fields: dict[str, Any]


def encode_fields_message(*, doc_id: str, version: str, source: str, fields_hash: str, fields: dict[str, Any],
                          max_message_bytes: int, payloads: PayloadStore) -> str:
    """The queue message for a field update (≤ *max_message_bytes* bytes: long access lists go to *payloads* as
    a claim check, ``"payload": name``)."""
    message: dict[str, Any] = {"type": FIELDS_MESSAGE, "schema": _SCHEMA, "doc_id": doc_id, "version": version,
                               "source": source, "fields_hash": fields_hash, "fields": fields}
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    if len(text.encode("utf-8")) <= max_message_bytes:
        return text
    name = f"{doc_id}/{version}/fields-{fields_hash[:16]}.json"
    payloads.put(name, json.dumps(fields, ensure_ascii=False).encode("utf-8"))
    del message["fields"]
    message["payload"] = name
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"))


def is_fields_message(body: str | bytes) -> bool:
    """Whether *body* is a field-update message (cheap: no full parse of a chunk batch)."""
    head = body[:200] if isinstance(body, str) else body[:200].decode("utf-8", "replace")
    return f'"type":"{FIELDS_MESSAGE}"' in head.replace(" ", "")


def decode_fields_message(body: str | bytes, payloads: PayloadStore) -> FieldsMessage:
    """Parse a field-update message (reading a claim-checked payload).

    Raises:
        MessageError: not a field-update message of this schema, or a field is missing.
    """
    try:
        data = json.loads(body)
        if data.get("type") != FIELDS_MESSAGE or data.get("schema") != _SCHEMA:
            raise MessageError(f"not a {FIELDS_MESSAGE} message of schema {_SCHEMA}")
        fields = data["fields"] if "fields" in data else json.loads(payloads.get(data["payload"]))
        return FieldsMessage(str(data["doc_id"]), str(data["version"]), str(data["source"]),
                             str(data["fields_hash"]), dict(fields))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        if isinstance(exc, MessageError):
            raise
        raise MessageError(f"malformed {FIELDS_MESSAGE} message: {exc}") from None


def apply_fields_message(message: FieldsMessage, *, index: IndexWriter, ledger: Ledger) -> tuple[int, str]:
    """Update the fields of every stored chunk of the message's version; returns ``(records updated, why
    dropped or "")``.

    Keys come from the ledger's batch records of the version (the index is not asked: its queries lag); only a
    version with none recorded asks the index for its keys.

    Raises:
        IndexError_: the index refused the update (the queue retries the message).
    """
    entry = ledger.get(message.doc_id)
    if entry is None or not entry.is_current(message.version):
        return 0, "superseded"
    if entry.fields_hash == message.fields_hash:
        return 0, "unchanged"
    keys = [key for batch in ledger.batch_records(message.doc_id, message.version) for key in batch.keys]
    if not keys and entry.chunk_count:  # no batch records (forgotten, or a ledger older than them)
        keys = sorted(key for key, version in index.keys_of(message.doc_id).items() if version == message.version)
    updated = index.update_fields(keys, message.fields) if keys else 0
    ledger.record_fields(message.doc_id, message.source, message.version, message.fields_hash)
    log.info("updated the fields of %s version %s: %d records (%s)", message.source, message.version[:8], updated,
             ", ".join(sorted(message.fields)))
    return updated, ""


def apply_fields_body(body: str | bytes, *, index: IndexWriter, ledger: Ledger,
                      payloads: PayloadStore) -> tuple[FieldsMessage, int, str]:
    """Decode and apply one field-update message: ``(message, records updated, why dropped or "")``.

    Raises:
        MessageError: not a field-update message; IndexError_: the index refused the update.
    """
    message = decode_fields_message(body, payloads)
    updated, dropped = apply_fields_message(message, index=index, ledger=ledger)
    return message, updated, dropped


def fields_message_if_changed(entry: LedgerEntry, properties: SourceProperties | None, *, source: str, settings,
                              payloads: PayloadStore) -> str | None:
    """The field-update message for the indexed version of *entry* when *properties* give it other source fields
    than those the ledger recorded (``fields_hash``); ``None`` when they are the same or unknown."""
    if properties is None:
        return None
    fields = settings_source_fields(settings, properties, source)
    if fields.source_hash == entry.fields_hash:
        return None
    return encode_fields_message(doc_id=entry.doc_id, version=entry.indexed_version, source=source,
                                 fields_hash=fields.source_hash, fields=fields.source_values(),
                                 max_message_bytes=settings.max_message_bytes, payloads=payloads)
