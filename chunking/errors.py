"""What kind of failure an exception is: worth retrying later, or not.

``transient`` failures (throttling, an outage, a dropped connection, a missing claim-check payload that stage 1
can write again) heal by themselves: reconcile retries a version failed by one, with back-off. ``permanent``
ones (bad input, refused credentials, a vector dimension the index does not hold) stay ``failed`` with their
reason until a new upload or a settings change. See docs/architecture.md#failures-and-retries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Failure", "classify", "reason_of"]

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
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        raw = headers.get(name) if hasattr(headers, "get") else None
        if raw is not None:
            try:
                return max(0.0, float(raw) / scale)
            except ValueError:
                return None
    return None


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
