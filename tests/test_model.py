"""The data model's declarations agree: the document-level fields are one list for both indexes, and a chunk
record carries each of them as ``DocumentFields`` declares it (name, type and default)."""

from __future__ import annotations

import dataclasses
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from chunking.model import DOCUMENT_FIELDS, SOURCE_FIELDS, ChunkRecord, DocumentFields
from tests.model_reference import as_dataclass_dict


def test_a_chunk_record_carries_the_document_fields_as_declared():
    record = {f.name: f for f in dataclasses.fields(ChunkRecord)}
    for field in dataclasses.fields(DocumentFields):
        assert field.name in record, field.name
        assert (record[field.name].type, record[field.name].default) == (field.type, field.default), field.name


def test_the_field_lists_follow_the_document_fields():
    declared = [f.name for f in dataclasses.fields(DocumentFields)]
    assert list(DOCUMENT_FIELDS) == [name for name in declared if name != "metadata"]
    assert set(SOURCE_FIELDS) < set(declared)
    assert DOCUMENT_FIELDS == ("title", "storage_url", "content_type", "last_modified", "size_bytes", "language",
                               "acl_users", "acl_groups")


# --- ChunkRecord.to_dict -----------------------------------------------------------------------------------


def test_to_dict_of_a_small_record_is_exact():
    record = ChunkRecord("d-0001", "d", "v1", "a.pdf", "a.pdf#page=2", 1, 1, 2, 10, 20, "text", "h", 3,
                         headings=("A", "B"), embedding=(0.5, -1.0), acl_groups=("g",),
                         metadata=(("team", "x"), ("year", "2024")))

    data = record.to_dict()

    assert list(data) == [f.name for f in dataclasses.fields(ChunkRecord)]
    assert data == {
        "id": "d-0001", "doc_id": "d", "version": "v1", "source": "a.pdf", "sourcepage": "a.pdf#page=2",
        "ordinal": 1, "page_start": 1, "page_end": 2, "char_start": 10, "char_end": 20, "content": "text",
        "content_hash": "h", "token_count": 3, "headings": ["A", "B"], "embedding": [0.5, -1.0],
        "parent_id": None, "level": 0, "kind": "text", "embedding_text": "", "embedding_hash": "",
        "has_vector": True, "namespace": "", "title": "", "storage_url": "", "content_type": "",
        "last_modified": None, "size_bytes": 0, "language": "", "acl_users": [], "acl_groups": ["g"],
        "metadata": {"team": "x", "year": "2024"}, "image_urls": [],
    }
    assert ChunkRecord.from_dict(data) == record


_texts = st.text(max_size=12)
_records = st.builds(
    ChunkRecord,
    id=_texts, doc_id=_texts, version=_texts, source=_texts, sourcepage=_texts,
    ordinal=st.integers(0, 10**6), page_start=st.integers(0, 999), page_end=st.integers(0, 999),
    char_start=st.integers(0, 10**7), char_end=st.integers(0, 10**7), content=st.text(max_size=60),
    content_hash=_texts, token_count=st.integers(0, 9999),
    headings=st.lists(_texts, max_size=4).map(tuple),
    embedding=st.none() | st.lists(st.floats(allow_nan=False), max_size=6).map(tuple),
    parent_id=st.none() | _texts, level=st.integers(0, 5), kind=st.sampled_from(["text", "proposition"]),
    embedding_text=_texts, embedding_hash=_texts, has_vector=st.booleans(), namespace=_texts, title=_texts,
    storage_url=_texts, content_type=_texts, last_modified=st.none() | _texts, size_bytes=st.integers(0, 2**40),
    language=_texts, acl_users=st.lists(_texts, max_size=3).map(tuple),
    acl_groups=st.lists(_texts, max_size=3).map(tuple),
    metadata=st.lists(st.tuples(_texts, _texts), max_size=4).map(tuple),
    image_urls=st.lists(_texts, max_size=3).map(tuple),
)


@settings(max_examples=300)
@given(_records)
def test_to_dict_equals_the_dataclass_conversion_with_its_keys_in_field_order(record):
    data = record.to_dict()

    assert data == as_dataclass_dict(record)
    assert list(data) == list(as_dataclass_dict(record))
    assert json.dumps(data) == json.dumps(as_dataclass_dict(record))  # the bytes a message carries
