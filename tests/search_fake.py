"""A stateful fake of the Azure AI Search REST API behind an azure-core transport, as unkind as the service:

* **Near-real-time visibility.** Indexing is not read-after-write for queries: "a successful upload is not yet
  visible to queries for a short while" (Azure/azure-sdk-for-python #35778, #40644; "Indexing" overview on
  learn.microsoft.com: documents become searchable after the index refresh, about a second). Here a write or a
  delete becomes visible to queries (search, ``$count``) only after ``lag_requests`` further requests *and*
  ``lag_seconds``; a lookup by key (``GET /docs('key')``) sees it at once, as in the service (reported, not
  documented: ``lookup_lag=True`` makes lookups lag like queries, to check the client stays correct either way).
* **Throttling.** ``throttle(n, retry_after_s)`` answers the next *n* requests 429 with ``Retry-After`` (the
  service's "Response codes" page: 429 with Retry-After when a request would exceed capacity); ``fail(n,
  status)`` answers them 503 (or another status) without one.

* **Schema rules.** Updating an index definition may add fields, but not delete or change existing ones
  (only ``retrievable``, ``searchAnalyzer`` and ``synonymMaps`` may change: "Update Index" REST reference,
  "Update or rebuild an index" on learn.microsoft.com); documents written before a field existed read null there.
  A document with a field the index lacks fails the whole request (400), and so does a filter on a field that is
  not in the index or not filterable.
* **Merge.** ``merge`` updates the given fields of an existing document and fails it with 404 when the key is
  missing ("Index Documents" REST reference); ``mergeOrUpload`` uploads it instead.

* **Queries as the service checks them** (REST API 2024-07-01, ``searchindex.json``: "Documents_SearchPost",
  "Documents_Get"; the "Search Documents" and "Lookup Document" references on learn.microsoft.com): ``select``
  and ``$select`` naming a field the index lacks or that is not retrievable are a 400, so is ``orderby`` on a
  field that is missing or not sortable (``search.score()`` allowed); a field that is not retrievable never comes
  back. A vector query names an existing vector field and sends a vector of its ``dimensions`` (else 400).
* **Hybrid queries** ("Relevance scoring in hybrid search using Reciprocal Rank Fusion", hybrid-search-ranking on
  learn.microsoft.com): with search text and vector queries, the text leg (matching documents by score) and
  each vector leg (its ``k`` nearest, cosine) are fused by RRF, ``@search.score`` = Σ 1/(60 + rank) over the
  legs a document is in; with no text (or ``*``) and a vector query, the vector leg alone.
* **Semantic ranker** (``queryType: semantic``; semantic-search-overview and semantic-how-to-enable-disable on
  learn.microsoft.com, the spec example ``SearchIndexSearchDocumentsSemanticPost.json``): the named
  ``semanticConfiguration`` must exist (else 400); the top 50 results are re-ranked by ``@search.rerankerScore``
  (0-4; here 4 × the share of the query's terms a document holds). ``semantic_queries_left`` models the free
  plan's monthly quota: at 0 a semantic query is refused 402 (the free plan stops with an error once its
  queries are used; the status is as reported for the service, see
  docs/architecture.md#platform-facts-and-their-sources); ``None`` is the standard plan (no limit).
* **Index definitions as the service validates them** (``_definition_refused``): vector profiles that name an
  algorithm, vectorizer or compression the index does not define, an Azure OpenAI vectorizer without
  ``modelName`` or ``resourceUri``, truncation not below the field's dimensions, permission filters on a GA
  API version or on a field that is not a filterable string — each answered 400 with the service's error.
* **Integrated vectorization** (``_vectorized``): a ``kind: text`` vector query is embedded with ``vectorize``
  (the test's stand-in for the index's Azure OpenAI deployment); on a field whose profile has no vectorizer it is
  refused as the service refuses it.
* **Native document-level security** (``_permitted``): on an index with ``permissionFilterOption: enabled`` a
  query or lookup returns only the documents whose ``userIds`` field holds the caller's ``oid`` or ``all``, or
  whose ``groupIds`` field holds one of the caller's groups or ``all``, the caller read from the JWT in
  ``x-ms-query-source-authorization`` (its ``groups`` claim stands in for the service's Microsoft Graph lookup);
  no token: only ``all`` documents; ``x-ms-enable-elevated-read: true``: every document.

Queries understand the OData subset the pipeline sends (``eq``/``gt``/``lt``/``ne``, ``and``/``or``/``not``,
``search.in`` (default delimiters space and comma), ``null``, parentheses, ``c/any()`` and ``c/any(x: …)`` over
collections), ``orderby`` on one field, ``select``, ``top``, ``*`` and plain-word search text (a document
matches when it holds a term of the query, a CJK character being one term, and ranks higher the more it holds,
highest when it holds them in a row), and vector queries (cosine).
"""

from __future__ import annotations

