"""AzureSearchIndex writes against the fake service (``tests/index/search_fakes.py``): batches by count and by
JSON size, per-document failures, retries with back-off and Retry-After, one action per key, deletes."""

from __future__ import annotations

import pytest
from azure.core.exceptions import ServiceRequestError

from chunking.errors import IndexError_
from chunking.index.azure import MAX_BATCH_BYTES, batches_by_size
from tests.index.search_fakes import Sent, make, ok_for_all, record


def test_upsert_batches_by_1000_documents():
    index, service, sleeps = make(ok_for_all)
    index.upsert([record(i) for i in range(2500)])
    batches = service.to("/docs/search.index")
    assert [len(s.body["value"]) for s in batches] == [1000, 1000, 500]
    first = batches[0].body["value"][0]
    assert first["@search.action"] == "mergeOrUpload"
    assert first["id"] == "d-000000" and first["headings"] == ["Install", "Linux"] and first["embedding"] == [0.5] * 4
    assert [a["id"] for s in batches for a in s.body["value"]] == [f"d-{i:06d}" for i in range(2500)]
    assert sleeps == []


def test_upsert_batches_by_16_mb_of_json_counting_escaped_characters():
    # "é" is sent as the 6-byte JSON escape \u00e9: 300,000 of them make a 1.8 MB document.
    records = [record(i, content="é" * 300_000) for i in range(20)]
    index, service, _ = make(ok_for_all)
    index.upsert(records)
    batches = service.to("/docs/search.index")
    assert [len(s.body["value"]) for s in batches] == [8, 8, 4]
    assert all(s.size <= MAX_BATCH_BYTES for s in batches)
    # Maximal: one more document would have broken the limit.
    assert batches[0].size + 2 + (batches[1].size - len('{"value": []}')) // 8 > MAX_BATCH_BYTES


def test_batches_by_size_predicts_the_sdk_body_exactly():
    docs = [record(i, content='naïve 東京 "quoted" ' * (i + 1)).to_dict() for i in range(5)]
    index, service, _ = make(ok_for_all)
    index._index_all("mergeOrUpload", docs)
    (sent,) = service.to("/docs/search.index")
    (one_batch,) = batches_by_size(docs, "mergeOrUpload", max_bytes=sent.size)
    assert len(one_batch) == 5
    assert len(batches_by_size(docs, "mergeOrUpload", max_bytes=sent.size - 1)) == 2


def test_a_document_too_big_for_any_request_is_refused_by_key():
    index, service, _ = make(ok_for_all, max_batch_bytes=1000)
    with pytest.raises(IndexError_, match="'d-000001'"):
        index.upsert([record(0), record(1, content="x" * 2000)])
    assert service.sent == []


def test_failed_keys_of_a_207_are_retried_alone():
    def handler(sent: Sent) -> tuple:
        results = [{"key": a["id"], "status": True, "statusCode": 201} for a in sent.body["value"]]
        if len(service.sent) == 1:
            results[1] = {"key": "d-000001", "status": False, "statusCode": 503, "errorMessage": "Service busy"}
            return 207, {"value": results}
        return 200, {"value": results}

    index, service, sleeps = make(handler)
    index.upsert([record(0), record(1), record(2)])
    assert [[a["id"] for a in s.body["value"]] for s in service.sent] == [
        ["d-000000", "d-000001", "d-000002"],
        ["d-000001"],
    ]
    assert len(sleeps) == 1 and 0.5 <= sleeps[0] <= 1.0  # first back-off: 1 s with equal jitter


def test_permanent_per_document_failure_raises_with_key_and_error():
    def handler(sent: Sent) -> tuple:
        return 207, {
            "value": [
                {"key": "d-000000", "status": True, "statusCode": 200},
                {"key": "d-000001", "status": False, "statusCode": 400, "errorMessage": "Invalid document key"},
            ]
        }

    index, service, sleeps = make(handler)
    with pytest.raises(IndexError_, match=r"d-000001: HTTP 400: Invalid document key"):
        index.upsert([record(0), record(1)])
    assert len(service.sent) == 1 and sleeps == []


def test_transient_failures_give_up_after_max_attempts_with_exponential_backoff():
    def handler(sent: Sent) -> tuple:
        return 207, {"value": [{"key": "d-000000", "status": False, "statusCode": 422, "errorMessage": "unavailable"}]}

    index, service, sleeps = make(handler, max_attempts=4, backoff_s=1.0, max_backoff_s=3.0)
    with pytest.raises(IndexError_, match="d-000000: HTTP 422: unavailable .still failing after 4 attempts"):
        index.upsert([record(0)])
    assert len(service.sent) == 4
    ceilings = [1.0, 2.0, 3.0]  # 1·2^attempt, capped at 3
    assert len(sleeps) == 3 and all(c / 2 <= s <= c for s, c in zip(sleeps, ceilings))


def test_a_throttled_request_honours_retry_after_ms():
    def handler(sent: Sent) -> tuple:
        if len(service.sent) == 1:
            return 429, {"error": {"code": "Throttled", "message": "slow down"}}, {"retry-after-ms": "250"}
        return ok_for_all(sent)

    index, service, sleeps = make(handler)
    index.upsert([record(0)])
    assert len(service.sent) == 2 and sleeps == [0.25]


def test_a_dropped_connection_is_retried_and_a_persistent_one_reported():
    def handler(sent: Sent) -> tuple:
        if len(service.sent) == 1:
            raise ServiceRequestError("connection refused")
        return ok_for_all(sent)

    index, service, sleeps = make(handler)
    index.upsert([record(0)])
    assert len(service.sent) == 2 and len(sleeps) == 1

    def down(sent: Sent) -> tuple:
        raise ServiceRequestError("connection refused")

    index, service, sleeps = make(down, max_attempts=3)
    with pytest.raises(IndexError_, match="connection refused"):
        index.count()
    assert len(service.sent) == 3 and len(sleeps) == 2


def test_a_retry_after_beyond_the_limit_fails_at_once():
    index, service, sleeps = make(lambda sent: (429, {"error": {"message": "quota"}}, {"Retry-After": "600"}))
    with pytest.raises(IndexError_, match="retry after 600 s"):
        index.upsert([record(0)])
    assert len(service.sent) == 1 and sleeps == []


def test_upsert_sends_one_action_per_key_the_last_record_winning():
    index, service, _ = make(ok_for_all)
    index.upsert([record(0, "old"), record(1), record(0, "new")])
    assert [(a["id"], a["content"]) for a in service.sent[0].body["value"]] == [
        ("d-000000", "new"),
        ("d-000001", "chunk 1"),
    ]


def test_upsert_refuses_records_without_a_vector_of_the_index_dimension():
    index, service, _ = make(ok_for_all, dims=8)
    with pytest.raises(IndexError_, match="8-dimensional embedding: d-000000"):
        index.upsert([record(0, dims=4)])
    assert service.sent == []


def test_delete_sends_unique_keys_in_delete_actions():
    index, service, _ = make(ok_for_all)
    index.delete(["d-000001", "d-000002", "d-000001"])
    (sent,) = service.sent
    assert sent.body == {
        "value": [{"@search.action": "delete", "id": "d-000001"}, {"@search.action": "delete", "id": "d-000002"}]
    }
    index.delete([])
    assert len(service.sent) == 1
