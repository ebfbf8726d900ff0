"""What an Azure AI Search index declares besides our fields, as plain data (built from the settings by
``chunking.services.index_design``): the field layout, the query vectorizer, vector compression, native
document-level security and per-language content fields. ``chunking.index.azure.schema.index_definition`` turns
it into the index definition; docs/search.md#the-index-definition says what each choice costs."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

__all__ = ["DEMO_LAYOUT", "IndexDesign", "Vectorizer", "bytes_per_vector", "rename_filter"]

DEMO_LAYOUT = "azure-search-openai-demo"
# Our field → the name azure-search-openai-demo's backend reads (its prepdocs index: id, content, embedding,
# sourcepage, sourcefile, category, storageUrl, oids, groups). Fields it does not know keep our names.
_DEMO_NAMES: Mapping[str, str] = {"storage_url": "storageUrl", "acl_users": "oids", "acl_groups": "groups"}


@dataclass(frozen=True)
class Vectorizer:
    """An Azure OpenAI vectorizer: the service embeds query text with this deployment, authenticating as its own
    managed identity (no key: the identity needs "Cognitive Services OpenAI User" on the account, infra/).

    Attributes:
        resource_uri: ``https://<account>.openai.azure.com``; deployment: the deployment name; model: the model
        name the service knows (``text-embedding-3-small``, ``-3-large``, ``text-embedding-ada-002``).
    """

    resource_uri: str
    deployment: str
    model: str


@dataclass(frozen=True)
class IndexDesign:
    """The index definition's choices beyond the fields.

    Attributes:
        layout: ``chunking`` (our names) or ``azure-search-openai-demo`` (``DEMO_LAYOUT``: ``storageUrl``,
            ``oids``, ``groups``, plus ``sourcefile`` and ``category``, semantic title ``sourcepage``).
        category: the ``category`` of a document without a ``category`` metadata field (demo layout).
        vectorizer: the query vectorizer, or ``None`` (an embedder the service cannot call).
        service_vectorization: queries send their text (``kind: text``) instead of a vector.
        compression: ``none``, ``scalar`` (int8) or ``binary``; truncation_dimensions: 0 or the shorter
            length kept (text-embedding-3 models); oversampling: rescoring's oversampling factor.
        permission_filters: ``acl_users``/``acl_groups`` carry ``permissionFilter`` and the index enables
            ``permissionFilterOption`` (needs ``api_version``, a preview).
        api_version: the REST API version the clients speak (``None``: the SDK's GA default).
        languages: language codes with their own content field (``content_<code>``, that language's analyzer).
        acl_default: ``ACL_DEFAULT`` (``public`` or ``deny``): with permission filters, a document with neither
            access list is written with the service's ``["all"]`` users (public) or none (deny).
    """

    layout: str = "chunking"
    category: str = ""
    vectorizer: Vectorizer | None = None
    service_vectorization: bool = False
    compression: str = "none"
    truncation_dimensions: int = 0
    oversampling: float = 4.0
    permission_filters: bool = False
    api_version: str | None = None
    languages: tuple[str, ...] = ()
    acl_default: str = "public"

    @property
    def demo(self) -> bool:
        """Whether the field names are azure-search-openai-demo's."""
        return self.layout == DEMO_LAYOUT

    def name(self, field: str) -> str:
        """The index's name for our field *field* (the same in our layout)."""
        return _DEMO_NAMES.get(field, field) if self.demo else field

    def ours(self, field: str) -> str:
        """Our name for the index field *field* (the inverse of ``name``)."""
        if self.demo:
            for mine, theirs in _DEMO_NAMES.items():
                if theirs == field:
                    return mine
        return field

    def renames(self) -> dict[str, str]:
        """``{our name: index name}`` of every field whose name differs (``{}`` in our layout)."""
        return dict(_DEMO_NAMES) if self.demo else {}


_QUOTED = re.compile(r"('(?:[^']|'')*')")


def rename_filter(filter_: str, renames: Mapping[str, str]) -> str:
    """*filter_* (OData) with each field name of *renames* replaced by its value, string literals untouched.

    Example: ``rename_filter("acl_users/any(u: u eq 'acl_users')", {"acl_users": "oids"})`` →
    ``"oids/any(u: u eq 'acl_users')"``.
    """
    if not renames:
        return filter_
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, renames)) + r")\b")
    parts = _QUOTED.split(filter_)
    return "".join(part if i % 2 else pattern.sub(lambda m: renames[m.group(1)], part) for i, part in enumerate(parts))


def bytes_per_vector(dimensions: int, compression: str = "none", truncation_dimensions: int = 0) -> int:
    """Bytes one vector takes in the vector index (the HNSW graph's links not counted), by the service's
    documented sizes ("Vector index size and staying under limits" and "Compress vectors using scalar or binary
    quantization", learn.microsoft.com): ``Edm.Single`` 4 bytes per dimension; scalar quantization to int8 1 byte
    per dimension; binary quantization 1 bit per dimension, packed into bytes. Truncation (text-embedding-3
    models) keeps the first *truncation_dimensions* before quantizing.

    Example: ``bytes_per_vector(1536)`` → 6144; ``bytes_per_vector(1536, "binary", 1024)`` → 128.

    Raises:
        ValueError: unknown *compression*, or truncation without compression or not shorter than *dimensions*.
    """
    if truncation_dimensions and (compression == "none" or not 0 < truncation_dimensions < dimensions):
        raise ValueError("truncation needs a compression and fewer dimensions than the vector's")
    kept = truncation_dimensions or dimensions
    if compression == "none":
        return 4 * kept
    if compression == "scalar":
        return kept
    if compression == "binary":
        return (kept + 7) // 8
    raise ValueError(f"unknown compression {compression!r} (none, scalar, binary)")