import base64
import json
import math
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable
from urllib.parse import parse_qs, unquote, urlsplit

from azure.core.pipeline.transport import HttpTransport

from tests.index.search_fakes import _Response

ENDPOINT = "https://fake-search.search.windows.net"


@dataclass
class _Pending:
    due_request: int
    due_time: float
    key: str
    doc: dict[str, Any] | None  # None: a delete
    index: str = ""  # the index it was written to ("": the first)


@dataclass
class SearchServiceFake(HttpTransport):
    """One search service with any number of indexes (definitions by name), each with its own documents.

    Each index has its own documents (``store(name)``); ``committed`` is what lookups by key see, ``visible``
    what queries see, both of the index the last document request went to; ``queries`` counts search requests
    (``search.post.search`` and ``$count``) by the ``x-fake-caller`` tag a test may set (``"-"`` otherwise).
    """

    lag_requests: int = 0
    lag_seconds: float = 0.0
    definitions: dict[str, Any] = field(default_factory=dict)
    committed: dict[str, dict[str, Any]] = field(default_factory=dict)
    visible: dict[str, dict[str, Any]] = field(default_factory=dict)
    pending: list[_Pending] = field(default_factory=list)
    requests: int = 0
    queries: int = 0
    throttled: int = 0
    # The semantic ranker's plan (module docstring): None = standard (no limit), n = free queries left.
    semantic_queries_left: int | None = None
    semantic_refusals: int = 0  # semantic queries answered 402
    lookup_lag: bool = False  # lookups by key see what queries see (module docstring)
    _faults: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    # One document store per index: name -> (committed, visible); the first index adopts the initial dicts.
    _stores: dict[str, tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=dict)
    _serving: str = ""  # the index of the request being answered
    #: The most bytes of JSON an indexing request may hold (search-limits-quotas-capacity: 16 MB), else 413.
    max_request_bytes: int = 16 * 1024 * 1024
    #: The index vectorizer's embedding model: query text -> vector (None: the vectorizer cannot be reached).
    vectorize: Callable[[str], list[float]] | None = None
    #: Requests of the current call: its headers and api-version (for permission filtering and validation).
    _call: dict[str, Any] = field(default_factory=dict)

    # -- test controls ---------------------------------------------------------------------------------------

    def throttle(self, n: int, retry_after_s: float = 1.0) -> None:
        """The next *n* requests are answered 429 with ``Retry-After: retry_after_s``."""
        self._faults.extend([(429, {"Retry-After": f"{retry_after_s:g}"})] * n)

    def fail(self, n: int, status: int = 503) -> None:
        """The next *n* requests are answered *status* (no Retry-After)."""
        self._faults.extend([(status, {})] * n)

    def store(self, index: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """``(committed, visible)`` documents of *index* by key (created empty on first use)."""
        if index not in self._stores:
            self._stores[index] = (self.committed, self.visible) if not self._stores else ({}, {})
        return self._stores[index]

    def settle(self) -> None:
        """Make every pending write and delete visible (the refresh caught up)."""
        for p in self.pending:
            self._apply(p)
        self.pending.clear()

    # -- transport -------------------------------------------------------------------------------------------

    def open(self) -> None: ...
    def close(self) -> None: ...

    def __enter__(self) -> "SearchServiceFake":
        return self

    def __exit__(self, *args: Any) -> None: ...

    def send(self, request: Any, **kwargs: Any) -> _Response:
        self.requests += 1
        self._refresh()
        content = request.content or b""
        content = content.encode() if isinstance(content, str) else content
        body = json.loads(content or "null")
        path = unquote(request.url.split("?")[0].split(".windows.net", 1)[1])
        self._call = _call_of(request)
        if self._faults:
            status, headers = self._faults.pop(0)
            self.throttled += status == 429
            return _Response(request, status, {"error": {"code": "Throttled" if status == 429 else "Unavailable",
                                                         "message": "fake service fault"}}, headers)
        params = {k: v[0] for k, v in parse_qs(urlsplit(request.url).query).items()}
        status, answer = self._route(request.method, path, body, params)
        return _Response(request, status, answer, {})

    # -- the service -----------------------------------------------------------------------------------------

    def _route(self, method: str, path: str, body: Any, params: dict[str, str] | None = None) -> tuple[int, Any]:
        m = re.fullmatch(r"/indexes(?:\('([^']+)'\))?(/docs.*)?", path)
        if not m:
            return 404, {"error": {"code": "NotFound", "message": path}}
        name, rest = m.group(1), m.group(2)
        if rest is None:
            if method == "GET":
                if name not in self.definitions:
                    return 404, {"error": {"code": "ResourceNotFound", "message": f"No index with the name '{name}'"}}
                return 200, self.definitions[name]
            invalid = _definition_refused(body, self._call["api_version"])
            if invalid:
                return 400, {"error": {"code": "InvalidRequestParameter", "message": invalid}}
            refused = _schema_change_refused(self.definitions.get(body["name"]), body)
            if refused:
                return 400, {"error": {"code": "OperationNotAllowed", "message": refused}}
            self.definitions[body["name"]] = body
            return (201 if method == "POST" else 200), body
        fields = {f["name"]: f for f in (self.definitions.get(name) or {}).get("fields", [])}
        self.committed, self.visible = self.store(name)
        self._serving = name
        if rest == "/docs/search.index":
            too_large = self._too_large(body)
            if too_large:
                return too_large
            refused = _batch_refused(body["value"], fields)
            if refused:
                return 400, {"error": {"code": "InvalidDocument", "message": refused}}
            unknown = sorted({k for a in body["value"] for k in a if k != "@search.action" and fields
                              and k not in fields})
            if unknown:
                return 400, {"error": {"code": "InvalidDocument", "message": f"The property '{unknown[0]}' does not "
                                       "exist on type 'search.documentFields'."}}
            results = [self._index_action(a, fields) for a in body["value"]]
            # 207 when some actions failed ("Index Documents": 200 only when every one succeeded).
            return (200 if all(r["status"] for r in results) else 207), {"value": results}
        if rest == "/docs/search.post.search":
            self.queries += 1
            try:  # a text vector query becomes the vector the index's vectorizer makes of it
                body = self._vectorized(body, self.definitions.get(name) or {})
            except _InvalidVectorQuery as exc:
                return 400, {"error": {"code": "InvalidVectorQuery", "message": str(exc)}}
            refused = _query_refused(body, fields)
            if refused:
                return 400, {"error": {"code": "InvalidRequestParameter", "message": refused}}
            semantic = body.get("queryType") == "semantic"
            if semantic:
                gate = self._semantic_gate(name, body)
                if gate:
                    return gate
            try:
                found = self._search(body, fields, self.definitions.get(name) or {})
            except _InvalidFilter as exc:
                return 400, {"error": {"code": "InvalidRequestParameter", "message": f"Invalid expression: {exc}"}}
            return 200, {"value": _reranked(found, body) if semantic else found}
        if rest == "/docs/$count":
            self.queries += 1
            definition = self.definitions.get(name) or {}
            return 200, sum(1 for d in self.visible.values() if self._permitted(d, definition))
        key = re.fullmatch(r"/docs\('(.*)'\)", rest)
        if key and method == "GET":
            select = [s for s in (params or {}).get("$select", "").split(",") if s]
            refused = _fields_refused("$select", select, fields, "retrievable")
            if refused:
                return 400, {"error": {"code": "InvalidRequestParameter", "message": refused}}
            doc = (self.visible if self.lookup_lag else self.committed).get(key.group(1).replace("''", "'"))
            if not doc or not self._permitted(doc, self.definitions.get(name) or {}):
                return 404, {"error": {"code": "NotFound", "message": "no such document"}}
            return 200, _shown(doc, select, fields)
        return 400, {"error": {"code": "BadRequest", "message": f"unsupported {method} {rest}"}}

    def _index_action(self, action: dict[str, Any], fields: dict[str, Any] | None = None) -> dict[str, Any]:
        kind = action.get("@search.action", "upload")
        key = action[_key_field(fields)]
        doc = {k: v for k, v in action.items() if k != "@search.action"}
        existed = key in self.committed
        bad_key = _key_refused(key)
        if bad_key:
            return {"key": key, "status": False, "errorMessage": bad_key, "statusCode": 400}
        if kind == "merge" and not existed:
            return {"key": key, "status": False, "errorMessage": "Document not found.", "statusCode": 404}
        if kind == "delete":
            self.committed.pop(key, None)
            new = None
        elif kind in ("merge", "mergeOrUpload") and existed:
            new = {**self.committed[key], **doc}
            self.committed[key] = new
        else:
            new = doc
            self.committed[key] = new
        pending = _Pending(self.requests + self.lag_requests, time.monotonic() + self.lag_seconds, key, new,
                           self._serving)
        if self.lag_requests == 0 and self.lag_seconds == 0:
            self._apply(pending)
        else:
            self.pending.append(pending)
        # A delete answers 200 whether or not the key existed (spec example SearchIndexIndexDocuments.json).
        created = not existed and kind != "delete"
        return {"key": key, "status": True, "errorMessage": None, "statusCode": 201 if created else 200}

    def _refresh(self) -> None:
        now = time.monotonic()
        due = [p for p in self.pending if p.due_request < self.requests and p.due_time <= now]
        if due:
            self.pending = [p for p in self.pending if not (p.due_request < self.requests and p.due_time <= now)]
            for p in due:
                self._apply(p)

    def _apply(self, p: _Pending) -> None:
        visible = self.store(p.index)[1] if p.index else self.visible
        if p.doc is None:
            visible.pop(p.key, None)
        else:
            visible[p.key] = dict(p.doc)

    # -- integrated vectorization and document-level security (see the module docstring) -----------------------

    def _vectorized(self, body: dict[str, Any], definition: dict[str, Any]) -> dict[str, Any]:
        """*body* with each ``kind: text`` vector query replaced by the vector ``vectorize`` makes of its text.

        Raises:
            _InvalidVectorQuery: the field's profile has no vectorizer (the service's words, reported in
                azure-search-openai-demo #2679), or the vectorizer cannot be reached (azure-search-vector-samples
                #133).
        """
        queries = body.get("vectorQueries") or []
        if not any(q.get("kind") == "text" for q in queries):
            return body
        vector = definition.get("vectorSearch") or {}
        profiles = {p["name"]: p for p in vector.get("profiles") or []}
        fields = {f["name"]: f for f in definition.get("fields", [])}
        out = []
        for query in queries:
            if query.get("kind") != "text":
                out.append(query)
                continue
            name = query["fields"]
            profile = profiles.get((fields.get(name) or {}).get("vectorSearchProfile") or "") or {}
            if not profile.get("vectorizer"):
                raise _InvalidVectorQuery(f"Field '{name}' does not have a vectorizer defined in it's vector profile.")
            if self.vectorize is None:
                raise _InvalidVectorQuery("Could not complete vectorization action. Could not reach the "
                                          "vectorization endpoint.")
            out.append({**{k: v for k, v in query.items() if k != "text"}, "kind": "vector",
                        "vector": self.vectorize(query["text"])})
        return {**body, "vectorQueries": out}

    def _permitted(self, doc: dict[str, Any], definition: dict[str, Any]) -> bool:
        """Whether the current call may see *doc* under the index's permission filters ("Query-time ACL and RBAC
        enforcement" and "Index ACLs using the push APIs", learn.microsoft.com: a user matching any one list is
        allowed; ``all`` is everyone, ``none`` or an empty list nobody by that list; since 2025-11-01-preview a
        query without the user's token sees only what everyone may; elevated read sees everything)."""
        if definition.get("permissionFilterOption") != "enabled":
            return True
        headers = self._call.get("headers", {})
        if headers.get("x-ms-enable-elevated-read") == "true":
            return True
        claims = _token_claims(headers.get("x-ms-query-source-authorization", ""))
        wanted = {"userIds": {"all", claims.get("oid", "")} - {""},
                  "groupIds": {"all", *claims.get("groups", [])}}
        for field_def in definition.get("fields", []):
            kind = field_def.get("permissionFilter")
            if kind in wanted and set(doc.get(field_def["name"]) or []) & wanted[kind]:
                return True
        return False

    def _search(self, body: dict[str, Any], fields: dict[str, Any] | None = None,
                definition: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        docs = [d for d in self.visible.values() if self._permitted(d, definition or {})]
        if body.get("filter"):
            predicate = _parse_filter(body["filter"], fields or {})
            docs = [d for d in docs if predicate(d)]
        text = (body.get("search") or "*").strip()
        scored: list[tuple[float, dict[str, Any]]]
        if text != "*":
            query = text.replace("\\", "")
            words = set(_terms(query))
            phrase = "".join(_terms(query))
            scored = []
            for d in docs:
                content = _terms(d.get("content") or "")
                score = float(len(words & set(content)))
                # The words in a row count most, as BM25 over the service's analyzers ranks an exact passage.
                score += len(words) if phrase and phrase in "".join(content) else 0
                scored.append((score, d))
            scored = [(s, d) for s, d in scored if s > 0]
        else:
            scored = [(1.0, d) for d in docs]
        if body.get("vectorQueries"):
            scored = _fused(scored if text != "*" else None, _vector_legs(body["vectorQueries"], docs))
        if body.get("orderby"):
            fieldname, _, direction = body["orderby"].partition(" ")
            scored.sort(key=lambda sd: sd[1].get(fieldname), reverse=direction.strip() == "desc")
        else:
            scored.sort(key=lambda sd: -sd[0])
        select = [s for s in (body.get("select") or "").split(",") if s]
        out = []
        for score, d in scored[: body.get("top", 50)]:
            out.append({"@search.score": score, **_shown(d, select, fields or {})})
        return out

    def _too_large(self, body: Any) -> tuple[int, Any] | None:
        """413 for an indexing request over ``max_request_bytes`` of JSON (as the SDK sends it)."""
        size = len(json.dumps(body))
        if size <= self.max_request_bytes:
            return None
        return 413, {"error": {"code": "RequestEntityTooLarge",
                               "message": f"The request is {size} bytes; at most {self.max_request_bytes} are allowed."}}

    # -- the semantic ranker (module docstring) ------------------------------------------------------------------

    def _semantic_gate(self, name: str, body: dict[str, Any]) -> tuple[int, Any] | None:
        """The refusal of a semantic query, or ``None``: an unknown configuration is a 400, a spent free quota
        a 402; otherwise one query of the quota is used."""
        semantic = (self.definitions.get(name) or {}).get("semantic") or {}
        wanted = body.get("semanticConfiguration") or semantic.get("defaultConfiguration")
        if wanted not in {c["name"] for c in semantic.get("configurations") or []}:
            return 400, {"error": {"code": "InvalidRequestParameter",
                                   "message": f"Unknown semantic configuration '{wanted}'."}}
        if self.semantic_queries_left is not None:
            if self.semantic_queries_left <= 0:
                self.semantic_refusals += 1
                return 402, {"error": {"code": "SemanticQueriesQuotaExceeded",
                                       "message": "The free semantic ranker quota of this month is used up."}}
            self.semantic_queries_left -= 1
        return None


# CJK ideographs and kana are one term each, as the service's standard analyzer emits them; other words whole.
_TERM = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]|[^\W\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]+")


def _terms(text: str) -> list[str]:
    return _TERM.findall(text.lower())


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


# -- OData filters ----------------------------------------------------------------------------------------------

_TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>-?\d+(?:\.\d+)?)|(?P<p>[(),/:])|(?P<word>[\w.]+))")
# Attributes of an existing field that an index update may change ("Update Index" REST reference).
_CHANGEABLE = {"retrievable", "searchAnalyzer", "synonymMaps"}


