"""The reference ``ChunkRecord.to_dict`` is held to, shared by ``tests/test_model.py`` and
``benchmarks/records_bench.py``: the dict ``dataclasses.asdict`` makes, its tuples as lists."""

from __future__ import annotations

import dataclasses

from chunking.model import ChunkRecord


def as_dataclass_dict(record: ChunkRecord) -> dict:
    """What ``to_dict`` returned when it was written with ``dataclasses.asdict``: a deep copy of every value,
    tuples as lists (JSON arrays)."""
    data = dataclasses.asdict(record)
    data["headings"] = list(record.headings)
    data["embedding"] = None if record.embedding is None else list(record.embedding)
    data["acl_users"], data["acl_groups"] = list(record.acl_users), list(record.acl_groups)
    data["metadata"] = dict(record.metadata)
    data["image_urls"] = list(record.image_urls)
    return data
