"""Chunk-batch queue messages between stage 1 (parse + split) and stage 2 (embed + upsert).

A message is one JSON object (UTF-8, ``ensure_ascii=False``)::

    {"type": "chunk-batch", "schema": 1, "doc_id": "d…", "version": "…", "source": "a/b.pdf",
     "batch_no": 0, "batch_count": 3, "chunk_count": 41,
     "records": [ChunkRecord.to_dict() without "embedding", …]}          # inline
     (a record's "image_urls" only when it has some: docs/parsers.md#figure-images)
    {… same header …, "payload": "d…/<version>/0.json"}                  # claim check

Batches are packed greedily by bytes so that every message is ≤ ``max_message_bytes`` of raw JSON (49,152 by
default: 64 KiB after the host's base64). A batch whose records cannot fit even alone goes by claim check.
``batch_count`` and ``chunk_count`` are 0 in the batches of a long document that stage 1 sent before it knew
them (docs/architecture.md#long-documents); a message with ``"check": true`` and no records asks stage 2 to
complete the version once the ledger has the totals.

Two optional fields, absent from messages of older senders (whose decoding is unchanged): ``"trace"``, the W3C
trace context of the document version's trace (``{"traceparent": "00-…", "tracestate": "…"}``,
``chunking.telemetry.carrier``), and ``"uploaded_at"``, the blob's last modification (ISO 8601 UTC), from which
stage 2 measures upload-to-indexed latency.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from chunking.messages.envelope import CHUNK_BATCH, MessageError, open_envelope
from chunking.model import ChunkRecord
from chunking.storage.claim_check import PayloadStore

__all__ = ["BatchMessage", "BatchPacker", "Group", "decode_message", "decode_records", "encode_batches",
           "load_records"]

_SCHEMA = 1
# Records per batch at most by default (setting BATCH_MAX_CHUNKS): keeps each stage-2 invocation short.
MAX_RECORDS_PER_BATCH = 64


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
    check: bool = False  # a completion check: no records (``BatchPacker.check_message``)
    trace: dict[str, str] | None = None  # W3C trace context of the version's trace, if the sender traced it
    uploaded_at: str = ""  # the blob's last modification, ISO 8601 UTC ('' if unknown)

    @property
    def where(self) -> str:
        """``batch 3 of 10`` (1-based), or ``batch 3`` while the total was not known when it was sent."""
        if self.check:
            return "completion check"
        return f"batch {self.batch_no + 1}" + (f" of {self.batch_count}" if self.batch_count else "")


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _record_dict(record: ChunkRecord) -> dict[str, Any]:
    data = record.to_dict()
    data.pop("embedding", None)
    if not data["image_urls"]:  # most chunks hold no figure: their messages stay as they were
        del data["image_urls"]
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
    packer = BatchPacker(doc, version, records[0].source, max_message_bytes=max_message_bytes,
                         max_records=max_records, keep_old_versions=keep_old_versions)
    groups = [g for r in records for g in packer.add(r)] + packer.finish()
    return [packer.encode(group, batch_no, len(groups), len(records), payloads)
            for batch_no, group in enumerate(groups)]


@dataclass
class Group:
    """The records of one batch (as dicts), and whether they go by claim check."""

    items: list[dict[str, Any]]
    oversized: bool = False


class BatchPacker:
    """Packs the records of one document version into batches as they come, greedily by bytes (each message
    ≤ *max_message_bytes* of raw JSON, at most *max_records* records), so that stage 1 can send each batch as
    soon as it is full instead of holding the document's records."""

    def __init__(self, doc_id: str, version: str, source: str, *, max_message_bytes: int,
                 max_records: int = MAX_RECORDS_PER_BATCH, keep_old_versions: bool = False,
                 trace: dict[str, str] | None = None, uploaded_at: str | None = None) -> None:
        self.header = {"type": CHUNK_BATCH, "schema": _SCHEMA, "doc_id": doc_id, "version": version,
                       "source": source, "keep_old_versions": keep_old_versions}
        if trace:  # optional fields: only when known, so an untraced message is as before
            self.header["trace"] = dict(trace)
        if uploaded_at:
            self.header["uploaded_at"] = uploaded_at
        self.max_message_bytes = max_message_bytes
        self.max_records = max_records
        # A generous fixed allowance for the per-message header (numbers grow at most a few digits).
        self.budget = max_message_bytes - len(_dumps(self.header).encode()) - 128
        self._current: list[dict[str, Any]] = []
        self._size = 2  # the brackets of the records list

    def add(self, record: ChunkRecord) -> list[Group]:
        """Take one record; returns the batches it completed (zero, one, or two when it goes alone)."""
        item = _record_dict(record)
        item_bytes = len(_dumps(item).encode()) + 1
        done: list[Group] = []
        if item_bytes > self.budget:
            done = self.finish() + [Group([item], oversized=True)]
            return done
        if self._current and (self._size + item_bytes > self.budget or len(self._current) >= self.max_records):
            done = self.finish()
        self._current.append(item)
        self._size += item_bytes
        return done

    def finish(self) -> list[Group]:
        """The batch being filled, if any (the packer is empty afterwards)."""
        if not self._current:
            return []
        group = Group(self._current)
        self._current, self._size = [], 2
        return [group]

    def encode(self, group: Group, batch_no: int, batch_count: int, chunk_count: int,
               payloads: PayloadStore) -> str:
        """The message of batch *batch_no* (0-based). *batch_count* and *chunk_count* are the version's totals,
        or 0 when stage 1 sends the batch before it knows them (stage 2 then takes them from the ledger)."""
        doc, version = self.header["doc_id"], self.header["version"]
        message = {**self.header, "batch_no": batch_no, "batch_count": batch_count, "chunk_count": chunk_count}
        if group.oversized:
            name = f"{doc}/{version}/{batch_no}.json"
            payloads.put(name, _dumps(group.items).encode("utf-8"))
            message["payload"] = name
        else:
            message["records"] = group.items
        text = _dumps(message)
        if len(text.encode("utf-8")) > self.max_message_bytes:  # cannot happen with the allowance above
            raise AssertionError(f"message {batch_no} of {doc} exceeds {self.max_message_bytes} bytes")
        return text

    def check_message(self) -> str:
        """A message without records that asks stage 2 to complete the version if the ledger holds all of its
        batches: sent once stage 1 has recorded the totals, in case every batch was indexed before that."""
        return _dumps({**self.header, "batch_no": -1, "batch_count": 0, "chunk_count": 0, "check": True,
                       "records": []})