class _InvalidFilter(ValueError):
    """A filter the service answers 400 to (unknown or unfilterable field)."""


class _InvalidVectorQuery(ValueError):
    """A vector query the service answers 400 to (``InvalidVectorQuery``)."""


def _call_of(request: Any) -> dict[str, Any]:
    """The headers (lower-case names) and ``api-version`` of *request*."""
    query = parse_qs(urlsplit(request.url).query)
    return {"headers": {k.lower(): v for k, v in request.headers.items()},
            "api_version": (query.get("api-version") or [""])[0]}


def _token_claims(token: str) -> dict[str, Any]:
    """The claims of JWT *token* (``Bearer`` prefix allowed), not verified: the fake trusts its tests. ``{}`` for
    no token or one that is not a JWT."""
    parts = token.removeprefix("Bearer ").split(".")
    if len(parts) != 3:
        return {}
    try:
        return json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except ValueError:
        return {}


# -- index definitions as the service validates them ------------------------------------------------------------

# What a permission filter may be, and on what ("Query-time ACL and RBAC enforcement": filterable string fields).
_PERMISSION_KINDS = ("userIds", "groupIds", "rbacScope")
_STRING_TYPES = ("Edm.String", "Collection(Edm.String)")


def _definition_refused(body: dict[str, Any], api_version: str) -> str:
    """Why the service refuses index definition *body* on *api_version* ('' if it accepts). Messages:

    * an unknown property on a GA version: the words the service uses for a property its version lacks
      ("The property '…' does not exist on type 'Microsoft.Azure.Search.V2023_11_01.SchemaField'. Make sure to only
      use property names that are defined by the type.", reported in Azure/gpt-rag-ingestion #37);
      ``permissionFilter`` and ``permissionFilterOption`` exist only in 2025-05-01-preview and later previews;
    * a vector field's profile naming an undefined algorithm: "The field '…' uses a vector search algorithm
      configuration '…' which is not defined." (OrchardCMS/OrchardCore #19298); a profile naming an undefined
      vectorizer or compression is refused in the same words for those (the service validates every reference of a
      profile: "Configure a vectorizer" and "Compress vectors", learn.microsoft.com);
    * an Azure OpenAI vectorizer without ``modelName`` ("Error in Vectorizer '…' : 'modelName' parameter is required
      in API version '2024-07-01'.", Azure/azure-sdk-for-net #45145) or without ``resourceUri`` ("'uri' parameter
      cannot be null or empty", Azure/azure-sdk-for-js #31893);
    * ``truncationDimension`` not below the dimensions of a field that uses it, an oversampling below 1;
    * a permission filter on a field that is not a filterable string or string collection, or of an unknown kind.
    """
    prefix = "The request is invalid. Details: definition : "
    ga = not api_version.endswith("-preview")
    type_name = f"Microsoft.Azure.Search.V{api_version.replace('-', '_')}"
    if ga and "permissionFilterOption" in body and body["permissionFilterOption"] is not None:
        return (f"The request is invalid. Details: The property 'permissionFilterOption' does not exist on type "
                f"'{type_name}.Index'. Make sure to only use property names that are defined by the type.")
    fields = body.get("fields", [])
    for field_def in fields:
        kind = field_def.get("permissionFilter")
        if kind is None:
            continue
        if ga:
            return (f"The request is invalid. Details: The property 'permissionFilter' does not exist on type "
                    f"'{type_name}.SchemaField'. Make sure to only use property names that are defined by the type.")
        if kind not in _PERMISSION_KINDS:
            return f"{prefix}The field '{field_def['name']}' has an unknown permission filter '{kind}'."
        if field_def.get("type") not in _STRING_TYPES or not field_def.get("filterable"):
            return (f"{prefix}The field '{field_def['name']}' used as a permission filter must be a filterable field "
                    "of type Edm.String or Collection(Edm.String).")
    vector = body.get("vectorSearch") or {}
    algorithms = {a["name"] for a in vector.get("algorithms") or []}
    vectorizers = {v["name"]: v for v in vector.get("vectorizers") or []}
    compressions = {c["name"]: c for c in vector.get("compressions") or []}
    profiles = {p["name"]: p for p in vector.get("profiles") or []}
    for vectorizer in vectorizers.values():
        params = vectorizer.get("azureOpenAIParameters") or {}
        if vectorizer.get("kind") == "azureOpenAI" and not params.get("resourceUri"):
            return f"{prefix}Error in Vectorizer '{vectorizer['name']}' : 'uri' parameter cannot be null or empty"
        if vectorizer.get("kind") == "azureOpenAI" and not params.get("modelName"):
            return (f"{prefix}Error in Vectorizer '{vectorizer['name']}' : 'modelName' parameter is required in API "
                    f"version '{api_version}'.")
    for compression in compressions.values():
        oversampling = (compression.get("rescoringOptions") or {}).get("defaultOversampling")
        if oversampling is not None and oversampling < 1:
            return f"{prefix}The compression '{compression['name']}' has a defaultOversampling below 1."
    for field_def in fields:
        profile_name = field_def.get("vectorSearchProfile")
        if not profile_name:
            continue
        profile = profiles.get(profile_name)
        if profile is None or profile.get("algorithm") not in algorithms:
            return (f"{prefix}The field '{field_def['name']}' uses a vector search algorithm configuration "
                    f"'{profile_name if profile is None else profile.get('algorithm')}' which is not defined.")
        if profile.get("vectorizer") and profile["vectorizer"] not in vectorizers:
            return (f"{prefix}The field '{field_def['name']}' uses a vectorizer '{profile['vectorizer']}' which is not "
                    "defined.")
        if profile.get("compression"):
            compression = compressions.get(profile["compression"])
            if compression is None:
                return (f"{prefix}The field '{field_def['name']}' uses a vector compression configuration "
                        f"'{profile['compression']}' which is not defined.")
            truncation = compression.get("truncationDimension")
            if truncation is not None and not 0 < truncation < (field_def.get("dimensions") or 0):
                return (f"{prefix}The compression '{compression['name']}' truncates to {truncation} dimensions, "
                        f"which must be fewer than the {field_def.get('dimensions')} of field '{field_def['name']}'.")
    return ""


