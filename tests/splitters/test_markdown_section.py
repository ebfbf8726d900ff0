"""MarkdownSectionSplitter: header sections, code-safe size refinement, YAML front matter
(docs/splitters.md#markdownsectionsplitter)."""

from __future__ import annotations

import pytest

from chunking.model import Document
from chunking.splitters import MarkdownChunk, MarkdownHeaderTextSplitter
from chunking.splitters import MarkdownSectionSplitter as Sections
from chunking.splitters.markdown.front_matter import dump_yaml, render_front_matter
from chunking.tokens import count_tokens


def triples(splitter: Sections, text: str) -> list[tuple[str, dict, int]]:
    chunks = splitter.split_text(text)
    return [(c.page_content, c.metadata, c.start_index) for c in chunks]


# -- header split --------------------------------------------------------------------------------------------


def test_without_chunk_size_sections_are_the_header_splitters():
    text = "# A\nintro\n```\n# code\n```\n## B\n\tbody\n### C\nleaf"
    ours = Sections().split_text(text)
    headers = [("#", "h1"), ("##", "h2"), ("###", "h3"), ("####", "h4"), ("#####", "h5"), ("######", "h6")]
    theirs = MarkdownHeaderTextSplitter(headers, strip_headers=False, add_start_index=True).split_text(text)
    assert [(c.page_content, c.metadata, c.start_index) for c in ours] == [
        (d.page_content, {k: v for k, v in d.metadata.items() if k != "start_index"}, d.metadata["start_index"])
        for d in theirs
    ]
    assert [c.metadata for c in ours] == [{"h1": "A"}, {"h1": "A", "h2": "B"}, {"h1": "A", "h2": "B", "h3": "C"}]


def test_strip_headers_and_base_metadata():
    chunks = Sections(strip_headers=True).split_text("# A\nx\n## B\ny", metadata={"source": "f.md"})
    assert [(c.page_content, c.metadata) for c in chunks] == [
        ("x", {"source": "f.md", "h1": "A"}),
        ("y", {"source": "f.md", "h1": "A", "h2": "B"}),
    ]


# -- size refinement ---------------------------------------------------------------------------------------


def test_code_block_stays_with_the_text_before_it_and_does_not_count():
    text = "# Setup\nRun this first.\n```sh\nmake install-everything\n```\nThen test."
    assert triples(Sections(chunk_size=30), text) == [
        ("# Setup\nRun this first.\n```sh\nmake install-everything\n```", {"h1": "Setup"}, 0),
        ("Then test.", {"h1": "Setup"}, 58),
    ]


def test_a_code_block_longer_than_chunk_size_is_never_cut():
    code = "```\n" + "x = 1\n" * 50 + "```"
    text = "Intro.\n" + code + "\nEnd."
    assert [c.page_content for c in Sections(chunk_size=10).split_text(text)] == ["Intro.\n" + code, "End."]


def test_sentences_and_clauses_are_cut_in_order_of_significance():
    assert triples(Sections(chunk_size=16), "# T\nAlpha beta. Gamma delta! Epsilon?") == [
        ("# T\nAlpha beta.", {"h1": "T"}, 0),
        ("Gamma delta!", {"h1": "T"}, 16),
        ("Epsilon?", {"h1": "T"}, 29),
    ]
    assert triples(Sections(chunk_size=8, strip_headers=True), "# 中\n今天下雨了。我们在家看书，明天去公园。") == [
        ("今天下雨了。", {"h1": "中"}, 4),
        ("我们在家看书，", {"h1": "中"}, 10),
        ("明天去公园。", {"h1": "中"}, 17),
    ]


def test_paragraphs_are_packed_greedily_without_overlap():
    text = "aaa\n\nbbb\n\nccc\n\nddd"
    # Each paragraph keeps its "\n\n" at its end, and that counts: "aaa\n\nbbb\n\n" is 10 characters.
    assert triples(Sections(chunk_size=10), text) == [("aaa\n\nbbb", {}, 0), ("ccc\n\nddd", {}, 10)]
    assert triples(Sections(chunk_size=9), text) == [("aaa", {}, 0), ("bbb", {}, 5), ("ccc\n\nddd", {}, 10)]


def test_character_cut_is_the_last_resort():
    assert [c.page_content for c in Sections(chunk_size=4).split_text("abcdefghij")] == ["abcd", "efgh", "ij"]


def test_custom_literal_separators():
    chunks = Sections(chunk_size=6, separators=["|"], is_separator_regex=False).split_text("ab|cd|efgh|ij")
    assert [c.page_content for c in chunks] == ["ab|cd|", "efgh|", "ij"]


def test_length_function_measures_prose_only():
    text = "one two\n```\n" + "tokens " * 40 + "\n```"  # 3 tokens of prose, about 45 in all
    chunks = Sections(chunk_size=3, length_function=count_tokens).split_text(text)
    assert [c.page_content for c in chunks] == [text]


def test_regression_unclosed_fence_is_kept_to_the_end():
    text = "# A\npara\n```\nopen\n\n# no\nmore"
    assert triples(Sections(chunk_size=10), text) == [(text, {"h1": "A"}, 0)]


# -- the embedding limit ------------------------------------------------------------------------------------


