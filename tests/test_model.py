"""The data model's declarations agree: the document-level fields are one list for both indexes, and a chunk
record carries each of them as ``DocumentFields`` declares it (name, type and default)."""

from __future__ import annotations

import dataclasses

from chunking.model import DOCUMENT_FIELDS, SOURCE_FIELDS, ChunkRecord, DocumentFields


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