def _schema_change_refused(old: dict[str, Any] | None, new: dict[str, Any]) -> str:
    """Why the service refuses to replace definition *old* by *new* ('' if it accepts)."""
    if old is None:
        return ""
    new_fields = {f["name"]: f for f in new.get("fields", [])}
    for field_def in old.get("fields", []):
        replacement = new_fields.get(field_def["name"])
        if replacement is None:
            return f"Existing field '{field_def['name']}' cannot be deleted; rebuild the index to remove it."
        changed = sorted(k for k in set(field_def) | set(replacement) if k not in _CHANGEABLE
                         and (field_def.get(k) or None) != (replacement.get(k) or None))
        if changed:
            return (f"Existing field '{field_def['name']}' cannot be changed ({', '.join(changed)}); only new fields "
                    "can be added in place.")
    return ""


def _tokens(text: str) -> list[tuple[str, Any]]:
    out, pos = [], 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if not m:
            raise ValueError(f"fake search: cannot parse filter at {text[pos:]!r}")
        pos = m.end()
        if m.group("str") is not None:
            out.append(("str", m.group("str")[1:-1].replace("''", "'")))
        elif m.group("num") is not None:
            out.append(("num", float(m.group("num"))))
        elif m.group("p"):
            out.append(("p", m.group("p")))
        else:
            out.append(("word", m.group("word")))
    return out


