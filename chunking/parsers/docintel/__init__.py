"""Parsing with Azure AI Document Intelligence (layout model) through its SDK, ``azure-ai-documentintelligence``.

One document is one or more *analyze* operations (the service's long-running operation: ``POST …:analyze``
answers 202 with an ``Operation-Location``, which is polled until its ``status`` is ``succeeded`` or ``failed``;
the SDK's poller does this and waits as long as each answer's ``Retry-After`` says). What this module adds:

* **Page ranges.** A PDF longer than ``DOCUMENT_INTELLIGENCE_PAGES_PER_REQUEST`` pages (2,000 by default, the
  service's maximum pages analysed per request on the S0 tier; "Service quotas and limits") is analysed range by
  range (``pages=1-2000``, ``2001-4000``…); its page count is read locally with PDFium. Other formats are one
  request. A file over ``DOCUMENT_INTELLIGENCE_MAX_BYTES`` (the service's 500 MB) is refused before sending.
* **Retries.** azure-core's retry policy retries 408, 429 and 5xx answers, sleeping for the ``Retry-After`` the
  service sends, else with exponential back-off (``retry_total`` tries). When they are exhausted the error
  propagates as the service's error (not a ``ParseError``), so the pipeline treats it as transient: the
  document is tried again later, and its previous version stays searchable.
* **Reasons.** What the service says about the document itself (400 ``InvalidContent``…, or a failed
  operation) is a ``ParseError`` naming the service and its error code.
* **Cost.** Each analysed page is billed (an XLSX sheet or a PPTX slide is a page, DOCX and HTML count a page
  per 3,000 characters; "Service quotas and limits", billing): the pages analysed are logged and noted in the
  ledger (``Document Intelligence: 12 pages analysed in 1 request``).

Keyless by default: ``DefaultAzureCredential`` (the Function's managed identity needs the role "Cognitive
Services User" on the account); ``DOCUMENT_INTELLIGENCE_API_KEY`` uses a key instead. The text of the result is
rendered by ``chunking.parsers.docintel.render``.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterator
from typing import Any

from chunking import telemetry
from chunking.model import Page
from chunking.parsers._common import ParseError, ReadContext
from chunking.parsers.docintel.render import render_pages
from chunking.parsers.pdf import PDFIUM_LOCK

__all__ = ["DocumentIntelligenceReader"]

log = logging.getLogger(__name__)

_CONTENT_TYPE = "application/octet-stream"
_DOCUMENT_ERRORS = frozenset({400, 413, 415})  # the request (the document) is refused: retrying cannot help
_MAX_DETAIL_CHARS = 200


class DocumentIntelligenceReader:
    """A parser (``parse(data, *, source, context) -> Iterator[Page]``) backed by Document Intelligence.

    Args:
        settings: a ``chunking.settings.docintel.DocumentIntelligenceSettings`` with an endpoint.
        client_kwargs: passed to ``DocumentIntelligenceClient`` (``transport=``, ``retry_total=``,
            ``polling_interval=``); tests give a fake transport here.
    """

    def __init__(self, settings: Any, **client_kwargs: Any) -> None:
        self.settings = settings
        self._client_kwargs = client_kwargs

    @functools.cached_property
    def client(self):
        from azure.ai.documentintelligence import DocumentIntelligenceClient

        kwargs = {"api_version": self.settings.api_version, **self._client_kwargs}
        return DocumentIntelligenceClient(self.settings.endpoint, _credential(self.settings.api_key), **kwargs)

    def parse(self, data: bytes, *, source: str, context: ReadContext | None = None) -> Iterator[Page]:
        """Analyse *data* and return its pages (rendered as ``chunking.parsers.docintel.render`` says).

        Raises:
            ParseError: ``larger than N MB, the most Document Intelligence accepts (DOCUMENT_INTELLIGENCE_MAX_BYTES)``;
                ``N pages, more than M (MAX_PAGES)``; ``Document Intelligence refused it: <code>: <message>``.
            azure.core.exceptions.AzureError: the service could not be reached, refused the credential, or kept
                throttling or failing after the retries (transient: the pipeline tries again later).
        """
        context = context if context is not None else ReadContext()
        settings = self.settings
        if len(data) > settings.max_bytes:
            raise ParseError(source, f"larger than {settings.max_bytes // (1024 * 1024)} MB, the most Document "
                                     "Intelligence accepts (DOCUMENT_INTELLIGENCE_MAX_BYTES)")
        ranges = _page_ranges(data, source, settings.pages_per_request, context)
        results = []
        for pages in ranges:
            context.check_time(source)
            results.append(self._analyze(data, source, pages))
        analysed = sum(len(result.get("pages") or ()) for result in results)
        telemetry.record("chunking.docintel.pages", analysed)  # what the service bills
        requests = f"{len(results)} request{'s' if len(results) != 1 else ''}"
        log.info("document intelligence %s: %d pages analysed in %s (%s, %s)", source, analysed, requests,
                 settings.model_id, settings.api_version)
        context.note(f"Document Intelligence: {analysed} pages analysed in {requests}")
        pages = list(render_pages(results))
        if len(pages) > context.limits.max_pages:
            raise ParseError(source, context.limits.pages_reason(len(pages)))
        for page in pages:
            if len(page.text) > context.limits.max_page_chars:
                raise ParseError(source, context.limits.page_chars_reason(page.page_num))
        return iter(pages)

    def _analyze(self, data: bytes, source: str, pages: str | None) -> dict:
        from azure.core.exceptions import HttpResponseError

        try:
            poller = self.client.begin_analyze_document(self.settings.model_id, body=data, pages=pages,
                                                        content_type=_CONTENT_TYPE)
            return poller.result().as_dict()
        except HttpResponseError as error:
            if _is_about_the_document(error):
                raise ParseError(source, f"Document Intelligence refused it: {_describe(error)}") from None
            raise


def _page_ranges(data: bytes, source: str, per_request: int, context: ReadContext) -> list[str | None]:
    """``pages`` parameters, one per request: ``[None]`` (all pages) unless a PDF has more than *per_request*."""
    if not data.startswith(b"%PDF"):
        return [None]
    import pypdfium2 as pdfium

    with PDFIUM_LOCK:
        try:
            document = pdfium.PdfDocument(data)
        except pdfium.PdfiumError:
            return [None]  # the service says what is wrong with it
        try:
            count = len(document)
        finally:
            document.close()
    if count > context.limits.max_pages:
        raise ParseError(source, context.limits.pages_reason(count))
    if count <= per_request:
        return [None]
    return [f"{start}-{min(start + per_request - 1, count)}" for start in range(1, count + 1, per_request)]


def _is_about_the_document(error: Any) -> bool:
    """A 4xx refusal of the request, or an operation that failed on the document (the poller raises those with
    the poll's status 200); not throttling, authentication or a service fault."""
    status = error.status_code
    if status in _DOCUMENT_ERRORS:
        return True
    code = str(getattr(getattr(error, "error", None), "code", "") or "")
    return status == 200 and code not in ("InternalServerError", "ServiceUnavailable", "Timeout")


def _describe(error: Any) -> str:
    inner = getattr(error, "error", None)
    code = getattr(inner, "code", None) or str(error.status_code)
    message = " ".join(str(getattr(inner, "message", None) or error.message or "").split())
    innererror = getattr(inner, "innererror", None) or {}  # azure-core keeps it as the JSON object
    detail = innererror.get("message") if isinstance(innererror, dict) else getattr(innererror, "message", None)
    if detail:
        message = f"{message} {' '.join(str(detail).split())}".strip()
    return f"{code}: {message}"[:_MAX_DETAIL_CHARS]


@functools.lru_cache(maxsize=4)
def _credential(api_key: str):
    # One credential per key for the process: DefaultAzureCredential caches its tokens.
    if api_key:
        from azure.core.credentials import AzureKeyCredential

        return AzureKeyCredential(api_key)
    from azure.identity import DefaultAzureCredential

    return DefaultAzureCredential()
