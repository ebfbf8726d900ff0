"""MarkdownHeaderTextSplitter and the CommonMark line rules it shares (docs/splitters.md#markdownheadertextsplitter)."""

from __future__ import annotations

import pytest

from chunking.model import Document
from chunking.splitters import MarkdownHeaderTextSplitter
from chunking.splitters.markdown.fences import find_fenced_blocks, is_thematic_break, parse_atx_heading, scan_lines

H12 = [("#", "Header 1"), ("##", "Header 2")]
GUIDE = "# Guide\nIntro line.\n\n~~~~\n~~~\n# not a heading\n~~~\n~~~~\n## Install ##\n\tpip install x\n\nDone."


def contents(docs: list[Document]) -> list[tuple[str, dict]]:
    return [(d.page_content, d.metadata) for d in docs]


# -- the example of docs/splitters.md#markdownheadertextsplitter -------------------------------------------------------


def test_spec_example_sections_are_verbatim_with_header_paths():
    docs = MarkdownHeaderTextSplitter(H12, add_start_index=True).split_text(GUIDE)
    assert contents(docs) == [
        ("Intro line.\n\n~~~~\n~~~\n# not a heading\n~~~\n~~~~", {"Header 1": "Guide", "start_index": 8}),
        ("\tpip install x\n\nDone.", {"Header 1": "Guide", "Header 2": "Install", "start_index": 69}),
    ]
    for doc in docs:
        start = doc.metadata["start_index"]
        assert GUIDE[start : start + len(doc.page_content)] == doc.page_content


def test_spec_example_with_headers_kept():
    docs = MarkdownHeaderTextSplitter(H12, strip_headers=False, add_start_index=True).split_text(GUIDE)
    assert contents(docs) == [
        ("# Guide\nIntro line.\n\n~~~~\n~~~\n# not a heading\n~~~\n~~~~", {"Header 1": "Guide", "start_index": 0}),
        ("## Install ##\n\tpip install x\n\nDone.", {"Header 1": "Guide", "Header 2": "Install", "start_index": 55}),
    ]


def test_regression_unclosed_fence_keeps_everything_after_it():
    docs = MarkdownHeaderTextSplitter(H12).split_text("# A\ntext\n```\ncode\n# B\nmore")
    assert contents(docs) == [("text\n```\ncode\n# B\nmore", {"Header 1": "A"})]


def test_regression_indentation_tabs_nbsp_and_blank_lines_are_kept():
    text = "# Code\n\n    indented code\n\tTabbed\u00a0value\n\n\nnext paragraph  \n"
    docs = MarkdownHeaderTextSplitter(H12).split_text(text)
    assert contents(docs) == [
        ("    indented code\n\tTabbed\u00a0value\n\n\nnext paragraph  ", {"Header 1": "Code"}),
    ]


# -- headers ------------------------------------------------------------------------------------------------


def test_header_path_pops_levels_at_or_below_the_new_header():
    text = "# A\na\n## B\nb\n## C\nc\n# D\nd"
    docs = MarkdownHeaderTextSplitter(H12).split_text(text)
    assert contents(docs) == [
        ("a", {"Header 1": "A"}),
        ("b", {"Header 1": "A", "Header 2": "B"}),
        ("c", {"Header 1": "A", "Header 2": "C"}),
        ("d", {"Header 1": "D"}),
    ]


def test_text_before_the_first_header_has_no_header_keys_and_unlisted_levels_are_content():
    text = "preface\n### small\nstill preface\n# A\nbody"
    docs = MarkdownHeaderTextSplitter(H12).split_text(text)
    assert contents(docs) == [("preface\n### small\nstill preface", {}), ("body", {"Header 1": "A"})]


def test_deeper_header_can_skip_a_level():
    docs = MarkdownHeaderTextSplitter([("#", "h1"), ("###", "h3")]).split_text("# A\n### C\ntext")
    assert contents(docs) == [("text", {"h1": "A", "h3": "C"})]


def test_header_only_sections_are_dropped_when_stripped_and_joined_to_a_deeper_section_otherwise():
    text = "# A\n## B\ntext"
    assert contents(MarkdownHeaderTextSplitter(H12).split_text(text)) == [("text", {"Header 1": "A", "Header 2": "B"})]
    assert contents(MarkdownHeaderTextSplitter(H12, strip_headers=False).split_text(text)) == [
        ("# A\n## B\ntext", {"Header 1": "A", "Header 2": "B"}),
    ]
    # A header-only section followed by a shallower header stays alone (LangChain's rule too).
    assert contents(MarkdownHeaderTextSplitter(H12, strip_headers=False).split_text("# A\nx\n## B\n# C\ny")) == [
        ("# A\nx", {"Header 1": "A"}),
        ("## B", {"Header 1": "A", "Header 2": "B"}),
        ("# C\ny", {"Header 1": "C"}),
    ]


