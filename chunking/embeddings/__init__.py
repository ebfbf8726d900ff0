"""Embedders (text in, one vector of ``dimensions`` floats per text out) and request batching.

* ``OfflineLexicalEmbedder`` (``chunking.embeddings.offline``): deterministic, in-process, no network; hashes words
  and character trigrams, so it measures *lexical overlap*, not meaning. The embedded default, so the pipeline
  runs with no account.
* ``OpenAIEmbedder``: Azure OpenAI or any OpenAI-compatible ``/embeddings`` endpoint, through the ``openai`` SDK.
* ``LocalModelEmbedder`` (``chunking.embeddings.local``): a sentence-transformers model from local files only.
* ``batch_by_tokens`` / ``embed_all``: requests within the service limits (≤ 2,048 inputs, ≤ 8,191 tokens per
  input, a token budget per request). Source: Azure OpenAI quotas and limits
  (https://learn.microsoft.com/azure/ai-foundry/openai/quotas-limits); docs/architecture.md#limits-that-shape-the-code.

May import: core, errors, tokens.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol, Sequence, runtime_checkable

from chunking.embeddings.clients import azure_openai_client, openai_compatible_client
from chunking.embeddings.offline import OfflineLexicalEmbedder
from chunking.errors import EmbeddingError
from chunking.tokens import token_counter as _make_counter

__all__ = [
    "MAX_INPUTS_PER_REQUEST", "MAX_TOKENS_PER_INPUT", "Embedder", "OfflineLexicalEmbedder",
    "OpenAIEmbedder", "batch_by_tokens", "embed_all",
]  # fmt: skip

#: Inputs per ``/embeddings`` request (Azure OpenAI quotas and limits).
MAX_INPUTS_PER_REQUEST = 2048
#: Tokens per input for ada-002 / text-embedding-3-* (quotas-limits; one revision says 8,192, 8,191 is safe).
MAX_TOKENS_PER_INPUT = 8191


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into vectors.

    Attributes:
        name: model and dimensions, e.g. ``"offline-lexical-v1/256"``, ``"azure_openai/text-embedding-3-small/1536"``;
            vectors of embedders with different names are not comparable.
        dimensions: length of every vector. requests: ``embed`` calls so far (one request each). tokens: tokens
            spent so far (billed by the service, or counted locally; see each class).
    """

    name: str
    dimensions: int
    requests: int
    tokens: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed one request's worth of texts: one vector of ``dimensions`` floats per text, in input order."""
        ...