def test_code_block_over_the_token_cap_is_rewrapped_at_line_boundaries():
    body = "".join(f"value_{i} = {i} * {i}\n" for i in range(40))
    text = "Before.\n~~~~python\n" + body + "~~~~\nAfter."
    chunks = Sections(chunk_size=100, max_total_tokens=60).split_text(text)
    assert chunks[0].page_content == "Before."
    assert chunks[-1].page_content == "After."
    pieces = chunks[1:-1]
    assert len(pieces) > 1
    lines: list[str] = []
    for piece in pieces:
        assert piece.page_content.startswith("~~~~python\n") and piece.page_content.endswith("\n~~~~")
        assert count_tokens(piece.page_content) <= 60
        lines.extend(piece.page_content.split("\n")[1:-1])
    assert "\n".join(lines) + "\n" == body
    assert pieces[0].start_index == text.index("~~~~python") and pieces[-1].end_index == text.index("\nAfter.")


def test_every_chunk_respects_the_token_cap_without_chunk_size():
    text = "# T\n" + " ".join(f"word{i}" for i in range(200))
    chunks = Sections(max_total_tokens=20).split_text(text)
    assert all(count_tokens(c.page_content) <= 20 for c in chunks)
    def squeeze(value: str) -> str:
        return value.replace(" ", "").replace("\n", "")

    assert squeeze("".join(c.page_content for c in chunks)) == squeeze(text)


# -- validation and Document API -----------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs", [{"chunk_size": 0}, {"max_total_tokens": 0}, {"encoding": "gpt2"},
                                    {"headers_to_split_on": [("h1", "x")]}])
def test_invalid_parameters(kwargs):
    with pytest.raises(ValueError):
        Sections(**kwargs)


def test_create_and_split_documents_add_start_index_and_copy_metadata():
    source = Document("# A\nx\n# B\ny", {"tags": ["t"]})
    docs = Sections().split_documents([source])
    assert docs == [
        Document("# A\nx", {"tags": ["t"], "h1": "A", "start_index": 0}),
        Document("# B\ny", {"tags": ["t"], "h1": "B", "start_index": 6}),
    ]
    docs[0].metadata["tags"].append("changed")
    assert docs[1].metadata["tags"] == ["t"] and source.metadata == {"tags": ["t"]}
    with pytest.raises(ValueError):
        Sections().create_documents(["a"], metadatas=[])


def test_chunks_do_not_share_metadata():
    chunks = Sections(chunk_size=3).split_text("# A\naaa\n\nbbb", metadata={"tags": []})
    chunks[0].metadata["tags"].append("x")
    assert chunks[1].metadata == {"tags": [], "h1": "A"}


# -- YAML front matter in the input (fences.py rule 6) ---------------------------------------------------


def test_front_matter_at_the_start_is_no_chunk_and_no_heading():
    text = "---\ntitle: My Front Matter Title\n---\n\n# Intro\nHello.\n"
    chunks = Sections().split_text(text)
    assert [(c.page_content, c.metadata, c.start_index, c.end_index) for c in chunks] == [
        ("# Intro\nHello.", {"h1": "Intro"}, 38, 52)
    ]
    # A BOM, CRLF lines and the "..." closer; the text after the block follows CommonMark again.
    text = "\ufeff---\r\ntags: [a]\r\n...\r\nBody line\r\n---\r\n"
    assert triples(Sections(), text) == [("Body line\r\n---", {"h2": "Body line"}, 22)]
    # Text before the first heading, after the block, is a chunk without header path.
    assert triples(Sections(), "---\na: 1\n---\nLead.\n# H\nx") == [("Lead.", {}, 13), ("# H\nx", {"h1": "H"}, 19)]


# -- YAML front matter -----------------------------------------------------------------------------------


def test_to_markdown_renders_front_matter():
    chunk = MarkdownChunk("Body.", {"h1": "安装", "h2": "Linux: apt"})
    assert chunk.to_markdown() == "Body."
    assert chunk.to_markdown(include_metadata=True) == "---\nh1: 安装\nh2: 'Linux: apt'\n---\n\nBody."
    assert MarkdownChunk("Body.", {}).to_markdown(include_metadata=True) == "Body."
    assert chunk.to_document() == Document("Body.", {"h1": "安装", "h2": "Linux: apt"})


YAML_CASES = [
    ({"h1": "安装", "h2": "Linux: apt"}, "h1: 安装\nh2: 'Linux: apt'\n"),
    (
        {"n": 3, "f": 1.5, "t": True, "z": None, "s": "yes", "e": "", "num": "123"},
        "n: 3\nf: 1.5\nt: true\nz: null\ns: 'yes'\ne: ''\nnum: '123'\n",
    ),
    ({"tags": ["a", "b"], "nested": {"k": "v", "deep": {"x": []}}}, "tags:\n- a\n- b\nnested:\n  k: v\n  deep:\n    x: []\n"),
    ({"tab": "a\tb", "q": "it's", "lead": "'quoted'", "hash": "# x"}, "tab: \"a\\tb\"\nq: it's\nlead: '''quoted'''\nhash: '# x'\n"),
    (
        {"long": "word " * 30 + "end"},
        "long: word word word word word word word word word word word word word word word word\n"
        "  word word word word word word word word word word word word word word end\n",
    ),
    ({"date": "2024-01-02", "space": " lead", "emoji": "🙂 ok"}, "date: '2024-01-02'\nspace: ' lead'\nemoji: 🙂 ok\n"),
]


@pytest.mark.parametrize(("data", "expected"), YAML_CASES)
def test_dump_yaml_block_style_and_quoting(data, expected):
    assert dump_yaml(data) == expected


def test_render_front_matter_and_unsupported_values():
    assert render_front_matter({}) == ""
    assert render_front_matter({"a": 1}) == "---\na: 1\n---\n"
    with pytest.raises(TypeError):
        dump_yaml({"a": object()})
