"""Retries of Azure AI Search requests, in one place (the SDK clients get ``retry_total=0``: see
``chunking.index.azure``): transient statuses and dropped connections are retried, sleeping for the
service's ``retry-after-ms`` / ``Retry-After`` up to a bound, else exponential back-off with equal jitter."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, TypeVar

from azure.core.exceptions import HttpResponseError, ServiceRequestError, ServiceResponseError

from chunking.errors import IndexError_
from chunking.index.azure.schema import _RETRYABLE_REQUEST_STATUS

__all__ = ["RetryPolicy", "retry_after_s"]

_T = TypeVar("_T")


def retry_after_s(exc: HttpResponseError) -> float | None:
    """The wait the service asked for in *exc*'s answer, in seconds (``retry-after-ms``, ``x-ms-retry-after-ms``
    or ``Retry-After`` in seconds), or ``None`` (also for an HTTP date: our own back-off applies)."""
    headers = getattr(exc.response, "headers", None) or {}
    for name, scale in (("retry-after-ms", 1000.0), ("x-ms-retry-after-ms", 1000.0), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is not None:
            try:
                return max(0.0, float(raw) / scale)
            except ValueError:
                continue
    return None


@dataclass
class RetryPolicy:
    """*max_attempts* tries; waits of ``Retry-After`` (at most *max_retry_after_s*, else fail at once so the
    queue retries later) or drawn from [d/2, d], d = min(max_backoff_s, backoff_s · 2^attempt)."""

    max_attempts: int = 5
    backoff_s: float = 1.0
    max_backoff_s: float = 30.0
    max_retry_after_s: float = 60.0
    sleep: Callable[[float], None] = lambda s: None

    def run(self, what: str, call: Callable[[], _T]) -> _T:
        """Run *call*, retrying transient failures with back-off; a permanent one becomes ``IndexError_``
        (``status`` and ``retry_after_s`` set from the last answer)."""
        for attempt in range(self.max_attempts):
            try:
                return call()
            except (ServiceRequestError, ServiceResponseError) as exc:  # no answer: connection failed or dropped
                if attempt + 1 == self.max_attempts:
                    raise IndexError_(f"{what} failed: {exc}") from exc
                self.wait(attempt, None)
            except HttpResponseError as exc:
                status = exc.status_code or 0
                retry_after = retry_after_s(exc)
                if status not in _RETRYABLE_REQUEST_STATUS or attempt + 1 == self.max_attempts:
                    raise IndexError_(f"{what} failed: HTTP {status}: {exc.message}", status=status or None,
                                      retry_after_s=retry_after) from exc
                if retry_after is not None and retry_after > self.max_retry_after_s:
                    raise IndexError_(f"search service asked to retry after {retry_after:.0f} s "
                                      f"(> {self.max_retry_after_s:.0f} s)", status=status,
                                      retry_after_s=retry_after) from exc
                self.wait(attempt, retry_after)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def wait(self, attempt: int, retry_after: float | None) -> None:
        """Sleep before retry *attempt* + 1: *retry_after* seconds when the service said, else the back-off."""
        if retry_after is not None:
            if retry_after > self.max_retry_after_s:
                raise IndexError_(
                    f"search service asked to retry after {retry_after:.0f} s (> {self.max_retry_after_s:.0f} s)"
                )
            self.sleep(retry_after)
            return
        ceiling = min(self.max_backoff_s, self.backoff_s * 2**attempt)
        self.sleep(ceiling / 2 + random.uniform(0, ceiling / 2))
