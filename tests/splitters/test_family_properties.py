"""Property tests over generated text for the whole splitter family.

Invariants: chunks are verbatim at their offsets, in order, cover the input, never exceed the limit when a cut
can prevent it, and structure (fences, JSON paths, HTML text order) survives.
"""

from __future__ import annotations

import json
import re

from hypothesis import example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from chunking.splitters import (
    CharacterTextSplitter,
    ExperimentalMarkdownSyntaxTextSplitter,
    HTMLHeaderTextSplitter,
    MarkdownHeaderTextSplitter,
    MarkdownSectionSplitter,
    RecursiveCharacterTextSplitter,
    RecursiveJsonSplitter,
    TokenTextSplitter,
)
from chunking.tokens import count_tokens

FAST = settings(max_examples=150, deadline=None)
SLOW = settings(max_examples=40, deadline=None)

PIECES = ["a", "bb", "ccc", "dddd", " ", "  ", "\n", "\n\n", "\t", "東京", "。", ". ", "🙂", "é", "x" * 15, "\u00a0"]
texts = st.lists(st.sampled_from(PIECES), max_size=60).map("".join)
keeps = st.sampled_from([False, True, "start", "end"])


def check_chunks(text: str, pairs: list[tuple[str, int]], *, overlap: bool, skipped: int = 0) -> None:
    """Verbatim at offsets, no blank chunk, offsets in order, every non-whitespace character covered, except the
    first *skipped* characters (a Markdown front matter block), which no chunk touches."""
    covered = [False] * len(text)
    covered[:skipped] = [True] * skipped
    previous_start, previous_end = skipped - 1, skipped
    for chunk, start in pairs:
        assert chunk.strip(), "blank chunk"
        assert start >= skipped, "a chunk holds front matter"
        assert text[start : start + len(chunk)] == chunk
        assert start >= previous_start
        if not overlap:
            assert start >= previous_end, "chunks overlap although chunk_overlap=0"
        previous_start, previous_end = start, start + len(chunk)
        for index in range(start, start + len(chunk)):
            covered[index] = True
    missing = [i for i, char in enumerate(text) if not char.isspace() and not covered[i]]
    assert not missing, f"characters not in any chunk at {missing[:5]}"


@FAST
@given(text=texts, size=st.integers(1, 40), overlap_ratio=st.floats(0, 1), keep=keeps)
def test_recursive_chunks_fit_and_cover_the_text(text, size, overlap_ratio, keep):
    overlap = int(size * overlap_ratio)
    splitter = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap, keep_separator=keep)
    pairs = splitter.split_text_with_offsets(text)
    assert all(len(chunk) <= size for chunk, _ in pairs)
    check_chunks(text, pairs, overlap=overlap > 0)


@FAST
@given(text=texts, size=st.integers(1, 40), overlap=st.integers(0, 10), keep=keeps,
       separator=st.sampled_from([" ", "\n\n", "\n", r"\s+", "。", ""]))
def test_character_chunks_fit_and_cover_the_text(text, size, overlap, keep, separator):
    overlap = min(overlap, size)
    splitter = CharacterTextSplitter(separator=separator, is_separator_regex=separator == r"\s+", chunk_size=size,
                                     chunk_overlap=overlap, keep_separator=keep)
    pairs = splitter.split_text_with_offsets(text)
    assert all(len(chunk) <= size for chunk, _ in pairs)
    if keep is not False or separator not in ("。",):  # with keep=False a "。" separator is left out of chunks
        check_chunks(text, pairs, overlap=overlap > 0)


@SLOW
@given(text=texts, size=st.integers(4, 30), overlap=st.integers(0, 3))
def test_recursive_token_chunks_fit_the_token_budget(text, size, overlap):
    splitter = RecursiveCharacterTextSplitter.from_tiktoken_encoder(chunk_size=size, chunk_overlap=overlap)
    pairs = splitter.split_text_with_offsets(text)
    assert all(count_tokens(chunk) <= size for chunk, _ in pairs)
    check_chunks(text, pairs, overlap=overlap > 0)


@SLOW
@given(text=texts, size=st.integers(1, 12), overlap_ratio=st.floats(0, 0.9))
def test_token_windows_are_verbatim_and_never_break_characters(text, size, overlap_ratio):
    overlap = min(int(size * overlap_ratio), size - 1)
    pairs = TokenTextSplitter(chunk_size=size, chunk_overlap=overlap).split_text_with_offsets(text)
    for chunk, _ in pairs:
        assert "\ufffd" not in chunk
        # Over the size only when a window of whole tokens ends inside a character and is extended to the
        # character's end (' 東' is 2 tokens: the space and the first bytes of 東 share one).
        assert count_tokens(chunk) <= size or count_tokens(chunk[:-1]) <= size
    check_chunks(text, pairs, overlap=overlap > 0)


