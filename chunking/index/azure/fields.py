"""The document fields in Azure AI Search (docs/architecture.md#document-fields): their definitions, the
``METADATA_FIELDS`` ones, the in-place migration rules, and the mapping between records and index documents.

Migration: fields can be added to an existing index in place, and documents written before then read null there;
an existing field cannot change its type or its searchable/filterable/sortable/facetable/key attributes (only
``retrievable``, ``searchAnalyzer`` and ``synonymMaps``: "Update Index" REST reference on learn.microsoft.com).
``missing_fields`` lists what to add, ``changed_fields`` what would need a new index.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Iterable, Sequence

from azure.search.documents.indexes import models as m

from chunking.errors import IndexError_
from chunking.index.design import IndexDesign
from chunking.index.schema_info import SCHEMA_VERSION, SchemaInfo
from chunking.model import DOCUMENT_FIELDS

__all__ = [
    "changed_fields", "document_field_definitions", "filterable_kinds", "from_index_document",
    "merge_documents", "migrate", "missing_fields", "schema_info", "schema_version", "to_index_document",
]

# The attributes compared when an existing field is checked (the ones the service cannot change in place).
_FIXED = ("type", "key", "searchable", "filterable", "sortable", "facetable")


def _field(name: str, type_: str, **flags: bool) -> m.SearchField:
    values = {"key": False, "searchable": False, "filterable": True, "sortable": False, "facetable": False}
    values.update(flags)
    return m.SearchField(name=name, type=type_, retrievable=True, **values)


def document_field_definitions(metadata_fields: Sequence[str] = (),
                               design: IndexDesign | None = None) -> list[m.SearchField]:
    """The ``DOCUMENT_FIELDS`` and one ``Edm.String`` field per ``METADATA_FIELDS`` name, all filterable:
    ``title`` and ``last_modified``/``size_bytes`` also sortable, ``content_type``, ``language``,
    ``last_modified`` and the metadata fields facetable; ``acl_users``/``acl_groups`` are ``Collection(Edm.String)``
    for ``search.in`` security filters. Named as *design*'s layout names them (``IndexDesign.name``)."""
    design = design or IndexDesign()
    fields = [
        _field("title", "Edm.String", sortable=True),
        _field("storage_url", "Edm.String"),
        _field("content_type", "Edm.String", facetable=True),
        _field("last_modified", "Edm.DateTimeOffset", sortable=True, facetable=True),
        _field("size_bytes", "Edm.Int64", sortable=True),
        _field("language", "Edm.String", facetable=True),
        _field("acl_users", "Collection(Edm.String)"),
        _field("acl_groups", "Collection(Edm.String)"),
        *(_field(name, "Edm.String", facetable=True) for name in metadata_fields),
    ]
    for field in fields:
        field.name = design.name(field.name)
    return fields


def schema_info(existing: m.SearchIndex | None, location: str, metadata_fields: Sequence[str],
                records: int | None, design: IndexDesign | None = None) -> SchemaInfo:
    """``chunking status``'s view of index *existing* (``None``: not created yet)."""
    if existing is None:
        return SchemaInfo("azure", location, False, 0)
    present = {f.name for f in existing.fields or []}
    wanted = document_field_definitions(metadata_fields, design)
    return SchemaInfo("azure", location, True, schema_version(existing, design),
                      missing=tuple(f.name for f in missing_fields(existing, wanted)),
                      metadata_fields=tuple(name for name in metadata_fields if name in present), records=records)


def missing_fields(existing: m.SearchIndex, wanted: Iterable[m.SearchField]) -> list[m.SearchField]:
    """The fields of *wanted* that *existing* lacks (to add in place)."""
    present = {f.name for f in existing.fields or []}
    return [f for f in wanted if f.name not in present]


