"""LangChain's documented usage examples, written as our own cases: our output is pinned exactly, and where it is
not LangChain's the case names the documented difference (docs/splitters.md#coming-from-langchain)."""

from __future__ import annotations

from unittest import mock

import langchain_text_splitters as langchain  # the reference: a test dependency (requirements-dev.txt)
import pytest
import tiktoken

from chunking import splitters as ours
from chunking.tokens import get_encoding

PY = 'def hello_world():\n    print("Hello, World!")\n\n# Call the function\nhello_world()\n'
JS = 'function helloWorld() {\n  console.log("Hello, World!");\n}\n\n// Call the function\nhelloWorld();\n'
MD = ("# Guide\n\n## Install\n\nRun the installer.\n\nThen restart.\n\n### Check \n\nOpen a shell \n\n## Use\n\n"
      "Type a command")
HTML = ("<html><body><h1>Introduction</h1><p>Welcome.</p><h2>Background</h2><p>Some details.</p>"
        "<h1>Conclusion</h1><p>Final thoughts.</p></body></html>")
TOKENS = "Token windows count tokens, not characters: chunk_size=8 with an overlap of 2."
H123 = [("#", "Header 1"), ("##", "Header 2"), ("###", "Header 3")]
JSON = {"name": "demo", "items": {"a": {"x": 1, "y": 2}, "b": {"text": "a longer string value here"}}, "tail": [1, 2]}


def _offline(run):
    """LangChain's tiktoken.get_encoding would download the BPE file: the shipped, hash-checked one instead."""
    with mock.patch.object(tiktoken, "get_encoding", get_encoding):
        return run()


def docs(documents):
    return [(d.page_content, d.metadata) for d in documents]


