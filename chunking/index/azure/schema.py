"""Azure AI Search index schema and request sizing: the field definitions of docs/architecture.md#ids-and-keys (HNSW
vector profile, semantic configuration), OData literals, and batching of indexing requests by count and bytes
(≤ 1,000 documents and ≤ 16 MB per request: search-limits-quotas-capacity on learn.microsoft.com)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Sequence

from azure.search.documents.indexes import models as m

from chunking.errors import IndexError_
from chunking.index.azure.fields import document_field_definitions
from chunking.index.design import IndexDesign
from chunking.model import DOCUMENT_FIELDS, ChunkRecord
from chunking.settings.index_design import LANGUAGE_ANALYZERS

__all__ = ["added_field_definitions", "batches_by_size", "check_index", "design_differences", "index_definition",
           "index_problems", "odata_string", "strategy_field_definitions", "vector_retrievable"]

#: Documents per indexing request (search-limits-quotas-capacity).
MAX_BATCH_DOCS = 1000
#: JSON bytes per indexing request: "16 MB"; decimal megabytes, so we stay under either reading of "MB".
MAX_BATCH_BYTES = 16_000_000
#: Per-document status codes worth retrying (Index Documents REST reference).
RETRYABLE_STATUS = frozenset({409, 422, 429, 503})
# Whole-request status codes worth retrying: the above plus timeouts and gateway errors.
_RETRYABLE_REQUEST_STATUS = RETRYABLE_STATUS | {408, 500, 502, 504}
#: Page size for key listing; also the service's maximum ``top``.
PAGE_SIZE = 1000
# Values (ids) per search.in() filter: keeps the filter a few KB long.
_IDS_PER_FILTER = 100
# Candidates the vector leg of a hybrid query contributes to the fusion (as LocalIndex does).
_MIN_VECTOR_K = 50

VECTOR_FIELD = "embedding"
VECTOR_PROFILE = "hnsw-cosine"
HNSW_CONFIG = "hnsw"
SEMANTIC_CONFIG = "default"
VECTORIZER = "openai-vectorizer"
COMPRESSION = "embedding-compression"
#: azure-search-openai-demo's fields that are not ours: ``sourcefile`` (the file name) and ``category``.
DEMO_FIELDS = ("sourcefile", "category")
#: Fields of the strategies (hierarchy, small-to-big, propositions, enrichment): not in the base schema of
#: docs/architecture.md#ids-and-keys. An index gets them when created with ``strategy_fields=True``, or on the first
#: upsert of a record that needs them (Azure AI Search adds fields to an existing index in place).
STRATEGY_FIELDS = ("parent_id", "level", "kind", "embedding_text", "embedding_hash", "has_vector")
#: Base fields added after the first schema: ``ensure`` adds them to an existing index that lacks them (documents
#: written before hold null there, read back as empty).
ADDED_FIELDS = ("namespace", "image_urls")
# The chunk fields every index has (schema 1); the document fields (schema 2) are added by ``ensure``.
_RECORD_FIELDS = tuple(f.name for f in dataclasses.fields(ChunkRecord)
                       if f.name not in STRATEGY_FIELDS and f.name not in DOCUMENT_FIELDS and f.name != "metadata")
_SELECT = [f for f in _RECORD_FIELDS if f != VECTOR_FIELD]
_DEFAULTS = {f.name: f.default for f in dataclasses.fields(ChunkRecord) if f.name in STRATEGY_FIELDS}
_ENVELOPE_BYTES = len(json.dumps({"value": []}))


def odata_string(value: str) -> str:
    """An OData string literal: ``O'Brien`` → ``'O''Brien'``."""
    return "'" + value.replace("'", "''") + "'"


def _action_bytes(action: str, doc: dict[str, Any]) -> int:
    # The SDK sends json.dumps(...) with default separators and ensure_ascii, the action key first.
    return len(json.dumps({"@search.action": action, **doc}))


