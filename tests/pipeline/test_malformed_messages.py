"""A queue message that cannot be decoded into records of its version is dropped with its reason logged: it never
counts against the document, whatever part of it is malformed (header, record list, one record's field, the
claim-checked payload, the JSON itself). Hypothesis mutates real messages of a healthy document's version in
progress; no ledger entry, batch record or index key may change, and the real batches still complete it."""

from __future__ import annotations

import json
import logging
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunking.app import functions as handlers
from chunking.messages.batches import decode_message
from chunking.messages.envelope import MessageError
from chunking.pipeline.stage_two import run_stage_one, run_stage_two
from chunking.services import make_embedder, make_index, make_ledger
from chunking.settings import Settings
from chunking.storage.claim_check import MemoryPayloadStore

_V0 = b"The old text of the manual. It talks about pumps and valves. " * 30
_V1 = b"The new text of the manual. It talks about boilers and fans. " * 30

# What each record field holds in a message (ChunkRecord.to_dict); the mutations below put anything else there.
_RECORD_KINDS = {
    "id": "key", "doc_id": "str", "version": "str", "source": "str", "sourcepage": "str", "ordinal": "int",
    "page_start": "int", "page_end": "int", "char_start": "int", "char_end": "int", "content": "str",
    "content_hash": "str", "token_count": "int", "headings": "strs?", "parent_id": "str?", "level": "int",
    "kind": "str", "embedding_text": "str", "embedding_hash": "str", "has_vector": "bool", "namespace": "str",
    "title": "str?", "storage_url": "str?", "content_type": "str?", "last_modified": "str?", "size_bytes": "int?",
    "language": "str?", "acl_users": "strs?", "acl_groups": "strs?", "metadata": "dict?",
}
_REQUIRED = ("id", "doc_id", "version", "source", "sourcepage", "ordinal", "page_start", "page_end", "char_start",
             "char_end", "content", "content_hash", "token_count")
_HEADER_KINDS = {"doc_id": "str", "version": "str", "source": "str", "batch_no": "int", "batch_count": "int",
                 "chunk_count": "int", "keep_old_versions": "bool", "check": "bool", "type": "type",
                 "schema": "schema"}

_json = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=4)


def _fits(kind: str, value) -> bool:
    """Whether *value* is a valid value of *kind* (the test's own statement of the message format)."""
    optional = kind.endswith("?")
    if value is None:
        return optional
    kind = kind.rstrip("?")
    if kind in ("str", "key"):
        return isinstance(value, str) and (kind == "str" or (value != "" and all(
            c.isascii() and (c.isalnum() or c in "_-=") for c in value) and not value.startswith("_")))
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "strs":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if kind == "dict":
        return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
    if kind == "type":
        return value == "chunk-batch"
    return value == 1  # schema


def _wrong(kind: str):
    return (_json | st.just("a b/c")).filter(lambda v: not _fits(kind, v))


