"""The document-level fields every chunk record of a document carries (docs/architecture.md#document-fields):
title, storage URL, content type, last-modified time, size, language, the access lists, and the blob metadata or
index tags that ``METADATA_FIELDS`` maps to index fields.

Two kinds: ``title``, ``language`` and ``size_bytes`` follow from the bytes, so they only change with a new
version; the others (``SOURCE_FIELDS``) can change while the bytes stay the same (``Set Blob Metadata``, new tags,
a changed ACL). Their hash (``DocumentFields.source_hash``) is kept in the ledger, so that a change of those
alone is applied to the stored chunks by a field update, without parsing or embedding anything again.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import mimetypes
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from chunking.language import detect_language
from chunking.model import Page
from chunking.titles import document_title

__all__ = [
    "DocumentFields", "SOURCE_FIELDS", "SourceProperties", "acl_values", "configured_fields", "document_fields",
    "file_properties", "settings_source_fields",
    "iso_utc", "source_fields",
]

#: Fields that can change without the bytes changing (applied by a field update, not a new version).
SOURCE_FIELDS = ("storage_url", "content_type", "last_modified", "acl_users", "acl_groups", "metadata")


def iso_utc(moment: dt.datetime | None) -> str | None:
    """*moment* as ``YYYY-MM-DDTHH:MM:SSZ`` in UTC (a naive time counts as UTC); ``None`` stays ``None``."""
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return moment.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def acl_values(raw: str | None) -> tuple[str, ...]:
    """An access list written in one metadata value: ids separated by commas, semicolons or whitespace, sorted
    and without duplicates. Example: ``acl_values("bob, alice;bob")`` → ``("alice", "bob")``."""
    if not raw:
        return ()
    return tuple(sorted({v for v in raw.replace(";", ",").replace(",", " ").split() if v}))


@dataclass(frozen=True)
class SourceProperties:
    """What storage says about a source besides its bytes.

    Attributes:
        storage_url: the blob's URL (or a ``file://`` URL for a local file), ``""`` if unknown.
        content_type: the MIME type storage recorded (``""``: guessed from the name).
        last_modified: ISO 8601 UTC (``iso_utc``), ``None`` if unknown.
        size_bytes: the stored size, ``None`` if unknown (then the bytes read are counted).
        metadata: blob metadata (names compared case-insensitively), tags: blob index tags.
        acl_users, acl_groups: access lists read from elsewhere (ADLS Gen2 path ACLs); ``None`` to take them from
            the metadata.
    """

    storage_url: str = ""
    content_type: str = ""
    last_modified: str | None = None
    size_bytes: int | None = None
    metadata: Mapping[str, str] = field(default_factory=dict, hash=False)
    tags: Mapping[str, str] = field(default_factory=dict, hash=False)
    acl_users: tuple[str, ...] | None = None
    acl_groups: tuple[str, ...] | None = None


@dataclass(frozen=True)
class DocumentFields:
    """The document-level fields of one version, the same on each of its chunk records.

    ``metadata`` holds the ``METADATA_FIELDS`` values as ``(index field, value)`` pairs in setting order, only
    those the source has; ``last_modified`` is ISO 8601 UTC or ``None``.
    """

    title: str = ""
    storage_url: str = ""
    content_type: str = ""
    last_modified: str | None = None
    size_bytes: int = 0
    language: str = ""
    acl_users: tuple[str, ...] = ()
    acl_groups: tuple[str, ...] = ()
    metadata: tuple[tuple[str, str], ...] = ()

    def source_values(self) -> dict[str, object]:
        """The ``SOURCE_FIELDS`` as a JSON-ready dict (``metadata`` as a dict)."""
        return {"storage_url": self.storage_url, "content_type": self.content_type,
                "last_modified": self.last_modified, "acl_users": list(self.acl_users),
                "acl_groups": list(self.acl_groups), "metadata": dict(self.metadata)}

    @property
    def source_hash(self) -> str:
        """SHA-256 hex of ``source_values`` (canonical JSON): equal exactly when no source field changed."""
        text = json.dumps(self.source_values(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _lookup(values: Mapping[str, str], key: str) -> str | None:
    lowered = key.lower()
    for name, value in values.items():
        if name.lower() == lowered:
            return value
    return None


def source_fields(properties: SourceProperties, *, source: str, metadata_fields: Sequence[tuple[str, str]] = (),
                  acl_users_key: str = "acl_users", acl_groups_key: str = "acl_groups") -> dict[str, object]:
    """The ``SOURCE_FIELDS`` of a source from its *properties*: *metadata_fields* maps a metadata name or tag name
    to an index field (``[("department", "dept")]``; metadata first, then tags); the access lists come from
    ``properties.acl_users``/``acl_groups`` when read elsewhere, else from the metadata values named
    *acl_users_key* and *acl_groups_key* (``acl_values``). The content type falls back to a guess from *source*.
    """
    mapped = []
    for key, name in metadata_fields:
        value = _lookup(properties.metadata, key)
        value = _lookup(properties.tags, key) if value is None else value
        if value is not None:
            mapped.append((name, value))
    users = properties.acl_users
    groups = properties.acl_groups
    content_type = properties.content_type
    if not content_type or content_type == "application/octet-stream":
        content_type = mimetypes.guess_type(source.replace("\\", "/"))[0] or content_type
    return {
        "storage_url": properties.storage_url,
        "content_type": content_type,
        "last_modified": properties.last_modified,
        "acl_users": tuple(users) if users is not None else acl_values(_lookup(properties.metadata, acl_users_key)),
        "acl_groups": tuple(groups) if groups is not None else acl_values(_lookup(properties.metadata,
                                                                                  acl_groups_key)),
        "metadata": tuple(mapped),
    }


def document_fields(data: bytes, source: str, pages: Sequence[Page], properties: SourceProperties | None, *,
                    metadata_fields: Sequence[tuple[str, str]] = (), acl_users_key: str = "acl_users",
                    acl_groups_key: str = "acl_groups", declared_title: str | None = None) -> DocumentFields:
    """All the document fields of one version: ``title`` (``chunking.titles``; *declared_title*: the format's
    property, already read), ``language`` (``chunking.language``), ``size_bytes`` (stored size, else
    ``len(data)``) and the ``source_fields``."""
    properties = properties or SourceProperties()
    language, _ = detect_language(page.text for page in pages)
    size = properties.size_bytes if properties.size_bytes is not None else len(data)
    return DocumentFields(
        title=document_title(data, source, pages, declared_title), size_bytes=size, language=language,
        **source_fields(properties, source=source, metadata_fields=metadata_fields, acl_users_key=acl_users_key,
                        acl_groups_key=acl_groups_key),  # type: ignore[arg-type]
    )


def configured_fields(settings, data: bytes, source: str, pages: Sequence[Page],
                      properties: SourceProperties | None, declared_title: str | None = None) -> DocumentFields:
    """``document_fields`` with the mapping and metadata names of ``settings.metadata``."""
    meta = settings.metadata
    return document_fields(data, source, pages, properties, metadata_fields=meta.metadata_fields,
                           acl_users_key=meta.acl_users_key, acl_groups_key=meta.acl_groups_key,
                           declared_title=declared_title)


def settings_source_fields(settings, properties: SourceProperties, source: str) -> DocumentFields:
    """A ``DocumentFields`` holding only the ``source_fields`` of *properties* under ``settings.metadata`` (for
    ``source_values`` and ``source_hash``: the other fields stay at their defaults)."""
    meta = settings.metadata
    values = source_fields(properties, source=source, metadata_fields=meta.metadata_fields,
                           acl_users_key=meta.acl_users_key, acl_groups_key=meta.acl_groups_key)
    return DocumentFields(**values)  # type: ignore[arg-type]


def file_properties(path: Path) -> SourceProperties:
    """The properties of a local file: its ``file://`` URL, guessed type, modification time and size."""
    stat = path.stat()
    return SourceProperties(
        storage_url=path.resolve().as_uri(),
        content_type=mimetypes.guess_type(path.name)[0] or "",
        last_modified=iso_utc(dt.datetime.fromtimestamp(stat.st_mtime, dt.timezone.utc)),
        size_bytes=stat.st_size,
    )
