"""Figure descriptions by a vision model: a picture's bytes → a short text a search can find, through a chat model
that takes image input (Azure OpenAI or OpenAI-compatible, the ``openai`` SDK), cached by the picture's hash and
budgeted per document (docs/parsers.md#figure-descriptions).

Request: one chat completion per picture, the system prompt ``PROMPT`` and a user message holding the picture as
an ``image_url`` content part with a base64 ``data:`` URL (OpenAI's images-and-vision guide and Azure OpenAI's
"Use vision-enabled chat models": the content may be an array of text and image parts; PNG, JPEG, non-animated
GIF and WEBP are read). ``PROMPT_VERSION`` is part of every cache key and of the splitter fingerprint, so a changed
prompt describes every figure again.

Failures never fail a document: ``describe`` returns what it could describe and why the others were not
(``VisionOutcome``). A 429 is retried by the SDK within its ``Retry-After`` (up to ``max_retries``); still
throttled, the document's remaining pictures are left undescribed ("throttled") and no further call is made for
it, as when the service cannot be reached; the wait the service asked for is kept (``VisionOutcome.retry_after_s``)
for stage 1 to defer the document instead, when it may (``chunking.pipeline.figures.FiguresThrottled``).
"""

from __future__ import annotations

import base64
import logging
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from chunking.chat.cache import ModelCache, cache_key
from chunking.embeddings.clients import azure_openai_client, openai_compatible_client
from chunking.errors import classify
from chunking.redact import redact
from chunking.telemetry import record

__all__ = ["MAX_IMAGE_BYTES", "PROMPT", "PROMPT_VERSION", "FigureDescriber", "VisionOutcome", "image_media_type"]

log = logging.getLogger("chunking.vision")

#: Bumped whenever ``PROMPT`` or the request's parameters change: it re-keys the cache and re-versions documents.
PROMPT_VERSION = "figure-v1"
PROMPT = ("You describe one figure of a document for a search index. Write what the figure shows and means in "
          "at most 120 words of plain prose: its kind (chart, diagram, photo, screenshot, table image), its "
          "subject, every label, number and word written in it, and what a reader learns from it. No preamble, "
          "no markdown.")
#: Tokens the answer may take (``max_tokens`` of the request).
ANSWER_MAX_TOKENS = 300
#: Bytes of one picture the services take (OpenAI's vision guide: images up to 20 MB); a bigger one is not sent.
MAX_IMAGE_BYTES = 20 * 1024 * 1024

_MEDIA_TYPES = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF87a", "image/gif"),
                (b"GIF89a", "image/gif"))


def image_media_type(data: bytes) -> str:
    """``image/png``, ``image/jpeg``, ``image/gif`` or ``image/webp`` from *data*'s signature; ``""`` for any
    other format (which a vision model does not take: the parser converts those to PNG first)."""
    for signature, media_type in _MEDIA_TYPES:
        if data.startswith(signature):
            return media_type
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return ""


@dataclass
class VisionOutcome:
    """What ``FigureDescriber.describe`` did for one document.

    Attributes:
        descriptions: picture SHA-256 → its description (from the model or the cache).
        calls: requests that reached the model; cached: descriptions read from the cache.
        tokens: billed tokens of those requests (``usage.total_tokens``).
        left: pictures not described, by reason (``throttled``, ``over FIGURES_MAX_TOKENS_PER_DOCUMENT``,
            ``unreachable``, ``refused``, ``out of time``, ``not an image the model reads``).
    """

    descriptions: dict[str, str] = field(default_factory=dict)
    calls: int = 0
    cached: int = 0
    tokens: int = 0
    left: Counter = field(default_factory=Counter)
    #: why no more calls are made for this document ("throttled", "unreachable", "out of time"); "" while they are.
    stopped: str = ""
    #: the wait the service asked for when it throttled (``retry-after-ms`` or ``retry-after``, in seconds); None
    #: when it did not throttle or said nothing.
    retry_after_s: float | None = None

    def note(self, model: str) -> str:
        """``vision: 2 figures described by azure_openai/gpt-4o (1 from the cache, 812 tokens); not described:
        1 throttled`` (the parts that are not zero; ``""`` when there is none), for the ledger."""
        parts = []
        if self.descriptions:
            detail = [f"{self.cached} from the cache"] if self.cached else []
            detail += [f"{self.tokens} tokens"] if self.tokens else []
            count = len(self.descriptions)
            parts.append(f"{count} figure{'' if count == 1 else 's'} described by {model}"
                         + (f" ({', '.join(detail)})" if detail else ""))
        if self.left:
            parts.append("not described: " + ", ".join(f"{n} {reason}" for reason, n in sorted(self.left.items())))
        return "vision: " + "; ".join(parts) if parts else ""


