"""What a failure is: worth retrying later or not (:func:`classify`), and, for a failed service call, one line a
person can act on (:func:`describe_failure`).

``transient`` failures (throttling, an outage, a dropped connection, a missing claim-check payload that stage 1
can write again) heal by themselves: reconcile retries a version failed by one, with back-off. ``permanent``
ones (bad input, refused credentials, a vector dimension the index does not hold) stay ``failed`` with their
reason until a new upload or a settings change. See docs/architecture.md#failures-and-retries.

``describe_failure(exc, settings)`` recognises the errors of the SDKs we call (azure-core for Storage and AI
Search, azure-identity for Entra ID, openai for Azure OpenAI and OpenAI-compatible endpoints) and the
:class:`StorageError` the storage adapter raises, also when they are wrapped (``raise … from exc``), and says
what kind of failure it is, so callers decide what follows:

- ``unreachable``: no connection or no answer; nothing about the document is wrong (exit status 2);
- ``auth``: 401/403 or no credential; retrying cannot help until a setting or a role changes (ledger ``failed``);
- ``throttled``: 429, after the SDK's own retries; the next attempt is due after ``retry_after_s``;
- ``server``: 5xx after the SDK's retries; worth another attempt later;
- ``rejected``: any other 4xx: the request itself was refused (the message says why).

Every message goes through ``chunking.redact.redact``: no key, SAS or token is ever part of it. The SDKs are
optional here: their exception classes are imported only once an exception from their module is seen.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from chunking.redact import describe_storage, redact, url_host

__all__ = ["EmbeddingError", "Failure", "IndexError_", "ServiceFailure", "StorageError", "UnreadableFileError",
           "classify", "describe_failure", "reason_of"]


class StorageError(RuntimeError):
    """A storage call failed. The message names the resource (container, queue, table or blob), the account and
    its endpoint, and the reason; never a key or a connection string. Raised by ``chunking.storage``, which
    translates the storage SDKs' exceptions into it."""