@st.composite
def _mutation(draw):
    """A function turning a message (as a dict) and its payload bytes into a malformed body and payload."""
    part = draw(st.sampled_from(["header", "drop header", "records", "record", "record field", "drop field",
                                 "other version", "not json", "payload", "payload record"]))
    if part == "header":
        name = draw(st.sampled_from(sorted(_HEADER_KINDS)))
        value = draw(_wrong(_HEADER_KINDS[name]).filter(lambda v: name != "doc_id" or v != ""))
        return part, lambda m, p: ({**m, name: value}, p)
    if part == "drop header":
        name = draw(st.sampled_from(["doc_id", "version", "source", "batch_no", "batch_count", "chunk_count",
                                     "type", "schema"]))
        return part, lambda m, p: ({k: v for k, v in m.items() if k != name}, p)
    if part == "records":
        value = draw(_json.filter(lambda v: not isinstance(v, list) or v == [] or not all(
            isinstance(x, dict) for x in v)))
        return part, lambda m, p: ({**m, "records": value}, p)
    at = draw(st.integers(0, 100))
    if part == "record":
        value = draw(_json.filter(lambda v: not isinstance(v, dict)))
        return part, lambda m, p: _at(m, p, at, lambda r: value)
    if part in ("record field", "payload record"):
        name = draw(st.sampled_from(sorted(_RECORD_KINDS)))
        value = draw(_wrong(_RECORD_KINDS[name]))
        change = lambda r: {**r, name: value}  # noqa: E731
        if part == "payload record":
            return part, lambda m, p: _in_payload(m, p, at, change)
        return part, lambda m, p: _at(m, p, at, change)
    if part == "drop field":
        name = draw(st.sampled_from(_REQUIRED))
        return part, lambda m, p: _at(m, p, at, lambda r: {k: v for k, v in r.items() if k != name})
    if part == "other version":
        name, value = draw(st.sampled_from(["doc_id", "version"])), draw(st.text(min_size=1, max_size=6))
        return part, lambda m, p: _at(m, p, at, lambda r: {**r, name: r[name] + value})
    if part == "not json":
        cut = draw(st.integers(1, 200))
        return part, lambda m, p: (json.dumps(m)[:-cut], p)
    blob = draw(st.sampled_from([b"", b"{", b"\xff\xfe", b"[]", b"{}", b'"x"', b"[1, 2]"]))
    return part, lambda m, p: ({k: v for k, v in m.items() if k != "records"} | {"payload": "d/p.json"}, blob)


def _at(message: dict, payload, at: int, change):
    records = list(message["records"])
    records[at % len(records)] = change(records[at % len(records)])
    return {**message, "records": records}, payload


def _in_payload(message: dict, payload, at: int, change):
    records = list(message["records"])
    records[at % len(records)] = change(records[at % len(records)])
    header = {k: v for k, v in message.items() if k != "records"} | {"payload": "d/p.json"}
    return header, json.dumps(records).encode()


def _snapshot(world) -> tuple:
    entries = sorted(json.dumps(vars(e), sort_keys=True, default=str) for e in world.ledger.entries())
    batches = sorted((b.version, b.batch_no, tuple(b.keys)) for b in world.ledger.batch_records(world.doc_id))
    return entries, batches, sorted(world.index.keys_of(world.doc_id).items())


class _World:
    def __init__(self, tmp_path) -> None:
        self.settings = Settings.from_env({"CHUNKING_STATE_DIR": str(tmp_path), "NAMESPACE": "tests",
                                           "SPLIT_MAX_TOKENS": "60", "BATCH_MAX_CHUNKS": "4"})
        self.ledger, self.payloads = make_ledger(self.settings), MemoryPayloadStore()
        self.index = make_index(self.settings)
        self.index.ensure()
        self.embedder = make_embedder(self.settings)
        self.batches: list[str] = []

    def stage_one(self, data: bytes) -> list[str]:
        self.batches.clear()
        result = run_stage_one(data, source="manual.txt", container="c", settings=self.settings,
                               payloads=self.payloads, ledger=self.ledger, send=self.batches.extend)
        self.doc_id = result.doc_id
        return list(self.batches)

    def stage_two(self, body):
        return run_stage_two(body, settings=self.settings, embedder=self.embedder, index=self.index,
                             payloads=self.payloads, ledger=self.ledger)


@pytest.fixture
def world(tmp_path):
    w = _World(tmp_path)
    for body in w.stage_one(_V0):
        w.stage_two(body)
    w.v1 = w.stage_one(_V1)  # the version in progress: queued, its batches not yet delivered
    assert len(w.v1) >= 2
    return w


