"""RecursiveCharacterTextSplitter, language presets and the convenience subclasses
(docs/splitters.md#recursivecharactertextsplitter)."""

from __future__ import annotations

import re

import pytest

from chunking.splitters import (
    Language,
    LatexTextSplitter,
    MarkdownTextSplitter,
    PythonCodeTextSplitter,
    RecursiveCharacterTextSplitter,
    TextSplitter,
)
from chunking.tokens import count_tokens

R = RecursiveCharacterTextSplitter


def pairs(splitter: TextSplitter, text: str) -> list[tuple[str, int]]:
    out = splitter.split_text_with_offsets(text)
    for chunk, start in out:
        assert text[start : start + len(chunk)] == chunk
    return out


CJK = "今天下雨了。我们在家看书。明天去公园散步吧。"

# -- the examples of docs/splitters.md#recursivecharactertextsplitter --------------------------------------------------


def test_sentence_separator_kept_at_the_end():
    splitter = R(separators=["。", ""], keep_separator="end", chunk_size=9, chunk_overlap=0)
    assert pairs(splitter, CJK) == [("今天下雨了。", 0), ("我们在家看书。", 6), ("明天去公园散步吧。", 13)]


def test_sentence_separator_kept_at_the_start():
    splitter = R(separators=["。", ""], keep_separator="start", chunk_size=8, chunk_overlap=0)
    assert pairs(splitter, CJK) == [
        ("今天下雨了", 0), ("。我们在家看书", 5), ("。明天去公园散步", 12), ("吧", 20), ("。", 21),
    ]


def test_repeated_words_get_increasing_exact_offsets_with_overlap():
    splitter = R(chunk_size=10, chunk_overlap=4)
    assert pairs(splitter, "one one one one one one") == [("one one", k) for k in (0, 4, 8, 12, 16)]


def test_character_cut_without_empty_separator():
    splitter = R(separators=["\n\n"], chunk_size=5, chunk_overlap=0)
    assert pairs(splitter, "abcdefghijkl\n\nxy") == [("abcde", 0), ("fghij", 5), ("kl", 10), ("xy", 14)]


# -- rules -----------------------------------------------------------------------------------------------------


def test_piece_of_exactly_chunk_size_is_kept():
    splitter = R(separators=["\n"], keep_separator=False, chunk_size=5, chunk_overlap=0)
    assert pairs(splitter, "abcde\nfghij") == [("abcde", 0), ("fghij", 6)]


def test_kept_separator_counts_toward_the_piece():
    # "\nfghij" is 6 characters with its separator: it is split further.
    splitter = R(separators=["\n", ""], chunk_size=5, chunk_overlap=0)
    assert pairs(splitter, "abcde\nfghij") == [("abcde", 0), ("fghi", 6), ("j", 10)]


def test_small_piece_before_an_oversized_one_stays_its_own_chunk():
    splitter = R(separators=[" ", ""], chunk_size=4, chunk_overlap=0)
    assert pairs(splitter, "ab cdefgh") == [("ab", 0), ("cde", 3), ("fgh", 6)]


def test_first_matching_separator_is_chosen_and_finer_ones_follow():
    splitter = R(chunk_size=12, chunk_overlap=0)
    assert pairs(splitter, "para one\n\npara two is long") == [("para one", 0), ("para two is", 10), ("long", 22)]


def test_regex_separators():
    splitter = R(separators=[r"\d+\. ", " "], is_separator_regex=True, chunk_size=12, chunk_overlap=0)
    assert pairs(splitter, "1. alpha 2. beta 3. gamma") == [("1. alpha", 0), ("2. beta", 9), ("3. gamma", 17)]


def test_literal_separators_are_escaped():
    splitter = R(separators=[".", ""], chunk_size=3, chunk_overlap=0, keep_separator=False)
    assert pairs(splitter, "ab.cd") == [("ab", 0), ("cd", 3)]


def test_defaults_are_langchains_plus_cjk_sentence_ends():
    splitter = R()
    assert splitter._separators == ["\n\n", "\n", "。", "！", "？", " ", ""]
    assert (splitter._keep_separator, splitter._is_separator_regex) == (True, False)
    assert (splitter._chunk_size, splitter._chunk_overlap) == (4000, 200)


def test_cjk_prose_is_cut_between_sentences_by_default():
    text = "我爱自然语言处理。今天天气很好。我们去公园散步吧。"
    assert R(chunk_size=10, chunk_overlap=0).split_text(text) == ["我爱自然语言处理。", "今天天气很好。", "我们去公园散步吧。"]
    # keep_separator=False does not drop the marks (they are text).
    assert R(chunk_size=10, chunk_overlap=0, keep_separator=False).split_text(text) == [
        "我爱自然语言处理。", "今天天气很好。", "我们去公园散步吧。"]


@pytest.mark.parametrize("text", ["", " \n\t "])
def test_empty_input(text):
    assert R(chunk_size=5, chunk_overlap=0).split_text(text) == []


# -- LangChain faults (regressions) ---------------------------------------------------------------------------


