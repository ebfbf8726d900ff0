"""Differential parity with langchain-text-splitters 1.1.3: the same generated input through LangChain's class and
ours; equal outputs pass, and a difference passes only when a documented difference (``differences.py``) applies.

CI runs a fixed-seed subset (``PARITY_EXAMPLES``, default 150 per class); a run by hand sets it to 10000.
"""

from __future__ import annotations

import logging
import os
import sys

import langchain_text_splitters as langchain  # the reference: a test dependency (requirements-dev.txt)
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunking import splitters as ours
from tests.scenarios.parity import differences as diff

EXAMPLES = int(os.environ.get("PARITY_EXAMPLES", "150"))
PARITY = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

WORDS = ["a", "bb", "ccc", "word", "longerword", "x.", "y!", "why?", "end;", "中文", "東京", "。", "！", "🙂", "é",
         "\ufeff", "\r\n", "\t", "  ", "-", "#", "(", "{", "}"]
SPACES = ["", " ", " ", "\n", "\n\n", "\r\n", "  "]
texts = st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(SPACES)), max_size=40).map(
    lambda parts: "".join(word + space for word, space in parts))
keeps = st.sampled_from([False, True, "start", "end"])


@pytest.fixture(autouse=True)
def _quiet():
    logging.disable(logging.WARNING)  # both libraries warn about oversize pieces
    yield
    logging.disable(logging.NOTSET)


def check(case: dict, differences: list[diff.Difference]) -> None:
    diff.compare(sys._getframe(1).f_code.co_name, case, differences)  # tallied under the calling test's name


@PARITY
@given(text=texts, size=st.integers(1, 40), overlap=st.integers(0, 40), keep=keeps,
       separator=st.sampled_from(["\n\n", "\n", " ", ". ", "。"]), strip=st.booleans())
def test_character_text_splitter(text, size, overlap, keep, separator, strip):
    overlap = min(overlap, size)
    options = dict(separator=separator, chunk_size=size, chunk_overlap=overlap, keep_separator=keep,
                   strip_whitespace=strip)
    theirs = langchain.CharacterTextSplitter(**options).split_text(text)
    mine = ours.CharacterTextSplitter(**options).split_text(text)
    check(dict(text=text, chunk_size=size, separators=[separator], keep_separator=keep, ours=mine, theirs=theirs),
          diff.CHARACTER)


@PARITY
@given(text=texts, size=st.integers(1, 40), overlap=st.integers(0, 40), keep=keeps,
       separators=st.one_of(st.none(), st.sampled_from([["\n\n", "\n", " ", ""], ["\n", ". ", " ", ""],
                                                         [",", "."], ["。", ""]])))
def test_recursive_character_text_splitter(text, size, overlap, keep, separators):
    overlap = min(overlap, size)
    options = dict(separators=separators, chunk_size=size, chunk_overlap=overlap, keep_separator=keep)
    theirs = langchain.RecursiveCharacterTextSplitter(**options).split_text(text)
    mine = ours.RecursiveCharacterTextSplitter(**options).split_text(text)
    used = separators if separators is not None else list(ours.character.DEFAULT_SEPARATORS)
    check(dict(text=text, chunk_size=size, separators=used, keep_separator=keep, default_separators=separators is None,
               ours=mine, theirs=theirs), diff.RECURSIVE)


@PARITY
@given(text=texts, tokens_per_chunk=st.integers(1, 12), overlap=st.integers(0, 11))
def test_split_text_on_tokens(text, tokens_per_chunk, overlap):
    overlap = min(overlap, tokens_per_chunk - 1)
    functions = dict(decode=lambda ids: "".join(map(chr, ids)), encode=lambda t: [ord(c) for c in t])
    theirs = langchain.split_text_on_tokens(
        text=text, tokenizer=langchain.Tokenizer(chunk_overlap=overlap, tokens_per_chunk=tokens_per_chunk,
                                                 **functions))
    mine = ours.split_text_on_tokens(
        text=text, tokenizer=ours.Tokenizer(chunk_overlap=overlap, tokens_per_chunk=tokens_per_chunk, **functions))
    diff.TALLY["test_split_text_on_tokens"]["equal"] += 1
    assert mine == theirs  # no documented difference


HEADINGS = ["# Intro", "## Setup", "### Detail", "#### Deep", "# Intro", "## Usage ##", "#tag", "    ## Code?",
            "Title", "=====", "---", "**Bold**", "```", "~~~", "text line", "more text", "  indented", "",
            "\ufeff# Bom", "  # spaced"]
markdown = st.lists(st.sampled_from(HEADINGS), max_size=25).map("\n".join)
HEADERS = [("#", "H1"), ("##", "H2"), ("###", "H3")]


@PARITY
@given(text=markdown, strip=st.booleans(), each_line=st.booleans())
def test_markdown_header_text_splitter(text, strip, each_line):
    options = dict(headers_to_split_on=HEADERS, strip_headers=strip, return_each_line=each_line)
    theirs = [(d.page_content, d.metadata) for d in langchain.MarkdownHeaderTextSplitter(**options).split_text(text)]
    mine = [(d.page_content, d.metadata) for d in ours.MarkdownHeaderTextSplitter(**options).split_text(text)]
    check(dict(text=text, strip=strip, each_line=each_line, ours=mine, theirs=theirs), diff.MARKDOWN_HEADER)


def test_the_predicates_are_not_vacuous():
    """Each predicate rejects an input it does not explain (so 'anything goes' cannot pass)."""
    plain = dict(text="a b", chunk_size=5, separators=[" "], keep_separator=True, ours=["a b"], theirs=["a b"],
                 default_separators=True)
    assert diff.explained(plain, diff.RECURSIVE) == []
    markdown_case = dict(text="# A\nx", ours=[("x", {"H1": "A"})], theirs=[("y", {"H1": "A"})])
    assert diff.explained(markdown_case, diff.MARKDOWN_HEADER) == []