def test_the_reported_messages_are_dropped_and_the_document_completes(world, monkeypatch, caplog):
    # A valid header with records [{"foo": "bar"}] or "notalist" raised TypeError / AttributeError, was retried
    # and poisoned, and marked the version failed.
    base = json.loads(world.v1[0])
    before = _snapshot(world)
    services = SimpleNamespace(settings=world.settings, embedder=world.embedder, index=world.index,
                               payloads=world.payloads, ledger=world.ledger, batches=None, jobs=None,
                               figures=None)
    monkeypatch.setattr(handlers, "services", lambda: services)
    with caplog.at_level(logging.ERROR, logger="chunking"):
        for records in ([{"foo": "bar"}], "notalist"):
            body = json.dumps({**base, "records": records})
            assert handlers.handle_batch(body) is None
            handlers.handle_batch_poison(body)  # even had it been poisoned, the document is not failed
    reasons = [r.getMessage() for r in caplog.records]
    assert reasons == [
        "dropped a malformed chunk-batch message: chunk-batch record 0: field 'id' is missing",
        "unreadable chunk-batch poison message: chunk-batch record 0: field 'id' is missing",
        "dropped a malformed chunk-batch message: chunk-batch records are a str, not a list",
        "unreadable chunk-batch poison message: chunk-batch records are a str, not a list",
    ]
    assert _snapshot(world) == before
    for body in world.v1:
        world.stage_two(body)
    entry = world.ledger.get(world.doc_id)
    assert (entry.status, entry.indexed_version, entry.error) == ("indexed", entry.version, "")


def test_malformed_messages_never_change_the_ledger_or_the_index(world):
    before = _snapshot(world)
    messages = [json.loads(body) for body in world.v1]

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(which=st.integers(0, len(messages) - 1), mutation=_mutation())
    def check(which, mutation):
        part, mutate = mutation
        body, payload = mutate(messages[which], None)
        world.payloads.delete_prefix("d/")
        if payload is not None:
            world.payloads.put("d/p.json", payload)
        text = body if isinstance(body, str) else json.dumps(body)
        with pytest.raises(MessageError):
            world.stage_two(text)
        assert _snapshot(world) == before, part

    check()
    for body in world.v1:  # the real batches still complete the version
        world.stage_two(body)
    entry = world.ledger.get(world.doc_id)
    assert (entry.status, entry.indexed_version) == ("indexed", entry.version)


def test_a_valid_message_decodes_and_the_check_message_is_strict(world):
    message = decode_message(world.v1[0])
    assert (message.batch_no, len(message.records)) == (0, 4)
    check = json.loads(world.v1[-1]) if json.loads(world.v1[-1]).get("check") else None
    header = {k: v for k, v in json.loads(world.v1[0]).items() if k != "records"}
    with pytest.raises(MessageError, match="completion-check message carries records"):
        decode_message(json.dumps({**header, "check": True, "records": json.loads(world.v1[0])["records"]}))
    with pytest.raises(MessageError, match="empty record list"):
        decode_message(json.dumps({**header, "records": []}))
    assert check is None or decode_message(json.dumps(check)).check


@pytest.mark.parametrize("change", [
    {"container": 3}, {"path": ["a"]}, {"force": "yes"}, {"keep_old_versions": 1}, {"reason": None},
    {"version": "v", "etag": "e", "range": "0-5"},
    {"version": "v", "etag": "e", "range": {"range_no": "1", "page_start": 0, "page_end": 5, "page_count": 9}},
    {"version": "v", "etag": "e", "range": {"range_no": 1, "page_start": 0, "page_end": 5, "page_count": 9,
                                            "header_keys": "abc"}},
])
def test_a_malformed_stage_one_job_is_refused_naming_the_field(change):
    from chunking.messages.jobs import decode_job

    body = {"type": "stage-one", "schema": 1, "container": "c", "path": "a.pdf", **change}
    with pytest.raises(MessageError, match="stage-1 job lacks a valid field"):
        decode_job(json.dumps(body))


@pytest.mark.parametrize("fields, reason", [
    ({"acl_users": "bob"}, "field 'acl_users' has an invalid value of type str"),
    ({"metadata": {"a": 1}}, "field 'metadata' has an invalid value of type dict"),
    ({"foo": "bar"}, "'foo' is not a document field"),
    ({}, "no fields"),
])
def test_a_malformed_field_update_changes_nothing(world, fields, reason):
    before = _snapshot(world)
    body = {"type": "document-fields", "schema": 1, "doc_id": world.doc_id, "version": world.ledger.get(
        world.doc_id).indexed_version, "source": "manual.txt", "fields_hash": "h2", "fields": fields}
    with pytest.raises(MessageError, match=reason):
        world.stage_two(json.dumps(body))
    assert _snapshot(world) == before