def test_regression_sentence_punctuation_stays_with_its_sentence():
    # LangChain's default keep_separator=True glues ". " to the next sentence; "end" keeps it with its own.
    splitter = R(separators=["\n\n", "\n", r"(?<=\.) ", " ", ""], is_separator_regex=True, keep_separator="end",
                 chunk_size=12, chunk_overlap=0)
    assert pairs(splitter, "First one. Second one. Third.") == [
        ("First one.", 0), ("Second one.", 11), ("Third.", 23),
    ]


def test_regression_start_index_with_overlap_and_repeats():
    text = "the cat. the cat. the cat. the cat."
    splitter = R(chunk_size=12, chunk_overlap=8, add_start_index=True)
    docs = splitter.create_documents([text])
    assert [(d.page_content, d.metadata["start_index"]) for d in docs] == [
        ("the cat. the", 0), ("the cat.", 9), ("cat. the", 13), ("the cat.", 18), ("cat. the", 22), ("the cat.", 27),
    ]
    for doc in docs:
        start = doc.metadata["start_index"]
        assert text[start : start + len(doc.page_content)] == doc.page_content


def test_regression_no_chunk_over_chunk_size_when_splittable():
    splitter = R(separators=["\n\n", "\n"], chunk_size=8, chunk_overlap=0)
    out = splitter.split_text("short\n\n" + "w" * 20)
    # The kept "\n" counts toward the first cut: "\nwwwwwww" is 8 characters before stripping.
    assert out == ["short", "w" * 7, "w" * 8, "w" * 5]
    assert max(map(len, out)) <= 8


# -- token length ------------------------------------------------------------------------------------------


def test_from_tiktoken_encoder_keeps_every_chunk_within_the_token_budget():
    text = "Tokyo 東京は雨です。 Kyoto 京都は晴れ。 🙂🙂🙂 done. " * 3
    splitter = R.from_tiktoken_encoder(chunk_size=8, chunk_overlap=2)
    out = pairs(splitter, text)
    assert out and all(count_tokens(chunk) <= 8 for chunk, _ in out)
    assert "".join(c for c, _ in out).replace(" ", "").startswith("Tokyo東京")


# -- language presets ---------------------------------------------------------------------------------------


PYTHON = "import os\n\n@decorator\ndef f():\n    return 1\n\n\nclass A:\n    @property\n    def x(self):\n        return 2\n"


def test_python_preset_keeps_decorators_with_what_they_decorate():
    splitter = R.from_language(Language.PYTHON, chunk_size=40, chunk_overlap=0)
    assert pairs(splitter, PYTHON) == [
        ("import os", 0),
        ("@decorator\ndef f():\n    return 1", 11),
        ("class A:", 46),
        ("@property\n    def x(self):", 59),
        ("return 2", 94),
    ]


def test_python_preset_splits_at_classes_first():
    splitter = R.from_language("python", chunk_size=60, chunk_overlap=0)
    assert splitter.split_text(PYTHON) == [
        "import os\n\n@decorator\ndef f():\n    return 1",
        "class A:\n    @property\n    def x(self):\n        return 2",
    ]


def test_python_subclass_equals_from_language():
    assert PythonCodeTextSplitter(chunk_size=40, chunk_overlap=0).split_text(PYTHON) == R.from_language(
        "python", chunk_size=40, chunk_overlap=0
    ).split_text(PYTHON)


MARKDOWN = "# T\n\nIntro.\n\n```py\n# c\n\nx = 1\n```\n\n## U\n\nend"


def test_markdown_preset_never_cuts_a_fence_that_fits():
    splitter = R.from_language("markdown", chunk_size=30, chunk_overlap=0)
    assert pairs(splitter, MARKDOWN) == [("# T\n\nIntro.", 0), ("```py\n# c\n\nx = 1\n```", 13), ("## U\n\nend", 35)]
    # The generic separators cut the same block at its blank line.
    generic = R(chunk_size=30, chunk_overlap=0)
    assert "```py\n# c\n\nx = 1\n```" not in generic.split_text(MARKDOWN)


def test_markdown_preset_cuts_a_fence_only_when_it_alone_is_too_big():
    splitter = R.from_language("markdown", chunk_size=20, chunk_overlap=0)
    assert splitter.split_text(MARKDOWN) == ["# T\n\nIntro.", "```py\n# c\n\nx = 1", "```", "## U\n\nend"]


def test_markdown_preset_splits_at_headings_and_thematic_breaks_but_not_setext_underlines():
    splitter = MarkdownTextSplitter(chunk_size=14, chunk_overlap=0)
    assert splitter.split_text("# A\nalpha\n# B\nbeta") == ["# A\nalpha", "# B\nbeta"]
    assert splitter.split_text("Intro text\n\n---\nbody") == ["Intro text", "---\nbody"]
    separators = R.get_separators_for_language("markdown")
    thematic = re.compile(separators[7])
    assert thematic.search("para\n---\nmore") is None  # a setext underline
    assert thematic.search("para\n\n---\nmore") is not None