class IndexError_(RuntimeError):
    """An index operation failed (after the in-call retries); the message names the keys and the reason. Raised by
    both indexes of ``chunking.index``.

    ``status``: the HTTP status of the last answer when there was one; ``retry_after_s``: the wait the service
    asked for (``Retry-After``), if it said (used to defer the work instead of failing it)."""

    def __init__(self, message: str, *, status: int | None = None, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after_s = retry_after_s


class UnreadableFileError(ValueError):
    """A local file of a batch run (``chunking ingest``, ``chunking upload``) that cannot be read: a dangling
    symbolic link, a link loop, no permission. The message is the reason (``dangling symbolic link: …``), without
    the file's name, which the caller's line gives. Permanent: the same file fails the same way until it changes.
    Raised by ``chunking.pipeline.ingest.read_local_file``."""


class EmbeddingError(RuntimeError):
    """The embedding service answered something unusable (wrong vector count or dimension). Raised by the
    embedders of ``chunking.embeddings``."""


# --- transient or permanent -----------------------------------------------------------------------------------

# HTTP statuses after which the same request can succeed later (timeouts, conflicts, throttling, outages).
_TRANSIENT_STATUS = {408, 409, 422, 429, 500, 502, 503, 504}
_THROTTLE_STATUS = {429, 503}
# Exception classes by name (the SDKs are optional imports here): openai's and azure-core's.
_PERMANENT_TYPES = {"AuthenticationError", "PermissionDeniedError", "BadRequestError", "NotFoundError",
                    "UnprocessableEntityError", "ClientAuthenticationError", "ParseError", "MessageError",
                    "ValueError", "TypeError", "KeyError", "UnicodeDecodeError"}
_TRANSIENT_TYPES = {"RateLimitError", "APIConnectionError", "APITimeoutError", "InternalServerError",
                    "ServiceRequestError", "ServiceResponseError", "PayloadMissingError", "StorageError",
                    "TimeoutError", "ConnectionError"}
_STATUS_IN_TEXT = re.compile(r"\bHTTP (\d{3})\b")


@dataclass(frozen=True)
class Failure:
    """``kind``: ``transient`` or ``permanent``; ``throttled``: the service asked to slow down (429, 503);
    ``retry_after_s``: the wait it asked for, if it said."""

    kind: str
    throttled: bool = False
    retry_after_s: float | None = None


def _status(exc: BaseException) -> int | None:
    for attr in ("status", "status_code"):
        value = getattr(exc, attr, None)
        if isinstance(value, int):
            return value
    found = _STATUS_IN_TEXT.findall(str(exc))
    return int(found[-1]) if found else None


def _retry_after(exc: BaseException) -> float | None:
    value = getattr(exc, "retry_after_s", None)
    if isinstance(value, (int, float)):
        return float(value)
    return _header_retry_after(getattr(getattr(exc, "response", None), "headers", None) or {})


def classify(exc: BaseException) -> Failure:
    """The kind of *exc*: by its HTTP status when it carries one (``status``/``status_code``, or ``HTTP nnn`` in
    its message), else by its class (or a base class) name; an unknown exception is ``transient`` (reconcile's
    back-off and its limit on retries keep a bug from being retried for ever)."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    status = _status(exc)
    retry_after = _retry_after(exc)
    if status is not None and not names & {"PayloadMissingError"}:
        if status in _TRANSIENT_STATUS:
            return Failure("transient", status in _THROTTLE_STATUS, retry_after)
        return Failure("permanent")
    if retry_after is not None or "RateLimitError" in names:
        return Failure("transient", True, retry_after)
    if names & _TRANSIENT_TYPES:
        return Failure("transient")
    if names & _PERMANENT_TYPES:
        return Failure("permanent")
    return Failure("transient")


def reason_of(exc: BaseException) -> str:
    """``"<ExceptionType>: <message>"``: every exception type keeps its own name in the recorded reason."""
    text = str(exc) or repr(exc)
    return f"{type(exc).__name__}: {text}"


# --- one line for a failed service call -----------------------------------------------------------------------

_MAX_DETAIL_CHARS = 200


@dataclass(frozen=True)
class ServiceFailure:
    """One failed service call. ``line``: ``"<service>: <what happened>: <what to check>"``, one line."""

    service: str
    kind: str  # unreachable | auth | throttled | server | rejected
    status: int | None
    line: str
    retry_after_s: float | None = None


def describe_failure(exc: BaseException, settings: Any) -> ServiceFailure | None:
    """The ``ServiceFailure`` behind *exc* (or an exception it wraps), ``None`` when it is not a service error."""
    for error in _chain(exc):
        failure = _one(error, settings)
        if failure is not None:
            return failure
    return None


def _chain(exc: BaseException):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)


def _one(error: BaseException, settings: Any) -> ServiceFailure | None:
    if isinstance(error, StorageError):  # already one line naming the resource, account and reason
        text = str(error)
        kind = "unreachable" if "not reachable" in text else "auth" if "refused access" in text else "rejected"
        return ServiceFailure("storage", kind, getattr(error, "status", None), redact(text))
    module = type(error).__module__
    if module.startswith("openai"):
        return _openai(error, settings)
    if module.startswith("azure.identity"):
        return _failure("Microsoft Entra ID", "auth", None, f"no token ({_detail(error)})",
                        "sign in (az login) or give the app a managed identity, or set the service's key")
    if module.startswith("azure.core"):
        return _azure(error, settings)
    return None


def _openai(error: BaseException, settings: Any) -> ServiceFailure | None:
    import openai

    url = ""
    request = getattr(error, "request", None)
    if request is not None:
        url = str(getattr(request, "url", ""))
    azure = getattr(settings, "embedding_backend", "") == "azure_openai" or "openai.azure.com" in url
    host = url_host(url) or url_host(getattr(settings, "azure_openai_endpoint", "") if azure else
                                     getattr(settings, "openai_base_url", "") or "https://api.openai.com")
    service = f"{'Azure OpenAI' if azure else 'OpenAI-compatible endpoint'} at {host}"
    endpoint_setting = "AZURE_OPENAI_ENDPOINT" if azure else "OPENAI_BASE_URL"
    key_setting = "AZURE_OPENAI_API_KEY" if azure else "OPENAI_API_KEY"
    if isinstance(error, openai.APIConnectionError):  # includes APITimeoutError
        return _failure(service, "unreachable", None, f"not reachable ({_detail(error)})",
                        f"check {endpoint_setting} and the network")
    if isinstance(error, openai.APIStatusError):
        status = error.status_code
        retry_after = _header_retry_after(getattr(error.response, "headers", {}))
        return _by_status(service, status, retry_after, _detail(error), {
            "auth": f"check {key_setting}, or that the signed-in identity has the role Cognitive Services OpenAI "
                    "User" if azure else f"check {key_setting}",
            "missing": "check AZURE_OPENAI_EMBEDDING_DEPLOYMENT (the deployment name) and AZURE_OPENAI_API_VERSION"
                       if azure else "check EMBEDDING_MODEL and OPENAI_BASE_URL",
        })
    return None


def _azure(error: BaseException, settings: Any) -> ServiceFailure | None:
    from azure.core.exceptions import (
        ClientAuthenticationError,
        HttpResponseError,
        ServiceRequestError,
        ServiceResponseError,
    )

    url = ""
    response = getattr(error, "response", None)
    if response is not None and getattr(response, "request", None) is not None:
        url = str(response.request.url)
    if isinstance(error, ClientAuthenticationError) and response is None:  # no token: the credential failed
        return _failure("Microsoft Entra ID", "auth", None, f"no token ({_detail(error)})",
                        "sign in (az login) or give the app a managed identity, or set the service's key")
    service, hints = _azure_service(url, str(error), settings)
    if isinstance(error, (ServiceRequestError, ServiceResponseError)):
        return _failure(service, "unreachable", None, f"not reachable ({_detail(error)})", hints["unreachable"])
    if isinstance(error, HttpResponseError):
        status = getattr(error, "status_code", None) or getattr(response, "status_code", None)
        retry_after = _header_retry_after(getattr(response, "headers", {}) or {})
        return _by_status(service, status, retry_after, _detail(error, getattr(error, "reason", None)), hints)
    return None


# Where a connection error names its host (urllib3: ``HTTPSConnection(host='h', port=443)``; aiohttp: ``Cannot
# connect to host h:443``): a ServiceRequestError carries no request, so its text is all there is.
_HOST_IN_TEXT = re.compile(r"host='([^']+)', port=(\d+)|connect to host ([^\s:]+):(\d+)")


def _endpoint_matches(endpoint: str, url: str, text: str) -> bool:
    """Whether the failed call went to *endpoint*: same host (and port, when the endpoint names one) as *url*,
    or as the host a connection error's *text* names."""
    host = url_host(endpoint)
    if not host:
        return False
    name, _, port = host.partition(":")
    seen = [url_host(url)] if url else []
    seen += [f"{m.group(1) or m.group(3)}:{m.group(2) or m.group(4)}" for m in _HOST_IN_TEXT.finditer(text)]
    for other in seen:
        other_name, _, other_port = other.partition(":")
        if other_name.lower() == name.lower() and (not port or not other_port or port == other_port):
            return True
    return False


def _azure_service(url: str, text: str, settings: Any) -> tuple[str, dict[str, str]]:
    search = getattr(settings, "search_endpoint", "") or ""
    search_host = url_host(search)
    host = url_host(url)
    if (search_host and (_endpoint_matches(search, url, text) or search_host in text)) or \
            ".search.windows.net" in host:
        return f"Azure AI Search at {search_host or host}", {
            "unreachable": "check AZURE_SEARCH_ENDPOINT and the network",
            "auth": "check AZURE_SEARCH_API_KEY, or that the signed-in identity has the role Search Index Data "
                    "Contributor",
            "missing": "check AZURE_SEARCH_INDEX",
        }
    docintel = getattr(getattr(settings, "document_intelligence", None), "endpoint", "") or ""
    if (docintel and _endpoint_matches(docintel, url, text)) or "/documentintelligence/" in url:
        return f"Document Intelligence at {url_host(docintel) or host}", {
            "unreachable": "check DOCUMENT_INTELLIGENCE_ENDPOINT and the network",
            "auth": "check DOCUMENT_INTELLIGENCE_API_KEY, or that the signed-in identity has the role Cognitive "
                    "Services User on the account",
            "missing": "check DOCUMENT_INTELLIGENCE_MODEL and DOCUMENT_INTELLIGENCE_API_VERSION",
        }
    local = getattr(settings, "storage_connection", "").lower().startswith("usedevelopmentstorage")
    return f"storage ({describe_storage(settings)})", {
        "unreachable": "check AzureWebJobsStorage" + (" (for local storage start Azurite: npx azurite)" if local
                                                      else " and the network"),
        "auth": "check the key or SAS in AzureWebJobsStorage, or that the signed-in identity has the roles Storage "
                "Blob Data Owner, Storage Queue Data Contributor and Storage Table Data Contributor",
        "missing": "check the container, queue and table settings (DOCUMENTS_CONTAINER, CHUNK_BATCH_QUEUE, "
                   "LEDGER_TABLE)",
    }


def _by_status(service: str, status: int | None, retry_after: float | None, detail: str,
               hints: dict[str, str]) -> ServiceFailure:
    code = f"HTTP {status}" if status else "error"
    if status in (401, 403):
        return _failure(service, "auth", status, f"{code}, not authorised ({detail})", hints["auth"])
    if status == 429:
        wait = f"retry after {retry_after:g} s" if retry_after else "retry later"
        return _failure(service, "throttled", status, f"{code}, throttled ({detail})", wait, retry_after)
    if status is not None and status >= 500:
        return _failure(service, "server", status, f"{code}, service error after retries ({detail})",
                        "try again later; the service's status page may say more")
    if status == 404:
        return _failure(service, "rejected", status, f"{code}, not found ({detail})", hints["missing"])
    return _failure(service, "rejected", status, f"{code}, request refused ({detail})",
                    "the message above says what the service refused")


def _failure(service: str, kind: str, status: int | None, what: str, check: str,
             retry_after: float | None = None) -> ServiceFailure:
    return ServiceFailure(service, kind, status, redact(f"{service}: {what}: {check}"), retry_after)


def _detail(error: BaseException, fallback: str | None = None) -> str:
    text = " ".join(str(getattr(error, "message", None) or error or fallback or type(error).__name__).split())
    text = redact(text)
    return text if len(text) <= _MAX_DETAIL_CHARS else text[: _MAX_DETAIL_CHARS - 1] + "…"


def _header_retry_after(headers: Any) -> float | None:
    """The wait a response's headers ask for, in seconds (≥ 0): ``retry-after-ms``, else ``retry-after``
    (seconds; the HTTP-date form is not read); ``None`` when neither is a number."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        try:
            raw = headers.get(name)
        except Exception:
            return None
        if raw:
            try:
                return max(0.0, float(raw) / scale)
            except ValueError:
                return None
    return None