def _parse_filter(text: str, fields: dict[str, Any] | None = None):
    tokens = _tokens(text)
    pos = 0
    fields = fields or {}
    variables: list[str] = []

    def known(name: str) -> str:
        if fields and name not in variables:
            if name not in fields:
                raise _InvalidFilter(f"Could not find a property named '{name}' on type 'search.document'.")
            if not fields[name].get("filterable"):
                raise _InvalidFilter(f"The field '{name}' is not filterable.")
        return name

    def peek():
        return tokens[pos] if pos < len(tokens) else ("end", None)

    def take():
        nonlocal pos
        pos += 1
        return tokens[pos - 1]

    def value():
        kind, v = take()
        if kind in ("str", "num"):
            return v
        if v == "null":
            return None
        if v in ("true", "false"):
            return v == "true"
        raise ValueError(f"fake search: unexpected {v!r}")

    def atom():
        kind, v = peek()
        if (kind, v) == ("p", "("):
            take()
            inner = disjunction()
            take()
            return inner
        if (kind, v) == ("word", "not"):
            take()
            inner = atom()
            return lambda d: not inner(d)
        if (kind, v) == ("word", "false") or (kind, v) == ("word", "true"):
            take()
            return lambda d, b=(v == "true"): b
        if (kind, v) == ("word", "search.in"):
            take(), take()  # name, "("
            fieldname = known(take()[1])
            take()
            wanted_text = take()[1]
            delimiters = " ,"
            if peek() == ("p", ","):
                take()
                delimiters = take()[1]
            take()  # ")"
            wanted = set(re.split("[" + re.escape(delimiters) + "]", wanted_text)) - {""}
            return lambda d: d.get(fieldname) in wanted
        if kind == "word" and pos + 1 < len(tokens) and tokens[pos + 1] == ("p", "/"):
            collection = known(take()[1])
            take()
            if take() != ("word", "any"):
                raise ValueError(f"fake search: only any() lambdas in {text!r}")
            take()  # "("
            if peek() == ("p", ")"):
                take()
                return lambda d: bool(d.get(collection))
            var = take()[1]
            take()  # ":"
            variables.append(var)
            body = disjunction()
            variables.pop()
            take()  # ")"
            return lambda d: any(body({**d, var: item}) for item in d.get(collection) or [])
        fieldname = known(take()[1])
        op = take()[1]
        operand = value()
        ops = {"eq": lambda a: a == operand, "ne": lambda a: a != operand,
               "gt": lambda a: a is not None and a > operand, "lt": lambda a: a is not None and a < operand,
               "ge": lambda a: a is not None and a >= operand, "le": lambda a: a is not None and a <= operand}
        test = ops[op]
        return lambda d: test(d.get(fieldname))

    def conjunction():
        parts = [atom()]
        while peek() == ("word", "and"):
            take()
            parts.append(atom())
        return lambda d: all(p(d) for p in parts)

    def disjunction():
        parts = [conjunction()]
        while peek() == ("word", "or"):
            take()
            parts.append(conjunction())
        return lambda d: any(p(d) for p in parts)

    predicate = disjunction()
    if pos != len(tokens):
        raise ValueError(f"fake search: trailing tokens in filter {text!r}")
    return predicate


