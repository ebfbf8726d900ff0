"""What the Azure AI Search index declares besides its fields: the field layout, the query vectorizer, vector
compression, native document-level security and language analyzers (docs/search.md#the-index-definition,
docs/security.md, docs/integrations.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from .values import SettingsError, bool_value, int_value, parsed_value, str_value

__all__ = ["COMPRESSIONS", "INDEX_LAYOUTS", "IndexDesignSettings", "LANGUAGE_ANALYZERS", "QUERY_VECTORIZATIONS",
           "TRUNCATABLE_MODELS", "VECTORIZER_MODELS"]

INDEX_LAYOUTS = ("chunking", "azure-search-openai-demo")
QUERY_VECTORIZATIONS = ("client", "service")
COMPRESSIONS = ("none", "scalar", "binary")
#: Language code → the service's Microsoft (lemmatizing) analyzer ("Language analyzers", learn.microsoft.com:
#: search-language-support). Only the languages the pipeline detects (chunking.documents.language) are listed.
LANGUAGE_ANALYZERS: Mapping[str, str] = {
    "en": "en.microsoft", "es": "es.microsoft", "fr": "fr.microsoft", "de": "de.microsoft", "it": "it.microsoft",
    "pt": "pt-Pt.microsoft", "nl": "nl.microsoft", "ja": "ja.microsoft", "zh": "zh-Hans.microsoft",
    "ko": "ko.microsoft", "ru": "ru.microsoft", "ar": "ar.microsoft",
}
#: Embedding models the service's Azure OpenAI vectorizer knows (``AzureOpenAIVectorizerParameters.modelName``,
#: REST reference), and those that may be shortened (trained for it: "Truncate dimensions using MRL compression",
#: learn.microsoft.com).
VECTORIZER_MODELS = ("text-embedding-ada-002", "text-embedding-3-small", "text-embedding-3-large")
TRUNCATABLE_MODELS = ("text-embedding-3-small", "text-embedding-3-large")
#: The first preview REST API version whose index definition has ``permissionFilter`` and
#: ``permissionFilterOption`` and whose queries read ``x-ms-query-source-authorization`` (2025-05-01-preview;
#: "Query-time ACL and RBAC enforcement", learn.microsoft.com). The GA 2026-04-01 that azure-search-documents
#: 12.0 speaks has neither; the default is the newest preview the docs name.
PREVIEW_API_VERSION = "2025-11-01-preview"


def _choice(name: str, options: tuple[str, ...]):
    def parse(raw: str) -> str:
        if raw.lower() not in options:
            raise ValueError(raw)
        return raw.lower()

    return parse


def _languages(raw: str) -> tuple[str, ...]:
    codes = tuple(dict.fromkeys(code.strip().lower() for code in raw.split(",") if code.strip()))
    unknown = [code for code in codes if code not in LANGUAGE_ANALYZERS]
    if unknown:
        raise ValueError(",".join(unknown))
    return codes


def _oversampling(raw: str) -> float:
    value = float(raw)
    if not 1.0 <= value <= 100.0:
        raise ValueError(raw)
    return value


@dataclass(frozen=True)
class IndexDesignSettings:
    """The index definition's choices (docs/settings.md#index-definition).

    Environment variables (defaults in brackets): ``INDEX_LAYOUT`` [chunking] (``chunking`` or
    ``azure-search-openai-demo``: field names that app reads), ``INDEX_CATEGORY`` [empty] (the ``category`` of a
    document without a ``category`` metadata field, demo layout), ``SEARCH_QUERY_VECTORIZATION`` [client]
    (``service``: send the query text and let the index's vectorizer embed it), ``SEARCH_VECTOR_COMPRESSION``
    [scalar] (``none``, ``scalar`` (int8) or ``binary``), ``SEARCH_VECTOR_TRUNCATION_DIMENSIONS`` [0: none]
    (text-embedding-3 models only), ``SEARCH_VECTOR_OVERSAMPLING`` [4] (rescoring with the original vectors, 1–100),
    ``SEARCH_PERMISSION_FILTERS`` [false] (native document-level security; a preview API version),
    ``SEARCH_PREVIEW_API_VERSION`` [2025-11-01-preview], ``SEARCH_LANGUAGES`` [empty] (``en,es,ja``: a content
    field per language with that language's analyzer).
    """

    layout: str = "chunking"
    category: str = ""
    query_vectorization: str = "client"
    compression: str = "scalar"
    truncation_dimensions: int = 0
    oversampling: float = 4.0
    permission_filters: bool = False
    preview_api_version: str = PREVIEW_API_VERSION
    languages: tuple[str, ...] = ()

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> "IndexDesignSettings":
        """Read the variables of the class docstring from *env*.

        Raises:
            SettingsError: a value is malformed (the message names the variable).
        """
        preview = str_value(env, "SEARCH_PREVIEW_API_VERSION", PREVIEW_API_VERSION)
        if not preview.endswith("-preview"):
            raise SettingsError(f"SEARCH_PREVIEW_API_VERSION must be a preview version (…-preview), got {preview!r}")
        return cls(
            layout=parsed_value(env, "INDEX_LAYOUT", "chunking", _choice("INDEX_LAYOUT", INDEX_LAYOUTS),
                                " or ".join(INDEX_LAYOUTS)),
            category=str_value(env, "INDEX_CATEGORY"),
            query_vectorization=parsed_value(env, "SEARCH_QUERY_VECTORIZATION", "client",
                                             _choice("SEARCH_QUERY_VECTORIZATION", QUERY_VECTORIZATIONS),
                                             "client or service"),
            compression=parsed_value(env, "SEARCH_VECTOR_COMPRESSION", "scalar",
                                     _choice("SEARCH_VECTOR_COMPRESSION", COMPRESSIONS), "none, scalar or binary"),
            truncation_dimensions=int_value(env, "SEARCH_VECTOR_TRUNCATION_DIMENSIONS", 0, 0),
            oversampling=parsed_value(env, "SEARCH_VECTOR_OVERSAMPLING", 4.0, _oversampling, "a number in [1, 100]"),
            permission_filters=bool_value(env, "SEARCH_PERMISSION_FILTERS"),
            preview_api_version=preview,
            languages=parsed_value(env, "SEARCH_LANGUAGES", (), _languages,
                                   f"comma-separated language codes among {', '.join(LANGUAGE_ANALYZERS)}"),
        )

    def check(self, embedding_backend: str, embedding_model: str, dimensions: int) -> None:
        """Check these choices against the embedder (``Settings.from_env`` calls it).

        Raises:
            SettingsError: ``SEARCH_QUERY_VECTORIZATION=service`` without an embedder the service can call (Azure
                OpenAI, a model of ``VECTORIZER_MODELS``); truncation of a model not trained for it, without a
                compression, or to no fewer dimensions than the embedding's.
        """
        if self.query_vectorization == "service" and not (
                embedding_backend == "azure_openai" and embedding_model in VECTORIZER_MODELS):
            raise SettingsError("SEARCH_QUERY_VECTORIZATION=service needs the Azure OpenAI embedder "
                                f"(EMBEDDING_BACKEND=azure_openai with one of {', '.join(VECTORIZER_MODELS)}): the "
                                "index's vectorizer calls that deployment")
        cut = self.truncation_dimensions
        if cut and embedding_model not in TRUNCATABLE_MODELS:
            raise SettingsError(f"SEARCH_VECTOR_TRUNCATION_DIMENSIONS applies to {' and '.join(TRUNCATABLE_MODELS)}, "
                                f"not {embedding_model!r}")
        if cut and self.compression == "none":
            raise SettingsError("SEARCH_VECTOR_TRUNCATION_DIMENSIONS needs SEARCH_VECTOR_COMPRESSION scalar or "
                                "binary (truncation is a property of the compression)")
        if cut and cut >= dimensions:
            raise SettingsError(f"SEARCH_VECTOR_TRUNCATION_DIMENSIONS ({cut}) must be below the embedding's "
                                f"{dimensions} dimensions (EMBEDDING_DIMENSIONS)")
