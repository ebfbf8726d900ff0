"""The envelope every queue message shares: read once, its type picks the codec, and each codec decodes the
envelope as read the same as the message body."""

from __future__ import annotations

import json

import pytest

from chunking.messages.batches import decode_message
from chunking.messages.envelope import (
    CHUNK_BATCH,
    DOCUMENT_FIELDS,
    MessageError,
    message_type,
    open_envelope,
    read_envelope,
    type_of,
)
from chunking.messages.fields import decode_fields_message, encode_fields_message
from chunking.storage.claim_check import MemoryPayloadStore

BATCH = json.dumps({"type": CHUNK_BATCH, "schema": 1, "doc_id": "d1", "version": "v1", "source": "a.pdf",
                    "batch_no": -1, "batch_count": 0, "chunk_count": 0, "check": True, "records": []})


def test_the_type_is_read_from_the_object_not_its_text():
    assert [message_type(b) for b in (BATCH, '{"schema":1,"type":"document-fields"}', '"document-fields"',
                                      '[1]', '{"type": 3}', "not json")] == [
        CHUNK_BATCH, DOCUMENT_FIELDS, "", "", "", ""]
    assert type_of(read_envelope(BATCH)) == CHUNK_BATCH
    with pytest.raises(MessageError, match="queue message is not JSON"):
        read_envelope("not json")


def test_a_codec_decodes_the_read_envelope_as_it_decodes_the_body():
    assert decode_message(read_envelope(BATCH)) == decode_message(BATCH)
    payloads = MemoryPayloadStore()
    body = encode_fields_message(doc_id="d1", version="v1", source="a.pdf", fields_hash="h", fields={"title": "T"},
                                 max_message_bytes=49_152, payloads=payloads)
    assert decode_fields_message(read_envelope(body), payloads) == decode_fields_message(body, payloads)
    with pytest.raises(MessageError, match="queue message is not a chunk-batch message"):
        open_envelope(read_envelope(body), CHUNK_BATCH, 1)
    with pytest.raises(MessageError, match="unsupported document-fields schema 2"):
        open_envelope({"type": DOCUMENT_FIELDS, "schema": 2}, DOCUMENT_FIELDS, 1)
