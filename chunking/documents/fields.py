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
from pathlib import Path
from typing import Mapping, Sequence

from chunking.documents.language import detect_language
from chunking.documents.titles import document_title
from chunking.formats import content_type_of
from chunking.model import DocumentFields, Page, SourceProperties, acl_values, iso_utc

__all__ = ["configured_fields", "document_fields", "file_properties", "settings_source_fields", "source_fields"]

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
        content_type = content_type_of(source) or content_type
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
    """All the document fields of one version: ``title`` (``chunking.documents.titles``; *declared_title*: the format's
    property, already read), ``language`` (``chunking.documents.language``), ``size_bytes`` (stored size, else
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
        content_type=content_type_of(path.name),
        last_modified=iso_utc(dt.datetime.fromtimestamp(stat.st_mtime, dt.timezone.utc)),
        size_bytes=stat.st_size,
    )
