"""The LangChain classes and helpers added for parity: exact outputs on small inputs."""

import asyncio
import subprocess
import sys

import pytest

from chunking.model import Document
from chunking.splitters import (
    JSFrameworkTextSplitter,
    Language,
    MarkdownHeaderTextSplitter,
    RecursiveCharacterTextSplitter,
    Tokenizer,
    split_text_on_tokens,
)

CHARS = {"decode": lambda ids: "".join(map(chr, ids)), "encode": lambda text: [ord(c) for c in text]}


def test_split_text_on_tokens_uses_a_fixed_stride_and_drops_empty_decodes():
    tokenizer = Tokenizer(chunk_overlap=3, tokens_per_chunk=7, **CHARS)
    assert split_text_on_tokens(text="foo bar baz 123", tokenizer=tokenizer) == ["foo bar", "bar baz", "baz 123"]
    silent = Tokenizer(chunk_overlap=3, tokens_per_chunk=7, decode=lambda ids: "", encode=CHARS["encode"])
    assert split_text_on_tokens(text="foo bar baz 123", tokenizer=silent) == []
    with pytest.raises(ValueError, match="greater than chunk_overlap"):
        split_text_on_tokens(text="x", tokenizer=Tokenizer(chunk_overlap=2, tokens_per_chunk=2, **CHARS))


def test_r_preset():
    code = "\nlibrary(dplyr)\n\nmy_func <- function(x) {\n    return(x + 1)\n}\n\nif (TRUE) {\n    print(\"Hello\")\n}\n"
    splitter = RecursiveCharacterTextSplitter.from_language(Language.R, chunk_size=16, chunk_overlap=0)
    assert splitter.split_text(code) == [
        "library(dplyr)", "my_func <-", "function(x) {", "return(x +", "1)", "}", "if (TRUE) {", 'print("Hello")', "}"]
    assert Language("r") is Language.R


JSX = """import React from 'react';

function Counter() {
  const [n, setN] = React.useState(0);
  return (
    <div>
      <Button onClick={() => setN(n + 1)}>+</Button>
    </div>
  );
}
export default Counter;
"""


def test_js_framework_splitter_splits_at_statements_and_the_texts_own_tags_without_changing_itself():
    splitter = JSFrameworkTextSplitter(chunk_size=40, chunk_overlap=0)
    first = splitter.split_text(JSX)
    # LangChain's chunks, except that its two pieces over 40 characters are cut at whitespace here.
    assert first == [
        "import React from 'react';",
        "function Counter() {\n  const [n, setN]",
        "= React.useState(0);\n  return (",
        "<div>",
        "<Button onClick={() => setN(n +",
        "1)}>+</Button>\n    </div>\n  );\n}",
        "export default Counter;",
    ]
    assert splitter.split_text(JSX) == first and splitter._separators == []
    assert all(JSX[start:start + len(chunk)] == chunk for chunk, start in splitter.split_text_with_offsets(JSX))


@pytest.mark.parametrize(
    ("name", "module", "extra"),
    [
        ("NLTKTextSplitter", "nltk", "nltk"),
        ("SpacyTextSplitter", "spacy", "spacy"),
        ("KonlpyTextSplitter", "konlpy", "konlpy"),
        ("SentenceTransformersTokenTextSplitter", "sentence_transformers", "sentence-transformers"),
    ],
)
def test_nlp_splitters_name_the_extra_when_their_library_is_missing(monkeypatch, name, module, extra):
    import chunking.splitters

    monkeypatch.setitem(sys.modules, module, None)  # makes the import fail whether or not it is installed
    with pytest.raises(ImportError, match=rf"pip install chunking\[{extra}\]"):
        getattr(chunking.splitters, name)()


def test_importing_the_splitters_never_imports_an_nlp_library():
    script = (
        "import sys, chunking.splitters as s\n"
        "assert s.NLTKTextSplitter.__name__ == 'NLTKTextSplitter'\n"
        "print(sorted(m for m in ('nltk', 'spacy', 'konlpy', 'sentence_transformers', 'torch', 'transformers')"
        " if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
    with pytest.raises(AttributeError, match="no_such_splitter"):
        import chunking.splitters

        chunking.splitters.no_such_splitter  # noqa: B018


def test_from_huggingface_tokenizer_needs_transformers_and_a_tokenizer(monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)
    monkeypatch.setitem(sys.modules, "transformers.tokenization_utils_base", None)
    with pytest.raises(ImportError, match=r"pip install chunking\[transformers\]"):
        RecursiveCharacterTextSplitter.from_huggingface_tokenizer(object())


def test_atransform_documents_gives_what_transform_documents_gives():
    splitter = RecursiveCharacterTextSplitter(chunk_size=7, chunk_overlap=0)
    documents = [Document("one two three", {"id": 1})]
    assert asyncio.run(splitter.atransform_documents(documents)) == splitter.transform_documents(documents)
    header = MarkdownHeaderTextSplitter([("#", "H1")])
    markdown = [Document("# A\ntext", {})]
    assert asyncio.run(header.atransform_documents(markdown)) == [Document("text", {"H1": "A"})]


def test_aggregate_lines_to_chunks_joins_equal_metadata_and_a_heading_with_its_deeper_section():
    lines = [
        {"content": "# A", "metadata": {"H1": "A"}},
        {"content": "## B", "metadata": {"H1": "A", "H2": "B"}},
        {"content": "text", "metadata": {"H1": "A", "H2": "B"}},
        {"content": "other", "metadata": {"H1": "C"}},
    ]
    kept = MarkdownHeaderTextSplitter([("#", "H1"), ("##", "H2")], strip_headers=False)
    assert kept.aggregate_lines_to_chunks(lines) == [
        Document("# A  \n## B  \ntext", {"H1": "A", "H2": "B"}), Document("other", {"H1": "C"})]
    stripped = MarkdownHeaderTextSplitter([("#", "H1"), ("##", "H2")])
    assert [d.page_content for d in stripped.aggregate_lines_to_chunks(lines)] == ["# A", "## B  \ntext", "other"]
