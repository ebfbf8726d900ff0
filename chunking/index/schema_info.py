"""What ``chunking status`` says about an index's schema: its version, what the next ``ensure()`` adds, and the
``METADATA_FIELDS`` it holds (docs/architecture.md#schema-versions)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SCHEMA_VERSION", "SchemaInfo"]

#: The schema version this code writes: 1 = chunk and strategy fields, 2 = + document fields.
SCHEMA_VERSION = 2


@dataclass(frozen=True)
class SchemaInfo:
    """An index's schema as found, without changing it.

    Attributes:
        backend: ``local`` or ``azure``; location: the file or ``endpoint/indexes/name``.
        exists: False when there is no index yet (``version`` is then 0).
        version: the schema version found; ``current``: the one this code writes (``SCHEMA_VERSION``).
        missing: fields the next ``ensure()`` adds (document fields, ``METADATA_FIELDS``), in order.
        metadata_fields: the ``METADATA_FIELDS`` fields present.
        records: records held, when cheap to know (``None`` otherwise).
    """

    backend: str
    location: str
    exists: bool
    version: int
    current: int = SCHEMA_VERSION
    missing: tuple[str, ...] = ()
    metadata_fields: tuple[str, ...] = ()
    records: int | None = None

    def describe(self) -> str:
        """One line for ``chunking status``, e.g. ``index: local .chunking/index.sqlite3, schema 2 (current),
        12 records``."""
        if not self.exists:
            return f"index: {self.backend} {self.location} not created yet (schema {self.current} on first ingest)"
        state = "current" if self.version >= self.current and not self.missing else (
            f"the next ingest adds {', '.join(self.missing)}" if self.missing else f"{self.current} available")
        parts = [f"index: {self.backend} {self.location}, schema {self.version} ({state})"]
        if self.metadata_fields:
            parts.append(f"metadata fields {', '.join(self.metadata_fields)}")
        if self.records is not None:
            parts.append(f"{self.records} records")
        return ", ".join(parts)

    def to_dict(self) -> dict:
        return {"backend": self.backend, "location": self.location, "exists": self.exists, "version": self.version,
                "current": self.current, "missing": list(self.missing), "metadata_fields": list(self.metadata_fields),
                "records": self.records}
