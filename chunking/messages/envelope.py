"""The envelope every queue message of ours shares: one JSON object whose ``"type"`` names its codec and whose
``"schema"`` its version, so a consumer tells the kinds apart by reading the object, never by searching its text.

Types: ``chunk-batch`` (``chunking.messages.batches``), ``document-fields`` (``chunking.messages.fields``), both
on the chunk-batch queue, and ``stage-one`` (``chunking.messages.jobs``) on the stage-1 job queue.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["CHUNK_BATCH", "DOCUMENT_FIELDS", "STAGE_ONE_JOB", "MessageError", "message_type", "open_envelope",
           "read_envelope", "type_of"]

CHUNK_BATCH = "chunk-batch"
DOCUMENT_FIELDS = "document-fields"
STAGE_ONE_JOB = "stage-one"


class MessageError(ValueError):
    """A queue message is not a valid message of the kind expected; the message says why."""


def read_envelope(body: str | bytes) -> Any:
    """The JSON value of the message *body*, read once so that a consumer can tell its type (``type_of``) and
    hand it to that codec's decoder, which accepts it in place of the body.

    Raises:
        MessageError: *body* is not JSON.
    """
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise MessageError(f"queue message is not JSON: {exc}") from None


def type_of(data: Any) -> str:
    """The ``"type"`` of a read envelope; ``""`` when it is not a JSON object with a string type (its codec's
    decoder then says what is wrong)."""
    kind = data.get("type") if isinstance(data, dict) else None
    return kind if isinstance(kind, str) else ""


def message_type(body: str | bytes) -> str:
    """The ``"type"`` of the message *body* (``type_of``); ``""`` when it is not JSON either."""
    try:
        return type_of(read_envelope(body))
    except MessageError:
        return ""


def open_envelope(body: str | bytes | dict[str, Any], kind: str, schema: int) -> dict[str, Any]:
    """The JSON object of a message of type *kind* and schema *schema*; *body* may be the message or its
    envelope already read (``read_envelope``).

    Raises:
        MessageError: not JSON, not an object of type *kind* (``queue message is not a chunk-batch message``), or
            of another schema.
    """
    data = body if isinstance(body, dict) else read_envelope(body)
    if type_of(data) != kind:
        raise MessageError(f"queue message is not a {kind} message")
    if data.get("schema") != schema:
        raise MessageError(f"unsupported {kind} schema {data.get('schema')!r}")
    return data