# -- queries as the service checks them (module docstring) ------------------------------------------------------

_VECTOR_TYPES = ("Collection(Edm.Single)", "Collection(Edm.Half)", "Collection(Edm.Int16)",
                 "Collection(Edm.SByte)", "Collection(Edm.Byte)")
#: k of Reciprocal Rank Fusion (hybrid-search-ranking on learn.microsoft.com).
_RRF_K = 60
#: Results the semantic ranker re-ranks (semantic-search-overview on learn.microsoft.com).
_RERANKED = 50


def _retrievable(field_def: dict[str, Any]) -> bool:
    # The REST attribute is "retrievable" (default true); the SDK's "hidden" is its negation.
    return field_def.get("retrievable", True) is not False


def _fields_refused(parameter: str, names: list[str], fields: dict[str, Any], attribute: str) -> str:
    """Why the service refuses *parameter* naming *names* ('' if it accepts): a field the index lacks, or one
    without *attribute* (``retrievable`` for a select, ``sortable`` for an orderby)."""
    if not fields:
        return ""
    for name in names:
        if name not in fields:
            return f"Invalid expression: Could not find a property named '{name}' on type 'search.document'. " \
                   f"Parameter name: {parameter}"
        fit = _retrievable(fields[name]) if attribute == "retrievable" else bool(fields[name].get(attribute))
        if not fit:
            return f"Invalid expression: The field '{name}' is not {attribute}. Parameter name: {parameter}"
    return ""


