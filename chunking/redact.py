"""Secrets never reach output: storage connection strings, account keys, SAS tokens, API keys and bearer tokens
are replaced by ``***`` in every message we print, log or store in the ledger.

Two layers, because neither alone is enough:

1. patterns for the forms a secret takes inside text (``AccountKey=…``, ``SharedAccessSignature=…``, a SAS query's
   ``sig=…``, ``Authorization: Bearer …``, ``api-key: …``), so a secret we were never told about (one inside an
   SDK's error message or a URL) is still caught;
2. the exact values of the secret settings of this process (registered by :func:`register_settings`), so a key
   printed bare, without its name, is caught too.

URLs follow one rule (:func:`mask_url`), for every URL-valued setting: the user-info (``user:password@``) is
masked whole, and so is the value of every query parameter but the few known to be harmless (``api-version`` and
the SAS fields that are not the signature). ``register_settings`` registers the masked parts of every URL-valued
setting as secrets, and :func:`redact` masks the user-info of any URL it finds in text, so an SDK's message or an
``httpx`` log line that prints the URL, or only its host part, shows ``***`` instead.

Messages name the account or the endpoint instead (:func:`describe_storage`). ``install_log_redaction`` makes
every log record of the process, the Azure SDKs' included, pass through :func:`redact`.
"""

from __future__ import annotations

import logging
import re
import threading
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlsplit, urlunsplit

__all__ = ["describe_storage", "install_log_redaction", "mask_url", "redact", "redact_exception", "register_secret",
           "register_settings", "register_url", "url_host"]

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

# The user-info of a URL inside text (RFC 3986 section 3.2.1: ``scheme://userinfo@host``): everything between
# ``//`` and the first ``@`` before the host ends.
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)([^\s/?#@\"'<>]+)@")
# Query parameters whose values are never secret: API versions, and the SAS fields other than its signature
# (Azure Storage "Create a service SAS": sv, ss, srt, sp, se, st, spr, sr, sdd and the like); every other value
# of a setting's query is masked (a ``code`` function key, a ``token``, a ``key`` a proxy asks for ...).
_HARMLESS_QUERY = frozenset({"api-version", "api_version", "sv", "ss", "srt", "sp", "se", "st", "spr", "sr", "sdd",
                             "sip", "comp", "restype", "timeout", "deployment", "model"})

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
    """Register every secret-bearing setting of *settings* (a ``chunking.settings.Settings``): the connection
    string, the API keys (Document Intelligence's among them), and the secret parts of every URL-valued setting
    (``register_url``), nested option groups included."""
    connection = getattr(settings, "storage_connection", "") or ""
    if "=" in connection and not connection.lower().startswith("usedevelopmentstorage"):
        register_secret(connection)
    for part in connection.split(";"):  # BlobEndpoint=https://user:pw@…
        register_url(part.partition("=")[2].strip())
    for name in ("azure_openai_api_key", "openai_api_key", "search_api_key"):
        register_secret(getattr(settings, name, "") or "")
    for value in _setting_strings(settings):
        register_url(value)
    observability = getattr(settings, "observability", None)  # the Event Grid key, the Application Insights string
    for value in (getattr(observability, "events_key", ""), getattr(observability, "app_insights_connection", "")):
        register_secret(value or "")
    register_secret(getattr(getattr(settings, "document_intelligence", None), "api_key", "") or "")


def _setting_strings(value: Any, depth: int = 0):
    """Every string among the fields of a settings object and of its nested option objects (dataclasses)."""
    if isinstance(value, str):
        yield value
        return
    if depth > 3:
        return
    fields = getattr(value, "__dataclass_fields__", None)
    if fields:
        for name in fields:
            yield from _setting_strings(getattr(value, name, None), depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _setting_strings(item, depth + 1)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _setting_strings(item, depth + 1)


def register_url(url: str | None) -> None:
    """Remember the secret parts of *url* (its user-info, its password on its own, and the values
    ``mask_url`` masks in its query, raw and percent-decoded) so that :func:`redact` masks them wherever they
    appear, even printed without the URL around them. Not a URL (no ``scheme://``): nothing happens."""
    if not url or "://" not in url:
        return
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return
    userinfo = parts.netloc.rpartition("@")[0] if "@" in parts.netloc else ""
    secrets = [userinfo, userinfo.partition(":")[2]]
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if name.lower() not in _HARMLESS_QUERY:
            secrets += [value, quote(value, safe="")]
    for value in secrets:
        for form in {value, unquote(value)}:
            if form and len(form) >= _MIN_SECRET_CHARS:
                with _lock:
                    _known.add(form)


def mask_url(url: str) -> str:
    """*url* as it may be shown: user-info replaced by ``***`` and every query value but the harmless ones
    (``api-version``, SAS fields other than ``sig``) by ``***``. Not a URL: returned as it is, through ``redact``.

    Example: ``mask_url("http://user:pw@host:8080/v1?api-version=1&code=abc")`` →
    ``"http://***@host:8080/v1?api-version=1&code=***"``.
    """
    if not url or "://" not in url:
        return redact(url)
    try:
        parts = urlsplit(url.strip())
        host = url_host(url)
    except ValueError:
        return redact(url)
    netloc = f"{MASK}@{host}" if "@" in parts.netloc else host
    query = "&".join(f"{name}={value if name.lower() in _HARMLESS_QUERY else MASK}"
                     for name, value in (item.partition("=")[::2] for item in parts.query.split("&") if item))
    return redact(urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment)))


def url_host(url: str) -> str:
    """The ``host[:port]`` of *url*, without its user-info (``""`` when there is none)."""
    try:
        netloc = urlsplit((url or "").strip()).netloc
    except ValueError:
        return ""
    return netloc.rpartition("@")[2]


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
    text = _URL_USERINFO.sub(lambda m: m.group(1) + MASK + "@", text)
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
                return url_host(parts[key]) or MASK
        return "the storage connection string (AzureWebJobsStorage)"
    if getattr(settings, "storage_account", ""):
        return f"account {settings.storage_account}"
    uri = getattr(settings, "storage_blob_uri", "") or ""
    return url_host(uri) or mask_url(uri) or "(no storage configured)"


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


def redact_exception(exc: BaseException) -> BaseException:
    """*exc* made safe to leave the process (the Functions host logs the type, message and chain of the exception
    a function raises, outside our logging): the message of *exc* and of every exception chained to it
    (``__cause__``, ``__context__``) and their notes are replaced by their :func:`redact`-ed text, in place, so
    the type and the traceback stay. An exception whose text cannot be replaced that way (a ``__str__`` of its
    own) comes back as a ``RuntimeError`` naming its type, with the redacted text; raise it ``from None``.
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        _redact_in_place(current)
        current = current.__cause__ or current.__context__
    text = _safe_str(exc)
    if redact(text) != text:
        return RuntimeError(f"{type(exc).__name__}: {redact(text)}")
    return exc


def _safe_str(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return type(exc).__name__


def _redact_in_place(exc: BaseException) -> None:
    text = _safe_str(exc)
    clean = redact(text)
    if clean != text:
        try:
            exc.args = (clean,)
            if isinstance(getattr(exc, "message", None), str):
                exc.message = clean  # azure-core and openai keep the text here too
        except (AttributeError, TypeError):
            pass
    notes = getattr(exc, "__notes__", None)
    if isinstance(notes, list):
        notes[:] = [redact(str(note)) for note in notes]
