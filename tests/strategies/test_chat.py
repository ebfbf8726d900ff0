"""Chat clients: the OpenAI / Azure OpenAI client against a mock transport (request shape, retries honouring
Retry-After, Entra ID), the offline client's rules, and cached calls with bounded concurrency."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import httpx2 as httpx  # the HTTP client of openai 3.x
import openai
import pytest

from chunking.chat import ChatError, ChatTask, OpenAIChatClient, run_chat_tasks
from chunking.chat.cache import MemoryModelCache
from chunking.services import make_chat_client, make_model_cache
from chunking.settings import Settings
from chunking.strategies.offline_chat import OfflineChatClient
from chunking.strategies.prompts import PROMPTS, render_units, section
from tests.openai_fakes import ScriptedEndpoint

from .helpers import ScriptedChat


class FakeChatAPI(ScriptedEndpoint):
    """A ``/chat/completions`` endpoint: answers *plan* statuses first (then 200 with *content*)."""

    def __init__(self, content: str | None = '{"ok": true}', plan: list[tuple[int, dict]] | None = None) -> None:
        super().__init__(plan)
        self.content = content

    def reply(self, request: httpx.Request) -> httpx.Response:
        message = {"role": "assistant", "content": self.content}
        finish = "stop" if self.content else "content_filter"
        return httpx.Response(200, json={
            "id": "c1", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13},
        })


def compatible(api: FakeChatAPI) -> OpenAIChatClient:
    return OpenAIChatClient.openai_compatible(model="gpt-test", api_key="sk-test", base_url="http://chat.invalid/v1",
                                              http_client=httpx.Client(transport=httpx.MockTransport(api)))


MESSAGES = [{"role": "system", "content": "Task: route."}, {"role": "user", "content": "hello"}]


def test_request_and_answer():
    api = FakeChatAPI()
    client = compatible(api)
    answer = client.complete(MESSAGES, temperature=0.0, max_tokens=64, response_format={"type": "json_object"})
    assert answer == '{"ok": true}'
    assert str(api.requests[0].url) == "http://chat.invalid/v1/chat/completions"
    assert api.body() == {"model": "gpt-test", "messages": MESSAGES, "temperature": 0.0, "max_tokens": 64,
                          "response_format": {"type": "json_object"}}
    assert (client.name, client.requests, client.tokens) == ("openai/gpt-test", 1, 13)


def test_429_with_retry_after_ms_is_waited_out():
    api = FakeChatAPI(plan=[(429, {"retry-after-ms": "60"}), (503, {"retry-after": "0.05"})])
    assert compatible(api).complete(MESSAGES) == '{"ok": true}'
    assert len(api.requests) == 3
    assert api.times[1] - api.times[0] >= 0.055 and api.times[2] - api.times[1] >= 0.045


def test_retry_after_beyond_two_minutes_raises_at_once():
    api = FakeChatAPI(plan=[(429, {"retry-after": "600"})])
    with pytest.raises(openai.RateLimitError):
        compatible(api).complete(MESSAGES)
    assert len(api.requests) == 1


def test_an_empty_answer_is_a_chat_error():
    with pytest.raises(ChatError, match="empty answer .finish_reason content_filter"):
        compatible(FakeChatAPI(content=None)).complete(MESSAGES)


def test_azure_with_a_key_and_with_entra_id(monkeypatch: pytest.MonkeyPatch):
    from azure.core.credentials import AccessToken

    api = FakeChatAPI()
    keyed = OpenAIChatClient.azure(endpoint="https://unit.openai.azure.com", deployment="gpt4o", api_key="k1",
                                   http_client=httpx.Client(transport=httpx.MockTransport(api)))
    keyed.complete(MESSAGES)
    request = api.requests[-1]
    assert request.url.path == "/openai/deployments/gpt4o/chat/completions"
    assert request.url.params["api-version"] == "2024-10-21" and request.headers["api-key"] == "k1"

    class FakeCredential:
        def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
            assert scopes == ("https://cognitiveservices.azure.com/.default",)
            return AccessToken("entra-token", int(time.time()) + 3600)

    import azure.identity

    monkeypatch.setattr(azure.identity, "DefaultAzureCredential", FakeCredential)
    entra = OpenAIChatClient.azure(endpoint="https://unit.openai.azure.com", deployment="gpt4o",
                                   http_client=httpx.Client(transport=httpx.MockTransport(api)))
    entra.complete(MESSAGES)
    assert api.requests[-1].headers["authorization"] == "Bearer entra-token"
    assert entra.name == "azure_openai/gpt4o"


def test_clients_from_settings(tmp_path):
    assert isinstance(make_chat_client(Settings()), OfflineChatClient)
    s = Settings.from_env({"AZURE_OPENAI_ENDPOINT": "https://x.openai.azure.com", "AZURE_OPENAI_API_KEY": "k",
                           "CHAT_MODEL": "gpt-4o-mini"})
    assert s.chat_backend == "azure_openai" and make_chat_client(s).name == "azure_openai/gpt-4o-mini"
    assert Settings.from_env({"AZURE_OPENAI_ENDPOINT": "https://x.openai.azure.com"}).chat_backend == "offline"
    from chunking.settings import SettingsError

    with pytest.raises(SettingsError, match="CHAT_BACKEND=openai needs CHAT_MODEL"):
        Settings.from_env({"CHAT_BACKEND": "openai"})
    assert make_model_cache(Settings(state_dir=tmp_path)).location == str(tmp_path / "cache")


# -- the offline client ------------------------------------------------------------------------------------------


def ask(task: str, user: str, **fields: object) -> str:
    return OfflineChatClient().complete(PROMPTS[task].messages(user, **fields))


def test_offline_propositions():
    passage = "Tea grows on hills; it needs rain. Contents . . . . . 12\nThe cup is hot."
    answer = ask("propositions", section("passage", passage), max_propositions=5, max_proposition_tokens=50)
    # Dot leaders end no sentence (docs/splitters.md#sentence-end), so the entry runs on to the next sentence end.
    assert json.loads(answer) == {"propositions": ["Tea grows on hills;", "it needs rain.",
                                                   "Contents . . . . . 12 The cup is hot."]}


def test_offline_propositions_respect_the_caps():
    from chunking.tokens import count_tokens

    facts = " ".join(f"Fact number {i} holds." for i in range(8))  # 6 tokens each
    answer = json.loads(ask("propositions", section("passage", facts), max_propositions=4,
                            max_proposition_tokens=14))["propositions"]
    assert answer == [f"Fact number {i} holds. Fact number {i + 1} holds." for i in range(0, 8, 2)]
    long = "Tea leaves are picked by hand, dried in the sun for days, rolled, and then packed into wooden boxes."
    answer = json.loads(ask("propositions", section("passage", long), max_propositions=9,
                            max_proposition_tokens=12))["propositions"]
    assert " ".join(answer) == long and all(count_tokens(p) <= 12 for p in answer) and len(answer) > 1


def test_offline_boundaries_and_route_and_summary():
    units = render_units(["# Intro", "Tea is a drink.", "It is hot.", "Coffee is too.", "1. Step one"],
                         [True, False, False, True, False])
    assert json.loads(ask("boundaries", section("units", units), min_chunk_tokens=1, max_chunk_tokens=9)) == {
        "breaks": [3, 4]}
    assert json.loads(ask("route", section("document", "plain text"), choices="semantic, llm")) == {
        "strategy": "semantic"}
    assert ask("summary", section("document", "One. Two. Three."), max_summary_tokens=4) == "One. Two."


def test_offline_situate():
    user = "\n".join([section("summary", "A tea guide. It has parts."), section("headings", "Tea\nGreen"),
                      section("chunk", "Green tea leaves steam; green leaves dry.")])
    assert ask("situate", user, max_context_tokens=50) == ("Part of: A tea guide. Section: Tea › Green. "
                                                           "About: green, leaves, steam.")


def test_offline_client_refuses_other_prompts():
    with pytest.raises(ChatError, match="answers only the chunking prompts"):
        OfflineChatClient().complete([{"role": "user", "content": "hi"}])


# -- cached calls ------------------------------------------------------------------------------------------------


def task(text: str) -> ChatTask:
    return ChatTask("t", "v1", text, ({"role": "user", "content": text},), {"p": 1})


def test_run_chat_tasks_caches_answers_deduplicates_and_keeps_order():
    chat = ScriptedChat(lambda m: m[0]["content"].upper())
    cache = MemoryModelCache()
    assert run_chat_tasks(chat, cache, [task("a"), task("b"), task("a")]) == ["A", "B", "A"]
    assert chat.requests == 2
    assert run_chat_tasks(chat, cache, [task("b"), task("a")]) == ["B", "A"] and chat.requests == 2


def test_run_chat_tasks_returns_failures_and_does_not_cache_them():
    chat = ScriptedChat(lambda m: ValueError("bad gateway") if m[0]["content"] == "x" else "ok")
    cache = MemoryModelCache()
    results = run_chat_tasks(chat, cache, [task("x"), task("y")])
    assert isinstance(results[0], ValueError) and results[1] == "ok" and len(cache.entries) == 1


def test_run_chat_tasks_bounds_concurrency():
    active, peak, lock = [0], [0], threading.Lock()

    def slow(messages):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.02)
        with lock:
            active[0] -= 1
        return "ok"

    run_chat_tasks(ScriptedChat(slow), MemoryModelCache(), [task(str(i)) for i in range(12)], max_concurrency=3)
    assert peak[0] == 3