def batches_by_size(
    docs: Sequence[dict[str, Any]], action: str, max_docs: int = MAX_BATCH_DOCS, max_bytes: int = MAX_BATCH_BYTES
) -> list[list[dict[str, Any]]]:
    """Split *docs* into consecutive batches of ≤ *max_docs* documents and ≤ *max_bytes* bytes of request JSON.

    Sizes are those of the body the SDK sends (``{"value": [{"@search.action": action, ...doc}, ...]}``).

    Raises:
        IndexError_: one document alone exceeds *max_bytes* (the message names its key).
    """
    batches: list[list[dict[str, Any]]] = []
    current: list[dict[str, Any]] = []
    size = _ENVELOPE_BYTES
    for doc in docs:
        doc_bytes = _action_bytes(action, doc)
        if _ENVELOPE_BYTES + doc_bytes > max_bytes:
            raise IndexError_(f"document {doc.get('id')!r} is {doc_bytes} bytes of JSON; a request holds {max_bytes}")
        extra = doc_bytes + (2 if current else 0)  # ", " between actions
        if current and (len(current) >= max_docs or size + extra > max_bytes):
            batches.append(current)
            current, size, extra = [], _ENVELOPE_BYTES, doc_bytes
        current.append(doc)
        size += extra
    if current:
        batches.append(current)
    return batches


def _field(name: str, type_: str, **flags: bool) -> m.SearchField:
    # Every flag explicit: the service defaults most of them to true for simple fields.
    values = {"key": False, "searchable": False, "filterable": False, "sortable": False, "facetable": False}
    values.update(flags)
    return m.SearchField(name=name, type=type_, retrievable=True, **values)


def strategy_field_definitions() -> list[m.SearchField]:
    """The ``STRATEGY_FIELDS``: ``parent_id``, ``level``, ``kind``, ``embedding_hash`` and ``has_vector``
    filterable (level and hierarchy filters, embedding reuse); ``embedding_text`` searchable (the breadcrumb and
    context count for BM25, docs/splitters.md#context-enrichment, item 4)."""
    return [
        _field("parent_id", "Edm.String", filterable=True),
        _field("level", "Edm.Int32", filterable=True, sortable=True, facetable=True),
        _field("kind", "Edm.String", filterable=True, facetable=True),
        _field("embedding_text", "Edm.String", searchable=True),
        _field("embedding_hash", "Edm.String", filterable=True),
        _field("has_vector", "Edm.Boolean", filterable=True),
    ]


def added_field_definitions() -> list[m.SearchField]:
    """The ``ADDED_FIELDS``: ``namespace`` filterable and facetable (reconcile and cleanup select their own
    deployment's documents by it: docs/operations.md#sharing-one-index); ``image_urls``, the figure images a
    chunk holds (``Collection(Edm.String)``, retrievable only: docs/parsers.md#figure-images)."""
    return [_field("namespace", "Edm.String", filterable=True, facetable=True),
            _field("image_urls", "Collection(Edm.String)")]


#: Fields our queries filter on (key paging, a document's chunks): they must be filterable.
_FILTERED_FIELDS = ("id", "doc_id")
#: Fields the full-text leg of a query searches.
_SEARCHED_FIELDS = ("content",)


def index_problems(existing: m.SearchIndex, dimensions: int, semantic_configuration: str | None = None) -> list[str]:
    """What *existing* (an index perhaps made by another tool) lacks to hold our records, each as a phrase, in a
    fixed order: missing chunk fields; ``id`` not the sortable key (key paging); a vector field of another
    dimension; fields we read back that are not retrievable (the service refuses to ``$select`` them), fields
    we filter on that are not filterable, ``content`` not searchable; with *semantic_configuration* (the semantic
    ranker is on), no semantic configuration of that name (the service refuses such queries). Empty when it can.
    A vector field that is
    not retrievable is not a problem here: vector reuse is then off and texts are embedded again
    (``vector_retrievable``)."""
    fields = {f.name: f for f in existing.fields or []}
    problems = []
    missing = [name for name in _RECORD_FIELDS if name not in fields and name not in ADDED_FIELDS]
    if missing:
        problems.append(f"it lacks fields {', '.join(missing)}")
    key = fields.get("id")
    if key is not None and (not key.key or not key.sortable):
        problems.append("field id must be the key and sortable (key paging)")
    vector = fields.get(VECTOR_FIELD)
    if vector is not None and vector.vector_search_dimensions != dimensions:
        problems.append(f"it holds {vector.vector_search_dimensions}-dimensional vectors, but the embedder makes "
                        f"{dimensions}; create a new index (dimensions cannot change in place) and re-ingest")
    hidden = [name for name in _SELECT if name in fields and fields[name].hidden]
    if hidden:
        problems.append(f"field{'s' if len(hidden) > 1 else ''} {', '.join(hidden)} "
                        f"{'are' if len(hidden) > 1 else 'is'} not retrievable")
    unfiltered = [name for name in _FILTERED_FIELDS if name in fields and not fields[name].filterable]
    if unfiltered:
        problems.append(f"field{'s' if len(unfiltered) > 1 else ''} {', '.join(unfiltered)} "
                        f"{'are' if len(unfiltered) > 1 else 'is'} not filterable")
    unsearched = [name for name in _SEARCHED_FIELDS if name in fields and not fields[name].searchable]
    if unsearched:
        problems.append(f"field {', '.join(unsearched)} is not searchable")
    configurations = {c.name for c in (existing.semantic_search.configurations or [])} if existing.semantic_search \
        else set()
    if semantic_configuration is not None and semantic_configuration not in configurations:
        problems.append(f"it has no semantic configuration {semantic_configuration!r}, which the semantic ranker "
                        "uses (AZURE_SEARCH_SEMANTIC_RANKER)")
    return problems