def _query_refused(body: dict[str, Any], fields: dict[str, Any]) -> str:
    """Why the service refuses the search request *body* ('' if it accepts): ``select``, ``orderby`` and the
    vector queries' fields and lengths (module docstring)."""
    select = [s.strip() for s in (body.get("select") or "").split(",") if s.strip()]
    refused = _fields_refused("$select", select, fields, "retrievable")
    orderby = [clause.strip().split(" ")[0] for clause in (body.get("orderby") or "").split(",") if clause.strip()]
    refused = refused or _fields_refused("$orderby", [o for o in orderby if o != "search.score()"], fields,
                                         "sortable")
    for vq in body.get("vectorQueries") or []:
        for name in (vq.get("fields") or "").split(","):
            field_def = fields.get(name.strip()) if fields else {"dimensions": len(vq.get("vector") or [])}
            if field_def is None or (fields and field_def.get("type") not in _VECTOR_TYPES):
                return refused or f"The field '{name}' in the vector query is not a vector field."
            dims = field_def.get("dimensions")
            if dims is not None and len(vq.get("vector") or []) != dims:
                return refused or (f"The vector field '{name}' has {dims} dimensions, the query vector "
                                   f"{len(vq.get('vector') or [])}.")
    return refused


def _shown(doc: dict[str, Any], select: list[str], fields: dict[str, Any]) -> dict[str, Any]:
    """*doc* as a result shows it: the *select*ed fields, or every retrievable one."""
    if select:
        return {k: doc.get(k) for k in select}
    return {k: v for k, v in doc.items() if k not in fields or _retrievable(fields[k])}


