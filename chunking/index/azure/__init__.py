"""Azure AI Search as a ``SearchIndex`` (``azure-search-documents`` ≥ 11.6; written against 12.0).

Limits and behaviour used here (sources: search-limits-quotas-capacity, "Index Documents" REST reference,
search-howto-large-index on learn.microsoft.com; docs/architecture.md#platform-facts-and-their-sources):

* An indexing request holds ≤ 1,000 documents and ≤ 16 MB of JSON; ``upsert``/``delete`` batch by both.
* A 207 answer reports each document; 409 (version conflict), 422 (index temporarily unavailable), 429 and 503
  (throttled) are transient, everything else (400 bad document, 404 …) is permanent.
* Retries live here, once: the SDK clients get ``retry_total=0``. azure-core's own ``RetryPolicy`` would skip a
  POST answered 429 (every indexing and query call is a POST) yet sleep for *any* ``Retry-After``, however long.
  This class retries throttled/unavailable requests and dropped connections (all calls here are idempotent),
  sleeping for ``retry-after-ms`` / ``Retry-After`` up to a bound, else exponential back-off with jitter.
* The key field allows letters, digits, ``_``, ``-``, ``=``; OData string literals double a single quote.
* ``$skip`` stops at 100,000, so listing a document's keys pages by key (``id gt 'last'``, ordered by id).
* The semantic ranker's free plan stops answering once its monthly queries are used (402): queries then go on
  as plain hybrid (RRF), said once in the log, and are not sent to the ranker again by this object.
* ``$select`` of a field that is not retrievable is refused (400): with a vector field that is not retrievable
  (an index made elsewhere), vector reuse is off and texts are embedded again.
"""

from __future__ import annotations

import functools
import logging
import re
import time
from typing import Any, Callable, Collection, Iterable, Iterator, Sequence, TypeVar

from azure.core.credentials import AzureKeyCredential
from azure.core.exceptions import (
    HttpResponseError,
    ResourceExistsError,
    ResourceNotFoundError,
)
from azure.search.documents import SearchClient
from azure.search.documents.indexes import SearchIndexClient
from azure.search.documents.indexes import models as m
from azure.search.documents.models import VectorizableTextQuery, VectorizedQuery

from chunking.errors import IndexError_
from chunking.index.azure import fields as doc_fields
from chunking.index.azure.batches import index_all
from chunking.index.azure.retries import RetryPolicy
from chunking.index.azure.schema import (
    _IDS_PER_FILTER,
    _MIN_VECTOR_K,
    _SELECT,
    ADDED_FIELDS,
    MAX_BATCH_BYTES,
    MAX_BATCH_DOCS,
    PAGE_SIZE,
    SEMANTIC_CONFIG,
    STRATEGY_FIELDS,
    VECTOR_FIELD,
    _uses_strategy_fields,
    added_field_definitions,
    batches_by_size,
    check_index,
    design_differences,
    index_definition,
    odata_string,
    strategy_field_definitions,
    vector_retrievable,
)
from chunking.index.design import IndexDesign, rename_filter
from chunking.index.odata import check_filter, parse_filter
from chunking.index.protocol import SearchHit
from chunking.index.schema_info import SchemaInfo
from chunking.model import DOCUMENT_FIELDS, ChunkRecord
from chunking.redact import mask_url

_T = TypeVar("_T")
log = logging.getLogger(__name__)

log = logging.getLogger(__name__)

#: The semantic ranker's answer once its free plan's monthly queries are used (semantic-how-to-enable-disable on
#: learn.microsoft.com; the status as reported: docs/architecture.md#platform-facts-and-their-sources).
_SEMANTIC_QUOTA_SPENT = 402

__all__ = ["AzureSearchIndex", "batches_by_size", "index_definition", "odata_string", "strategy_field_definitions"]


