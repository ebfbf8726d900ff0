"""OpenAI SDK clients for Azure OpenAI and OpenAI-compatible endpoints, shared by the embedder and the chat
client. The SDK's own retries honour ``Retry-After``/``retry-after-ms`` on 429 and 5xx (up to *max_retries*)."""

from __future__ import annotations

from typing import Any

__all__ = ["azure_openai_client", "openai_compatible_client"]

_COGNITIVE_SERVICES_SCOPE = "https://cognitiveservices.azure.com/.default"


def azure_openai_client(*, endpoint: str, api_key: str | None, api_version: str, max_retries: int,
                        timeout_s: float, http_client: Any = None) -> Any:
    """An ``AzureOpenAI`` client: *api_key* when given, else Microsoft Entra ID through ``DefaultAzureCredential``
    (scope ``https://cognitiveservices.azure.com/.default``). *timeout_s* is per HTTP attempt, in seconds."""
    from openai import AzureOpenAI

    auth: dict[str, Any] = {"api_key": api_key}
    if not api_key:
        from azure.identity import DefaultAzureCredential, get_bearer_token_provider

        auth = {"azure_ad_token_provider": get_bearer_token_provider(DefaultAzureCredential(),
                                                                     _COGNITIVE_SERVICES_SCOPE)}
    return AzureOpenAI(azure_endpoint=endpoint, api_version=api_version, max_retries=max_retries, timeout=timeout_s,
                       http_client=http_client, **auth)


def openai_compatible_client(*, api_key: str, base_url: str | None, max_retries: int, timeout_s: float,
                             http_client: Any = None) -> Any:
    """An ``OpenAI`` client on OpenAI itself (*base_url* ``None``) or any OpenAI-compatible server."""
    from openai import OpenAI

    return OpenAI(base_url=base_url or None, api_key=api_key, max_retries=max_retries, timeout=timeout_s,
                  http_client=http_client)