def vector_retrievable(existing: m.SearchIndex) -> bool:
    """Whether the vector field of *existing* comes back from a lookup (``retrievable``; the SDK's ``hidden``
    is its negation): vector reuse reads it by key, and the service refuses to select a field that is not."""
    vector = next((f for f in existing.fields or [] if f.name == VECTOR_FIELD), None)
    return vector is not None and not vector.hidden


def check_index(existing: m.SearchIndex, index_name: str, dimensions: int,
                semantic_configuration: str | None = None) -> None:
    """Check that *existing* can hold our records (``index_problems``).

    Raises:
        IndexError_: ``index 'name' cannot hold these records: <every problem, "; "-separated>``.
    """
    problems = index_problems(existing, dimensions, semantic_configuration)
    if problems:
        raise IndexError_(f"index {index_name!r} cannot hold these records: {'; '.join(problems)}")


def _uses_strategy_fields(record: ChunkRecord) -> bool:
    return any(getattr(record, name) != default for name, default in _DEFAULTS.items())


def index_definition(name: str, dimensions: int, strategy_fields: bool = False,
                     metadata_fields: Sequence[str] = (), design: IndexDesign | None = None) -> m.SearchIndex:
    """The index schema of docs/architecture.md#ids-and-keys (plus the ``STRATEGY_FIELDS`` when asked) and the
    document fields with *metadata_fields* (docs/architecture.md#document-fields), with an HNSW (cosine) vector
    profile and a semantic configuration ``default`` whose prioritized content field is ``content``; *design*
    (docs/search.md#the-index-definition) adds the query vectorizer, compression with rescoring, permission
    filters, per-language content fields, and renames fields for azure-search-openai-demo (semantic title
    ``sourcepage``). ``chunking schema`` prints this very definition; ``AzureSearchIndex.ensure`` creates it.

    Raises:
        ValueError: *design* truncates to no fewer dimensions than *dimensions*, or truncates without compression.
    """
    design = design or IndexDesign()
    ints = ("ordinal", "page_start", "page_end", "char_start", "char_end", "token_count")
    demo = design.demo
    fields = [
        _field("id", "Edm.String", key=True, filterable=True, sortable=True),
        _field("doc_id", "Edm.String", filterable=True, facetable=True),
        _field("version", "Edm.String", filterable=True),
        _field("source", "Edm.String", filterable=True),
        _field("sourcepage", "Edm.String", filterable=demo, facetable=demo),
        *(_field(n, "Edm.Int32", filterable=True, sortable=True) for n in ints),
        _field("headings", "Collection(Edm.String)", searchable=True),
        _field("content", "Edm.String", searchable=True),
        _field("content_hash", "Edm.String", filterable=True),
        m.SearchField(
            name=VECTOR_FIELD,
            type="Collection(Edm.Single)",
            searchable=True,
            # Stored and retrievable: vectors_by_key reads them back for reuse (docs/search.md#compression).
            retrievable=True,
            vector_search_dimensions=dimensions,
            vector_search_profile_name=VECTOR_PROFILE,
        ),
        *added_field_definitions(),
        *document_field_definitions(metadata_fields, design),
        *(strategy_field_definitions() if strategy_fields else []),
        *language_field_definitions(design.languages),
    ]
    if demo:
        present = {f.name for f in fields}
        fields += [_field(n, "Edm.String", filterable=True, facetable=True) for n in DEMO_FIELDS if n not in present]
    definition = m.SearchIndex(
        name=name,
        fields=fields,
        vector_search=_vector_search(dimensions, design),
        semantic_search=m.SemanticSearch(
            default_configuration_name=SEMANTIC_CONFIG,
            configurations=[
                m.SemanticConfiguration(
                    name=SEMANTIC_CONFIG,
                    prioritized_fields=m.SemanticPrioritizedFields(
                        title_field=m.SemanticField(field_name="sourcepage") if demo else None,
                        content_fields=[m.SemanticField(field_name="content")],
                    ),
                )
            ],
        ),
    )
    if design.permission_filters:
        # A preview API's properties, absent from the GA models of azure-search-documents 12.0: set as JSON keys
        # ("Query-time ACL and RBAC enforcement", learn.microsoft.com: filterable string collections, the option
        # "enabled" on the index).
        for field in definition.fields:
            kind = {design.name("acl_users"): "userIds", design.name("acl_groups"): "groupIds"}.get(field.name)
            if kind:
                field["permissionFilter"] = kind
        definition["permissionFilterOption"] = "enabled"
    return definition


