"""LLMChunker and LLMRouter (docs/splitters.md#llm-boundaries-and-the-router): break validation, windows with the
unfinished group re-sent, size repair, fallbacks, router mode."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunking.chat import InvalidOutput
from chunking.chat.cache import MemoryModelCache
from chunking.model import Page
from chunking.splitters import SentenceTextSplitter
from chunking.strategies.llm import LLMChunker, LLMRouter, parse_breaks
from chunking.strategies.offline_chat import OfflineChatClient
from chunking.strategies.prompts import read_section

from .helpers import ScriptedChat, TopicEmbedder, assert_covers, assert_ordered, assert_verbatim, user_text

PARAGRAPHS = ("Tea grows on hills. It needs rain.\n\nCoffee grows in the tropics. It needs shade.\n\n"
              "Water boils at 100 degrees.")
# Twelve units of 6 tokens each, three per topic.
TOPICS = " ".join(f"Topic{i // 3} fact {i}." for i in range(12))


def _lines(messages) -> list[tuple[int, str]]:
    return [(int(i), t) for i, t in re.findall(r"^\[(\d+)\] (.*)$", read_section("units", user_text(messages)), re.M)]


def topic_breaks(messages) -> str:
    """Break where the first word (the topic) changes."""
    lines = _lines(messages)
    return json.dumps({"breaks": [i for i, t in lines[1:] if t.split()[0] != lines[i - 1][1].split()[0]]})


@pytest.mark.parametrize("answer, n, expected", [('{"breaks": [0, 3, 7]}', 9, [0, 3, 7]), ('{"breaks": []}', 2, [])])
def test_valid_breaks(answer, n, expected):
    assert parse_breaks(answer, n) == expected


@pytest.mark.parametrize(
    "answer, message",
    [
        ("[1, 2]", 'no "breaks" list'),
        ('{"breaks": [1, "2"]}', "integers"),
        ('{"breaks": [true]}', "integers"),
        ('{"breaks": [1.5]}', "integers"),
        ('{"breaks": [3, 9]}', r"outside 0\.\.8"),
        ('{"breaks": [-1]}', "outside"),
        ('{"breaks": [4, 4]}', "not strictly increasing"),
        ('{"breaks": [5, 2]}', "not strictly increasing"),
        ("breaks: 1, 2", "not JSON"),
    ],
)
def test_invalid_breaks(answer, message):
    with pytest.raises(InvalidOutput, match=message):
        parse_breaks(answer, 9)


def test_offline_client_cuts_at_paragraphs():
    chunks = LLMChunker(OfflineChatClient(), min_chunk_tokens=1, max_chunk_tokens=100,
                        window_tokens=100).split_text(PARAGRAPHS)
    assert [(c.text, c.char_start, c.char_end) for c in chunks] == [
        ("Tea grows on hills. It needs rain.", 0, 34),
        ("Coffee grows in the tropics. It needs shade.", 36, 80),
        ("Water boils at 100 degrees.", 82, 109),
    ]


def test_the_unfinished_last_group_opens_the_next_window():
    chat = ScriptedChat(topic_breaks)
    chunks = LLMChunker(chat, min_chunk_tokens=1, max_chunk_tokens=30, window_tokens=33).split_text(TOPICS)
    assert [c.text for c in chunks] == [" ".join(f"Topic{t} fact {i}." for i in range(3 * t, 3 * t + 3))
                                        for t in range(4)]
    windows = [[t for _, t in _lines(m)] for m in chat.calls]
    assert [w[0] for w in windows] == ["Topic0 fact 0.", "Topic1 fact 3.", "Topic2 fact 6.", "Topic3 fact 9."]
    assert [len(w) for w in windows] == [5, 5, 5, 3]  # 5 units of 6 tokens fit in 33
    assert chat.calls[0][0]["content"].startswith("Task: boundaries.")


def test_a_window_without_breaks_is_taken_whole_then_repaired_to_the_cap():
    chat = ScriptedChat(lambda m: '{"breaks": []}')
    chunks = LLMChunker(chat, min_chunk_tokens=1, max_chunk_tokens=12, window_tokens=20).split_text(TOPICS)
    assert len(chat.calls) == 4  # 3 units per window, no unit re-sent
    assert all(c.token_count <= 12 for c in chunks)
    assert " ".join(c.text for c in chunks) == TOPICS


def test_min_chunk_tokens_merges_the_model_s_tiny_groups():
    chat = ScriptedChat(lambda m: json.dumps({"breaks": [i for i, _ in _lines(m)]}))
    chunks = LLMChunker(chat, min_chunk_tokens=12, max_chunk_tokens=18, window_tokens=100).split_text(TOPICS)
    assert all(12 <= c.token_count <= 18 for c in chunks)
    assert_covers(chunks, [Page(0, 0, TOPICS)])


@pytest.mark.parametrize("answer", ['{"breaks": [2, 1]}', RuntimeError("content filter")])
def test_failure_falls_back_to_the_sentence_splitter(answer):
    chunks = LLMChunker(ScriptedChat(lambda m: answer), min_chunk_tokens=1, max_chunk_tokens=12).split_text(TOPICS)
    assert [c.text for c in chunks] == [c.text for c in SentenceTextSplitter(12, 24).split_text(TOPICS)]
    assert all(c.metadata["llm_fallback"] and c.metadata["fallback_reason"].startswith("llm: ") for c in chunks)


def test_failure_falls_back_to_the_semantic_chunker_when_an_embedder_is_given():
    embedder = TopicEmbedder([f"topic{t}" for t in range(4)])
    chunks = LLMChunker(ScriptedChat(lambda m: "no"), min_chunk_tokens=1, max_chunk_tokens=30,
                        fallback_embedder=embedder).split_text(TOPICS)
    assert embedder.requests == 1 and all(c.metadata["llm_fallback"] for c in chunks)
    assert [c.metadata.get("strategy") for c in chunks] == ["semantic"] * len(chunks)


def test_answers_are_cached():
    cache, chat = MemoryModelCache(), ScriptedChat(topic_breaks)
    first = LLMChunker(chat, cache=cache, min_chunk_tokens=1, max_chunk_tokens=30, window_tokens=33).split_text(TOPICS)
    calls = chat.requests
    second = LLMChunker(chat, cache=cache, min_chunk_tokens=1, max_chunk_tokens=30, window_tokens=33).split_text(TOPICS)
    assert second == first and chat.requests == calls == 4


@pytest.mark.parametrize(
    "answer, expected",
    [('{"strategy": "semantic"}', "semantic"), ('{"strategy": "fixed"}', ""), ("semantic", ""),
     (RuntimeError("down"), "")],
)
def test_router_accepts_only_an_allowed_name(answer, expected):
    chat = ScriptedChat(lambda m: answer)
    router = LLMRouter(chat, ["sentence", "semantic"])
    assert router.route([Page(0, 0, PARAGRAPHS)]) == expected
    assert "from this list: sentence, semantic." in chat.calls[0][0]["content"]


def test_offline_router_prefers_markdown_for_documents_with_headings():
    router = LLMRouter(OfflineChatClient(), ["sentence", "markdown"])
    assert router.route([Page(0, 0, "# A\ntext\n## B\nmore")]) == "markdown"
    assert router.route([Page(0, 0, PARAGRAPHS)]) == "sentence"


_sentence = st.lists(st.sampled_from(["tea", "leaf", "茶", "rain", "cup", "boil"]), min_size=1, max_size=14).map(
    lambda ws: " ".join(ws).capitalize() + ".")
_text = st.lists(st.lists(_sentence, min_size=1, max_size=6).map(" ".join), min_size=1, max_size=5).map("\n\n".join)


@settings(max_examples=30, deadline=None)
@given(_text, st.randoms(use_true_random=False), st.integers(8, 40), st.integers(0, 20))
def test_properties_whatever_valid_breaks_the_model_returns(text, rng, max_tokens, min_tokens):
    def answer(messages):
        n = len(_lines(messages))
        return json.dumps({"breaks": sorted(rng.sample(range(n), rng.randint(0, n)))})

    chunker = LLMChunker(ScriptedChat(answer), min_chunk_tokens=min(min_tokens, max_tokens),
                         max_chunk_tokens=max_tokens, window_tokens=max_tokens * 3)
    chunks = chunker.split_text(text)
    pages = [Page(0, 0, text)]
    assert_covers(chunks, pages)
    assert_verbatim(chunks, pages)
    assert_ordered(chunks)
    assert all(c.token_count <= max_tokens and not c.metadata.get("llm_fallback") for c in chunks)
