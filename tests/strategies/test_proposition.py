"""PropositionChunker (docs/splitters.md#propositions): validation rules, grounding, exact output with the offline
client, fallbacks, the cache, and coverage."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunking.chat import InvalidOutput
from chunking.chat.cache import MemoryModelCache
from chunking.documents.records import build_records
from chunking.model import Page
from chunking.strategies.offline_chat import OfflineChatClient
from chunking.strategies.prompts import read_section
from chunking.strategies.proposition import PropositionChunker, grounding, parse_propositions
from chunking.tokens import token_counter

from .helpers import ScriptedChat, assert_covers, user_text

COUNT = token_counter()
PASSAGE = "The company released the headset in 2023 for 3,499 dollars."
TEXT = ("The company released the headset in 2023; it costs 3,499 dollars. Reviewers liked it.\n\n"
        "The battery lasts two hours. The strap is adjustable.")


def parse(answer: str, **kw):
    args = {"max_propositions": 3, "max_proposition_tokens": 12, "min_grounding": 0.6, "count": COUNT, **kw}
    return parse_propositions(answer, PASSAGE, **args)


def test_valid_answer_with_one_ungrounded_proposition_dropped():
    answer = json.dumps({"propositions": ["The company released the headset.", " The headset costs 3,499 dollars. ",
                                          "Critics called the device overpriced."]})
    assert parse(answer) == (["The company released the headset.", "The headset costs 3,499 dollars."], 1)


@pytest.mark.parametrize(
    "answer, message",
    [
        ("not json", "not JSON"),
        ('["a list"]', 'no "propositions" list'),
        ('{"propositions": "one string"}', 'no "propositions" list'),
        ('{"propositions": []}', "0 propositions"),
        ('{"propositions": ["a", "b", "c", "d"]}', "4 propositions"),
        ('{"propositions": ["The headset costs dollars.", ""]}', "proposition 1 is not a non-empty string"),
        ('{"propositions": [7]}', "proposition 0 is not a non-empty string"),
        ('{"propositions": ["' + "headset " * 20 + '"]}', r"proposition 0 has 21 tokens \(cap 12\)"),
        ('{"propositions": ["Bananas are yellow fruit."]}', "none of 1 propositions is grounded"),
    ],
)
def test_invalid_answers(answer, message):
    with pytest.raises(InvalidOutput, match=message):
        parse(answer)


@pytest.mark.parametrize(
    "proposition, share",
    [
        ("The headset costs 3,499 dollars", 5 / 6),  # only "costs" is missing
        ("THE COMPANY RELEASED THE HEADSET", 1.0),
        ("", 0.0),
        ("东京 は 大きい", 1 / 6),  # CJK counts per character: only 京 is in 東京都
        ("東京", 1.0),
    ],
)
def test_grounding(proposition, share):
    assert grounding(proposition, PASSAGE + " 東京都") == pytest.approx(share)


def test_offline_client_exact_output():
    chat = OfflineChatClient()
    chunks = PropositionChunker(chat, passage_max_tokens=25).split_text(TEXT)
    assert [(c.kind, c.text, c.char_start, c.char_end, c.metadata["path"]) for c in chunks] == [
        ("text", "The company released the headset in 2023; it costs 3,499 dollars. Reviewers liked it.", 0, 85,
         [0]),
        ("proposition", "The company released the headset in 2023;", 0, 85, [0, 0]),
        ("proposition", "it costs 3,499 dollars.", 0, 85, [0, 1]),
        ("proposition", "Reviewers liked it.", 0, 85, [0, 2]),
        ("text", "The battery lasts two hours. The strap is adjustable.", 87, 140, [1]),
        ("proposition", "The battery lasts two hours.", 87, 140, [1, 0]),
        ("proposition", "The strap is adjustable.", 87, 140, [1, 1]),
    ]
    assert chat.requests == 2
    records = build_records(chunks, doc_id="dabc", version="0123456789", source="a.txt", paginated=False)
    assert [(r.level, r.kind, r.has_vector, r.parent_id) for r in records[:2]] == [
        (0, "text", False, None), (1, "proposition", True, "dabc-01234567-0-0")]


def test_request_asks_for_json_at_temperature_zero_with_the_passage_framed():
    chat = ScriptedChat(lambda m: json.dumps({"propositions": [read_section("passage", user_text(m))]}))
    PropositionChunker(chat, max_propositions=7, max_proposition_tokens=50).split_text(PASSAGE)
    (messages,) = chat.calls
    assert messages[0]["content"].startswith("Task: propositions.")
    assert "At most 7 propositions, each at most 50 tokens." in messages[0]["content"]
    assert user_text(messages) == f"<passage>\n{PASSAGE}\n</passage>"


@pytest.mark.parametrize("answer", ["I cannot help with that.", RuntimeError("429 after retries")])
def test_failure_or_invalid_output_falls_back_to_sentences(answer):
    chunks = PropositionChunker(ScriptedChat(lambda m: answer)).split_text(TEXT)
    passages = [c for c in chunks if c.kind == "text"]
    props = [c.text for c in chunks if c.kind == "proposition"]
    assert props == ["The company released the headset in 2023; it costs 3,499 dollars.", "Reviewers liked it.",
                     "The battery lasts two hours.", "The strap is adjustable."]
    assert all(c.metadata["proposition_fallback"] for c in chunks)
    assert passages[0].metadata["fallback_reason"].startswith("propositions: ")


def test_second_run_makes_no_call_and_invalid_answers_are_cached_too():
    cache = MemoryModelCache()
    chat = ScriptedChat(lambda m: "not json")
    first = PropositionChunker(chat, cache=cache).split_text(TEXT)
    second = PropositionChunker(chat, cache=cache).split_text(TEXT)
    assert chat.requests == 1 and second == first


def test_a_failed_call_is_not_cached():
    cache = MemoryModelCache()
    chat = ScriptedChat(lambda m: TimeoutError("timed out"))
    PropositionChunker(chat, cache=cache).split_text(PASSAGE)
    PropositionChunker(chat, cache=cache).split_text(PASSAGE)
    assert chat.requests == 2 and cache.entries == {}


def test_another_prompt_version_or_model_misses_the_cache():
    cache = MemoryModelCache()
    chat = OfflineChatClient()
    PropositionChunker(chat, cache=cache).split_text(PASSAGE)
    PropositionChunker(chat, cache=cache, max_propositions=5).split_text(PASSAGE)  # other parameters
    other = OfflineChatClient()
    other.name = "offline-chat-v2"
    PropositionChunker(other, cache=cache).split_text(PASSAGE)
    assert (chat.requests, other.requests, len(cache.entries)) == (2, 1, 3)


_sentence = st.lists(st.sampled_from(["tea", "leaf", "cup", "緑茶", "it", "boils", "7", "."]), min_size=1,
                     max_size=30).map(lambda ws: " ".join(ws).capitalize() + ".")


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(_sentence, max_size=10).map(" ".join), min_size=1, max_size=3), st.integers(10, 80))
def test_passages_cover_the_document_and_propositions_fit(texts, passage_tokens):
    pages, offset = [], 0
    for n, t in enumerate(texts):
        pages.append(Page(n, offset, t))
        offset += len(t)
    chunker = PropositionChunker(OfflineChatClient(), passage_max_tokens=passage_tokens, max_proposition_tokens=20)
    chunks = chunker.split_pages(pages)
    assert_covers(chunks, pages)
    for c in chunks:
        if c.kind == "proposition":
            assert c.text.strip() and c.token_count <= 20
            passage = next(p for p in chunks if p.metadata["path"] == c.metadata["path"][:1])
            assert (c.char_start, c.char_end) == (passage.char_start, passage.char_end)