def language_field_definitions(languages: Sequence[str]) -> list[m.SearchField]:
    """One searchable ``content_<code>`` field per language code, analysed with that language's Microsoft
    analyzer (``LANGUAGE_ANALYZERS``); a chunk's text goes into the field of its document's language too."""
    return [m.SearchField(name=f"content_{code}", type="Edm.String", searchable=True, retrievable=False,
                          filterable=False, sortable=False, facetable=False, key=False,
                          analyzer_name=LANGUAGE_ANALYZERS[code]) for code in languages]


def _vector_search(dimensions: int, design: IndexDesign) -> m.VectorSearch:
    """HNSW (cosine; m 4, efConstruction 400, efSearch 500, the vector how-to's defaults) in one profile, with the
    vectorizer and the compression of *design* attached to it."""
    vectorizers, compressions = [], []
    if design.vectorizer is not None:
        vectorizers.append(m.AzureOpenAIVectorizer(
            vectorizer_name=VECTORIZER,
            # No api_key and no auth_identity: the service calls Azure OpenAI as its system-assigned identity.
            parameters=m.AzureOpenAIVectorizerParameters(resource_url=design.vectorizer.resource_uri,
                                                         deployment_name=design.vectorizer.deployment,
                                                         model_name=design.vectorizer.model)))
    if design.compression != "none":
        if design.truncation_dimensions and not 0 < design.truncation_dimensions < dimensions:
            raise ValueError(f"SEARCH_VECTOR_TRUNCATION_DIMENSIONS ({design.truncation_dimensions}) must be below "
                             f"the embedding's {dimensions} dimensions")
        # Rescoring with the original full-precision vectors, kept beside the quantized ones ("Compress vectors
        # using scalar or binary quantization", learn.microsoft.com: preserveOriginals is what rescoring reads).
        common = dict(compression_name=COMPRESSION, truncation_dimension=design.truncation_dimensions or None,
                      rescoring_options=m.RescoringOptions(enable_rescoring=True,
                                                           default_oversampling=design.oversampling,
                                                           rescore_storage_method="preserveOriginals"))
        if design.compression == "scalar":
            compressions.append(m.ScalarQuantizationCompression(
                parameters=m.ScalarQuantizationParameters(quantized_data_type="int8"), **common))
        else:
            compressions.append(m.BinaryQuantizationCompression(**common))
    elif design.truncation_dimensions:
        raise ValueError("SEARCH_VECTOR_TRUNCATION_DIMENSIONS needs SEARCH_VECTOR_COMPRESSION scalar or binary "
                         "(truncation is a property of the compression)")
    return m.VectorSearch(
        algorithms=[m.HnswAlgorithmConfiguration(
            name=HNSW_CONFIG, parameters=m.HnswParameters(m=4, ef_construction=400, ef_search=500, metric="cosine"))],
        profiles=[m.VectorSearchProfile(name=VECTOR_PROFILE, algorithm_configuration_name=HNSW_CONFIG,
                                        vectorizer_name=VECTORIZER if vectorizers else None,
                                        compression_name=COMPRESSION if compressions else None)],
        vectorizers=vectorizers or None,
        compressions=compressions or None,
    )


