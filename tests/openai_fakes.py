"""A scripted OpenAI-compatible endpoint for ``httpx.MockTransport``, shared by the embedding and chat tests."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx2 as httpx  # the HTTP client of openai 3.x


class ScriptedEndpoint:
    """Answers the statuses of *plan* first (each ``(status, headers)``, with an OpenAI-style error body), then
    whatever :meth:`reply` builds; records every request and when it arrived (``time.monotonic``)."""

    def __init__(self, plan: list[tuple[int, dict[str, str]]] | None = None) -> None:
        self.plan = list(plan or [])
        self.requests: list[httpx.Request] = []
        self.times: list[float] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        self.times.append(time.monotonic())
        if self.plan:
            status, headers = self.plan.pop(0)
            return httpx.Response(status, headers=headers, json={"error": {"message": "busy", "code": str(status)}})
        return self.reply(request)

    def reply(self, request: httpx.Request) -> httpx.Response:
        raise NotImplementedError

    def body(self, n: int = -1) -> dict[str, Any]:
        """The JSON body of request *n* (the last by default)."""
        return json.loads(self.requests[n].content)


# -- the embeddings operation as the service checks it -----------------------------------------------------------

#: Inputs per embeddings request and tokens per input (Azure OpenAI inference REST 2024-10-21, "Embeddings -
#: Create": the input array holds at most 2,048 items, none an empty string, each within the model's 8,192 input
#: tokens; learn.microsoft.com/azure/ai-services/openai/reference).
EMBEDDING_MAX_INPUTS = 2048
EMBEDDING_MAX_TOKENS = 8192
#: Models that take ``dimensions`` and their native (largest) length (same reference: "dimensions" is supported
#: by text-embedding-3 and later models only; OpenAI's embeddings guide: 1,536 and 3,072).
EMBEDDING_NATIVE_DIMENSIONS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072}


def embeddings_refusal(request: httpx.Request) -> httpx.Response | None:
    """The 400 the service answers to an embeddings request it refuses, or ``None``: the model is the body's
    ``model`` (OpenAI) or the deployment in the path (Azure OpenAI, deployments named after their model here)."""
    from chunking.tokens import count_tokens

    body = json.loads(request.content)
    path = request.url.path
    model = path.split("/deployments/", 1)[1].split("/", 1)[0] if "/deployments/" in path else body.get("model", "")
    inputs = body.get("input")
    inputs = [inputs] if isinstance(inputs, str) else list(inputs or [])
    reason = ""
    if not inputs or len(inputs) > EMBEDDING_MAX_INPUTS:
        reason = f"'input' must hold 1 to {EMBEDDING_MAX_INPUTS} items, not {len(inputs)}."
    elif any(isinstance(text, str) and not text for text in inputs):
        reason = "'input' cannot contain an empty string."
    elif any(isinstance(text, str) and count_tokens(text) > EMBEDDING_MAX_TOKENS for text in inputs):
        reason = f"An input is longer than the model's maximum of {EMBEDDING_MAX_TOKENS} tokens."
    elif "dimensions" in body:
        native = EMBEDDING_NATIVE_DIMENSIONS.get(model)
        if native is None:
            reason = f"This model does not support specifying dimensions: {model}."
        elif not 1 <= int(body["dimensions"]) <= native:
            reason = f"'dimensions' must be between 1 and {native}."
    if not reason:
        return None
    return httpx.Response(400, json={"error": {"message": reason, "type": "invalid_request_error",
                                               "param": None, "code": None}})


# -- chat completions with image input (a vision model) ----------------------------------------------------------

#: Image formats and size a vision model reads (OpenAI's "Images and vision" guide and Azure OpenAI's "Use
#: vision-enabled chat models": PNG, JPEG, WEBP and non-animated GIF, up to 20 MB per image; a base64 ``data:``
#: URL or an https URL in an ``image_url`` content part). Anything else is a 400 ``invalid_image_format``.
VISION_MEDIA_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
VISION_MAX_IMAGE_BYTES = 20 * 1024 * 1024
#: Tokens an image costs at ``detail: auto``/``high`` for a picture within 512 × 512 pixels (OpenAI's vision
#: guide, "Calculating costs": 85 base tokens plus 170 per 512-pixel tile).
VISION_IMAGE_TOKENS = 85 + 170


class VisionChatAPI(ScriptedEndpoint):
    """A chat completions endpoint with image input: each request must hold one ``image_url`` part with a
    readable base64 data URL of a format the model takes, else 400 (as the service answers); the answer is
    ``describe(image bytes)`` with usage counted as the service bills it (``VISION_IMAGE_TOKENS`` for the image,
    the prompt's and the answer's words as tokens, roughly). The statuses of *plan* come first (``(429,
    {"retry-after": "1", "retry-after-ms": "10"})``: Azure OpenAI sends both headers on a throttled call, the SDK
    prefers the milliseconds)."""

    def __init__(self, describe, plan: list[tuple[int, dict[str, str]]] | None = None) -> None:
        super().__init__(plan)
        self.describe = describe
        self.images: list[bytes] = []

    def reply(self, request: httpx.Request) -> httpx.Response:
        import base64

        body = json.loads(request.content)
        parts = [part for message in body.get("messages", []) if isinstance(message.get("content"), list)
                 for part in message["content"]]
        urls = [part.get("image_url", {}).get("url", "") for part in parts if part.get("type") == "image_url"]
        if len(urls) != 1:
            return _invalid(f"expected one image_url part, got {len(urls)}")
        header, _, encoded = urls[0].partition(",")
        media_type = header.removeprefix("data:").removesuffix(";base64")
        if not header.startswith("data:") or media_type not in VISION_MEDIA_TYPES:
            return _invalid("You uploaded an unsupported image. Please make sure your image has of one the following "
                            "formats: ['png', 'jpeg', 'gif', 'webp'].")
        try:
            data = base64.b64decode(encoded, validate=True)
        except ValueError:
            return _invalid("Invalid image data.")
        if len(data) > VISION_MAX_IMAGE_BYTES:
            return _invalid("You uploaded an unsupported image. Please make sure your image is below 20 MB in size.")
        self.images.append(data)
        text = self.describe(data)
        prompt_tokens = VISION_IMAGE_TOKENS + sum(len(str(m.get("content")).split()) for m in body["messages"][:1])
        completion_tokens = len(text.split())
        return httpx.Response(200, json={
            "id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion", "created": 1700000000,
            "model": body.get("model") or "gpt-4o",
            "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                         "message": {"role": "assistant", "content": text, "refusal": None}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens}})


def _invalid(message: str) -> httpx.Response:
    return httpx.Response(400, json={"error": {"message": message, "type": "invalid_request_error",
                                               "param": None, "code": "invalid_image_format"}})