def test_a_byte_order_mark_does_not_hide_a_heading():
    splitter = MarkdownHeaderTextSplitter([("#", "H1"), ("##", "H2")])
    assert contents(splitter.split_text("\ufeff# A\ntext")) == [("text", {"H1": "A"})]
    assert contents(splitter.split_text("\ufeff# Foo\n\nfoo()\n\ufeff## Bar\n\nbar()")) == [
        ("foo()", {"H1": "Foo"}),
        ("bar()", {"H1": "Foo", "H2": "Bar"}),
    ]


def test_setext_headings_split_like_atx_headings():
    splitter = MarkdownHeaderTextSplitter(H12)
    text = "Title\n=====\nintro\n\nSub\nline\n---\nbody\n\n---\nafter a rule"
    assert contents(splitter.split_text(text)) == [
        ("intro", {"Header 1": "Title"}),
        ("body\n\n---\nafter a rule", {"Header 1": "Title", "Header 2": "Sub line"}),
    ]
    kept = MarkdownHeaderTextSplitter(H12, strip_headers=False).split_text("Title\n===\ntext")
    assert contents(kept) == [("Title\n===\ntext", {"Header 1": "Title"})]
    # A list item's lazy continuation is not a paragraph, so its "---" is a thematic break.
    assert contents(splitter.split_text("- item\nlazy\n---\nx")) == [("- item\nlazy\n---\nx", {})]


def test_a_heading_indented_by_four_spaces_is_code_not_a_heading():
    assert contents(MarkdownHeaderTextSplitter(H12).split_text("# A\n\n    ## Bar\n\ntext")) == [
        ("    ## Bar\n\ntext", {"Header 1": "A"})
    ]


def test_front_matter_is_metadata_not_a_section():
    text = "---\ntitle: My Front Matter Title\n---\n\n# Intro\nHello.\n"
    splitter = MarkdownHeaderTextSplitter([("#", "h1"), ("##", "h2")], add_start_index=True)
    assert splitter.split_text(text) == [Document("Hello.", {"h1": "Intro", "start_index": 46})]
    each = MarkdownHeaderTextSplitter([("#", "h1")], return_each_line=True, strip_headers=False)
    assert each.split_text(text) == [Document("# Intro", {"h1": "Intro"}), Document("Hello.", {"h1": "Intro"})]
    # A "# line" or a fence opener inside the block is YAML, neither a header nor a code block.
    text = "---\n# comment: yes\nx: ```\n---\nbody\n"
    assert MarkdownHeaderTextSplitter([("#", "h1")]).split_text(text) == [Document("body", {})]


@pytest.mark.parametrize(("text", "lines"), [
    ("---\ntitle: x\n---\nbody", 3),
    ("\ufeff---\r\ntitle: x\r\n...\r\n", 3),
    ("---\n---\nbody", 2),  # empty front matter
    ("---\n\ntitle: x\n---\n", 0),  # a blank line after the opening: a thematic break, then a setext heading
    ("--- \ntitle: x\n---\n", 0),  # the opening is exactly ---
    ("x\n---\ntitle: x\n---\n", 0),  # not at the start
    ("---\ntitle: x\n", 0),  # never closed
    pytest.param("---\n" + "k: v\n" * 13_000 + "---\n", 13_002, id="closed-within-FRONT_MATTER_MAX_CHARS"),
    pytest.param("---\n" + "k: v\n" * 13_200 + "---\n", 0, id="closed-beyond-FRONT_MATTER_MAX_CHARS"),
])  # fmt: skip
def test_front_matter_rules(text, lines):
    assert scan_lines(text).front_matter_lines == lines
    assert scan_lines(text, front_matter=False).front_matter_lines == 0


def test_custom_header_patterns():
    splitter = MarkdownHeaderTextSplitter(
        [("**", "Bold"), ("##", "Header 2")], custom_header_patterns={"**": 1}
    )
    text = "**Intro**\ntext\n***not custom***\n## Sub\nmore\n**Next**\nlast"
    assert contents(splitter.split_text(text)) == [
        ("text\n***not custom***", {"Bold": "Intro"}),
        ("more", {"Bold": "Intro", "Header 2": "Sub"}),
        ("last", {"Bold": "Next"}),
    ]


