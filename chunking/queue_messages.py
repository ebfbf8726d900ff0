"""Chunk-batch queue messages between stage 1 (parse + split) and stage 2 (embed + upsert).

A message is one JSON object (UTF-8, ``ensure_ascii=False``)::

    {"type": "chunk-batch", "schema": 1, "doc_id": "d…", "version": "…", "source": "a/b.pdf",
     "batch_no": 0, "batch_count": 3, "chunk_count": 41,
     "records": [ChunkRecord.to_dict() without "embedding", …]}          # inline
    {… same header …, "payload": "d…/<version>/0.json"}                  # claim check

Batches are packed greedily by bytes so that every message is ≤ ``max_message_bytes`` of raw JSON (49,152 by
default: 64 KiB after the host's base64). A batch whose records cannot fit even alone goes by claim check.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Sequence

from chunking.claim_check import PayloadStore
from chunking.model import ChunkRecord

__all__ = ["BatchMessage", "MessageError", "decode_message", "encode_batches", "load_records"]

_SCHEMA = 1
# Records per batch at most by default (setting BATCH_MAX_CHUNKS): keeps each stage-2 invocation short.
MAX_RECORDS_PER_BATCH = 64


class MessageError(ValueError):
    """A queue message is not a valid chunk-batch message; the message says why."""


@dataclass(frozen=True)
class BatchMessage:
    """A decoded chunk-batch message (records still inline or behind a claim check)."""

    doc_id: str
    version: str
    source: str
    batch_no: int
    batch_count: int
    chunk_count: int
    records: list[dict[str, Any]] | None
    payload: str | None
    keep_old_versions: bool = False


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _record_dict(record: ChunkRecord) -> dict[str, Any]:
    data = record.to_dict()
    data.pop("embedding", None)
    return data


def encode_batches(
    records: Sequence[ChunkRecord],
    *,
    max_message_bytes: int,
    payloads: PayloadStore,
    max_records: int = MAX_RECORDS_PER_BATCH,
    keep_old_versions: bool = False,
) -> list[str]:
    """Pack the records of one document version into queue messages, in ordinal order.

    Each returned string is ≤ *max_message_bytes* bytes of UTF-8. A record too large for a message on its own is
    sent as a one-record batch whose JSON is written to *payloads* (claim check). No records, no messages.
    *keep_old_versions* asks stage 2 not to delete the document's other versions when this one is complete.

    Raises:
        ValueError: *records* mix documents or versions.
    """
    if not records:
        return []
    doc, version = records[0].doc_id, records[0].version
    if any(r.doc_id != doc or r.version != version for r in records):
        raise ValueError("encode_batches takes the records of one document version")
    header = {"type": "chunk-batch", "schema": _SCHEMA, "doc_id": doc, "version": version,
              "source": records[0].source, "keep_old_versions": keep_old_versions}
    # A generous fixed allowance for the per-message header (numbers grow at most a few digits).
    header_bytes = len(_dumps(header).encode()) + 128
    budget = max_message_bytes - header_bytes
    groups: list[list[dict[str, Any]]] = []
    oversized: set[int] = set()
    current: list[dict[str, Any]] = []
    size = 2  # the brackets of the records list
    for record in records:
        item = _record_dict(record)
        item_bytes = len(_dumps(item).encode()) + 1
        if item_bytes > budget:
            if current:
                groups.append(current)
                current, size = [], 2
            oversized.add(len(groups))
            groups.append([item])
            continue
        if current and (size + item_bytes > budget or len(current) >= max_records):
            groups.append(current)
            current, size = [], 2
        current.append(item)
        size += item_bytes
    if current:
        groups.append(current)

    messages = []
    count = len(groups)
    for batch_no, group in enumerate(groups):
        message = {**header, "batch_no": batch_no, "batch_count": count, "chunk_count": len(records)}
        if batch_no in oversized:
            name = f"{doc}/{version}/{batch_no}.json"
            payloads.put(name, _dumps(group).encode("utf-8"))
            message["payload"] = name
        else:
            message["records"] = group
        text = _dumps(message)
        if len(text.encode("utf-8")) > max_message_bytes:  # cannot happen with the allowance above
            raise AssertionError(f"message {batch_no} of {doc} exceeds {max_message_bytes} bytes")
        messages.append(text)
    return messages


def decode_message(body: str | bytes) -> BatchMessage:
    """Parse one queue message body.

    Raises:
        MessageError: not JSON, not a chunk-batch message, or a field is missing.
    """
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise MessageError(f"queue message is not JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("type") != "chunk-batch":
        raise MessageError("queue message is not a chunk-batch message")
    if data.get("schema") != _SCHEMA:
        raise MessageError(f"unsupported chunk-batch schema {data.get('schema')!r}")
    try:
        return BatchMessage(
            doc_id=str(data["doc_id"]),
            version=str(data["version"]),
            source=str(data["source"]),
            batch_no=int(data["batch_no"]),
            batch_count=int(data["batch_count"]),
            chunk_count=int(data["chunk_count"]),
            records=data.get("records"),
            payload=data.get("payload"),
            keep_old_versions=bool(data.get("keep_old_versions", False)),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise MessageError(f"chunk-batch message lacks a valid field: {exc}") from None


def load_records(message: BatchMessage, payloads: PayloadStore) -> list[ChunkRecord]:
    """The records of *message*, fetching the claim-checked payload if there is one.

    Raises:
        PayloadMissingError: the claim-checked payload is gone.
    """
    items = message.records
    if items is None:
        if not message.payload:
            raise MessageError("chunk-batch message has neither records nor payload")
        items = json.loads(payloads.get(message.payload))
    return [ChunkRecord.from_dict(item) for item in items]