def test_regression_markdown_and_latex_subclasses_use_regex_separators():
    # LangChain escapes these presets, so "\n(?=# )" would be searched literally and never match.
    assert MarkdownTextSplitter(chunk_size=8, chunk_overlap=0).split_text("# A\nx\n# B\ny") == ["# A\nx", "# B\ny"]
    tex = "\\section{A}\ntext a\n\\subsection{B}\ntext b\n\\section{C}\ntext c"
    expected = ["\\section{A}\ntext a", "\\subsection{B}\ntext b", "\\section{C}\ntext c"]
    assert LatexTextSplitter(chunk_size=30, chunk_overlap=0).split_text(tex) == expected
    assert R.from_language("latex", chunk_size=30, chunk_overlap=0).split_text(tex) == expected


@pytest.mark.parametrize(
    ("language", "text", "chunk_size", "expected"),
    [
        (
            "js",
            "const a = 1;\nfunction f() {\n  return a;\n}\nexport default class B {}\n",
            30,
            ["const a = 1;", "function f() {\n  return a;\n}", "export default class B {}"],
        ),
        (
            "ts",
            "interface P { x: number }\ntype Q = P;\nexport const z = 1;\n",
            25,
            ["interface P { x: number }", "type Q = P;", "export const z = 1;"],
        ),
        (
            "go",
            "package main\n\nfunc a() {\n\tif x {\n\t}\n}\nfunc (r *T) b() {}\n",
            25,
            ["package main", "func a() {\n\tif x {\n\t}\n}", "func (r *T) b() {}"],
        ),
        (
            "rust",
            "use std::io;\npub fn a() {}\nimpl T {\n    fn b() {}\n}\n",
            25,
            ["use std::io;", "pub fn a() {}", "impl T {\n    fn b() {}\n}"],
        ),
        (
            "java",
            "package p;\npublic class A {\n    private int x;\n    public void f() {\n        if (x) {}\n    }\n}\n",
            40,
            ["package p;", "public class A {\n    private int x;", "public void f() {", "if (x) {}\n    }\n}"],
        ),
        (
            "cpp",
            "#include <x.h>\nstatic int a;\nint main(void) {\n    for (;;) {}\n}\nstruct S { int q; };\n",
            30,
            ["#include <x.h>\nstatic int a;", "int main(void) {", "for (;;) {}\n}", "struct S { int q; };"],
        ),
        ("html", "<pre>a</pre><p>b</p>", 12, ["<pre>a</pre>", "<p>b</p>"]),
    ],
)
def test_language_presets_split_at_structural_boundaries(language, text, chunk_size, expected):
    splitter = R.from_language(language, chunk_size=chunk_size, chunk_overlap=0)
    assert pairs(splitter, text) and splitter.split_text(text) == expected


def test_html_preset_matches_exact_tag_names():
    separators = R.get_separators_for_language(Language.HTML)
    p_level = next(s for s in separators if "(?i:p)" in s)
    assert re.search(p_level, "<pre>x</pre>") is None
    assert re.search(p_level, "<P class='a'>x</P>") is not None


def test_language_enum_has_langchains_names_and_values():
    expected = {
        "CPP": "cpp", "GO": "go", "JAVA": "java", "KOTLIN": "kotlin", "JS": "js", "TS": "ts", "PHP": "php",
        "PROTO": "proto", "PYTHON": "python", "R": "r", "RST": "rst", "RUBY": "ruby", "RUST": "rust", "SCALA": "scala",
        "SWIFT": "swift", "MARKDOWN": "markdown", "LATEX": "latex", "HTML": "html", "SOL": "sol",
        "CSHARP": "csharp", "COBOL": "cobol", "C": "c", "LUA": "lua", "PERL": "perl", "HASKELL": "haskell",
        "ELIXIR": "elixir", "POWERSHELL": "powershell", "VISUALBASIC6": "visualbasic6",
    }
    assert {member.name: member.value for member in Language} == expected
    assert Language.PYTHON == "python" and isinstance(Language.PYTHON, str)


@pytest.mark.parametrize("language", list(Language))
def test_every_preset_compiles_and_ends_with_the_character_level(language):
    separators = R.get_separators_for_language(language)
    assert separators[-2:] == [" ", ""]
    for separator in separators:
        re.compile(separator)
    splitter = R.from_language(language, chunk_size=20, chunk_overlap=0)
    text = "alpha beta\ngamma delta epsilon\n\nzeta eta theta iota kappa"
    out = pairs(splitter, text)
    assert all(len(chunk) <= 20 for chunk, _ in out)


def test_unknown_language_raises():
    with pytest.raises(ValueError, match="'brainfuck' is not supported"):
        R.get_separators_for_language("brainfuck")
    with pytest.raises(ValueError):
        R.from_language("brainfuck")


def test_hand_built_splitter_with_a_preset_gets_its_rules():
    separators = R.get_separators_for_language("markdown")
    splitter = R(separators=separators, is_separator_regex=True, chunk_size=30, chunk_overlap=0)
    assert splitter.split_text(MARKDOWN) == R.from_language("markdown", chunk_size=30, chunk_overlap=0).split_text(
        MARKDOWN
    )