class OpenAIEmbedder:
    """Embeddings from Azure OpenAI or any OpenAI-compatible endpoint, via the ``openai`` SDK.

    Build it with ``OpenAIEmbedder.azure(...)`` or ``OpenAIEmbedder.openai_compatible(...)``, or pass any
    ``openai.OpenAI``/``AzureOpenAI`` client.

    Retries: the SDK's own retry loop is used (``max_retries`` on the client, 5 by the factories). As of openai
    3.57 (``_base_client.py``) it retries 408/409/429/≥500 and connection errors; it sleeps for the server's
    ``retry-after-ms`` or ``retry-after`` when that is within (0, 120] s, and otherwise backs off exponentially
    from 0.5 s to 8 s with up to 25 % jitter. A server asking for more than 120 s is not retried: the
    ``openai.RateLimitError`` propagates, so a queue-triggered caller fails and the message is retried later.

    Args:
        client: an ``openai.OpenAI`` or ``openai.AzureOpenAI`` client.
        model: model name, or for Azure the *deployment* name.
        dimensions: expected vector length; sent as ``dimensions`` when *send_dimensions*.
        backend: label used in ``name`` (``"azure_openai"`` or ``"openai"``).
        send_dimensions: whether to send ``dimensions`` (only text-embedding-3-* accept it; ada-002 rejects
            it). Default: when *model* contains ``"text-embedding-3"``.
        token_counter: text → tokens, used to refuse over-limit inputs before sending (default cl100k_base).

    Attributes:
        name: ``"<backend>/<model>/<dimensions>"``; requests: requests made; tokens: ``usage.prompt_tokens``
            summed over responses (tokens billed).
    """

    def __init__(
        self,
        client: Any,
        model: str,
        dimensions: int,
        *,
        backend: str = "openai",
        send_dimensions: bool | None = None,
        token_counter: Callable[[str], int] | None = None,
    ) -> None:
        if dimensions < 1:
            raise ValueError(f"dimensions must be ≥ 1, got {dimensions}")
        self._client = client
        self.model = model
        self.dimensions = dimensions
        self.name = f"{backend}/{model}/{dimensions}"
        self.send_dimensions = ("text-embedding-3" in model) if send_dimensions is None else send_dimensions
        if token_counter is None:
            token_counter = _make_counter("cl100k_base")
        self._count_tokens = token_counter
        self.requests = 0
        self.tokens = 0

    @classmethod
    def azure(
        cls, *, endpoint: str, deployment: str, dimensions: int, api_key: str | None = None,
        api_version: str = "2024-10-21", max_retries: int = 5, timeout_s: float = 60.0, http_client: Any = None,
        **kwargs: Any,
    ) -> "OpenAIEmbedder":  # fmt: skip
        """An embedder on an Azure OpenAI *deployment*.

        Authenticates with *api_key* when given, else with Microsoft Entra ID through
        ``DefaultAzureCredential`` (scope ``https://cognitiveservices.azure.com/.default``). *timeout_s* is per
        HTTP attempt, in seconds. Extra keyword arguments go to ``OpenAIEmbedder``.
        """
        client = azure_openai_client(endpoint=endpoint, api_key=api_key, api_version=api_version,
                                     max_retries=max_retries, timeout_s=timeout_s, http_client=http_client)
        return cls(client, deployment, dimensions, backend="azure_openai", **kwargs)

    @classmethod
    def openai_compatible(
        cls, *, model: str, dimensions: int, api_key: str, base_url: str | None = None, max_retries: int = 5,
        timeout_s: float = 60.0, http_client: Any = None, **kwargs: Any,
    ) -> "OpenAIEmbedder":  # fmt: skip
        """An embedder on OpenAI (*base_url* ``None``) or any OpenAI-compatible server at *base_url*."""
        client = openai_compatible_client(api_key=api_key, base_url=base_url, max_retries=max_retries,
                                          timeout_s=timeout_s, http_client=http_client)
        return cls(client, model, dimensions, backend="openai", **kwargs)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed *texts* in one request.

        Returns:
            one list of ``dimensions`` floats per text, in input order.

        Raises:
            ValueError: no texts, more than 2,048, or a text that is empty/whitespace-only or over 8,191 tokens
                (the message names its index); nothing is sent.
            EmbeddingError: the response has the wrong number of vectors or a vector of the wrong length.
            openai.APIError: the request failed after the SDK's retries.
        """
        texts = list(texts)
        if not texts:
            raise ValueError("embed() needs at least one text")
        if len(texts) > MAX_INPUTS_PER_REQUEST:
            raise ValueError(f"{len(texts)} inputs in one request; the limit is {MAX_INPUTS_PER_REQUEST}")
        for i, text in enumerate(texts):
            if not text.strip():
                raise ValueError(f"input {i} is empty or whitespace-only; embedding services reject it")
            n = self._count_tokens(text)
            if n > MAX_TOKENS_PER_INPUT:
                raise ValueError(f"input {i} has {n} tokens; the per-input limit is {MAX_TOKENS_PER_INPUT}")
        extra: dict[str, Any] = {"dimensions": self.dimensions} if self.send_dimensions else {}
        # "float" explicitly: without it the SDK asks for base64 and decodes it itself, which hides the wire
        # format from tests and gains nothing at our batch sizes.
        response = self._client.embeddings.create(model=self.model, input=texts, encoding_format="float", **extra)
        self.requests += 1
        usage = getattr(response, "usage", None)
        self.tokens += int(getattr(usage, "prompt_tokens", 0) or 0)
        data = sorted(response.data, key=lambda d: d.index)
        if len(data) != len(texts):
            raise EmbeddingError(f"{self.name}: sent {len(texts)} inputs, got {len(data)} vectors")
        vectors = [list(map(float, d.embedding)) for d in data]
        wrong = next((i for i, v in enumerate(vectors) if len(v) != self.dimensions), None)
        if wrong is not None:
            raise EmbeddingError(
                f"{self.name}: vector {wrong} has {len(vectors[wrong])} dimensions, expected "
                f"{self.dimensions} (check EMBEDDING_DIMENSIONS against the model or deployment)"
            )
        return vectors


def batch_by_tokens(
    token_counts: Sequence[int], max_batch_tokens: int, max_inputs: int = MAX_INPUTS_PER_REQUEST
) -> list[range]:
    """Split inputs into consecutive batches of ≤ *max_inputs* inputs and ≤ *max_batch_tokens* tokens.

    Greedy and order-preserving: a batch is closed when the next input would break either budget. An input
    over *max_batch_tokens* (but within the per-input limit) goes in a batch of its own.

    Example: ``batch_by_tokens([3, 3, 3, 5], max_batch_tokens=6)`` → ``[range(0, 2), range(2, 3), range(3, 4)]``.

    Args:
        token_counts: tokens of each input, in order.
        max_batch_tokens: token budget per request, ≥ 1.
        max_inputs: inputs per request, 1–2,048.

    Returns:
        ranges of input indices covering ``range(len(token_counts))`` in order, none empty.

    Raises:
        ValueError: a budget is out of range, or an input has < 1 token (empty) or > 8,191 tokens (the message
            names its index).
    """
    if max_batch_tokens < 1:
        raise ValueError(f"max_batch_tokens must be ≥ 1, got {max_batch_tokens}")
    if not 1 <= max_inputs <= MAX_INPUTS_PER_REQUEST:
        raise ValueError(f"max_inputs must be in 1..{MAX_INPUTS_PER_REQUEST}, got {max_inputs}")
    batches: list[range] = []
    start = tokens = 0
    for i, n in enumerate(token_counts):
        if n < 1:
            raise ValueError(f"input {i} has {n} tokens; empty inputs cannot be embedded")
        if n > MAX_TOKENS_PER_INPUT:
            raise ValueError(f"input {i} has {n} tokens; the per-input limit is {MAX_TOKENS_PER_INPUT}")
        if i > start and (tokens + n > max_batch_tokens or i - start >= max_inputs):
            batches.append(range(start, i))
            start, tokens = i, 0
        tokens += n
    if start < len(token_counts):
        batches.append(range(start, len(token_counts)))
    return batches


def embed_all(
    embedder: Embedder, texts: Sequence[str], token_counts: Sequence[int], *, max_batch_tokens: int,
    max_inputs: int = MAX_INPUTS_PER_REQUEST,
) -> list[list[float]]:  # fmt: skip
    """Embed any number of *texts* with one ``embedder.embed`` call per ``batch_by_tokens`` batch.

    Args:
        texts: the inputs; token_counts: their tokens (same length, same encoding as the model).
        max_batch_tokens, max_inputs: per-request budgets, as in ``batch_by_tokens``.

    Returns:
        one vector of ``embedder.dimensions`` floats per text, in input order.

    Raises:
        ValueError: lengths differ, or as ``batch_by_tokens``.
        EmbeddingError: a batch came back with the wrong number of vectors.
    """
    if len(texts) != len(token_counts):
        raise ValueError(f"{len(texts)} texts but {len(token_counts)} token counts")
    vectors: list[list[float]] = []
    for batch in batch_by_tokens(token_counts, max_batch_tokens, max_inputs):
        got = embedder.embed([texts[i] for i in batch])
        if len(got) != len(batch):
            raise EmbeddingError(f"{embedder.name}: sent {len(batch)} inputs, got {len(got)} vectors")
        vectors.extend(got)
    return vectors
