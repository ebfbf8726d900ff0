"""Failures: which are worth retrying (``classify``), the reason the ledger records (``reason_of``), and the one
line a person reads for a failed service call (``describe_failure``), secrets masked, wrapped errors found."""

from __future__ import annotations

import ast
from pathlib import Path

import httpx2 as httpx  # the HTTP client of openai 3.x
import openai
import pytest
from azure.core.exceptions import ClientAuthenticationError, HttpResponseError, ServiceRequestError
from azure.core.rest import HttpRequest

from chunking import errors, storage
from chunking.errors import Failure, StorageError, classify, describe_failure, reason_of
from chunking.settings import Settings

SEARCH = "https://mysearch.search.windows.net"
SETTINGS = Settings.from_env({"AZURE_SEARCH_ENDPOINT": SEARCH, "AZURE_SEARCH_API_KEY": "search-key-123"})
OPENAI_REQUEST = httpx.Request("POST", "https://api.openai.com/v1/embeddings")


class _Response:
    """What ``HttpResponseError`` reads of an azure-core response: status, reason, request, headers, body."""

    def __init__(self, status: int, url: str, headers: dict[str, str] | None = None) -> None:
        self.status_code, self.reason, self.headers = status, "Reason", headers or {}
        self.request = HttpRequest("GET", url)

    def text(self) -> str:
        return ""

    def body(self) -> bytes:
        return b""


class _Status(Exception):
    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status_code = status


# --- classify ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("exc", "expected"), [
    (_Status("busy", 429), Failure("transient", True)),
    (_Status("down", 503), Failure("transient", True)),
    (_Status("conflict", 409), Failure("transient")),
    (_Status("bad", 400), Failure("permanent")),
    (RuntimeError("IndexError_: upload failed: HTTP 502 Bad Gateway"), Failure("transient")),
    (RuntimeError("upload failed: HTTP 404"), Failure("permanent")),
    (StorageError("storage not reachable: queue 'q' at http://127.0.0.1:1"), Failure("transient")),
    (ValueError("bad input"), Failure("permanent")),
    (ServiceRequestError("connection refused"), Failure("transient")),
    (ClientAuthenticationError("no credential"), Failure("permanent")),
    (RuntimeError("something unforeseen"), Failure("transient")),
])
def test_classify_by_status_then_by_class_name(exc, expected):
    assert classify(exc) == expected


def test_a_retry_after_makes_a_throttled_transient_failure():
    exc = RuntimeError("slow down")
    exc.retry_after_s = 7
    assert classify(exc) == Failure("transient", True, 7.0)
    rate = openai.RateLimitError("slow down", response=httpx.Response(429, headers={"retry-after-ms": "1500"},
                                                                      request=OPENAI_REQUEST), body=None)
    assert classify(rate) == Failure("transient", True, 1.5)


def test_a_missing_payload_is_transient_whatever_status_its_message_names():
    class PayloadMissingError(KeyError):
        pass

    assert classify(PayloadMissingError("payload gone: HTTP 404")) == Failure("transient")


def test_reason_keeps_the_exception_type():
    assert reason_of(StorageError("queue 'q' refused")) == "StorageError: queue 'q' refused"
    assert reason_of(KeyError()) == "KeyError: KeyError()"


# --- describe_failure --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("message", "kind"), [
    ("storage not reachable: queue 'q' at http://127.0.0.1:1: refused", "unreachable"),
    ("storage account a (https://a.queue.core.windows.net) refused access to queue 'q': AuthorizationFailure",
     "auth"),
    ("queue 'q' does not exist in storage account a (https://a.queue.core.windows.net)", "rejected"),
])
def test_a_storage_error_is_described_by_its_own_line(message, kind):
    failure = describe_failure(StorageError(message), SETTINGS)
    assert (failure.service, failure.kind, failure.status, failure.line) == ("storage", kind, None, message)


def test_the_storage_adapter_raises_the_errors_storage_error():
    assert storage.StorageError is StorageError
    error = storage.storage_error(ServiceRequestError("refused"), object(), "queue 'q'")
    assert type(error) is StorageError
    assert describe_failure(error, SETTINGS).kind == "unreachable"