def decode_message(body: str | bytes | dict[str, Any]) -> BatchMessage:
    """Parse one queue message body (or its envelope already read: ``chunking.messages.envelope.read_envelope``),
    checking every part of it: the header's fields and types, and each inline record (``decode_records``), so
    that a message stage 2 accepts can be written to the index as it is.

    Raises:
        MessageError: not JSON, not a chunk-batch message, a header field missing or of the wrong type, neither
            records nor a payload (or both), or a record that is not a valid record of the header's version.
    """
    data = open_envelope(body, CHUNK_BATCH, _SCHEMA)
    try:
        message = BatchMessage(
            doc_id=_text(data, "doc_id"),
            version=_text(data, "version"),
            source=_text(data, "source"),
            batch_no=_whole(data, "batch_no", minimum=-1),
            batch_count=_whole(data, "batch_count"),
            chunk_count=_whole(data, "chunk_count"),
            records=data.get("records"),
            payload=data.get("payload"),
            keep_old_versions=_flag(data, "keep_old_versions"),
            check=_flag(data, "check"),
            trace=_trace(data.get("trace")),
            uploaded_at=str(data.get("uploaded_at") or ""),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise MessageError(f"chunk-batch message lacks a valid field: {exc}") from None
    if message.payload is not None and (not isinstance(message.payload, str) or not message.payload
                                        or message.records is not None):
        raise MessageError("chunk-batch message has an invalid payload name (or both records and a payload)")
    if message.records is None and message.payload is None:
        raise MessageError("chunk-batch message has neither records nor payload")
    if message.records is not None:
        decode_records(message.records, message)
    if message.check and (message.records != [] or message.batch_no != -1):
        raise MessageError("a completion-check message carries records or a batch number")
    if not message.check and (message.batch_no < 0 or message.records == []):
        raise MessageError("chunk-batch message has a negative batch_no or an empty record list")
    return message


def _trace(value: Any) -> dict[str, str] | None:
    """The ``"trace"`` field as a carrier of strings, or ``None`` (absent or malformed: the message is still
    processed, in a trace of its own)."""
    if not isinstance(value, dict):
        return None
    return {str(k): v for k, v in value.items() if isinstance(v, str)} or None


def load_records(message: BatchMessage, payloads: PayloadStore) -> list[ChunkRecord]:
    """The records of *message*, fetching the claim-checked payload if there is one.

    Raises:
        PayloadMissingError: the claim-checked payload is gone.
        MessageError: the payload is not JSON, or not a list of valid records of the message's version.
    """
    items = message.records
    if items is None:
        if not message.payload:
            raise MessageError("chunk-batch message has neither records nor payload")
        try:
            items = json.loads(payloads.get(message.payload))
        except (ValueError, UnicodeDecodeError) as exc:
            raise MessageError(f"claim-checked payload {message.payload} is not JSON: {exc}") from None
    records = decode_records(items, message)
    if not records:
        raise MessageError(f"claim-checked payload {message.payload} holds no records")
    return records


# The key alphabet of Azure AI Search (docs/architecture.md#platform-facts-and-their-sources; chunking.ids).
_KEY = re.compile(r"[A-Za-z0-9=-][A-Za-z0-9_=-]*")


def decode_records(items: Any, message: BatchMessage) -> list[ChunkRecord]:
    """The ``ChunkRecord``s of a batch's record list *items* (JSON values as read), each checked field by field
    against the record's declared types, its ``doc_id`` and ``version`` against *message*'s and its key against
    the index's key alphabet: what passes can be embedded and written without a ``TypeError`` later.

    Raises:
        MessageError: *items* is not a list, or an item is not a valid record of *message*'s version (the reason
            names the record's position and the field).
    """
    if not isinstance(items, list):
        raise MessageError(f"chunk-batch records are a {type(items).__name__}, not a list")
    out: list[ChunkRecord] = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise MessageError(f"chunk-batch record {i} is a {type(item).__name__}, not an object")
        problem = _record_problem(item)
        if problem:
            raise MessageError(f"chunk-batch record {i}: {problem}")
        try:
            record = ChunkRecord.from_dict(item)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:  # _record_problem should catch all
            raise MessageError(f"chunk-batch record {i}: {type(exc).__name__}: {exc}") from None
        if (record.doc_id, record.version) != (message.doc_id, message.version):
            raise MessageError(f"chunk-batch record {i} belongs to another document version than its message")
        out.append(record)
    return out


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


# What a record field may hold in a message (JSON as ``ChunkRecord.to_dict`` writes it); ``None`` is allowed
# where ``ChunkRecord.from_dict`` reads it as the field's empty value.
_RECORD_FIELDS: dict[str, Callable[[Any], bool]] = {
    "id": lambda v: isinstance(v, str) and _KEY.fullmatch(v) is not None,
    "doc_id": lambda v: isinstance(v, str) and bool(v), "version": lambda v: isinstance(v, str) and bool(v),
    "source": lambda v: isinstance(v, str), "sourcepage": lambda v: isinstance(v, str),
    "ordinal": lambda v: _is_int(v) and v >= 0,
    "page_start": _is_int, "page_end": _is_int, "char_start": _is_int, "char_end": _is_int,
    "content": lambda v: isinstance(v, str), "content_hash": lambda v: isinstance(v, str),
    "token_count": lambda v: _is_int(v) and v >= 0,
    "headings": lambda v: v is None or _is_str_list(v),
    "embedding": lambda v: v is None or (isinstance(v, list) and all(
        (isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)) for x in v)),
    "parent_id": lambda v: v is None or isinstance(v, str), "level": lambda v: _is_int(v) and v >= 0,
    "kind": lambda v: isinstance(v, str), "embedding_text": lambda v: isinstance(v, str),
    "embedding_hash": lambda v: isinstance(v, str), "has_vector": lambda v: isinstance(v, bool),
    "namespace": lambda v: isinstance(v, str),
    "title": lambda v: v is None or isinstance(v, str), "storage_url": lambda v: v is None or isinstance(v, str),
    "content_type": lambda v: v is None or isinstance(v, str),
    "last_modified": lambda v: v is None or isinstance(v, str),
    "size_bytes": lambda v: v is None or (_is_int(v) and v >= 0),
    "language": lambda v: v is None or isinstance(v, str),
    "acl_users": lambda v: v is None or _is_str_list(v), "acl_groups": lambda v: v is None or _is_str_list(v),
    "metadata": lambda v: v is None or (isinstance(v, dict) and all(isinstance(x, str) for x in v.values())),
    "image_urls": lambda v: v is None or _is_str_list(v),
}
_REQUIRED = tuple(f.name for f in dataclasses.fields(ChunkRecord)
                  if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING)


def _record_problem(item: dict[str, Any]) -> str:
    """What is wrong with one record object, ``""`` if nothing."""
    for name in _REQUIRED:
        if name not in item:
            return f"field {name!r} is missing"
    for name, valid in _RECORD_FIELDS.items():
        if name in item and not valid(item[name]):
            return f"field {name!r} has an invalid value of type {type(item[name]).__name__}"
    return ""


def _text(data: dict[str, Any], name: str) -> str:
    value = data[name]
    if not isinstance(value, str) or not value:
        raise ValueError(f"{name} is not a non-empty string")
    return value


def _whole(data: dict[str, Any], name: str, minimum: int = 0) -> int:
    value = data[name]
    if not _is_int(value) or value < minimum:
        raise ValueError(f"{name} is not an integer >= {minimum}")
    return value


def _flag(data: dict[str, Any], name: str) -> bool:
    value = data.get(name, False)
    if not isinstance(value, bool):
        raise ValueError(f"{name} is not a boolean")
    return value