def changed_fields(existing: m.SearchIndex, wanted: Iterable[m.SearchField]) -> list[str]:
    """``"name: attribute is X, wanted Y"`` for each field of *wanted* that *existing* holds with another type or
    attribute the service cannot change in place."""
    present = {f.name: f for f in existing.fields or []}
    problems = []
    for field in wanted:
        old = present.get(field.name)
        if old is None:
            continue
        for attribute in _FIXED:
            have, want = (getattr(getattr(x, attribute, None), "value", getattr(x, attribute, None))
                          for x in (old, field))
            differs = have != want if attribute == "type" else bool(have) != bool(want)
            if differs:
                problems.append(f"{field.name}: {attribute} is {have}, wanted {want}")
    return problems


def schema_version(existing: m.SearchIndex, design: IndexDesign | None = None) -> int:
    """1 for an index of the chunk fields only, ``SCHEMA_VERSION`` (2) once it has every ``DOCUMENT_FIELDS``
    field (named as *design* names them)."""
    present = {f.name for f in existing.fields or []}
    design = design or IndexDesign()
    return SCHEMA_VERSION if {design.name(n) for n in DOCUMENT_FIELDS} <= present else 1


_KINDS = {"Edm.String": "string", "Edm.Int32": "int", "Edm.Int64": "int", "Edm.Double": "float",
          "Edm.Boolean": "bool", "Edm.DateTimeOffset": "datetime", "Collection(Edm.String)": "strings"}


def filterable_kinds(existing: m.SearchIndex) -> dict[str, str]:
    """Filterable field → kind (``chunking.index.odata.FIELD_KINDS``) of *existing*, to check filters before
    sending them."""
    return {f.name: _KINDS[f.type] for f in existing.fields or [] if f.filterable and f.type in _KINDS}


def to_index_document(doc: dict[str, Any], metadata_fields: Sequence[str]) -> dict[str, Any]:
    """A record's ``to_dict()`` as an index document: the ``metadata`` pairs become their own fields (null for a
    configured field the document lacks, so a merge clears it), other metadata is left out."""
    values = dict(doc.pop("metadata", None) or {})
    for name in metadata_fields:
        doc[name] = values.get(name)
    return doc


def from_index_document(doc: dict[str, Any], metadata_fields: Sequence[str]) -> dict[str, Any]:
    """The inverse of ``to_index_document`` for a document read back (``record.from_dict`` input), with
    ``last_modified`` normalised to ``YYYY-MM-DDTHH:MM:SSZ``."""
    values = {k: v for k, v in doc.items() if k not in metadata_fields}
    values["metadata"] = {name: doc[name] for name in metadata_fields if doc.get(name) is not None}
    stamp = values.get("last_modified")
    if isinstance(stamp, str) and stamp:
        moment = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        values["last_modified"] = moment.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    for name in ("acl_users", "acl_groups"):
        if name in values:
            values[name] = list(values[name] or [])
    return values


def migrate(indexes: Any, existing: m.SearchIndex, metadata_fields: Sequence[str],
            design: IndexDesign | None = None) -> m.SearchIndex:
    """Add the document fields and *metadata_fields* that *existing* lacks, in place, through *indexes* (a
    ``SearchIndexClient``); returns the definition now in force.

    Raises:
        IndexError_: one of them exists with another definition (only a new index can change it: the message
            names the field and the attribute), or the service refused the update.
    """
    from azure.core.exceptions import HttpResponseError

    wanted = document_field_definitions(metadata_fields, design)
    problems = changed_fields(existing, wanted)
    if problems:
        raise IndexError_(f"index {existing.name!r} has fields that cannot be changed in place "
                          f"({'; '.join(problems)}): create a new index (AZURE_SEARCH_INDEX) and ingest again")
    added = missing_fields(existing, wanted)
    if not added:
        return existing
    existing.fields = [*existing.fields, *added]
    try:
        return indexes.create_or_update_index(existing)
    except HttpResponseError as exc:
        raise IndexError_(f"adding fields {', '.join(f.name for f in added)} to index {existing.name!r} failed: "
                          f"{exc.message}") from exc


