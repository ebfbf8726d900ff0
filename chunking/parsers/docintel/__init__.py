"""Parsing with Azure AI Document Intelligence (layout model) through its SDK, ``azure-ai-documentintelligence``.

One document is one or more *analyze* operations (the service's long-running operation: ``POST …:analyze``
answers 202 with an ``Operation-Location``, which is polled until its ``status`` is ``succeeded`` or ``failed``;
the SDK's poller does this and waits as long as each answer's ``Retry-After`` says). What this module adds:

* **Page ranges.** A PDF's page count is read locally with PDFium and compared with the pages each request
  returned: when the service stops early (the free tier analyses the first two pages of a request), the rest
  is asked for as the next range, and a range that comes back with no page is a ``ParseError``; pages are
  never lost silently. A PDF longer than ``DOCUMENT_INTELLIGENCE_PAGES_PER_REQUEST`` pages (2,000 by default, the
  service's maximum pages analysed per request on the S0 tier; "Service quotas and limits") is analysed range by
  range (``pages=1-2000``, ``2001-4000``…); its page count is read locally with PDFium. Other formats are one
  request. A file over ``DOCUMENT_INTELLIGENCE_MAX_BYTES`` (the service's 500 MB) is refused before sending.
* **Retries.** azure-core's retry policy retries 408, 429 and 5xx answers, sleeping for the ``Retry-After`` the
  service sends, else with exponential back-off (``retry_total`` tries). When they are exhausted the error
  propagates as the service's error (not a ``ParseError``), so the pipeline treats it as transient: the
  document is tried again later, and its previous version stays searchable.
* **Reasons.** What the service says about the document itself is a ``ParseError`` naming the service, the
  specific error code and, when the service names one, the page: a 400, 413 or 415; an error about the content
  (``InvalidContent…``) anywhere in the error envelope, whatever the top-level code (the error guide puts a
  generic code at the top, the specific one in ``innererror``, and a failed operation's errors in ``details``
  with a ``target``); or a failed operation whose top-level code is not a service fault.
* **Cost.** Each analysed page is billed (an XLSX sheet or a PPTX slide is a page, DOCX and HTML count a page
  per 3,000 characters; "Service quotas and limits", billing): the pages analysed are logged and noted in the
  ledger (``Document Intelligence: 12 pages analysed in 1 request``).

Keyless by default: ``DefaultAzureCredential`` (the Function's managed identity needs the role "Cognitive
Services User" on the account); ``DOCUMENT_INTELLIGENCE_API_KEY`` uses a key instead. The text of the result is
rendered by ``chunking.parsers.docintel.render``; a PDF's figure regions are cropped as figure images by
``chunking.parsers.docintel.figures`` when pictures are kept.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterator
from typing import Any

from chunking import telemetry
from chunking.model import Page
from chunking.parsers._common import ParseError, ReadContext
from chunking.parsers.docintel.figures import crop_figures
from chunking.parsers.docintel.render import render_pages
from chunking.parsers.pdf import PDFIUM_LOCK

__all__ = ["DocumentIntelligenceReader"]

log = logging.getLogger(__name__)

_CONTENT_TYPE = "application/octet-stream"
_DOCUMENT_ERRORS = frozenset({400, 413, 415})  # the request (the document) is refused: retrying cannot help
_MAX_DETAIL_CHARS = 200
# Offsets in code points, as Python strings count them (the service's default, textElements, counts grapheme
# clusters: a span would cut "é" written as e + U+0301 in two; "StringIndexType", REST API 2024-11-30).
_STRING_INDEX_TYPE = "unicodeCodePoint"


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
        ranges, count = _page_ranges(data, source, settings.pages_per_request, context)
        results = []
        while ranges:
            pages = ranges.pop(0)
            context.check_time(source)
            results.append(self._analyze(data, source, pages))
            rest = _pages_left_out(results[-1], pages, count, source)
            if rest:
                ranges.insert(0, rest)
        analysed = sum(len(result.get("pages") or ()) for result in results)
        telemetry.record("chunking.docintel.pages", analysed)  # what the service bills
        requests = f"{len(results)} request{'s' if len(results) != 1 else ''}"
        log.info("document intelligence %s: %d pages analysed in %s (%s, %s)", source, analysed, requests,
                 settings.model_id, settings.api_version)
        context.note(f"Document Intelligence: {analysed} pages analysed in {requests}")
        pages = list(render_pages(results))
        if context.limits.keep_pictures and data.startswith(b"%PDF"):  # figure images (docs/parsers.md#figure-images)
            pages = crop_figures(pages, data, source=source, context=context)
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
                                                        content_type=_CONTENT_TYPE,
                                                        string_index_type=_STRING_INDEX_TYPE)
            return poller.result().as_dict()
        except HttpResponseError as error:
            if _is_about_the_document(error):
                raise ParseError(source, f"Document Intelligence refused it: {_describe(error)}") from None
            raise


def _page_ranges(data: bytes, source: str, per_request: int,
                 context: ReadContext) -> tuple[list[str | None], int | None]:
    """``pages`` parameters, one per request: ``[None]`` (all pages) unless a PDF has more than *per_request*;
    and the PDF's page count (PDFium), ``None`` for other formats."""
    if not data.startswith(b"%PDF"):
        return [None], None
    import pypdfium2 as pdfium

    with PDFIUM_LOCK:
        try:
            document = pdfium.PdfDocument(data)
        except pdfium.PdfiumError:
            return [None], None  # the service says what is wrong with it
        try:
            count = len(document)
        finally:
            document.close()
    if count > context.limits.max_pages:
        raise ParseError(source, context.limits.pages_reason(count))
    if count <= per_request:
        return [None], count
    return [f"{start}-{min(start + per_request - 1, count)}" for start in range(1, count + 1, per_request)], count


