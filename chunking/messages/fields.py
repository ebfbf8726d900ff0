"""Field-update messages on the chunk-batch queue: a change of a document's metadata, tags or access lists alone
(same bytes, same version), for stage 2 to apply to the stored chunks (``chunking.pipeline.fields``;
docs/architecture.md#document-fields)::

    {"type": "document-fields", "schema": 1, "doc_id": "d…", "version": "…", "source": "a/b.pdf",
     "fields_hash": "…", "fields": {"storage_url": …, "content_type": …, "last_modified": …,
                                    "acl_users": […], "acl_groups": […], "metadata": {"category": …}}}

Long access lists go behind a claim check (``"payload": name`` instead of ``"fields"``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from chunking.messages.envelope import DOCUMENT_FIELDS, MessageError, message_type, open_envelope
from chunking.storage.claim_check import PayloadStore

__all__ = ["FieldsMessage", "decode_fields_message", "encode_fields_message", "is_fields_message"]

_SCHEMA = 1


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
    message: dict[str, Any] = {"type": DOCUMENT_FIELDS, "schema": _SCHEMA, "doc_id": doc_id, "version": version,
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
    """Whether *body* is a field-update message (its envelope's ``"type"``)."""
    return message_type(body) == DOCUMENT_FIELDS


def decode_fields_message(body: str | bytes | dict[str, Any], payloads: PayloadStore) -> FieldsMessage:
    """Parse a field-update message, or its envelope already read (reading a claim-checked payload).

    Raises:
        MessageError: not a field-update message of this schema, or a field is missing.
    """
    data = open_envelope(body, DOCUMENT_FIELDS, _SCHEMA)
    try:
        fields = data["fields"] if "fields" in data else json.loads(payloads.get(data["payload"]))
        return FieldsMessage(str(data["doc_id"]), str(data["version"]), str(data["source"]),
                             str(data["fields_hash"]), dict(fields))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise MessageError(f"malformed {DOCUMENT_FIELDS} message: {exc}") from None