# -- Markdown ---------------------------------------------------------------------------------------------------

MD_WORDS = st.sampled_from(["alpha", "beta", "東京です。", "gamma.", "delta,", "x" * 12])
md_paragraph = st.lists(MD_WORDS, min_size=1, max_size=8).map(" ".join)
md_heading = st.tuples(st.integers(1, 4), md_paragraph).map(lambda t: "#" * t[0] + " " + t[1])
md_code_line = st.sampled_from(["# comment", "x = 1", "", "```not closing", "~~~", "    indented", "## fake"])
md_fence = st.tuples(st.sampled_from(["```", "````", "~~~"]), st.sampled_from(["", "py", "sh x"]),
                     st.lists(md_code_line, max_size=5)).map(
    lambda t: "\n".join([t[0] + t[1], *t[2], t[0]]))
md_block = st.one_of(md_paragraph, md_heading, md_fence, st.just(""), st.just("---"))
md_front = st.sampled_from(["", "", "", "---\ntitle: alpha\n---\n", "\ufeff---\n# not: a heading\n```\n...\n",
                            "---\n---\n", "---\n\nalpha\n---\n"])
markdown = st.tuples(md_front, st.lists(md_block, max_size=12), st.booleans()).map(
    lambda t: t[0] + "\n".join(t[1]) + ("\n```\nunclosed # code\n\nstill code" if t[2] else ""))

# YAML front matter (docs/splitters.md#markdownheadertextsplitter), written here independently of fences.py:
# "---" first (a BOM allowed), a non-blank line next, closed by a line "---" or "...".
FRONT_MATTER = re.compile(r"\ufeff?---\r?\n(?![ \t]*\r?(?:\n|$))(?:[^\n]*\n)*?(?:---|\.\.\.)\r?(?=\n|$)")


def front_matter_end(text: str) -> int:
    """The offset just past the front matter block's closing line (its newline excluded), ``0`` if none."""
    match = FRONT_MATTER.match(text)
    return match.end() if match else 0


def fence_spans(text: str, front_matter: bool = True) -> list[tuple[int, int]]:
    """Fenced blocks found by markdown-it-py (an independent CommonMark parser), as character spans; with
    *front_matter*, a front matter block, which CommonMark does not know, is blanked first (blank lines)."""
    end = front_matter_end(text) if front_matter else 0
    text = re.sub(r"[^\n]", " ", text[:end]) + text[end:]
    line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
    spans = []
    for token in MarkdownIt("commonmark").parse(text):
        if token.type == "fence":
            first, last = token.map
            end = line_starts[last] - 1 if last < len(line_starts) else len(text)
            # An unclosed fence runs to the end of the document, blank lines included; chunks never end in
            # whitespace, so the span ends at its last non-space character.
            spans.append((line_starts[first], max(line_starts[first] + 1, len(text[:end].rstrip()))))
    return spans


def prose_length(text: str, start: int, end: int, fences: list[tuple[int, int]]) -> int:
    inside = set()
    for fence_start, fence_end in fences:
        inside.update(range(max(start, fence_start), min(end, fence_end)))
    return sum(1 for i in range(start, end) if i not in inside)


@SLOW
@given(text=markdown, size=st.integers(8, 60))
@example(text="~~~\n~~~\n~~~\n\n", size=8)  # an unclosed fence followed by a blank line
def test_markdown_sections_never_cut_a_fence_and_fit_without_code(text, size):
    chunks = MarkdownSectionSplitter(chunk_size=size).split_text(text)
    fences = fence_spans(text)
    for chunk in chunks:
        assert text[chunk.start_index : chunk.end_index] == chunk.page_content
        assert prose_length(text, chunk.start_index, chunk.end_index, fences) <= size
    for fence_start, fence_end in fences:
        holders = [c for c in chunks if c.start_index <= fence_start and fence_end <= c.end_index]
        touching = [c for c in chunks if c.start_index < fence_end and fence_start < c.end_index]
        assert len(holders) == 1 and touching == holders, f"fence {text[fence_start:fence_end]!r} was cut"
    check_chunks(text, [(c.page_content, c.start_index) for c in chunks], overlap=False,
                 skipped=front_matter_end(text))


