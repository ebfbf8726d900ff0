"""ExperimentalMarkdownSyntaxTextSplitter (docs/splitters.md#experimentalmarkdownsyntaxtextsplitter)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from chunking.model import Document
from chunking.splitters import ExperimentalMarkdownSyntaxTextSplitter as Syntax

TEXT = "intro\n\n# A\ntext\n```py\nx = 1\n```\nafter\n***\n## B\n\tmore\n"


def contents(docs: list[Document]) -> list[tuple[str, dict]]:
    return [(d.page_content, d.metadata) for d in docs]


def test_chunks_end_at_headers_code_blocks_and_breaks_byte_for_byte():
    assert contents(Syntax().split_text(TEXT)) == [
        ("intro\n\n", {}),
        ("text\n", {"Header 1": "A"}),
        ("```py\nx = 1\n```\n", {"Header 1": "A", "Code": "py"}),
        ("after\n", {"Header 1": "A"}),
        ("\tmore\n", {"Header 1": "A", "Header 2": "B"}),
    ]


def test_headers_kept_and_start_index():
    docs = Syntax(strip_headers=False, add_start_index=True).split_text(TEXT)
    assert contents(docs) == [
        ("intro\n\n", {"start_index": 0}),
        ("# A\ntext\n", {"Header 1": "A", "start_index": 7}),
        ("```py\nx = 1\n```\n", {"Header 1": "A", "Code": "py", "start_index": 16}),
        ("after\n", {"Header 1": "A", "start_index": 32}),
        ("## B\n\tmore\n", {"Header 1": "A", "Header 2": "B", "start_index": 42}),
    ]
    for doc in docs:
        start = doc.metadata["start_index"]
        assert TEXT[start : start + len(doc.page_content)] == doc.page_content


def test_regression_unclosed_fence_keeps_its_content_to_the_end():
    # LangChain drops everything after an unclosed fence.
    text = "# A\nbefore\n~~~~ js extra words\n~~~\n# not a header\nstill code\n"
    assert contents(Syntax().split_text(text)) == [
        ("before\n", {"Header 1": "A"}),
        ("~~~~ js extra words\n~~~\n# not a header\nstill code\n", {"Header 1": "A", "Code": "js"}),
    ]


def test_code_block_without_info_string_and_breaks_of_every_kind():
    text = "a\n```\nplain\n```\nb\n- - -\nc\n___\nd\n* * *"
    assert contents(Syntax().split_text(text)) == [
        ("a\n", {}),
        ("```\nplain\n```\n", {"Code": ""}),
        ("b\n", {}),
        ("c\n", {}),
        ("d\n", {}),
    ]


def test_only_configured_levels_split():
    splitter = Syntax(headers_to_split_on=[("##", "Section")])
    assert contents(splitter.split_text("# Title\nx\n## Part\ny")) == [
        ("# Title\nx\n", {}),
        ("y", {"Section": "Part"}),
    ]


def test_return_each_line():
    docs = Syntax(return_each_line=True, add_start_index=True).split_text("# A\none\n\n  two\r\n```\nc\n```\n")
    assert contents(docs) == [
        ("one", {"Header 1": "A", "start_index": 4}),
        ("  two", {"Header 1": "A", "start_index": 9}),
        ("```", {"Header 1": "A", "Code": "", "start_index": 16}),
        ("c", {"Header 1": "A", "Code": "", "start_index": 20}),
        ("```", {"Header 1": "A", "Code": "", "start_index": 22}),
    ]


def test_default_headers_are_all_six_levels():
    assert Syntax().headers_to_split_on == [("#" * n, f"Header {n}") for n in range(1, 7)]
    docs = Syntax().split_text("###### Deep\nx")
    assert contents(docs) == [("x", {"Header 6": "Deep"})]


def test_invalid_prefix_raises():
    with pytest.raises(ValueError, match="'##x'"):
        Syntax(headers_to_split_on=[("##x", "bad")])


@pytest.mark.parametrize("text", ["", "   \n\n", "---\n***\n"])
def test_nothing_to_return(text):
    assert Syntax().split_text(text) == []


def test_split_documents_copies_metadata():
    source = Document("# A\nx", {"src": ["s"]})
    docs = Syntax().split_documents([source])
    assert contents(docs) == [("x", {"src": ["s"], "Header 1": "A"})]
    docs[0].metadata["src"].append("changed")
    assert source.metadata == {"src": ["s"]}


def test_one_instance_is_safe_to_share_between_threads():
    splitter = Syntax()
    texts = [f"# T{n}\n" + "line\n" * n + "```\ncode\n```\n" for n in range(40)]
    expected = [splitter.split_text(t) for t in texts]
    with ThreadPoolExecutor(max_workers=8) as pool:
        assert list(pool.map(splitter.split_text, texts)) == expected


def test_long_document_keeps_every_byte():
    text = "# H\n" + "para line\n" * 20000 + "```\n" + "code\n" * 20000
    docs = Syntax().split_text(text)
    assert [d.metadata for d in docs] == [{"Header 1": "H"}, {"Header 1": "H", "Code": ""}]
    assert sum(len(d.page_content) for d in docs) == len(text) - 4
