"""Secrets never reach output: storage connection strings, account keys, SAS tokens, API keys and bearer tokens
are replaced by ``***`` in every message we print, log or store in the ledger.

Two layers, because neither alone is enough:

1. patterns for the forms a secret takes inside text (``AccountKey=…``, ``SharedAccessSignature=…``, a SAS query's
   ``sig=…``, ``Authorization: Bearer …``, ``api-key: …``), so a secret we were never told about (one inside an
   SDK's error message or a URL) is still caught;
2. the exact values of the secret settings of this process (registered by :func:`register_settings`), so a key
   printed bare, without its name, is caught too.

Messages name the account or the endpoint instead (:func:`describe_storage`). ``install_log_redaction`` makes
every log record of the process, the Azure SDKs' included, pass through :func:`redact`.
"""

from __future__ import annotations

import logging
import re
import threading
from typing import Any
from urllib.parse import urlparse

__all__ = ["describe_storage", "install_log_redaction", "redact", "register_secret", "register_settings"]

MASK = "***"

# key=value pairs of connection strings and query strings whose value is a secret. Connection-string keys:
# Azure Storage "Configure a connection string" (AccountKey, SharedAccessSignature); SAS query parameter `sig`:
# "Create a service SAS"; Service Bus / Event Hubs use SharedAccessKey.
_SECRET_PAIRS = re.compile(
    r"(?i)\b(AccountKey|SharedAccessSignature|SharedAccessKey|sig|password|client_secret|api[-_]?key|"
    r"access[-_]?token)(\s*=\s*)([^;&\s\"'<>,]+)"
)
# HTTP headers (as the SDKs' logging policies print them, or as JSON).
_SECRET_HEADERS = re.compile(
    r"(?i)(\b(?:authorization|api-key|ocp-apim-subscription-key|x-ms-encryption-key)[\"']?\s*[:=]\s*[\"']?)"
    r"(?:(bearer|basic|sharedkey)\s+)?([^\s\"',;]+)"
)
_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}")
# OpenAI-style keys and JWTs appear bare in some SDK messages.
_BARE_TOKENS = re.compile(r"\b(?:sk-[A-Za-z0-9_-]{16,}|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]+)")

_MIN_SECRET_CHARS = 6  # shorter registered values ("1", "true") would mask ordinary words
_known: set[str] = set()
_lock = threading.Lock()


def register_secret(value: str | None) -> None:
    """Remember *value* (an API key, an account key, a whole connection string) so :func:`redact` masks it
    wherever it appears, even bare. Values shorter than 6 characters are ignored."""
    if value and len(value.strip()) >= _MIN_SECRET_CHARS:
        with _lock:
            _known.add(value.strip())
            # A connection string's secret parts are masked on their own too (they may be quoted without it).
            for match in _SECRET_PAIRS.finditer(value):
                if len(match.group(3)) >= _MIN_SECRET_CHARS:
                    _known.add(match.group(3))


def register_settings(settings: Any) -> None:
    """Register every secret-bearing setting of *settings* (a ``chunking.settings.Settings``)."""
    connection = getattr(settings, "storage_connection", "") or ""
    if "=" in connection and not connection.lower().startswith("usedevelopmentstorage"):
        register_secret(connection)
    for name in ("azure_openai_api_key", "openai_api_key", "search_api_key"):
        register_secret(getattr(settings, name, "") or "")
    observability = getattr(settings, "observability", None)  # the Event Grid key, the Application Insights string
    for value in (getattr(observability, "events_key", ""), getattr(observability, "app_insights_connection", "")):
        register_secret(value or "")


def redact(text: str) -> str:
    """*text* with every secret replaced by ``***`` (the names stay: ``AccountKey=***``).

    Example: ``"AccountName=a;AccountKey=abc123==;EndpointSuffix=x"`` → ``"AccountName=a;AccountKey=***;
    EndpointSuffix=x"``; ``"https://a.blob.core.windows.net/c?sv=2024&sig=XyZ%3D"`` → ``"…&sig=***"``.
    """
    if not text:
        return text
    with _lock:
        known = sorted(_known, key=len, reverse=True)
    for value in known:  # longest first: a connection string before the key inside it
        if value in text:
            text = text.replace(value, MASK)
    text = _SECRET_PAIRS.sub(lambda m: m.group(1) + m.group(2) + MASK, text)
    text = _SECRET_HEADERS.sub(lambda m: m.group(1) + (m.group(2) + " " if m.group(2) else "") + MASK, text)
    text = _BEARER.sub(lambda m: m.group(1) + MASK, text)
    return _BARE_TOKENS.sub(MASK, text)


def describe_storage(settings: Any) -> str:
    """Where storage is, for messages, with no secret: ``Azurite (UseDevelopmentStorage=true)``, ``account
    contosodocs``, or the endpoint's host (``contosodocs.blob.core.windows.net``)."""
    connection = getattr(settings, "storage_connection", "") or ""
    if connection:
        if connection.strip().lower().startswith("usedevelopmentstorage"):
            return "Azurite (UseDevelopmentStorage=true)"
        parts = dict(
            (key.strip().lower(), value.strip())
            for key, _, value in (item.partition("=") for item in connection.split(";") if "=" in item)
        )
        if parts.get("accountname"):
            return f"account {parts['accountname']}"
        for key in ("blobendpoint", "queueendpoint", "tableendpoint"):
            if parts.get(key):
                return urlparse(parts[key]).netloc or MASK
        return "the storage connection string (AzureWebJobsStorage)"
    if getattr(settings, "storage_account", ""):
        return f"account {settings.storage_account}"
    uri = getattr(settings, "storage_blob_uri", "") or ""
    return urlparse(uri).netloc or uri or "(no storage configured)"


class _RedactingFactory:
    """A ``logging`` record factory whose records carry the redacted message (and no arguments)."""

    def __init__(self, previous: Any) -> None:
        self.previous = previous

    def __call__(self, *args: Any, **kwargs: Any) -> logging.LogRecord:
        record = self.previous(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # a malformed format string: leave it for logging to report
            return record
        record.msg, record.args = redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        return record


def install_log_redaction() -> None:
    """Make every log record of this process pass through :func:`redact` (idempotent). A record factory, not a
    handler filter, so it also covers handlers added later (the Functions host's) and the SDKs' loggers."""
    factory = logging.getLogRecordFactory()
    if not isinstance(factory, _RedactingFactory):
        logging.setLogRecordFactory(_RedactingFactory(factory))