class FigureDescriber:
    """Describes pictures with a chat model that takes images, through a model-result cache.

    Build it with ``FigureDescriber.azure(...)`` or ``.openai_compatible(...)`` (``chunking.services`` does, from
    ``FIGURES_DESCRIBER`` and ``VISION_MODEL``), or pass any ``openai.OpenAI``/``AzureOpenAI`` client.

    Args:
        client: the SDK client. model: model name, or for Azure the deployment name. backend: label in ``name``.
        cache: where descriptions are kept under ``cache_key("figure-description", PROMPT_VERSION, name,
            {"max_tokens": ANSWER_MAX_TOKENS}, sha256)``.
        max_tokens_per_document: the billed tokens after which ``describe`` stops calling (cache hits are free).

    Attributes:
        name: ``"<backend>/<model>"``; fingerprint: ``name`` and ``PROMPT_VERSION``, for the splitter's fingerprint.
    """

    def __init__(self, client: Any, model: str, cache: ModelCache, *, backend: str = "openai",
                 max_tokens_per_document: int = 50_000) -> None:
        self._client = client
        self.model = model
        self.name = f"{backend}/{model}"
        self.fingerprint = f"{self.name}:{PROMPT_VERSION}"
        self.cache = cache
        self.max_tokens_per_document = max_tokens_per_document

    @classmethod
    def azure(cls, *, endpoint: str, deployment: str, cache: ModelCache, api_key: str | None = None,
              api_version: str = "2024-10-21", max_tokens_per_document: int = 50_000, max_retries: int = 2,
              timeout_s: float = 60.0, http_client: Any = None) -> FigureDescriber:
        """A describer on an Azure OpenAI *deployment* with image input: API key when given, else Microsoft Entra
        ID (keyless, ``DefaultAzureCredential``). *timeout_s* is per HTTP attempt, in seconds."""
        client = azure_openai_client(endpoint=endpoint, api_key=api_key, api_version=api_version,
                                     max_retries=max_retries, timeout_s=timeout_s, http_client=http_client)
        return cls(client, deployment, cache, backend="azure_openai", max_tokens_per_document=max_tokens_per_document)

    @classmethod
    def openai_compatible(cls, *, model: str, cache: ModelCache, api_key: str, base_url: str | None = None,
                          max_tokens_per_document: int = 50_000, max_retries: int = 2, timeout_s: float = 60.0,
                          http_client: Any = None) -> FigureDescriber:
        """A describer on OpenAI (*base_url* ``None``) or an OpenAI-compatible server with image input."""
        client = openai_compatible_client(api_key=api_key, base_url=base_url, max_retries=max_retries,
                                          timeout_s=timeout_s, http_client=http_client)
        return cls(client, model, cache, backend="openai", max_tokens_per_document=max_tokens_per_document)

    def key(self, digest: str) -> str:
        """The cache key of the picture whose bytes hash to *digest* (SHA-256 hex)."""
        return cache_key("figure-description", PROMPT_VERSION, self.name, {"max_tokens": ANSWER_MAX_TOKENS}, digest)

    def describe(self, images: Mapping[str, bytes], *, expired: Any = None,
                 outcome: VisionOutcome | None = None) -> VisionOutcome:
        """Describe each picture of *images* (SHA-256 hex → bytes) of one document, in order: from the cache when
        it holds the picture, else by one request, until the document's token budget is spent or the service
        throttles. New descriptions are written to the cache as they come. *expired*: a callable that says
        the stage's deadline has passed (then nothing more is called). *outcome*: the document's outcome so far
        (its pages are described one at a time): added to and returned, its tokens counting against the budget.
        Never raises for a service failure."""
        import openai

        outcome = outcome if outcome is not None else VisionOutcome()
        keys = {digest: self.key(digest) for digest in images}
        found = self.cache.get_many(list(keys.values())) if keys else {}
        stop = outcome.stopped
        for digest, data in images.items():
            if keys[digest] in found:
                outcome.descriptions[digest] = found[keys[digest]]
                outcome.cached += 1
                continue
            media_type = image_media_type(data)
            reason = stop
            if not reason and (not media_type or len(data) > MAX_IMAGE_BYTES):
                reason = "not an image the model reads"
            elif not reason and outcome.tokens >= self.max_tokens_per_document:
                reason = "over FIGURES_MAX_TOKENS_PER_DOCUMENT"
            elif not reason and expired is not None and expired():
                reason = stop = "out of time"
            if reason:
                outcome.left[reason] += 1
                continue
            try:
                text, tokens = self._call(data, media_type)
            except openai.RateLimitError as exc:
                stop = "throttled"
                outcome.retry_after_s = classify(exc).retry_after_s  # retry-after-ms, else retry-after
            except (openai.APIConnectionError, openai.InternalServerError):
                stop = "unreachable"
            except (openai.APIStatusError, ValueError) as exc:  # a refusal of this picture: content filter, 400
                log.warning("vision model refused a figure: %s", redact(str(exc))[:300])
                outcome.left["refused"] += 1
                continue
            else:
                outcome.calls += 1
                outcome.tokens += tokens
                outcome.descriptions[digest] = text
                self.cache.put_many({keys[digest]: text})
                continue
            finally:
                record("chunking.vision.calls", 1, model=self.name)
            outcome.left[stop] += 1
        outcome.stopped = stop
        return outcome

    def _call(self, data: bytes, media_type: str) -> tuple[str, int]:
        """One request: ``(the answer on one line, billed tokens)``. Raises the SDK's errors; ``ValueError`` for
        an empty answer."""
        url = f"data:{media_type};base64,{base64.b64encode(data).decode('ascii')}"
        started = time.perf_counter()
        response = self._client.chat.completions.create(
            model=self.model, temperature=0.0, max_tokens=ANSWER_MAX_TOKENS,
            messages=[{"role": "system", "content": PROMPT},
                      {"role": "user", "content": [{"type": "text", "text": "Describe this figure."},
                                                   {"type": "image_url", "image_url": {"url": url}}]}],
        )  # fmt: skip
        usage = getattr(response, "usage", None)
        choices = getattr(response, "choices", None) or []
        content = choices[0].message.content if choices else None
        if not content or not content.strip():
            raise ValueError(f"empty answer (finish_reason {choices[0].finish_reason if choices else 'none'})")
        log.debug("figure described in %.1f s", time.perf_counter() - started)
        return " ".join(content.split()), int(getattr(usage, "total_tokens", 0) or 0)
