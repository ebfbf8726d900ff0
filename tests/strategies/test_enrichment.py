"""ContextEnricher (docs/splitters.md#context-enrichment): the layout, neighbours, the embedding limit, generated
context."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunking.chat.cache import MemoryModelCache
from chunking.model import Chunk
from chunking.strategies.enrichment import ContextEnricher
from chunking.strategies.offline_chat import OfflineChatClient
from chunking.tokens import count_tokens

from .helpers import ScriptedChat


def chunk(text: str, start: int, headings: tuple[str, ...] = (), **metadata) -> Chunk:
    return Chunk(text, start, start + len(text), token_count=count_tokens(text), headings=headings,
                 metadata=dict(metadata))


CHUNKS = [
    chunk("Green tea is steamed. It stays green.", 0, ("Tea", "Green")),
    chunk("It costs 5 dollars.", 40, ("Pricing", "Tea")),
    chunk("Coffee costs 4 dollars. Water is free.", 60, ("Pricing", "Coffee")),
]


def texts(chunks: list[Chunk]) -> list[str | None]:
    return [c.metadata.get("embedding_text") for c in chunks]


def test_default_layout():
    out = ContextEnricher().enrich(CHUNKS, title="menu.md")
    assert texts(out) == [
        "menu.md › Tea › Green\n\nGreen tea is steamed. It stays green.\nIt costs 5 dollars.",
        "menu.md › Pricing › Tea\n\nIt stays green.\nIt costs 5 dollars.\nCoffee costs 4 dollars.",
        "menu.md › Pricing › Coffee\n\nIt costs 5 dollars.\nCoffee costs 4 dollars. Water is free.",
    ]
    assert [c.text for c in out] == [c.text for c in CHUNKS]  # the displayed text is untouched


def test_parts_can_be_turned_off():
    assert texts(ContextEnricher(breadcrumb=False, neighbour_sentences=0).enrich(CHUNKS)) == [None, None, None]
    alone = ContextEnricher(neighbour_sentences=0).enrich(CHUNKS[1:2])
    assert texts(alone) == ["Pricing › Tea\n\nIt costs 5 dollars."]


def test_neighbours_are_cut_at_a_word_within_their_cap():
    long_prev = chunk("Intro. " + " ".join(f"word{i}" for i in range(40)) + " end.", 0)
    long_next = chunk(" ".join(f"next{i}" for i in range(40)) + ".", 400)
    middle = chunk("Middle chunk.", 300)
    (_, out, _) = ContextEnricher(breadcrumb=False, neighbour_max_tokens=10).enrich([long_prev, middle, long_next])
    previous, content, following = out.metadata["embedding_text"].split("\n")
    assert content == "Middle chunk."
    assert previous.endswith("word39 end.") and count_tokens(previous) <= 10 and previous.split()[0].startswith("word")
    assert following.startswith("next0 next1") and count_tokens(following) <= 10
    assert all(w.startswith("next") for w in following.split())


def test_over_the_limit_drop_context_then_neighbours_then_breadcrumb_from_the_left():
    chat = ScriptedChat(lambda m: "Situating sentence about the pricing of tea in the menu.")
    chunks = [chunk("Alpha beta gamma.", 0, ("Section",)), chunk("Delta epsilon zeta eta theta.", 20, ("Section",))]

    def enrich(limit: int) -> str:
        enricher = ContextEnricher(generated_context=True, chat=chat, max_embedding_tokens=limit)
        return enricher.enrich(chunks, title="Doc")[1].metadata.get("embedding_text", "")

    full = enrich(8191)
    assert full == ("Doc › Section\n\nSituating sentence about the pricing of tea in the menu.\n\n"
                    "Alpha beta gamma.\nDelta epsilon zeta eta theta.")
    assert enrich(count_tokens(full) - 1) == "Doc › Section\n\nAlpha beta gamma.\nDelta epsilon zeta eta theta."
    assert enrich(count_tokens("Doc › Section\n\nDelta epsilon zeta eta theta.")) == (
        "Doc › Section\n\nDelta epsilon zeta eta theta.")
    shortest = "Section\n\nDelta epsilon zeta eta theta."
    assert enrich(count_tokens(shortest)) == shortest
    assert enrich(3) == ""  # only the content fits: nothing to add, content never cut


def test_generated_context_with_the_offline_client_is_cached():
    chat, cache = OfflineChatClient(), MemoryModelCache()
    enricher = ContextEnricher(generated_context=True, chat=chat, cache=cache, neighbour_sentences=0)
    first = enricher.enrich(CHUNKS, title="menu.md")
    assert chat.requests == 4  # one summary, one per chunk
    assert first[1].metadata["embedding_text"] == (
        "menu.md › Pricing › Tea\n\nPart of: Green tea is steamed. Section: Pricing › Tea. About: costs, dollars."
        "\n\nIt costs 5 dollars.")
    assert ContextEnricher(generated_context=True, chat=chat, cache=cache, neighbour_sentences=0).enrich(
        CHUNKS, title="menu.md") == first and chat.requests == 4


@pytest.mark.parametrize("answer", [RuntimeError("down"), "", "word " * 200])
def test_a_failed_or_invalid_context_is_omitted(answer):
    chat = ScriptedChat(lambda m: "A summary." if "Task: summary." in m[0]["content"] else answer)
    out = ContextEnricher(generated_context=True, chat=chat, neighbour_sentences=0).enrich(CHUNKS[:1], title="t")
    assert out[0].metadata["embedding_text"] == "t › Tea › Green\n\nGreen tea is steamed. It stays green."


def test_chunks_without_vector_are_skipped_and_levels_are_separate_lanes():
    chunks = [chunk("Parent text here.", 0, embed=False, level=0), chunk("Child one.", 0, level=1),
              chunk("Parent two.", 20, embed=False, level=0), chunk("Child two.", 20, level=1)]
    out = ContextEnricher(breadcrumb=False).enrich(chunks)
    assert texts(out) == [None, "Child one.\nChild two.", None, "Child one.\nChild two."]


def test_configuration_errors():
    with pytest.raises(ValueError, match="needs a chat client"):
        ContextEnricher(generated_context=True)
    with pytest.raises(ValueError, match="layout must name content"):
        ContextEnricher(layout=(("breadcrumb",),))


_words = st.lists(st.sampled_from(["tea", "cup", "茶葉", "rain", "boil", "leaf"]), min_size=1, max_size=40)
_chunk_texts = st.lists(_words.map(lambda ws: " ".join(ws).capitalize() + "."), min_size=1, max_size=6)


@settings(max_examples=40, deadline=None)
@given(_chunk_texts, st.lists(st.sampled_from(["Tea", "Green", "茶"]), max_size=3), st.integers(1, 120),
       st.integers(0, 2))
def test_embedding_text_fits_contains_the_content_and_never_changes_it(texts, headings, limit, neighbours):
    chunks = [chunk(t, 100 * i, tuple(headings)) for i, t in enumerate(texts)]
    out = ContextEnricher(neighbour_sentences=neighbours, max_embedding_tokens=limit).enrich(chunks, title="doc.md")
    for before, after in zip(chunks, out):
        assert after.text == before.text and after.char_start == before.char_start
        embedded = after.metadata.get("embedding_text", after.text)
        assert before.text in embedded
        assert count_tokens(embedded) <= limit or embedded == before.text  # content is never cut