def simple_query_text(query: str) -> str:
    """*query* as literal words for the ``simple`` query syntax: its operators (``+ | - " * ( ) ~ \\``) are
    escaped with a backslash, so user text never changes the query's meaning or fails to parse."""
    return re.sub(r'([+|\-"*()~\\])', r"\\\1", query)


def _credential(credential: Any) -> Any:
    if credential is None:
        from azure.identity import DefaultAzureCredential

        return DefaultAzureCredential()
    if isinstance(credential, str):
        return AzureKeyCredential(credential)
    return credential


class AzureSearchIndex:
    """A ``SearchIndex`` on Azure AI Search (hybrid BM25 + HNSW vector search, fused by the service with RRF).

    Args:
        endpoint: ``https://<service>.search.windows.net``.
        index_name: the index (created by ``ensure`` if missing).
        dimensions: vector length of the ``embedding`` field.
        credential: an API key (str or ``AzureKeyCredential``), a ``TokenCredential``, or ``None`` for
            ``DefaultAzureCredential`` (managed identity in Azure, developer sign-in locally).
        max_batch_docs, max_batch_bytes: per-request limits (defaults: the service's 1,000 and 16 MB).
        max_attempts: tries per document for transient failures (≥ 1).
        backoff_s, max_backoff_s: exponential back-off base and cap in seconds; each wait is drawn from
            [d/2, d] ("equal jitter"), d = min(max_backoff_s, backoff_s · 2^attempt).
        max_retry_after_s: the longest server-requested wait honoured; a longer ``Retry-After`` fails at once so
            the queue message is retried later instead of holding the function.
        sleep: the sleep function (tests pass a recorder).
        strategy_fields: ``True`` creates (or extends) the index with the ``STRATEGY_FIELDS``; ``None`` (default)
            uses them if the index has them and adds them on the first upsert of a record that needs them (a
            parent link, a level, a proposition, an embedding text, no vector); ``False`` never (such records are
            refused). Records with default values are sent without these fields to an index that lacks them.
        metadata_fields: the ``METADATA_FIELDS`` index fields; ``ensure`` adds them and the document fields to an
            existing index in place (docs/architecture.md#schema-versions).
        design: the index definition's choices beyond the fields (``IndexDesign``: layout, vectorizer,
            compression, permission filters, language fields); its ``api_version`` (a preview, for permission
            filters) is the clients' unless *client_kwargs* names one.
        client_kwargs: passed to both SDK clients (e.g. ``transport=``, ``api_version=``; ``retry_total``
            defaults to 0).
    """

    def __init__(
        self, endpoint: str, index_name: str, dimensions: int, credential: Any = None, *,
        max_batch_docs: int = MAX_BATCH_DOCS, max_batch_bytes: int = MAX_BATCH_BYTES, max_attempts: int = 5,
        backoff_s: float = 1.0, max_backoff_s: float = 30.0, max_retry_after_s: float = 60.0,
        sleep: Callable[[float], None] = time.sleep, strategy_fields: bool | None = None,
        semantic_ranker: bool = False, metadata_fields: Sequence[str] = (), design: IndexDesign | None = None,
        **client_kwargs: Any,
    ) -> None:  # fmt: skip
        if dimensions < 1 or max_attempts < 1 or not 1 <= max_batch_docs <= MAX_BATCH_DOCS:
            raise ValueError("dimensions and max_attempts must be ≥ 1, max_batch_docs in 1..1000")
        self.endpoint, self.index_name, self.dimensions = endpoint, index_name, dimensions
        self.max_batch_docs, self.max_batch_bytes, self.max_attempts = max_batch_docs, max_batch_bytes, max_attempts
        self.backoff_s, self.max_backoff_s, self.max_retry_after_s = backoff_s, max_backoff_s, max_retry_after_s
        self._retry = RetryPolicy(max_attempts, backoff_s, max_backoff_s, max_retry_after_s, sleep)
        self.strategy_fields = strategy_fields
        self.semantic_ranker = semantic_ranker
        self._has_strategy_fields = False  # known after ensure() or the first upsert that needs them
        self.metadata_fields = tuple(metadata_fields)
        self._filterable: dict[str, str] | None = None  # filterable fields, known after ensure()
        self._vector_retrievable: bool | None = None  # known after ensure() or a refused lookup
        self._reuse_off_said = False
        self.design = design or IndexDesign()
        self._query_headers: dict[str, str] = {}  # x-ms-query-source-authorization, from authorize_queries()
        cred = _credential(credential)
        client_kwargs.setdefault("retry_total", 0)  # see the module docstring: retries are ours
        if self.design.api_version:
            client_kwargs.setdefault("api_version", self.design.api_version)
        self._indexes = SearchIndexClient(endpoint=endpoint, credential=cred, **client_kwargs)
        self._documents = SearchClient(endpoint=endpoint, index_name=index_name, credential=cred, **client_kwargs)

    # -- schema ------------------------------------------------------------------------------------------------

    def ensure(self) -> None:
        """Create the index if missing; otherwise check it and add the document fields it lacks.

        Raises:
            IndexError_: the existing index lacks a field of the schema, its key is not a sortable ``id``, its vector
                field has another dimension, or a document field exists with another definition; or the service
                refused to create or update it.
        """
        existing = self._existing_index()
        if existing is None:
            try:
                definition = self.definition()
                self._indexes.create_index(definition)
                self._has_strategy_fields = bool(self.strategy_fields)
                self._filterable = doc_fields.filterable_kinds(definition)
                self._vector_retrievable = vector_retrievable(definition)
                return
            except ResourceExistsError:  # another instance created it in between: check theirs
                existing = self._indexes.get_index(self.index_name)
            except HttpResponseError as exc:
                raise IndexError_(f"creating index {self.index_name!r} failed: {exc.message}") from exc
        self._check(existing)
        self._vector_retrievable = vector_retrievable(existing)
        existing = self._migrate_design(existing)
        existing = doc_fields.migrate(self._indexes, existing, self.metadata_fields, self.design)
        self._filterable = doc_fields.filterable_kinds(existing)
        present = {f.name for f in existing.fields or []}
        if not set(ADDED_FIELDS) <= present:
            self._add_fields(existing, added_field_definitions(), "new fields")
            present |= set(ADDED_FIELDS)
        self._has_strategy_fields = set(STRATEGY_FIELDS) <= present
        if self.strategy_fields and not self._has_strategy_fields:
            self._add_strategy_fields()

    def definition(self) -> m.SearchIndex:
        """The definition ``ensure`` creates a missing index with (``index_definition`` of this index's name,
        dimensions, strategy fields, metadata fields and design); nothing is sent."""
        return index_definition(self.index_name, self.dimensions, bool(self.strategy_fields), self.metadata_fields,
                                self.design)

    def _migrate_design(self, existing: m.SearchIndex) -> m.SearchIndex:
        """Add to *existing* what the service allows in place of this design (the vectorizer, the semantic title
        field, ``permissionFilterOption``, the language fields); returns the definition in force.

        Raises:
            IndexError_: the design differs in what only a new index can change (the message names the field
                and the two ways out), or the service refused the update.
        """
        wanted = self.definition()
        updated, problems, kept = design_differences(existing, wanted)
        for difference in kept:
            log.warning("index %r keeps its own %s. For the settings' choice, name a new index (AZURE_SEARCH_INDEX) "
                        "and run `chunking reprocess --all` to fill it", self.index_name, difference)
        if problems:
            raise IndexError_(f"index {self.index_name!r} cannot take the settings in place: {'; '.join(problems)}. "
                              "Either keep the index's choice (set the setting back), or name a new index "
                              "(AZURE_SEARCH_INDEX) and run `chunking reprocess --all` to fill it")
        present = {f.name for f in existing.fields or []}
        language_fields = {f"content_{code}" for code in self.design.languages}
        languages = [f for f in wanted.fields if f.name in language_fields and f.name not in present]
        if languages:
            updated = updated or existing
            updated.fields = [*updated.fields, *languages]
        if updated is None:
            return existing
        try:
            return self._indexes.create_or_update_index(updated)
        except HttpResponseError as exc:
            raise IndexError_(f"updating index {self.index_name!r} in place failed: {exc.message}") from exc

    def authorize_queries(self, token: str | None) -> None:
        """Send *token* (the end user's Microsoft Entra access token) as ``x-ms-query-source-authorization`` with
        every query, so that an index with permission filters returns only what that user may read
        (docs/security.md); ``None`` stops sending it."""
        self._query_headers = {"x-ms-query-source-authorization": token} if token else {}

    def _add_strategy_fields(self) -> None:
        """Add the missing ``STRATEGY_FIELDS`` to the existing index (new fields are allowed in place).

        Raises:
            IndexError_: the service refused, or ``strategy_fields=False``.
        """
        if self.strategy_fields is False:
            raise IndexError_(f"index {self.index_name!r} has no strategy fields (parent_id, level, …) and "
                              "strategy_fields=False; records of hierarchical or enriched chunks need them")
        try:
            existing = self._indexes.get_index(self.index_name)
        except HttpResponseError as exc:
            raise IndexError_(f"adding strategy fields to index {self.index_name!r} failed: {exc.message}") from exc
        self._add_fields(existing, strategy_field_definitions(), "strategy fields")
        self._has_strategy_fields = True

    def _add_fields(self, existing: m.SearchIndex, definitions: list[m.SearchField], what: str) -> None:
        """Add those of *definitions* that *existing* lacks (new fields are allowed in place)."""
        present = {f.name for f in existing.fields or []}
        existing.fields = [*existing.fields, *(f for f in definitions if f.name not in present)]
        try:
            self._indexes.create_or_update_index(existing)
        except HttpResponseError as exc:
            raise IndexError_(f"adding {what} to index {self.index_name!r} failed: {exc.message}") from exc

    @property
    def _select(self) -> list[str]:
        return [*_SELECT, *(STRATEGY_FIELDS if self._has_strategy_fields else ()),
                *(self.design.name(n) for n in DOCUMENT_FIELDS), *self.metadata_fields]

    def _existing_index(self):
        """The index definition as the service holds it, or None when there is none.

        Raises:
            IndexError_: reading it failed (the service's message).
        """
        try:
            return self._indexes.get_index(self.index_name)
        except ResourceNotFoundError:
            return None
        except HttpResponseError as exc:
            raise IndexError_(f"reading index {self.index_name!r} failed: {exc.message}") from exc

    def schema_info(self) -> SchemaInfo:
        """The index's schema as the service holds it (nothing is changed)."""
        existing = self._existing_index()
        return doc_fields.schema_info(existing, f"{mask_url(self.endpoint)}/indexes/{self.index_name}",
                                      self.metadata_fields, self.count() if existing is not None else None,
                                      self.design)

    def _check(self, existing: m.SearchIndex) -> None:
        check_index(existing, self.index_name, self.dimensions, SEMANTIC_CONFIG if self.semantic_ranker else None)

    # -- writes ------------------------------------------------------------------------------------------------

    def upsert(self, records: Sequence[ChunkRecord]) -> None:
        """``mergeOrUpload`` *records* (of records sharing an id, the last wins), batched by count and bytes,
        retrying transient per-document failures.

        Raises:
            IndexError_: a record lacks a ``dimensions``-long embedding, a document alone exceeds the request
                size, or documents failed permanently (the message names keys and errors).
        """
        bad = [r.id for r in records if r.has_vector and (r.embedding is None or len(r.embedding) != self.dimensions)]
        if bad:
            shown = ", ".join(bad[:10])
            raise IndexError_(f"{len(bad)} records lack a {self.dimensions}-dimensional embedding: {shown}")
        unique = list({r.id: r for r in records}.values())
        if not self._has_strategy_fields and any(_uses_strategy_fields(r) for r in unique):
            self._add_strategy_fields()
        self._index_all("mergeOrUpload", [self._document(r) for r in unique])

    def _document(self, record: ChunkRecord) -> dict[str, Any]:
        """The JSON document of *record*: without the strategy fields for an index that lacks them, and without
        ``embedding`` for a record stored without a vector."""
        doc = doc_fields.to_index_document(record.to_dict(), self.metadata_fields)
        if not self._has_strategy_fields:
            for name in STRATEGY_FIELDS:
                del doc[name]
        if not record.has_vector:
            del doc[VECTOR_FIELD]
        return doc_fields.designed_document(doc, self.design)

    def update_fields(self, ids: Iterable[str], values: dict[str, Any]) -> int:
        """``merge`` the document fields *values* into the stored documents *ids* (text and vector stay); keys no
        longer in the index are skipped. Returns how many documents were sent.

        Raises:
            ValueError: a field that cannot be updated in place; IndexError_: merges failed permanently.
        """
        docs = [doc_fields.designed_document(d, self.design)
                for d in doc_fields.merge_documents(ids, values, self.metadata_fields)]
        self._index_all("merge", docs)
        return len(docs)

    def delete(self, ids: Iterable[str]) -> None:
        """Delete documents by key (the service reports missing keys as deleted).

        Raises:
            IndexError_: deletions failed permanently (keys and errors named).
        """
        self._index_all("delete", [{"id": key} for key in dict.fromkeys(ids)])

    def _index_all(self, action: str, docs: list[dict[str, Any]]) -> None:
        index_all(self._documents, self._retry, action, docs, max_docs=self.max_batch_docs,
                  max_bytes=self.max_batch_bytes, index_name=self.index_name)

    def _with_retries(self, what: str, call: Callable[[], _T]) -> _T:
        return self._retry.run(what, call)

    def _wait(self, attempt: int, retry_after_s: float | None) -> None:
        self._retry.wait(attempt, retry_after_s)

    # -- reads -------------------------------------------------------------------------------------------------

    def _scan(self, filter_: str | None, select: list[str]) -> Iterator[dict[str, Any]]:
        """Every document matching *filter_*, in key order, one page of ≤ 1,000 per request (key paging)."""
        last: str | None = None
        while True:
            clauses = [f"({filter_})"] if filter_ else []
            if last is not None:
                clauses.append(f"id gt {odata_string(last)}")
            query = {
                "search_text": "*",
                "filter": " and ".join(clauses) or None,
                "select": list(dict.fromkeys(["id", *select])),
                "order_by": ["id asc"],
                "top": PAGE_SIZE,
                **self._pipeline_headers(),
            }
            page = self._with_retries(f"listing {query['filter']}", functools.partial(self._search, **query))
            yield from page
            if len(page) < PAGE_SIZE:
                return
            last = page[-1]["id"]

    def _search(self, **query: Any) -> list[dict[str, Any]]:
        # list(): the pager is lazy, and its requests must happen inside _with_retries.
        return list(self._documents.search(**query))

    def keys_of(self, doc_id: str, namespace: str | None = None) -> dict[str, str]:
        """``{id: version}`` of every document of *doc_id*; with *namespace*, only those of that namespace or
        of none (written before the field existed)."""
        filter_ = f"doc_id eq {odata_string(doc_id)}"
        if namespace is not None:
            filter_ += f" and (namespace eq {odata_string(namespace)} or namespace eq null or namespace eq '')"
        return {d["id"]: d["version"] for d in self._scan(filter_, ["version"])}

    def records_of(self, doc_id: str) -> list[ChunkRecord]:
        """Every record of *doc_id*, without embeddings, ordered by ordinal."""
        docs = self._scan(f"doc_id eq {odata_string(doc_id)}", self._select)
        return sorted((_record(d, self.metadata_fields, self.design) for d in docs), key=lambda r: r.ordinal)

    def doc_ids(self, namespace: str | None = None) -> set[str]:
        """Every ``doc_id`` in the index, or of *namespace* (a full key-ordered scan: exact, unlike facet
        counts)."""
        filter_ = None if namespace is None else f"namespace eq {odata_string(namespace)}"
        return {d["doc_id"] for d in self._scan(filter_, ["doc_id"])}

    def vectors_by_key(self, ids: Iterable[str]) -> dict[str, tuple[float, ...]]:
        """``{id: embedding}`` by lookups by key (``GET /docs('key')``, one per id): the service answers them from
        the stored documents at once, unlike queries, which lag writes. Missing ids are left out; nothing is
        found when the index's vector field is not retrievable (vector reuse is off: the texts are embedded
        again, said once in the log)."""
        found: dict[str, tuple[float, ...]] = {}
        if self._vector_retrievable is False:
            self._say_reuse_is_off()
            return found
        for key in dict.fromkeys(ids):
            lookup = functools.partial(self._lookup, key, [VECTOR_FIELD])
            try:
                doc = self._with_retries(f"lookup of {key}", lookup)
            except IndexError_ as exc:
                # Without ensure(), a refused $select is the first sign of a vector field that is not retrievable.
                if exc.status != 400 or self._vector_retrievable is not None or self._vectors_readable():
                    raise
                self._say_reuse_is_off()
                return {}
            if doc is not None and doc.get(VECTOR_FIELD):
                found[key] = tuple(float(x) for x in doc[VECTOR_FIELD])
        return found

    def _vectors_readable(self) -> bool:
        """Whether lookups may select the vector field, read from the index definition (``ensure`` knows it)."""
        existing = self._existing_index()
        self._vector_retrievable = existing is not None and vector_retrievable(existing)
        return self._vector_retrievable

    def _say_reuse_is_off(self) -> None:
        if not self._reuse_off_said:
            self._reuse_off_said = True
            log.warning("index %r: field %s is not retrievable; vector reuse is off, texts are embedded again",
                        self.index_name, VECTOR_FIELD)

    def _pipeline_headers(self) -> dict[str, Any]:
        """The pipeline's own reads (key listing, lookups, counts) see every document: with permission filters
        the service returns only public ones to a request without a user token (2025-11-01-preview and later), so
        they ask for elevated read (``x-ms-enable-elevated-read``, allowed to Search Index Data Contributor;
        docs/security.md#what-enforces-what)."""
        return {"headers": {"x-ms-enable-elevated-read": "true"}} if self.design.permission_filters else {}

    def _lookup(self, key: str, select: list[str]) -> dict[str, Any] | None:
        try:
            return self._documents.get_document(key, selected_fields=["id", *select], **self._pipeline_headers())
        except ResourceNotFoundError:
            return None

    def records_by_id(self, ids: Iterable[str]) -> dict[str, ChunkRecord]:
        """The stored records among *ids* (without embeddings), by id; 100 ids per request."""
        wanted = list(dict.fromkeys(ids))
        found: dict[str, ChunkRecord] = {}
        for start in range(0, len(wanted), _IDS_PER_FILTER):
            group = odata_string(",".join(wanted[start : start + _IDS_PER_FILTER]))
            for doc in self._scan(f"search.in(id, {group}, ',')", self._select):
                found[doc["id"]] = _record(doc, self.metadata_fields, self.design)
        return found

    def search(self, query: str, vector: Sequence[float] | None, k: int = 5, *,
               levels: Collection[int] | None = None, filter: str | None = None) -> list[SearchHit]:
        """Hybrid query: full-text *query* plus, when *vector* is given, a k-NN query on ``embedding``; the
        service fuses them with RRF, then (with ``semantic_ranker``) re-ranks them semantically. ``score`` is
        ``@search.score`` (the reranker score with the semantic ranker). Records come without embeddings. *levels*
        filters on ``level`` (an index without the strategy fields holds only level 0); *filter* (OData, sent as
        it is) is checked first against the index's filterable fields, as ``LocalIndex`` does (``FilterError``)."""
        if k < 1 or (not query.strip() and vector is None):
            return []
        level_filter = None
        if levels is not None:
            wanted = sorted({int(v) for v in levels})
            if not self._has_strategy_fields:
                if 0 not in wanted:
                    return []
            else:
                level_filter = " or ".join(f"level eq {v}" for v in wanted) or "false"
        vector_queries = None
        if vector is not None:
            if len(vector) != self.dimensions:
                raise ValueError(f"query vector has {len(vector)} dimensions, the index {self.dimensions}")
            vector_queries = [
                VectorizedQuery(vector=[float(x) for x in vector], k_nearest_neighbors=max(k, _MIN_VECTOR_K),
                                fields=VECTOR_FIELD)
            ]  # fmt: skip
        elif self.vectorizes_queries and query.strip():
            # The index's vectorizer embeds the text (``kind: text``), with the deployment the chunks used.
            vector_queries = [VectorizableTextQuery(text=query, k_nearest_neighbors=max(k, _MIN_VECTOR_K),
                                                    fields=VECTOR_FIELD)]
        if filter:
            node = parse_filter(filter)
            if self._filterable is not None:
                check_filter(node, {self.design.ours(n): kind for n, kind in self._filterable.items()})
            filter = rename_filter(filter, self.design.renames())
            level_filter = f"({level_filter}) and ({filter})" if level_filter else filter
        extra: dict[str, Any] = {"filter": level_filter} if level_filter else {}
        semantic = self.semantic_ranker and bool(query.strip())
        search = functools.partial(self._search, search_text=simple_query_text(query) if query.strip() else None,
                                   vector_queries=vector_queries, select=self._select, top=k, **extra)  # fmt: skip
        if self._query_headers:  # the user's token, for an index with permission filters (docs/security.md)
            search = functools.partial(search, headers=dict(self._query_headers))
        if semantic:
            # The semantic ranker re-ranks the fused top 50 (a paid feature of the service, off by default).
            ranked = functools.partial(search, query_type="semantic", semantic_configuration_name=SEMANTIC_CONFIG)
            try:
                results = self._with_retries("search", ranked)
            except IndexError_ as exc:
                if exc.status != _SEMANTIC_QUOTA_SPENT:
                    raise
                self._semantic_spent()
                semantic = False
                results = self._with_retries("search", search)
        else:
            results = self._with_retries("search", search)
        score = "@search.reranker_score" if semantic else "@search.score"
        return [SearchHit(_record(doc, self.metadata_fields, self.design), float(doc.get(score) or doc["@search.score"]))
                for doc in results][:k]

    def _semantic_spent(self) -> None:
        """The semantic ranker refused for quota (402): off for this object's lifetime, said once."""
        self.semantic_ranker = False
        log.warning("index %r: the semantic ranker answered 402 (its quota is spent); queries go on as plain hybrid "
                    "(RRF) without it", self.index_name)

    @property
    def vectorizes_queries(self) -> bool:
        """Whether queries send their text for the index's vectorizer to embed (``SEARCH_QUERY_VECTORIZATION=
        service`` with a vectorizer): ``chunking.retrieval.search`` then embeds nothing."""
        return self.design.service_vectorization and self.design.vectorizer is not None

    def count(self) -> int:
        """Number of documents (the service's count; eventually consistent after writes)."""
        return int(self._with_retries("count", functools.partial(self._documents.get_document_count,
                                                                 **self._pipeline_headers())))

    def close(self) -> None:
        self._documents.close()
        self._indexes.close()


def _record(doc: dict[str, Any], metadata_fields: Sequence[str] = (), design: IndexDesign | None = None) -> ChunkRecord:
    plain = {k: v for k, v in doc.items() if not k.startswith("@")}
    values = doc_fields.from_index_document(doc_fields.undesigned_document(plain, design or IndexDesign(),
                                                                           metadata_fields), metadata_fields)
    return ChunkRecord.from_dict({**values, VECTOR_FIELD: None})
