import json

import pytest

from chunking.ids import content_hash
from chunking.messages.batches import decode_message, encode_batches, load_records
from chunking.messages.envelope import MessageError
from chunking.model import ChunkRecord
from chunking.storage.claim_check import MemoryPayloadStore


def _record(ordinal: int, text: str, doc: str = "dabc", version: str = "v1") -> ChunkRecord:
    return ChunkRecord(
        id=f"{doc}-{version}-{ordinal:06d}", doc_id=doc, version=version, source="docs/a.pdf",
        sourcepage=f"docs/a.pdf#page={ordinal + 1}", ordinal=ordinal, page_start=ordinal, page_end=ordinal,
        char_start=ordinal * 10, char_end=ordinal * 10 + len(text), content=text, content_hash=content_hash(text),
        token_count=len(text) // 4, headings=("Intro",),
    )


def test_small_document_is_one_inline_message():
    payloads = MemoryPayloadStore()
    records = [_record(i, f"Sentence number {i}.") for i in range(3)]
    messages = encode_batches(records, max_message_bytes=49_152, payloads=payloads)
    assert len(messages) == 1
    msg = decode_message(messages[0])
    assert (msg.batch_no, msg.batch_count, msg.chunk_count, msg.payload) == (0, 1, 3, None)
    assert load_records(msg, payloads) == records


def test_batches_respect_byte_limit_and_order():
    payloads = MemoryPayloadStore()
    records = [_record(i, ("näive 漢字 text " * 60) + str(i)) for i in range(200)]
    messages = encode_batches(records, max_message_bytes=49_152, payloads=payloads)
    assert len(messages) > 1
    assert all(len(m.encode("utf-8")) <= 49_152 for m in messages)
    decoded = [decode_message(m) for m in messages]
    assert [m.batch_no for m in decoded] == list(range(len(messages)))
    assert {m.batch_count for m in decoded} == {len(messages)}
    roundtrip = [r for m in decoded for r in load_records(m, payloads)]
    assert roundtrip == records
    assert payloads._data == {}


def test_oversized_record_goes_by_claim_check():
    payloads = MemoryPayloadStore()
    big = _record(1, "x" * 60_000)
    records = [_record(0, "small one."), big, _record(2, "small two.")]
    messages = encode_batches(records, max_message_bytes=49_152, payloads=payloads)
    decoded = [decode_message(m) for m in messages]
    assert [len(m.records) if m.records is not None else None for m in decoded] == [1, None, 1]
    assert decoded[1].payload == "dabc/v1/1.json"
    assert all(len(m.encode()) <= 49_152 for m in messages)
    assert load_records(decoded[1], payloads) == [big]


def test_records_per_batch_are_capped():
    records = [_record(i, "short.") for i in range(130)]
    messages = encode_batches(records, max_message_bytes=49_152, payloads=MemoryPayloadStore(), max_records=64)
    assert [len(decode_message(m).records) for m in messages] == [64, 64, 2]


def test_mixed_versions_rejected():
    with pytest.raises(ValueError):
        encode_batches([_record(0, "a"), _record(1, "b", version="v2")], max_message_bytes=49_152,
                       payloads=MemoryPayloadStore())


@pytest.mark.parametrize(
    "body, reason",
    [(b"not json", "not JSON"), (json.dumps({"type": "other"}), "not a chunk-batch"),
     (json.dumps({"type": "chunk-batch", "schema": 1}), "lacks a valid field")],
)
def test_malformed_messages(body, reason):
    with pytest.raises(MessageError, match=reason):
        decode_message(body)
