"""Differential parity of the JSON, token and code splitters with langchain-text-splitters 1.1.3: the same generated
input through both; equal outputs pass, a difference passes only when a documented difference applies
(``other_differences.py``). CI runs a fixed-seed subset (``PARITY_EXAMPLES``, default 150); by hand 10000.
"""

from __future__ import annotations

import logging
import os
from unittest import mock

import langchain_text_splitters as langchain  # the reference: a test dependency (requirements-dev.txt)
import pytest
import tiktoken
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunking import splitters as ours
from chunking.tokens import get_encoding
from tests.scenarios.parity import other_differences as other
from tests.scenarios.parity.differences import compare

EXAMPLES = int(os.environ.get("PARITY_EXAMPLES", "150"))
PARITY = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.fixture(autouse=True)
def _quiet():
    logging.disable(logging.WARNING)  # both libraries warn about oversize pieces
    yield
    logging.disable(logging.NOTSET)


KEYS = ["a", "b", "key", "長い", "n/m", "~t", "x y", "k1", "k2", "k3"]
SCALARS = st.one_of(st.integers(-5, 500), st.booleans(), st.none(), st.sampled_from(
    ["", "x", "a longer string value", "中文🙂", 'quote"d', "back\\slash", "new\nline"]))
json_values = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                            st.dictionaries(st.sampled_from(KEYS), inner, max_size=4)),
                           max_leaves=15)
flat = st.dictionaries(st.sampled_from(KEYS), st.one_of(SCALARS, st.lists(SCALARS, max_size=3)), min_size=1)
json_data = st.one_of(flat, st.dictionaries(st.sampled_from(KEYS), json_values, min_size=1, max_size=6))


@PARITY
@given(data=json_data, size=st.sampled_from([20, 35, 50, 80, 150, 400]), minimum=st.one_of(st.none(),
       st.integers(0, 60)), convert=st.booleans())
def test_recursive_json_splitter(data, size, minimum, convert):
    minimum = None if minimum is None else min(minimum, size)
    theirs = langchain.RecursiveJsonSplitter(max_chunk_size=size, min_chunk_size=minimum).split_json(
        data, convert_lists=convert)
    mine = ours.RecursiveJsonSplitter(max_chunk_size=size, min_chunk_size=minimum).split_json(
        data, convert_lists=convert)
    compare("test_recursive_json_splitter", dict(data=data, max_chunk_size=size, min_chunk_size=minimum,
                                                  convert_lists=convert, ours=mine, theirs=theirs), other.JSON)


TOKEN_WORDS = ["a", "bb", "word", "don't", "x.", "1.5", "\r\n", "\n", "  ", "\t", "中文", "東京", "🙂", "é",
               "\ufeff", "<|endoftext|>"]
token_texts = st.lists(st.tuples(st.sampled_from(TOKEN_WORDS), st.sampled_from(["", " ", "\n"])), max_size=30).map(
    lambda parts: "".join(word + space for word, space in parts))
ascii_texts = token_texts.map(lambda t: t.replace("<|endoftext|>", "").encode("ascii", "ignore").decode())


@PARITY
@given(text=st.one_of(ascii_texts, token_texts), size=st.integers(1, 12), overlap=st.integers(0, 11),
       special=st.sampled_from([{}, {"allowed_special": "all"}, {"disallowed_special": ()}]))
def test_token_text_splitter(text, size, overlap, special):
    options = dict(encoding_name="cl100k_base", chunk_size=size, chunk_overlap=min(overlap, size - 1), **special)
    # LangChain's tiktoken.get_encoding would download the BPE file: give it the shipped, hash-checked one.
    with mock.patch.object(tiktoken, "get_encoding", get_encoding):
        try:
            theirs = langchain.TokenTextSplitter(**options).split_text(text)
        except ValueError as error:
            theirs = f"ValueError: {error}"
    mine = ours.TokenTextSplitter(**options).split_text(text)
    compare("test_token_text_splitter", dict(text=text, encoding=get_encoding("cl100k_base"), ours=mine,
                                              theirs=theirs), other.TOKEN)


#: Languages whose LangChain separators are literal strings (the engine predicates read them literally).
LANGUAGES = ["python", "js", "ts", "go", "java", "kotlin", "cpp", "c", "csharp", "rust", "ruby", "scala", "swift",
             "php", "lua", "elixir", "sol", "proto", "html", "powershell"]
CODE_WORDS = ["def ", "class ", "function ", "fn ", "func ", "if ", "for ", "while ", "return ", "const ", "let ",
              "var ", "import ", "public ", "private ", "end", "{", "}", "(", ")", ";", "# note", "// note",
              "<div>", "<p>", "</p>", "x", "value", "=", "1", "中文", "🙂", '"s"', "@decorator"]
INDENTS = ["", "", "    ", "\t", "  "]
code_lines = st.lists(st.tuples(st.sampled_from(INDENTS), st.lists(st.sampled_from(CODE_WORDS), max_size=6),
                                st.sampled_from(["\n", "\n", "\n\n", "\r\n"])), max_size=14)
code_texts = code_lines.map(lambda lines: "".join(indent + " ".join(words) + end for indent, words, end in lines))


@PARITY
@given(text=code_texts, language=st.sampled_from(LANGUAGES), size=st.integers(5, 80), overlap=st.integers(0, 20))
def test_code_splitters(text, language, size, overlap):
    options = dict(chunk_size=size, chunk_overlap=min(overlap, size))
    theirs = langchain.RecursiveCharacterTextSplitter.from_language(langchain.Language(language), **options)
    their_separators = theirs._separators
    mine = ours.RecursiveCharacterTextSplitter.from_language(ours.Language(language), **options).split_text(text)
    engine = ours.RecursiveCharacterTextSplitter(separators=their_separators, is_separator_regex=True,
                                                 **options).split_text(text)
    compare("test_code_splitters", dict(text=text, chunk_size=size, their_separators=their_separators,
                                         ours_with_their_separators=engine, ours=mine,
                                         theirs=theirs.split_text(text)), other.CODE)


def test_the_other_predicates_are_not_vacuous():
    """On inputs that show none of the differences, every predicate is false (a real difference there fails)."""
    flat_case = dict(data={"a": 1, "b": "x"}, max_chunk_size=300, min_chunk_size=None, ours=[{"a": 1}],
                     theirs=[{"a": 1, "b": "x"}])
    assert [d.name for d in other.JSON if d.applies(flat_case)] == []
    token_case = dict(text="plain words", encoding=get_encoding("cl100k_base"), ours=["plain"], theirs=["plain words"])
    assert [d.name for d in other.TOKEN if d.applies(token_case)] == []
    code_case = dict(text="x = 1", chunk_size=50, their_separators=["\n", " ", ""], ours_with_their_separators=["x"],
                     ours=["x"], theirs=["x = 1"])
    assert [d.name for d in other.CODE if d.applies(code_case)] == []