def test_invalid_prefix_raises():
    with pytest.raises(ValueError, match="'Chapter'"):
        MarkdownHeaderTextSplitter([("Chapter", "c")])
    with pytest.raises(ValueError):
        MarkdownHeaderTextSplitter([("#######", "h7")])


def test_crlf_lines_are_detected_and_kept_inside_content():
    text = "# A\r\none\r\ntwo\r\n# B\r\nthree\r\n"
    docs = MarkdownHeaderTextSplitter(H12, add_start_index=True).split_text(text)
    assert contents(docs) == [
        ("one\r\ntwo", {"Header 1": "A", "start_index": 5}),
        ("three", {"Header 1": "B", "start_index": 20}),
    ]


# -- return_each_line ---------------------------------------------------------------------------------------


def test_return_each_line_gives_lines_and_whole_fenced_blocks():
    text = "# A\nfirst\n\n  second\n```sh\nls\n\n# not\n```\nlast"
    docs = MarkdownHeaderTextSplitter(H12, return_each_line=True, add_start_index=True).split_text(text)
    assert contents(docs) == [
        ("first", {"Header 1": "A", "start_index": 4}),
        ("  second", {"Header 1": "A", "start_index": 11}),
        ("```sh\nls\n\n# not\n```", {"Header 1": "A", "start_index": 20}),
        ("last", {"Header 1": "A", "start_index": 40}),
    ]


def test_return_each_line_with_headers_kept():
    docs = MarkdownHeaderTextSplitter(H12, return_each_line=True, strip_headers=False).split_text("# A\nx\ny")
    assert [d.page_content for d in docs] == ["# A", "x", "y"]


# -- Document API -------------------------------------------------------------------------------------------


def test_split_documents_puts_input_metadata_first_and_copies_it():
    source = Document("# A\nx\n# B\ny", {"source": "f.md", "Header 1": "overridden", "tags": ["t"]})
    docs = MarkdownHeaderTextSplitter(H12).split_documents([source])
    assert contents(docs) == [
        ("x", {"source": "f.md", "Header 1": "A", "tags": ["t"]}),
        ("y", {"source": "f.md", "Header 1": "B", "tags": ["t"]}),
    ]
    assert list(docs[0].metadata) == ["source", "Header 1", "tags"]
    docs[0].metadata["tags"].append("changed")
    assert docs[1].metadata["tags"] == ["t"] and source.metadata["tags"] == ["t"]
    assert MarkdownHeaderTextSplitter(H12).transform_documents([source]) == MarkdownHeaderTextSplitter(
        H12
    ).split_documents([source])


@pytest.mark.parametrize("text", ["", "\n\n  \n", "# Only a header\n"])
def test_nothing_to_return(text):
    assert MarkdownHeaderTextSplitter(H12).split_text(text) == []


# -- CommonMark line rules ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("# Title", (1, "Title")),
        ("## Install ##", (2, "Install")),
        ("# C#", (1, "C#")),
        ("#\tTabbed", (1, "Tabbed")),
        ("   ### Indented 3", (3, "Indented 3")),
        ("###### Six", (6, "Six")),
        ("#", (1, "")),
        ("# ##", (1, "")),
        ("# Title #  ", (1, "Title")),
        ("#tag", None),
        ("    # four spaces", None),
        ("####### seven", None),
    ],
)
def test_atx_heading_rules(line, expected):
    assert parse_atx_heading(line) == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [("---", True), ("* * *", True), ("___", True), ("   - - -  ", True), ("--", False), ("-- -x", False),
     ("    ---", False), ("*-*", False)],
)
def test_thematic_break_rules(line, expected):
    assert is_thematic_break(line) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("```\na\n```", [(0, 9, True, "")]),
        ("~~~~ py\na\n~~~\nb\n~~~~~\nafter", [(0, 21, True, "py")]),  # ~~~ is too short to close ~~~~
        ("```\na\n~~~\nb", [(0, 11, False, "")]),  # tildes never close backticks; unclosed runs to the end
        ("``` a`b\nnot a fence", []),  # a backtick info string may not contain a backtick
        ("   ```\na\n   ```  ", [(0, 17, True, "")]),
        ("    ```\nindented code\n```", [(22, 25, False, "")]),  # 4 spaces: not a fence; the last line opens one
        ("```\n```x\n```", [(0, 12, True, "")]),  # a closing fence is followed only by spaces
        ("1. step\n    ```sh\n    ls\n    ```\n", [(8, 32, True, "sh")]),  # fence inside a list item
    ],
)
def test_fence_rules(text, expected):
    blocks = find_fenced_blocks(text)
    assert [(b.start, b.end, b.closed, b.language) for b in blocks] == expected