@FAST
@given(text=markdown)
def test_markdown_header_sections_are_verbatim_and_cover_the_text(text):
    splitter = MarkdownHeaderTextSplitter([("#", "1"), ("##", "2"), ("###", "3")], strip_headers=False,
                                          add_start_index=True)
    docs = splitter.split_text(text)
    check_chunks(text, [(d.page_content, d.metadata["start_index"]) for d in docs], overlap=False,
                 skipped=front_matter_end(text))


@FAST
@given(text=markdown)
def test_markdown_syntax_chunks_are_verbatim_and_keep_every_fence_whole(text):
    docs = ExperimentalMarkdownSyntaxTextSplitter(strip_headers=False, add_start_index=True).split_text(text)
    for doc in docs:
        start = doc.metadata["start_index"]
        assert text[start : start + len(doc.page_content)] == doc.page_content
    code = [d for d in docs if "Code" in d.metadata]
    assert [(d.metadata["start_index"], d.metadata["start_index"] + len(d.page_content.rstrip("\n"))) for d in code] \
        == fence_spans(text, front_matter=False)  # this splitter treats front matter as Markdown, as LangChain


# -- JSON -------------------------------------------------------------------------------------------------------

json_keys = st.sampled_from(["a", "b", "name", "城市", "x/y", "k~"])
json_leaves = st.one_of(st.integers(-1000, 1000), st.text(max_size=20), st.booleans(), st.none(),
                        st.lists(st.integers(0, 9), max_size=4))
json_values = st.recursive(json_leaves, lambda inner: st.dictionaries(json_keys, inner, max_size=4), max_leaves=25)
json_objects = st.dictionaries(json_keys, json_values, max_size=5)


def deep_merge(chunks: list[dict]) -> dict:
    merged: dict = {}
    for chunk in chunks:
        stack = [(merged, chunk)]
        while stack:
            target, source = stack.pop()
            for key, value in source.items():
                if isinstance(value, dict) and value and isinstance(target.get(key), dict):
                    stack.append((target[key], value))
                elif isinstance(value, dict) and value and key not in target:
                    target[key] = {}
                    stack.append((target[key], value))
                else:
                    assert key not in target, f"value at {key!r} given twice"
                    target[key] = value
    return merged


def leaf_count(data: object) -> int:
    if isinstance(data, dict) and data:
        return sum(leaf_count(value) for value in data.values())
    return 1


@FAST
@given(data=json_objects, size=st.integers(10, 200))
def test_json_chunks_fit_and_rebuild_the_input_in_order(data, size):
    splitter = RecursiveJsonSplitter(max_chunk_size=size)
    chunks = splitter.split_json(data)
    for chunk in chunks:
        assert len(json.dumps(chunk)) <= size or leaf_count(chunk) == 1
    assert json.dumps(deep_merge(chunks)) == json.dumps(data)
    for text in splitter.split_text(data):
        json.loads(text)


# -- HTML -------------------------------------------------------------------------------------------------------

html_words = st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta"]), min_size=1, max_size=3).map(" ".join)
inline_tags = st.sampled_from(["b", "i", "span", "a", "code", "em"])
block_tags = st.sampled_from(["p", "div", "li", "section", "blockquote", "h1", "h2", "h4", "td"])


def _element(children: list[tuple[str, str]], tag: str) -> tuple[str, str]:
    html = " ".join(h for h, _ in children)
    words = " ".join(w for _, w in children if w)
    return f"<{tag}>{html}</{tag}>", words


html_nodes = st.recursive(
    html_words.map(lambda w: (w, w)),
    lambda inner: st.one_of(
        st.tuples(st.lists(inner, min_size=1, max_size=3), inline_tags).map(lambda t: _element(*t)),
        st.tuples(st.lists(inner, min_size=1, max_size=3), block_tags).map(lambda t: _element(*t)),
        inner.map(lambda node: (node[0] + "<script>omega()</script><!-- omega -->", node[1])),
    ),
    max_leaves=12,
)


@FAST
@given(nodes=st.lists(html_nodes, min_size=1, max_size=4))
def test_html_text_keeps_document_order_and_drops_scripts(nodes):
    html = "<body>" + " ".join(h for h, _ in nodes) + "</body>"
    expected = " ".join(w for _, w in nodes).split()
    docs = HTMLHeaderTextSplitter([("h1", "H1"), ("h2", "H2")]).split_text(html)
    words = re.findall(r"[a-z]+", "\n".join(d.page_content for d in docs))
    assert words == expected