# name -> (run with a module, our exact output, the documented difference or None when equal to LangChain's)
CASES = {
    "python preset": (
        lambda m: m.RecursiveCharacterTextSplitter.from_language(m.Language.PYTHON, chunk_size=50,
                                                                 chunk_overlap=0).split_text(PY),
        ['def hello_world():\n    print("Hello, World!")', "# Call the function\nhello_world()"], None),
    "js preset": (
        lambda m: m.RecursiveCharacterTextSplitter.from_language(m.Language.JS, chunk_size=60,
                                                                 chunk_overlap=0).split_text(JS),
        ['function helloWorld() {\n  console.log("Hello, World!");\n}', "// Call the function\nhelloWorld();"],
        None),
    "recursive prose with overlap": (
        lambda m: m.RecursiveCharacterTextSplitter(chunk_size=40, chunk_overlap=10).split_text(
            "Splitting text keeps related words together.\n\nA second paragraph follows here, a little longer "
            "than the first one."),
        ["Splitting text keeps related words", "words together.", "A second paragraph follows here, a",
         "here, a little longer than the first", "the first one."], None),
    "character splitter": (
        lambda m: m.CharacterTextSplitter(separator="\n\n", chunk_size=60, chunk_overlap=0).split_text(
            "First paragraph.\n\nSecond paragraph, longer.\n\nThird."),
        ["First paragraph.\n\nSecond paragraph, longer.\n\nThird."], None),
    "json splitter": (
        lambda m: m.RecursiveJsonSplitter(max_chunk_size=60).split_json(JSON),
        [{"name": "demo", "items": {"a": {"x": 1, "y": 2}}},
         {"items": {"b": {"text": "a longer string value here"}}}, {"tail": [1, 2]}], None),
    "markdown headers": (
        lambda m: docs(m.MarkdownHeaderTextSplitter(H123).split_text(MD)),
        [("Run the installer.\n\nThen restart.", {"Header 1": "Guide", "Header 2": "Install"}),
         ("Open a shell ", {"Header 1": "Guide", "Header 2": "Install", "Header 3": "Check"}),
         ("Type a command", {"Header 1": "Guide", "Header 2": "Use"})],
        "markdown_sections_verbatim"),
    "markdown headers kept": (
        lambda m: docs(m.MarkdownHeaderTextSplitter(H123[:2], strip_headers=False).split_text(MD)),
        [("# Guide\n\n## Install\n\nRun the installer.\n\nThen restart.\n\n### Check \n\nOpen a shell ",
          {"Header 1": "Guide", "Header 2": "Install"}),
         ("## Use\n\nType a command", {"Header 1": "Guide", "Header 2": "Use"})],
        "markdown_sections_verbatim"),
    "html headers": (
        lambda m: docs(m.HTMLHeaderTextSplitter([("h1", "Header 1"), ("h2", "Header 2")]).split_text(HTML)),
        [("Introduction\nWelcome.", {"Header 1": "Introduction"}),
         ("Background\nSome details.", {"Header 1": "Introduction", "Header 2": "Background"}),
         ("Conclusion\nFinal thoughts.", {"Header 1": "Conclusion"})],
        "html_header_first_line_of_its_section"),
    "html semantic splitter": (
        lambda m: docs(m.HTMLSemanticPreservingSplitter(
            [("h1", "Header 1"), ("h2", "Header 2")], max_chunk_size=500, preserve_links=True, preserve_images=True,
            custom_handlers={"iframe": lambda tag: f"[iframe:{tag.get('src', '')}]({tag.get('src', '')})"},
        ).split_text('<h1>Main</h1><p>See <a href="https://example.org">the site</a>.</p><h2>Media</h2>'
                     '<img src="a.png"><iframe src="https://example.org/v"></iframe>')),
        [("See [the site](https://example.org) .", {"Header 1": "Main"}),
         ("![image:a.png](a.png) [iframe:https://example.org/v](https://example.org/v)",
          {"Header 1": "Main", "Header 2": "Media"})],
        "enclosing_headers_kept"),
    "html semantic splitter, the reported sections": (
        lambda m: docs(m.HTMLSemanticPreservingSplitter([("h1", "Header 1"), ("h2", "Header 2")]).split_text(
            "<h1>Chapter 1</h1><p>Intro text.</p><h2>Section 1.1</h2><p>Section text.</p>")),
        [("Intro text.", {"Header 1": "Chapter 1"}),
         ("Section text.", {"Header 1": "Chapter 1", "Header 2": "Section 1.1"})],
        "enclosing_headers_kept"),
    "html sections": (
        lambda m: docs(m.HTMLSectionSplitter([("h1", "Header 1"), ("h2", "Header 2")]).split_text(
            "<html><body><h1>Foo</h1><p>Intro to Foo.</p><div><h2>Bar</h2><p>About Bar.</p></div></body></html>")),
        [("Foo Intro to Foo.", {"Header 1": "Foo"}), ("Bar About Bar.", {"Header 2": "Bar"})],
        "section_whitespace_as_serialised_by_lxml"),
    "token windows": (
        lambda m: _offline(lambda: m.TokenTextSplitter(encoding_name="cl100k_base", chunk_size=8, chunk_overlap=2)
                           .split_text(TOKENS)),
        ["Token windows count tokens, not characters:", " characters: chunk_size=8 with an", " with an overlap of 2."],
        None),
    "markdown preset": (
        lambda m: m.MarkdownTextSplitter(chunk_size=40, chunk_overlap=0).split_text(
            "# Title\n\nSome text here.\n\n## Part\n\nMore text follows in this part."),
        ["# Title\n\nSome text here.", "## Part", "More text follows in this part."],
        "markdown_preset_separators_match"),
}

#: The documented differences the examples show, with the reason (docs/splitters.md#coming-from-langchain, class
#: docstrings).
REASONS = {
    "enclosing_headers_kept": "a section's metadata holds every enclosing header; LangChain's semantic splitter keeps "
                              "the last header only",
    "markdown_sections_verbatim": "sections are verbatim; LangChain strips lines and joins them with '  \\n'",
    "html_header_first_line_of_its_section": "the header is the first line of its section; LangChain makes it a "
                                             "Document of its own",
    "section_whitespace_as_serialised_by_lxml": "the repaired tree is serialised by lxml; LangChain's XSLT output "
                                                "adds line breaks between block elements",
    "markdown_preset_separators_match": "MarkdownTextSplitter's heading separators are regular expressions that "
                                        "match; LangChain escapes them, so they never match",
}


@pytest.mark.parametrize("name", CASES)
@pytest.mark.filterwarnings("ignore:The class `HTMLSemanticPreservingSplitter` is in beta")  # LangChain's own notice
def test_documented_example(name):
    run, expected, difference = CASES[name]
    mine, theirs = run(ours), run(langchain)
    assert mine == expected
    if difference is None:
        assert mine == theirs
    else:
        assert difference in REASONS and mine != theirs  # the difference is real and named