def design_differences(existing: m.SearchIndex, wanted: m.SearchIndex
                       ) -> tuple[m.SearchIndex | None, list[str], list[str]]:
    """What of *wanted* (``index_definition``) the service can add to *existing* in place, and what it cannot.

    Returns ``(updated, problems, kept)``: *updated* is *existing* with the vectorizer, the semantic title field
    and ``permissionFilterOption`` of *wanted* (``None`` when nothing is to add); *problems* name each security
    difference that needs a new index (a permission filter on an existing field): the index would not enforce
    what the settings promise; *kept* each other one (compression of an existing vector field), which the index
    keeps as it is. Vectorizers and semantic configurations may change in place; a field's attributes may not
    ("Update Index" REST reference; "Configure a vectorizer", learn.microsoft.com).
    """
    problems: list[str] = []
    kept: list[str] = []
    changed = False
    vs_old, vs_new = existing.vector_search, wanted.vector_search
    profile_old = next((p for p in (vs_old.profiles or []) if p.name == VECTOR_PROFILE), None) if vs_old else None
    profile_new = vs_new.profiles[0]
    if profile_old is not None and profile_new.vectorizer_name and profile_old.vectorizer_name is None:
        vs_old.vectorizers = [*(vs_old.vectorizers or []), *vs_new.vectorizers]
        profile_old.vectorizer_name = profile_new.vectorizer_name
        changed = True
    elif profile_old is not None and profile_new.vectorizer_name == profile_old.vectorizer_name == VECTORIZER:
        # Ours already: a new deployment or endpoint replaces its parameters (vectorizers change in place).
        old = next((v for v in vs_old.vectorizers or [] if v.vectorizer_name == VECTORIZER), None)
        new = vs_new.vectorizers[0]
        # Compared by what we set: the service answers with more keys (``apiKey``, ``authIdentity`` as null).
        if old is not None and _vectorizer_target(old) != _vectorizer_target(new):
            vs_old.vectorizers = [new if v.vectorizer_name == VECTORIZER else v for v in vs_old.vectorizers]
            changed = True
    present = {f.name for f in existing.fields or []}
    for ours, theirs in (("acl_users", "oids"), ("storage_url", "storageUrl")):
        has_ours, has_theirs = ours in present, theirs in present
        wanted_names = {f.name for f in wanted.fields}
        if (has_ours and theirs in wanted_names and ours not in wanted_names) or (
                has_theirs and ours in wanted_names and theirs not in wanted_names):
            problems.append(f"field {theirs if has_theirs else ours}: the index was created with the "
                            f"{'azure-search-openai-demo' if has_theirs else 'chunking'} layout, the settings want "
                            f"the other (INDEX_LAYOUT); field names are fixed when the index is created")
            break
    if profile_old is not None and (profile_old.compression_name or None) != (profile_new.compression_name or None):
        kept.append(f"compression of field {VECTOR_FIELD}: the index has "
                        f"{profile_old.compression_name or 'none'}, the settings want "
                        f"{profile_new.compression_name or 'none'} (SEARCH_VECTOR_COMPRESSION); a vector field's "
                        "compression is fixed when it is created")
    old_fields = {f.name: f for f in existing.fields or []}
    for field in wanted.fields:
        want = field.get("permissionFilter")
        old = old_fields.get(field.name)
        if old is not None and (old.get("permissionFilter") or None) != (want or None):
            problems.append(f"permission filter of field {field.name}: the index has "
                            f"{old.get('permissionFilter') or 'none'}, the settings want {want or 'none'} "
                            "(SEARCH_PERMISSION_FILTERS); a field's attributes are fixed when it is created")
    if wanted.get("permissionFilterOption") and existing.get("permissionFilterOption") != "enabled" and not problems:
        existing["permissionFilterOption"] = wanted["permissionFilterOption"]
        changed = True
    old_sem = existing.semantic_search
    new_config = wanted.semantic_search.configurations[0]
    if old_sem is None or not old_sem.configurations:
        existing.semantic_search = wanted.semantic_search
        changed = True
    else:
        config = next((c for c in old_sem.configurations if c.name == SEMANTIC_CONFIG), None)
        title = new_config.prioritized_fields.title_field
        if config is not None and title is not None and config.prioritized_fields.title_field is None:
            config.prioritized_fields.title_field = title
            changed = True
    return (existing if changed else None), problems, kept


def _vectorizer_target(vectorizer: Any) -> tuple:
    params = vectorizer.as_dict().get("azureOpenAIParameters") or {}
    return params.get("resourceUri"), params.get("deploymentId"), params.get("modelName")