def test_a_wrapped_service_error_is_found_and_a_plain_error_is_none():
    try:
        try:
            raise StorageError("storage not reachable: blob 'a.pdf'")
        except StorageError as inner:
            raise RuntimeError("stage 1 failed") from inner
    except RuntimeError as outer:
        assert describe_failure(outer, SETTINGS).kind == "unreachable"
    assert describe_failure(ValueError("not a service"), SETTINGS) is None


def test_openai_failures_name_the_endpoint_and_the_setting_to_check():
    throttled = openai.RateLimitError("slow down", response=httpx.Response(429, headers={"retry-after": "4"},
                                                                           request=OPENAI_REQUEST), body=None)
    assert describe_failure(throttled, SETTINGS) == errors.ServiceFailure(
        "OpenAI-compatible endpoint at api.openai.com", "throttled", 429,
        "OpenAI-compatible endpoint at api.openai.com: HTTP 429, throttled (slow down): retry after 4 s", 4.0)
    unreachable = describe_failure(openai.APIConnectionError(request=OPENAI_REQUEST), SETTINGS)
    assert (unreachable.kind, unreachable.line) == ("unreachable", "OpenAI-compatible endpoint at api.openai.com: "
                                                    "not reachable (Connection error.): check OPENAI_BASE_URL and "
                                                    "the network")
    refused = openai.AuthenticationError("bad key sk-abcdefghijklmnopqrstuvwxyz",
                                         response=httpx.Response(401, request=OPENAI_REQUEST), body=None)
    assert describe_failure(refused, SETTINGS).line == ("OpenAI-compatible endpoint at api.openai.com: HTTP 401, "
                                                        "not authorised (bad key ***): check OPENAI_API_KEY")


def test_azure_failures_name_the_service_by_its_host():
    throttled = HttpResponseError(message="Too many", response=_Response(429, f"{SEARCH}/indexes/x/docs",
                                                                         {"retry-after": "2"}))
    assert describe_failure(throttled, SETTINGS) == errors.ServiceFailure(
        "Azure AI Search at mysearch.search.windows.net", "throttled", 429,
        "Azure AI Search at mysearch.search.windows.net: HTTP 429, throttled (Too many): retry after 2 s", 2.0)
    server = describe_failure(HttpResponseError(message="oops", response=_Response(500, f"{SEARCH}/x")), SETTINGS)
    assert (server.kind, server.status) == ("server", 500)
    missing = describe_failure(HttpResponseError(message="nope", response=_Response(
        404, "https://acct.blob.core.windows.net/c/x")), SETTINGS)
    assert (missing.service, missing.kind, missing.status) == ("storage (Azurite (UseDevelopmentStorage=true))",
                                                               "rejected", 404)
    assert missing.line.endswith(": HTTP 404, not found (nope): check the container, queue and table settings "
                                 "(DOCUMENTS_CONTAINER, CHUNK_BATCH_QUEUE, LEDGER_TABLE)")
    unreachable = describe_failure(ServiceRequestError("connection refused"), SETTINGS)
    assert (unreachable.kind, unreachable.line) == ("unreachable", "storage (Azurite (UseDevelopmentStorage=true)): "
                                                    "not reachable (connection refused): check AzureWebJobsStorage "
                                                    "(for local storage start Azurite: npx azurite)")
    no_token = describe_failure(ClientAuthenticationError("no credential"), SETTINGS)
    assert (no_token.service, no_token.kind) == ("Microsoft Entra ID", "auth")


def test_no_secret_reaches_the_line():
    failure = describe_failure(StorageError("blob 'a' at https://a.blob.core.windows.net/c/a?sv=1&sig=SECRETSIG"),
                               SETTINGS)
    assert "SECRETSIG" not in failure.line and "sig=***" in failure.line


def test_errors_imports_only_redact_of_chunking():
    tree = ast.parse(Path(errors.__file__).read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)} | {
        alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert {name for name in imported if name and name.startswith("chunking")} == {"chunking.redact"}