def _pages_left_out(result: dict, pages: str | None, count: int | None, source: str) -> str | None:
    """The ``pages`` range still to analyse when *result* stops before the end of the requested range *pages*
    (of a PDF of *count* pages): the service analyses only the first pages of a request on some tiers (two on
    the free tier, "Service quotas and limits" on learn.microsoft.com), so the rest is asked for next. ``None``
    when the range is complete or the page count is unknown (not a PDF).

    Raises:
        ParseError: the service analysed no page of the range, or left one out before the last it returned
            (nothing is indexed rather than a part).
    """
    if count is None:
        return None
    first, last = 1, count
    if pages:
        low, _, high = pages.partition("-")
        first, last = int(low), int(high or low)
    numbers = [int(page["pageNumber"]) for page in result.get("pages") or () if first <= int(page["pageNumber"])]
    got = max(numbers, default=first - 1)
    holes = sorted(set(range(first, got + 1)) - set(numbers))
    if holes:
        shown = ", ".join(map(str, holes[:10])) + (", …" if len(holes) > 10 else "")
        raise ParseError(source, f"Document Intelligence left out page{'s' if len(holes) > 1 else ''} {shown} of "
                                 f"{count} in pages {first}-{last} (nothing is indexed rather than a part)")
    if got >= last:
        return None
    if got < first:
        done = f"pages 1-{first - 1}" if first > 1 else "no page"
        raise ParseError(source, f"Document Intelligence analysed {done} of {count}; pages {first}-{last} came back "
                                 "empty (nothing is indexed rather than a part)")
    return f"{got + 1}-{last}"


#: Codes of errors about the document's content (Error guide v4.0, on learn.microsoft.com: ``InvalidContent``,
#: ``InvalidContentDimensions``, ``InvalidContentLength``…): retrying the same bytes cannot help, whatever the
#: top-level code around them says.
_CONTENT_CODE_PREFIX = "InvalidContent"
_TRANSIENT_CODES = ("InternalServerError", "ServiceUnavailable", "Timeout")


def _error_leaves(error: Any) -> list[tuple[str, str, str | None]]:
    """``(code, message, target)`` of every error in *error*'s envelope, most specific first: each entry of
    ``details`` (and its ``innererror`` chain) in order, then the top-level ``innererror`` chain, then the top
    level (Error guide v4.0: a generic top-level code, the specific one in ``innererror``; a failed operation's
    individual errors in ``details``, each with a ``target``)."""
    top = getattr(error, "error", None)
    if top is None:
        return []
    leaves: list[tuple[str, str, str | None]] = []
    for detail in getattr(top, "details", None) or ():
        leaves.extend(_inner_chain(getattr(detail, "innererror", None), getattr(detail, "target", None)))
        leaves.append((str(getattr(detail, "code", "") or ""), str(getattr(detail, "message", "") or ""),
                       getattr(detail, "target", None)))
    leaves.extend(_inner_chain(getattr(top, "innererror", None), getattr(top, "target", None)))
    leaves.append((str(getattr(top, "code", "") or ""), str(getattr(top, "message", "") or ""),
                   getattr(top, "target", None)))
    return leaves


def _inner_chain(inner: Any, target: str | None) -> list[tuple[str, str, str | None]]:
    """The ``innererror`` chain (azure-core keeps it as the JSON object), deepest first."""
    chain = []
    while isinstance(inner, dict) and inner:
        chain.append((str(inner.get("code") or ""), str(inner.get("message") or ""), target))
        inner = inner.get("innererror")
    return chain[::-1]


def _is_about_the_document(error: Any) -> bool:
    """A 4xx refusal of the request; an error about the content anywhere in the envelope (``details``,
    ``innererror``), whatever the top-level code; or an operation that failed (the poller raises those with the
    poll's status 200) with a top-level code that is not a service fault. Not throttling, authentication or a
    service fault alone."""
    status = error.status_code
    if status in _DOCUMENT_ERRORS:
        return True
    if any(code.startswith(_CONTENT_CODE_PREFIX) for code, _, _ in _error_leaves(error)):
        return True
    code = str(getattr(getattr(error, "error", None), "code", "") or "")
    return status == 200 and code not in _TRANSIENT_CODES


def _describe(error: Any) -> str:
    """``<code>[ (page N)]: <message>`` of the most specific error: the first about the content, else the most
    specific one (module docstring, "Reasons"); at most ``_MAX_DETAIL_CHARS`` characters."""
    leaves = [leaf for leaf in _error_leaves(error) if leaf[0] or leaf[1]]
    if not leaves:
        return f"{error.status_code}: {' '.join(str(error.message or '').split())}"[:_MAX_DETAIL_CHARS]
    content = [leaf for leaf in leaves if leaf[0].startswith(_CONTENT_CODE_PREFIX)]
    code, message, target = (content or leaves)[0]
    where = ""
    if target:
        where = f" (page {target})" if str(target).isdigit() else f" ({target})"
    return f"{code or error.status_code}{where}: {' '.join(message.split())}"[:_MAX_DETAIL_CHARS]


@functools.lru_cache(maxsize=4)
def _credential(api_key: str):
    # One credential per key for the process: DefaultAzureCredential caches its tokens.
    if api_key:
        from azure.core.credentials import AzureKeyCredential

        return AzureKeyCredential(api_key)
    from azure.identity import DefaultAzureCredential

    return DefaultAzureCredential()
