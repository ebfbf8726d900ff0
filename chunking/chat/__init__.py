"""Chat models for the model-based strategies: the ``ChatClient`` interface, its Azure OpenAI / OpenAI-compatible
implementation, and cached, bounded-concurrency calls (``run_chat_tasks``).

The offline implementation (``OfflineChatClient``, rule-based and deterministic) is in ``offline.py``.
Sources: Azure OpenAI chat completions and quotas (https://learn.microsoft.com/azure/ai-foundry/openai/reference,
…/quotas-limits); the SDK's retry behaviour: docs/architecture.md#platform-facts-and-their-sources.

May import: core, errors, tokens, embeddings, storage.
"""

from __future__ import annotations

import json
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, Sequence, runtime_checkable

from chunking.chat.cache import ModelCache, cache_key
from chunking.embeddings.clients import azure_openai_client, openai_compatible_client

__all__ = ["ChatClient", "ChatError", "ChatTask", "InvalidOutput", "OpenAIChatClient", "json_list", "run_chat_tasks"]

log = logging.getLogger("chunking.strategies")

Message = Mapping[str, str]


class ChatError(RuntimeError):
    """The chat service answered something unusable (no text, or the answer was filtered)."""


class InvalidOutput(ValueError):
    """A model answer failed a strategy's validation; the message says which rule."""


def json_list(answer: str, key: str) -> list:
    """The list under *key* of a JSON-object model answer (``{"key": [...]}``).

    Raises:
        InvalidOutput: the answer is not JSON, not an object, or has no list under *key*.
    """
    try:
        data = json.loads(answer)
    except (TypeError, ValueError) as exc:
        raise InvalidOutput(f"not JSON: {exc}") from None
    items = data.get(key) if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise InvalidOutput(f'no "{key}" list')
    return items


@runtime_checkable
class ChatClient(Protocol):
    """Anything that completes a chat.

    Attributes:
        name: backend and model, e.g. ``"azure_openai/gpt-4o-mini"``, ``"offline-chat-v1"``; part of every cache
            key and of the document version. requests: ``complete`` calls that reached the model so far.
    """

    name: str
    requests: int

    def complete(self, messages: Sequence[Message], *, temperature: float = 0.0, max_tokens: int = 1024,
                 response_format: Mapping[str, Any] | None = None) -> str:
        """The model's answer (the first choice's text) to *messages* (``{"role", "content"}`` dicts).

        Args:
            temperature: sampling temperature (0 for the strategies: as deterministic as the model allows).
            max_tokens: cap on the answer's tokens.
            response_format: e.g. ``{"type": "json_object"}`` to ask for JSON.

        Raises:
            ChatError: no usable answer. Transport and service errors propagate after the client's retries.
        """
        ...


