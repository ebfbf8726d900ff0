"""The claim-check store on a real blob service (Azurite)."""

import pytest

from chunking.storage.claim_check import BlobPayloadStore, PayloadMissingError

pytestmark = pytest.mark.integration


def test_blob_payload_store_roundtrip(azurite):
    store = BlobPayloadStore(azurite.connection_string, "payloads-unit")
    store.put("d1/v1/0.json", b'[{"a": 1}]')
    store.put("d1/v1/1.json", b"[]")
    store.put("d1/v2/0.json", b"[]")
    assert store.get("d1/v1/0.json") == b'[{"a": 1}]'
    assert store.delete_prefix("d1/v1/") == 2
    with pytest.raises(PayloadMissingError, match="payloads-unit/d1/v1/0.json"):
        store.get("d1/v1/0.json")
    assert store.get("d1/v2/0.json") == b"[]"
    assert BlobPayloadStore(azurite.connection_string, "never-created").delete_prefix("x/") == 0
