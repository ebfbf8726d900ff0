"""Document fields and access control: which blob metadata and index tags become index fields, where the access
lists come from, and what a document without one shows (docs/settings.md#document-fields-and-access-control)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from .values import SettingsError, parsed_value, str_value

__all__ = ["ACL_SOURCES", "MetadataSettings", "RESERVED_FIELDS", "metadata_field_map"]

ACL_SOURCES = ("metadata", "adls", "none")
_ACL_DEFAULTS = ("public", "deny")
# An index field name (Azure AI Search: letters, digits, underscores, a letter first, at most 128 characters).
_FIELD_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,127}")
# The index's own fields (``ChunkRecord``'s, checked by tests/documents/test_fields.py): the settings import no
# other module of the package.
RESERVED_FIELDS = frozenset({
    "id", "doc_id", "version", "source", "sourcepage", "ordinal", "page_start", "page_end", "char_start", "char_end",
    "content", "content_hash", "token_count", "headings", "embedding", "parent_id", "level", "kind",
    "embedding_text", "embedding_hash", "has_vector", "namespace", "title", "storage_url", "content_type",
    "last_modified", "size_bytes", "language", "acl_users", "acl_groups", "metadata", "image_urls",
})


def metadata_field_map(raw: str) -> tuple[tuple[str, str], ...]:
    """Parse ``METADATA_FIELDS``: ``name`` or ``name:field`` items, comma-separated, a metadata or tag name mapped
    to an index field (the same name when no field is given).

    Example: ``metadata_field_map("category, department:dept")`` → ``(("category", "category"), ("department",
    "dept"))``.

    Raises:
        ValueError: an empty item, a field name that is not letters/digits/underscores starting with a letter,
            one of the index's own fields (``title``, ``acl_users``, …), or a field named twice.
    """
    pairs: list[tuple[str, str]] = []
    for item in raw.split(","):
        key, _, name = item.strip().partition(":")
        key, name = key.strip(), (name.strip() or key.strip())
        if not key or not _FIELD_NAME.fullmatch(name) or name.lower() in RESERVED_FIELDS:
            raise ValueError(item)
        if name.startswith("azureSearch"):  # reserved by the service
            raise ValueError(item)
        if name.lower() in (n.lower() for _, n in pairs):  # SQLite column names ignore case
            raise ValueError(item)
        pairs.append((key, name))
    return tuple(pairs)


def _choice(options: tuple[str, ...]):
    def parse(raw: str) -> str:
        if raw.lower() not in options:
            raise ValueError(raw)
        return raw.lower()

    return parse


@dataclass(frozen=True)
class MetadataSettings:
    """Document fields and access control.

    Environment variables (defaults in brackets): ``METADATA_FIELDS`` [none] (``category,department:dept``),
    ``ACL_SOURCE`` [metadata] (``metadata``: blob metadata; ``adls``: the ADLS Gen2 path ACL; ``none``),
    ``ACL_USERS_METADATA`` [acl_users], ``ACL_GROUPS_METADATA`` [acl_groups] (the metadata names holding the
    lists), ``ACL_DEFAULT`` [public] (``public`` or ``deny``: what a document without access lists shows to a
    trimmed search), ``ADLS_ACCOUNT_URL`` [the storage account's ``dfs`` endpoint] (for ``ACL_SOURCE=adls``).
    """

    metadata_fields: tuple[tuple[str, str], ...] = ()
    acl_source: str = "metadata"
    acl_users_key: str = "acl_users"
    acl_groups_key: str = "acl_groups"
    acl_default: str = "public"
    adls_account_url: str = ""

    @property
    def field_names(self) -> tuple[str, ...]:
        """The index fields ``METADATA_FIELDS`` adds, in setting order."""
        return tuple(name for _, name in self.metadata_fields)

    @property
    def read_names(self) -> tuple[str, ...]:
        """The metadata names a document's fields are read from, in setting order: those of ``METADATA_FIELDS``,
        then the two access lists' (``ACL_USERS_METADATA``, ``ACL_GROUPS_METADATA``) when ``ACL_SOURCE`` is
        ``metadata``. Names are matched without regard to case (``chunking.documents.fields``)."""
        acl = (self.acl_users_key, self.acl_groups_key) if self.acl_source == "metadata" else ()
        return tuple(key for key, _ in self.metadata_fields) + acl

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> "MetadataSettings":
        """Read the variables of the class docstring from *env*.

        Raises:
            SettingsError: a value is malformed (the message names the variable).
        """
        fields = parsed_value(env, "METADATA_FIELDS", (), metadata_field_map,
                              "comma-separated name or name:field items, each field letters, digits and "
                              "underscores starting with a letter, not one of the index's own fields")
        users_key = str_value(env, "ACL_USERS_METADATA", "acl_users")
        groups_key = str_value(env, "ACL_GROUPS_METADATA", "acl_groups")
        if users_key.lower() == groups_key.lower():
            raise SettingsError("ACL_USERS_METADATA and ACL_GROUPS_METADATA must name different metadata")
        return cls(
            metadata_fields=fields,
            acl_source=parsed_value(env, "ACL_SOURCE", "metadata", _choice(ACL_SOURCES), "metadata, adls or none"),
            acl_users_key=users_key,
            acl_groups_key=groups_key,
            acl_default=parsed_value(env, "ACL_DEFAULT", "public", _choice(_ACL_DEFAULTS), "public or deny"),
            adls_account_url=str_value(env, "ADLS_ACCOUNT_URL").rstrip("/"),
        )
