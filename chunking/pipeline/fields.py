"""Field updates: a change of a document's metadata, tags or access lists alone (same bytes, same version) is
applied to its stored chunks by updating those fields, without parsing, splitting or embedding anything
(docs/architecture.md#document-fields).

Stage 1 (or the reconcile sweep) notices that the ``SOURCE_FIELDS`` of an indexed version no longer hash to the
ledger's ``fields_hash`` and sends one message on the chunk-batch queue (``chunking.messages.fields``).
Stage 2 updates those fields of every key the ledger recorded for the version (``merge`` on Azure AI Search, an
``UPDATE`` locally) and records the hash. A message for a version that is no longer current is dropped: the
newer version's records carry the newer fields.
"""

from __future__ import annotations

import logging
from typing import Any

from chunking.documents.fields import settings_source_fields
from chunking.index.protocol import IndexWriter
from chunking.ledger import Ledger, LedgerEntry
from chunking.messages.fields import FieldsMessage, decode_fields_message, encode_fields_message
from chunking.model import SourceProperties
from chunking.storage.claim_check import PayloadStore

__all__ = ["apply_fields_body", "apply_fields_message", "fields_message_if_changed"]

log = logging.getLogger("chunking.pipeline.fields")


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


def apply_fields_body(body: str | bytes | dict[str, Any], *, index: IndexWriter, ledger: Ledger,
                      payloads: PayloadStore) -> tuple[FieldsMessage, int, str]:
    """Decode and apply one field-update message (or its envelope already read): ``(message, records updated,
    why dropped or "")``.

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
