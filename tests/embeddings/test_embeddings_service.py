"""The embeddings endpoint as unkind as the service (``tests/openai_fakes.embeddings_refusal``), through the real
openai SDK: what the fake refuses, that the client never sends it, and that the fake's answers have the shape of
the SDK's own response model (generated from the published API)."""

from __future__ import annotations

import httpx2 as httpx  # the HTTP client of openai 3.x
import openai
import pytest
from openai.types import CreateEmbeddingResponse

from tests.embeddings.test_embeddings import FakeEmbeddingsAPI, compatible


@pytest.mark.parametrize(("model", "dims", "message"), [
    ("text-embedding-ada-002", 4, "does not support specifying dimensions"),
    ("text-embedding-3-small", 2000, "between 1 and 1536"),
])
def test_dimensions_the_model_does_not_take_are_refused_400(model, dims, message):
    api = FakeEmbeddingsAPI(dims)

    with pytest.raises(openai.BadRequestError, match=message):
        compatible(api, model=model, dims=dims, send_dimensions=True, max_retries=0).embed(["x"])


def test_the_client_sends_dimensions_only_where_the_service_takes_them():
    for model, dims in (("text-embedding-ada-002", 1536), ("text-embedding-3-large", 256)):
        api = FakeEmbeddingsAPI(dims)
        assert len(compatible(api, model=model, dims=dims).embed(["x"])[0]) == dims


def test_an_empty_input_or_too_many_are_refused_by_the_fake_and_never_sent_by_the_client():
    api = FakeEmbeddingsAPI(4)
    client = openai.OpenAI(api_key="sk-test", base_url="http://embeddings.invalid/v1", max_retries=0,
                           http_client=httpx.Client(transport=httpx.MockTransport(api)))
    for inputs in (["ok", ""], ["x"] * 2049):
        with pytest.raises(openai.BadRequestError):
            client.embeddings.create(model="text-embedding-3-small", input=inputs, encoding_format="float")
    sent = len(api.requests)
    for inputs in (["ok", ""], ["x"] * 2049):
        with pytest.raises(ValueError):
            compatible(api).embed(inputs)
    assert len(api.requests) == sent


def test_the_fake_answers_in_the_shape_of_the_sdk_response_model():
    api = FakeEmbeddingsAPI(4)
    compatible(api).embed(["alpha", "beta"])

    answer = api.reply(api.requests[-1])
    parsed = CreateEmbeddingResponse.model_validate(answer.json(), strict=True)
    assert [d.index for d in parsed.data] == [1, 0] and parsed.usage.prompt_tokens == 14
