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
        fields = data["fields"] if "fields" in data else json.loads(payloads.get(_name(data["payload"])))
        message = FieldsMessage(_name(data["doc_id"]), _name(data["version"]), _name(data["source"]),
                                _name(data["fields_hash"]), dict(fields))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise MessageError(f"malformed {DOCUMENT_FIELDS} message: {exc}") from None
    problem = _fields_problem(message.fields)
    if problem:
        raise MessageError(f"malformed {DOCUMENT_FIELDS} message: {problem}")
    return message


def _name(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError("an id, version, source, hash or payload name is not a non-empty string")
    return value


def _is_str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


# What each of the ``DocumentFields`` may hold in a message (``DocumentFields.source_values``, JSON).
_FIELD_VALUES = {
    "title": lambda v: isinstance(v, str), "language": lambda v: isinstance(v, str),
    "size_bytes": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
    "storage_url": lambda v: isinstance(v, str), "content_type": lambda v: isinstance(v, str),
    "last_modified": lambda v: v is None or isinstance(v, str),
    "acl_users": _is_str_list, "acl_groups": _is_str_list,
    "metadata": lambda v: isinstance(v, dict) and all(isinstance(x, str) for x in v.values()),
}


def _fields_problem(fields: dict[str, Any]) -> str:
    """What is wrong with the ``fields`` of a field update (``""``: nothing): every name one of the
    ``DocumentFields``, every value of its type."""
    if not fields:
        return "no fields"
    for name, value in fields.items():
        valid = _FIELD_VALUES.get(name)
        if valid is None:
            return f"{name!r} is not a document field"
        if not valid(value):
            return f"field {name!r} has an invalid value of type {type(value).__name__}"
    return ""