def _vector_legs(vector_queries: list[dict[str, Any]], docs: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Each vector query's ``k`` nearest documents (cosine), nearest first."""
    legs = []
    for vq in vector_queries:
        name = (vq.get("fields") or "embedding").split(",")[0].strip()
        near = sorted(((_cosine(vq["vector"], d[name]), d) for d in docs if d.get(name)), key=lambda sd: -sd[0])
        legs.append([d for _, d in near[: vq.get("k", 50)]])
    return legs


def _fused(text_leg: list[tuple[float, dict[str, Any]]] | None,
           vector_legs: list[list[dict[str, Any]]]) -> list[tuple[float, dict[str, Any]]]:
    """RRF of the text leg (``None``: no search text, the vector legs alone, scored by their own rank fusion)
    and the vector legs: Σ 1/(60 + rank) per document, highest first."""
    legs = [d for d in vector_legs]
    if text_leg is not None:
        legs.insert(0, [d for _, d in sorted(text_leg, key=lambda sd: -sd[0])])
    scores: dict[str, float] = {}
    docs: dict[str, dict[str, Any]] = {}
    for leg in legs:
        for rank, d in enumerate(leg, start=1):
            key = id(d)  # the stored document object itself: no key field name needed here
            scores[key] = scores.get(key, 0.0) + 1.0 / (_RRF_K + rank)
            docs[key] = d
    return sorted(((score, docs[key]) for key, score in scores.items()), key=lambda sd: -sd[0])


def _reranked(results: list[dict[str, Any]], body: dict[str, Any]) -> list[dict[str, Any]]:
    """The semantic ranker over *results* (module docstring): the top 50 get ``@search.rerankerScore`` and come
    first in its order (ties keep their order)."""
    words = set(_terms((body.get("search") or "").replace("\\", "")))
    head = []
    for result in results[:_RERANKED]:
        held = words & set(_terms(str(result.get("content") or "")))
        head.append({**result, "@search.rerankerScore": 4.0 * len(held) / len(words) if words else 0.0})
    head.sort(key=lambda r: -r["@search.rerankerScore"])
    return head + results[_RERANKED:]


# -- indexing requests as the service checks them ----------------------------------------------------------------

#: Document keys: letters, digits, ``_``, ``-``, ``=``; at most 1,024 characters ("Naming rules" on
#: learn.microsoft.com, search-limits-quotas-capacity).
_KEY = re.compile(r"[A-Za-z0-9_\-=]{1,1024}")
_EDM_CHECKS = {
    "Edm.String": lambda v: isinstance(v, str),
    "Edm.Int32": lambda v: isinstance(v, int) and not isinstance(v, bool) and -2**31 <= v < 2**31,
    "Edm.Int64": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "Edm.Double": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "Edm.Boolean": lambda v: isinstance(v, bool),
    "Edm.DateTimeOffset": lambda v: isinstance(v, str),
    "Edm.Single": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
}


def _key_refused(key: Any) -> str:
    """Why the service fails a document with *key* ('' if it accepts): not a string of the allowed characters."""
    if isinstance(key, str) and _KEY.fullmatch(key):
        return ""
    return f"Invalid document key '{key}': letters, digits, '_', '-' and '=' only, at most 1024 characters."


def _batch_refused(actions: list[dict[str, Any]], fields: dict[str, Any]) -> str:
    """Why the service refuses a whole indexing request ('' if it accepts): a value of the wrong EDM type, or a
    vector whose length is not its field's ``dimensions`` ("Index Documents" REST reference; "Supported data
    types" on learn.microsoft.com). Unknown fields are checked by the caller."""
    if not fields:
        return ""
    for action in actions:
        for name, value in action.items():
            field_def = fields.get(name)
            if field_def is None or value is None:
                continue
            type_ = field_def["type"]
            inner = type_[len("Collection("):-1] if type_.startswith("Collection(") else None
            check = _EDM_CHECKS.get(inner or type_)
            if check is None:
                continue
            values = value if inner else [value]
            if inner and not isinstance(value, list) or not all(check(v) for v in values if v is not None):
                return f"Cannot convert the value of property '{name}' to the expected type '{type_}'."
            dims = field_def.get("dimensions")
            if dims is not None and len(value) != dims:
                return f"The vector field '{name}' has {dims} dimensions; the document's vector has {len(value)}."
    return ""


def _key_field(fields: dict[str, Any] | None) -> str:
    """The name of the index's key field (``id`` when the index is unknown)."""
    return next((name for name, f in (fields or {}).items() if f.get("key")), "id")