class OpenAIChatClient:
    """Chat completions from Azure OpenAI or any OpenAI-compatible endpoint, via the ``openai`` SDK.

    Build it with ``OpenAIChatClient.azure(...)`` or ``.openai_compatible(...)`` (as ``OpenAIEmbedder`` is built),
    or pass any ``openai.OpenAI``/``AzureOpenAI`` client. Retries are the SDK's own (``max_retries``, 5 by the
    factories): 408/409/429/≥500 and connection errors, sleeping for the server's ``retry-after-ms`` or
    ``retry-after`` when within (0, 120] s, else exponential back-off with jitter; a longer requested wait is not
    retried and the ``openai.RateLimitError`` propagates (the strategy then falls back).

    Args:
        client: an ``openai.OpenAI`` or ``openai.AzureOpenAI`` client.
        model: model name, or for Azure the *deployment* name.
        backend: label used in ``name``.

    Attributes:
        name: ``"<backend>/<model>"``; requests: calls made; tokens: ``usage.total_tokens`` summed (billed).
    """

    def __init__(self, client: Any, model: str, *, backend: str = "openai") -> None:
        self._client = client
        self.model = model
        self.name = f"{backend}/{model}"
        self.requests = 0
        self.tokens = 0
        self._lock = threading.Lock()  # run_chat_tasks calls from several threads

    @classmethod
    def azure(
        cls, *, endpoint: str, deployment: str, api_key: str | None = None, api_version: str = "2024-10-21",
        max_retries: int = 5, timeout_s: float = 60.0, http_client: Any = None,
    ) -> "OpenAIChatClient":  # fmt: skip
        """A client on an Azure OpenAI chat *deployment*: API key when given, else Microsoft Entra ID through
        ``DefaultAzureCredential`` (scope ``https://cognitiveservices.azure.com/.default``). *timeout_s* is per
        HTTP attempt, in seconds."""
        client = azure_openai_client(endpoint=endpoint, api_key=api_key, api_version=api_version,
                                     max_retries=max_retries, timeout_s=timeout_s, http_client=http_client)
        return cls(client, deployment, backend="azure_openai")

    @classmethod
    def openai_compatible(
        cls, *, model: str, api_key: str, base_url: str | None = None, max_retries: int = 5, timeout_s: float = 60.0,
        http_client: Any = None,
    ) -> "OpenAIChatClient":  # fmt: skip
        """A client on OpenAI (*base_url* ``None``) or any OpenAI-compatible server at *base_url*."""
        client = openai_compatible_client(api_key=api_key, base_url=base_url, max_retries=max_retries,
                                          timeout_s=timeout_s, http_client=http_client)
        return cls(client, model, backend="openai")

    def complete(self, messages: Sequence[Message], *, temperature: float = 0.0, max_tokens: int = 1024,
                 response_format: Mapping[str, Any] | None = None) -> str:
        """See ``ChatClient.complete``. Raises ``ChatError`` when the first choice has no text."""
        extra: dict[str, Any] = {"response_format": dict(response_format)} if response_format else {}
        response = self._client.chat.completions.create(
            model=self.model, messages=[dict(m) for m in messages], temperature=temperature, max_tokens=max_tokens,
            **extra,
        )
        usage = getattr(response, "usage", None)
        with self._lock:
            self.requests += 1
            self.tokens += int(getattr(usage, "total_tokens", 0) or 0)
        choices = getattr(response, "choices", None) or []
        content = choices[0].message.content if choices else None
        if not content:
            reason = choices[0].finish_reason if choices else "no choices"
            raise ChatError(f"{self.name}: empty answer (finish_reason {reason})")
        return content


@dataclass(frozen=True)
class ChatTask:
    """One cached chat call.

    Attributes:
        strategy, prompt_version: which prompt asked (part of the cache key).
        input_text: the variable input (a passage, a window of units…), part of the cache key.
        messages: the full request. parameters: everything else that shapes the answer (part of the key).
        max_tokens, response_format: passed to ``complete``; temperature is always 0.
    """

    strategy: str
    prompt_version: str
    input_text: str
    messages: tuple[Mapping[str, str], ...]
    parameters: Mapping[str, Any] = field(default_factory=dict)
    max_tokens: int = 1024
    response_format: Mapping[str, Any] | None = None

    def key(self, model: str) -> str:
        return cache_key(self.strategy, self.prompt_version, model, self.parameters, self.input_text)


def run_chat_tasks(chat: ChatClient, cache: ModelCache, tasks: Sequence[ChatTask],
                   max_concurrency: int = 4) -> list[str | Exception]:
    """Answer *tasks* in order: from the cache where possible, else by *chat* (at most *max_concurrency* calls at
    a time), storing every answer received.

    An answer is stored as received, valid or not, so a later run repeats the same decision (including a
    fallback) without calling the model; a call that raised is not stored and is tried again next time.

    Returns:
        per task, the answer text or the exception its call raised (never raises for a failed call).
    """
    keys = [t.key(chat.name) for t in tasks]
    found = cache.get_many(list(dict.fromkeys(keys)))
    results: list[str | Exception | None] = [found.get(k) for k in keys]
    todo = [i for i, r in enumerate(results) if r is None]
    # Equal tasks in one batch (e.g. repeated boilerplate passages) cost one call.
    first_of: dict[str, int] = {}
    for i in todo:
        first_of.setdefault(keys[i], i)

    def call(i: int) -> str | Exception:
        t = tasks[i]
        try:
            return chat.complete(list(t.messages), temperature=0.0, max_tokens=t.max_tokens,
                                 response_format=t.response_format)
        except Exception as exc:  # noqa: BLE001 - the strategy falls back; the reason is kept and logged
            log.warning("%s call failed for %s (%s): %s", chat.name, t.strategy, t.prompt_version, exc)
            return exc

    unique = list(first_of.values())
    if len(unique) > 1 and max_concurrency > 1:
        with ThreadPoolExecutor(min(max_concurrency, len(unique))) as pool:
            answers = dict(zip(unique, pool.map(call, unique)))
    else:
        answers = {i: call(i) for i in unique}
    cache.put_many({keys[i]: a for i, a in answers.items() if isinstance(a, str)})
    for i in todo:
        results[i] = answers[first_of[keys[i]]]
    return results  # type: ignore[return-value]