def merge_documents(ids: Iterable[str], values: dict[str, Any], metadata_fields: Sequence[str]) -> list[dict]:
    """The ``merge`` documents of a field update: each key with the updatable fields of *values* (``metadata``
    spread into its fields, configured ones it lacks set to null so they are cleared).

    Raises:
        ValueError: a key that is no updatable field.
    """
    unknown = set(values) - set(_UPDATABLE) - {"metadata"}
    if unknown:
        raise ValueError(f"not updatable in place: {', '.join(sorted(unknown))}")
    fields = {k: (list(v or ()) if k.startswith("acl_") else v) for k, v in values.items() if k != "metadata"}
    if "metadata" in values:
        given = dict(values["metadata"] or {})
        fields.update({name: given.get(name) for name in metadata_fields})
    return [{"id": key, **fields} for key in dict.fromkeys(ids)]


_UPDATABLE = ("storage_url", "content_type", "last_modified", "acl_users", "acl_groups")


def designed_document(doc: dict[str, Any], design: IndexDesign) -> dict[str, Any]:
    """Index document *doc* (``to_index_document``'s) in *design*'s layout: fields renamed (``IndexDesign.name``);
    in azure-search-openai-demo's layout ``sourcefile`` (the file name of ``source``) and ``category`` (the
    ``category`` metadata field when there is one, else ``design.category``, else null) added; the text copied
    into ``content_<language>`` when the document's language has its own field. A ``merge`` document (no
    ``content``) only gets its fields renamed."""
    out = {design.name(k): v for k, v in doc.items()}
    if design.permission_filters and ("acl_users" in doc or "acl_groups" in doc):
        out.update(_service_acl(doc, design))
    if design.demo and "source" in doc:
        out["sourcefile"] = str(doc["source"] or "").replace("\\", "/").rsplit("/", 1)[-1]
    if design.demo and ("source" in doc or "category" in out):  # a new document, or a metadata update
        out["category"] = out.get("category") or design.category or None
    if design.languages and "content" in doc:
        language = str(doc.get("language") or "").split("-", 1)[0].lower()
        for code in design.languages:
            out[f"content_{code}"] = doc["content"] if code == language else None
    return out


def undesigned_document(doc: dict[str, Any], design: IndexDesign, metadata_fields: Sequence[str]) -> dict[str, Any]:
    """The inverse of ``designed_document`` for a document read back: our names, without the fields we derive
    (``sourcefile``, a ``category`` that is no metadata field, ``content_<language>``), and the service's special
    access values back to ours."""
    derived = {f"content_{code}" for code in design.languages}
    if design.demo:
        derived |= {"sourcefile"} | ({"category"} - set(metadata_fields))
    out = {design.ours(k): v for k, v in doc.items() if k not in derived}
    if design.permission_filters:
        if "acl_users" in out:
            out["acl_users"] = [u for u in out["acl_users"] or [] if u not in ("all", "none")]
        if "acl_groups" in out:
            out["acl_groups"] = ["*" if g == "all" else g for g in out["acl_groups"] or [] if g != "none"]
    return out


def _service_acl(doc: dict[str, Any], design: IndexDesign) -> dict[str, list[str]]:
    """The access lists of *doc* as the service's permission filters read them ("Index ACLs using the push
    APIs", learn.microsoft.com: ``["all"]`` any user, ``[]`` or ``["none"]`` nobody by that list; a user needs to
    match one list): our group ``*`` (everyone) is ``all``; a document with neither list is public (``all``
    users) under ``ACL_DEFAULT=public`` and nobody's under ``deny``, as ``chunking.index.security`` trims."""
    users = list(doc.get("acl_users") or [])
    groups = ["all" if g == "*" else g for g in doc.get("acl_groups") or []]
    if not users and not groups and design.acl_default == "public" and {"acl_users", "acl_groups"} <= set(doc):
        users = ["all"]
    out = {design.name("acl_users"): users, design.name("acl_groups"): groups}
    return {name: value for name, value in out.items() if design.ours(name) in doc}
