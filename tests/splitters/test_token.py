"""TokenTextSplitter: token windows cut on character boundaries (docs/splitters.md#tokentextsplitter)."""

from __future__ import annotations

import pytest

from chunking.model import Document
from chunking.splitters import TokenTextSplitter
from chunking.tokens import get_encoding

ENCODING = get_encoding("cl100k_base")


def pairs(splitter: TokenTextSplitter, text: str) -> list[tuple[str, int]]:
    out = splitter.split_text_with_offsets(text)
    for chunk, start in out:
        assert text[start : start + len(chunk)] == chunk
    return out


# -- the examples of docs/splitters.md#tokentextsplitter ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("chunk_size", "chunk_overlap", "text", "expected"),
    [
        (2, 0, "東京は雨です", [("東", 0), ("京は", 1), ("雨", 3), ("です", 4)]),
        (3, 1, "東京は雨です", [("東京", 0), ("京は", 1), ("は雨", 2), ("雨です", 3)]),
        (1, 0, "🙂 ok 🙂", [("🙂", 0), (" ok", 1), (" 🙂", 4)]),
    ],
)
def test_windows_end_on_character_boundaries(chunk_size, chunk_overlap, text, expected):
    splitter = TokenTextSplitter(chunk_size=chunk_size, chunk_overlap=chunk_overlap)
    assert pairs(splitter, text) == expected


def test_spec_example_token_counts_hold():
    assert len(ENCODING.encode_ordinary("東京は雨です")) == 7
    assert len(ENCODING.encode_ordinary("🙂")) == 2


# -- ASCII: LangChain's window ------------------------------------------------------------------------------


def langchain_window(text: str, chunk_size: int, chunk_overlap: int) -> list[str]:
    """The reference sliding window: decode ids[start:start+size], stride size - overlap (whitespace-only windows
    left out, as docs/splitters.md#tokentextsplitter says)."""
    ids = ENCODING.encode_ordinary(text)
    out, start = [], 0
    while start < len(ids):
        end = min(start + chunk_size, len(ids))
        out.append(ENCODING.decode(ids[start:end]))
        if end == len(ids):
            break
        start += chunk_size - chunk_overlap
    return [chunk for chunk in out if chunk.strip()]


ASCII = "The quick brown fox jumps over the lazy dog. " * 6 + "def f(x):\n    return x * 2\n"


@pytest.mark.parametrize(("chunk_size", "chunk_overlap"), [(1, 0), (5, 0), (5, 2), (7, 6), (16, 4), (1000, 10)])
def test_ascii_text_gets_langchains_window(chunk_size, chunk_overlap):
    splitter = TokenTextSplitter(chunk_size=chunk_size, chunk_overlap=chunk_overlap)
    assert splitter.split_text(ASCII) == langchain_window(ASCII, chunk_size, chunk_overlap)


# -- LangChain faults (regressions) ---------------------------------------------------------------------------


CJK = "日本語のテキストを分割します。中文文本也需要正确处理，不能出现乱码。한국어 문장도 마찬가지입니다。🙂👍🏽"


@pytest.mark.parametrize("chunk_size", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("overlap_fraction", [0.0, 0.5])
def test_regression_cjk_text_is_never_destroyed(chunk_size, overlap_fraction):
    overlap = int(chunk_size * overlap_fraction)
    if overlap >= chunk_size:
        overlap = chunk_size - 1
    out = pairs(TokenTextSplitter(chunk_size=chunk_size, chunk_overlap=overlap), CJK)
    assert all("\ufffd" not in chunk for chunk, _ in out)
    # Without overlap the windows tile the text exactly.
    if overlap == 0:
        assert "".join(chunk for chunk, _ in out) == CJK
    # A window is over chunk_size only when it is one character needing more tokens.
    for chunk, _ in out:
        assert len(ENCODING.encode_ordinary(chunk)) <= chunk_size or len(chunk) == 1


def test_langchain_window_would_have_destroyed_the_same_text():
    assert any("\ufffd" in chunk for chunk in langchain_window(CJK, 2, 0))


def test_regression_special_token_text_is_counted_as_text():
    splitter = TokenTextSplitter(chunk_size=100, chunk_overlap=0)
    assert splitter.split_text("before <|endoftext|> after") == ["before <|endoftext|> after"]
    allowed = TokenTextSplitter(chunk_size=1, chunk_overlap=0, allowed_special="all")
    assert allowed.split_text("<|endoftext|>") == ["<|endoftext|>"]
    with pytest.raises(ValueError):
        TokenTextSplitter(chunk_size=5, chunk_overlap=0, disallowed_special="all").split_text("<|endoftext|>")


# -- options and validation ---------------------------------------------------------------------------------


def test_whitespace_only_windows_are_skipped_and_chunks_not_stripped():
    text = "a" + " " * 40 + "\n\n\n" + " b"
    out = pairs(TokenTextSplitter(chunk_size=1, chunk_overlap=0), text)
    assert [chunk for chunk, _ in out] == ["a", " b"]
    assert out[-1][1] == len(text) - 2


@pytest.mark.parametrize("text", ["", "   \n\t"])
def test_empty_input(text):
    assert TokenTextSplitter(chunk_size=3, chunk_overlap=0).split_text(text) == []


@pytest.mark.parametrize(("size", "overlap"), [(5, 5), (5, 7)])
def test_overlap_must_be_smaller_than_chunk_size(size, overlap):
    with pytest.raises(ValueError):
        TokenTextSplitter(chunk_size=size, chunk_overlap=overlap)


def test_defaults():
    splitter = TokenTextSplitter()
    assert (splitter._chunk_size, splitter._chunk_overlap, splitter._encoding.name) == (4000, 200, "cl100k_base")


def test_model_name_selects_the_encoding_and_unknown_names_raise():
    assert TokenTextSplitter(model_name="gpt-4", chunk_size=2, chunk_overlap=0).split_text("東京は") == ["東", "京は"]
    with pytest.raises(ValueError, match="not shipped"):
        TokenTextSplitter(encoding_name="gpt2")
    with pytest.raises(ValueError, match="no tiktoken encoding"):
        TokenTextSplitter(model_name="no-such-model")


def test_from_tiktoken_encoder_builds_the_same_splitter():
    built = TokenTextSplitter.from_tiktoken_encoder(encoding_name="cl100k_base", chunk_size=2, chunk_overlap=0)
    assert built.split_text("東京は雨です") == TokenTextSplitter(chunk_size=2, chunk_overlap=0).split_text("東京は雨です")


def test_create_documents_carries_exact_character_offsets():
    splitter = TokenTextSplitter(chunk_size=2, chunk_overlap=1, add_start_index=True)
    docs = splitter.create_documents(["東京は雨です"], metadatas=[{"lang": "ja"}])
    assert docs == [
        Document("東", {"lang": "ja", "start_index": 0}),
        Document("京は", {"lang": "ja", "start_index": 1}),
        Document("は", {"lang": "ja", "start_index": 2}),
        Document("雨", {"lang": "ja", "start_index": 3}),
        Document("です", {"lang": "ja", "start_index": 4}),
    ]
