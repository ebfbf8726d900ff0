"""CharacterTextSplitter and the shared TextSplitter behaviour (docs/splitters.md#charactertextsplitter)."""

from __future__ import annotations

import logging

import pytest

from chunking.model import Document
from chunking.splitters import CharacterTextSplitter, TextSplitter
from chunking.tokens import count_tokens


def pairs(splitter: TextSplitter, text: str) -> list[tuple[str, int]]:
    out = splitter.split_text_with_offsets(text)
    for chunk, start in out:  # every chunk is a verbatim substring at its offset
        assert text[start : start + len(chunk)] == chunk
    return out


# -- the examples of docs/splitters.md#charactertextsplitter -----------------------------------------------------------


def test_regex_separator_keeps_original_whitespace_between_merged_pieces():
    splitter = CharacterTextSplitter(separator=r"\s+", is_separator_regex=True, chunk_size=12, chunk_overlap=0)
    assert pairs(splitter, "red  green\tblue\n\nteal   plum") == [("red  green", 0), ("blue\n\nteal", 11), ("plum", 24)]


def test_zero_width_lookahead_separator():
    splitter = CharacterTextSplitter(separator=r"(?=Step \d)", is_separator_regex=True, chunk_size=20, chunk_overlap=0)
    assert pairs(splitter, "Step 1 mix. Step 2 bake. Step 3 eat.") == [
        ("Step 1 mix.", 0),
        ("Step 2 bake.", 12),
        ("Step 3 eat.", 25),
    ]


def test_oversize_piece_is_cut_at_character_level(caplog):
    splitter = CharacterTextSplitter(separator=" ", chunk_size=6, chunk_overlap=0)
    with caplog.at_level(logging.WARNING, logger="chunking.splitters.character"):
        out = pairs(splitter, "tiny enormousword ok")
    assert out == [("tiny", 0), ("enormo", 5), ("usword", 11), ("ok", 18)]
    assert "cut at character level" in caplog.text


# -- LangChain faults (regressions) ---------------------------------------------------------------------------


def test_regression_regex_pattern_is_never_pasted_into_chunks():
    # LangChain joins merged pieces with the separator *pattern*: "a\\s+b".
    splitter = CharacterTextSplitter(separator=r"\s+", is_separator_regex=True, chunk_size=100, chunk_overlap=0)
    assert splitter.split_text("a \t b\n\nc") == ["a \t b\n\nc"]


def test_regression_runs_of_separators_are_not_collapsed():
    splitter = CharacterTextSplitter(separator="\n", chunk_size=100, chunk_overlap=0)
    assert splitter.split_text("a\n\n\nb") == ["a\n\n\nb"]


def test_regression_no_chunk_over_chunk_size_when_splittable():
    splitter = CharacterTextSplitter(separator="\n\n", chunk_size=10, chunk_overlap=0)
    out = splitter.split_text("x" * 25 + "\n\nshort")
    assert out == ["x" * 10, "x" * 10, "xxxxx", "short"]
    assert max(map(len, out)) <= 10


def test_regression_start_index_with_overlap_and_repeats():
    text = "ab ab ab ab ab ab"
    splitter = CharacterTextSplitter(separator=" ", chunk_size=5, chunk_overlap=2, add_start_index=True)
    docs = splitter.create_documents([text])
    assert [(d.page_content, d.metadata["start_index"]) for d in docs] == [
        ("ab ab", 0), ("ab ab", 3), ("ab ab", 6), ("ab ab", 9), ("ab ab", 12),
    ]


# -- keep_separator, overlap, strip ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("keep", "expected"),
    [
        (False, [("a", 0), ("b", 3), ("c", 6)]),
        (True, [("a;", 0), ("b;", 3), ("c", 6)]),  # sentence punctuation ends the piece it closes
        ("start", [("a", 0), ("; b", 1), ("; c", 4)]),
        ("end", [("a;", 0), ("b;", 3), ("c", 6)]),
    ],
)
def test_keep_separator_modes(keep, expected):
    splitter = CharacterTextSplitter(separator="; ", chunk_size=3, chunk_overlap=0, keep_separator=keep)
    assert pairs(splitter, "a; b; c") == expected


def test_keep_separator_true_attaches_sentence_punctuation_to_the_end_and_structure_to_the_start():
    splitter = CharacterTextSplitter(separator=". ", keep_separator=True, chunk_size=8, chunk_overlap=0)
    assert pairs(splitter, "Text 1. Text 2.") == [("Text 1.", 0), ("Text 2.", 8)]
    cjk = CharacterTextSplitter(separator="。", keep_separator=True, chunk_size=13, chunk_overlap=0)
    assert pairs(cjk, "天青色等烟雨，而我在等你。哈哈哈") == [("天青色等烟雨，而我在等你。", 0), ("哈哈哈", 13)]
    lines = CharacterTextSplitter(separator="\n", keep_separator=True, chunk_size=3, chunk_overlap=0,
                                  strip_whitespace=False)
    assert pairs(lines, "ab\ncd") == [("ab", 0), ("\ncd", 2)]


def test_an_oversized_piece_is_cut_at_the_last_whitespace_within_the_cap():
    splitter = CharacterTextSplitter(chunk_size=10, chunk_overlap=0)
    assert pairs(splitter, "orange and tomato") == [("orange and", 0), ("tomato", 11)]
    assert pairs(CharacterTextSplitter(chunk_size=9, chunk_overlap=0), "orange and tomato") == [
        ("orange", 0), ("and", 7), ("tomato", 11)]
    assert pairs(CharacterTextSplitter(chunk_size=4, chunk_overlap=0), "abcdefgh") == [("abcd", 0), ("efgh", 4)]


def test_keep_separator_false_keeps_the_match_between_merged_pieces():
    splitter = CharacterTextSplitter(separator="; ", chunk_size=4, chunk_overlap=0)
    assert pairs(splitter, "a; b; c") == [("a; b", 0), ("c", 6)]


def test_overlap_is_made_of_whole_pieces_and_is_an_upper_bound():
    splitter = CharacterTextSplitter(separator=" ", chunk_size=9, chunk_overlap=4)
    assert pairs(splitter, "aa bb cc dd ee") == [("aa bb cc", 0), ("cc dd ee", 6)]
    # Pieces longer than the overlap are never repeated: overlap 0 in practice.
    splitter = CharacterTextSplitter(separator=" ", chunk_size=9, chunk_overlap=2)
    assert pairs(splitter, "aaa bbb ccc ddd") == [("aaa bbb", 0), ("ccc ddd", 8)]


def test_overlap_equal_to_chunk_size_is_allowed():
    splitter = CharacterTextSplitter(separator=" ", chunk_size=3, chunk_overlap=3)
    assert pairs(splitter, "a b c") == [("a b", 0), ("b c", 2)]


def test_strip_whitespace_false_keeps_edges_but_drops_blank_chunks():
    splitter = CharacterTextSplitter(separator="|", chunk_size=4, chunk_overlap=0, strip_whitespace=False)
    assert pairs(splitter, " ab |   | cd ") == [(" ab ", 0), (" cd ", 9)]


def test_strip_whitespace_moves_start_index():
    splitter = CharacterTextSplitter(separator="|", chunk_size=5, chunk_overlap=0)
    assert pairs(splitter, "  ab |  cd") == [("ab", 2), ("cd", 8)]


@pytest.mark.parametrize("text", ["", "   ", "\n\n\t \n"])
def test_empty_or_whitespace_input_gives_nothing(text):
    assert CharacterTextSplitter(chunk_size=5, chunk_overlap=0).split_text(text) == []


def test_literal_separator_is_escaped():
    splitter = CharacterTextSplitter(separator=".", chunk_size=3, chunk_overlap=0)
    assert pairs(splitter, "ab.cd.ef") == [("ab", 0), ("cd", 3), ("ef", 6)]


def test_capture_groups_behave_like_the_plain_regex():
    with_group = CharacterTextSplitter(separator=r"(,)\s*", is_separator_regex=True, chunk_size=3, chunk_overlap=0)
    without = CharacterTextSplitter(separator=r",\s*", is_separator_regex=True, chunk_size=3, chunk_overlap=0)
    assert pairs(with_group, "ab, cd,ef") == pairs(without, "ab, cd,ef") == [("ab", 0), ("cd", 4), ("ef", 7)]


def test_empty_separator_cuts_between_characters():
    splitter = CharacterTextSplitter(separator="", chunk_size=2, chunk_overlap=1)
    assert pairs(splitter, "abcd") == [("ab", 0), ("bc", 1), ("cd", 2)]


def test_default_separator_is_paragraph():
    splitter = CharacterTextSplitter(chunk_size=7, chunk_overlap=0)
    assert pairs(splitter, "one\ntwo\n\nthree") == [("one\ntwo", 0), ("three", 9)]


# -- validation -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"chunk_size": 0}, "chunk_size must be > 0, got 0"),
        ({"chunk_size": 5, "chunk_overlap": -1}, "chunk_overlap must be >= 0, got -1"),
        (
            {"chunk_size": 5, "chunk_overlap": 6},
            "Got a larger chunk overlap (6) than chunk size (5), should be smaller.",
        ),
        ({"chunk_size": 5, "chunk_overlap": 0, "keep_separator": "middle"}, "keep_separator must be"),
    ],
)
def test_invalid_parameters_raise(kwargs, message):
    with pytest.raises(ValueError) as error:
        CharacterTextSplitter(**kwargs)
    assert message in str(error.value)


def test_defaults_match_langchain():
    splitter = CharacterTextSplitter()
    assert (splitter._separator, splitter._chunk_size, splitter._chunk_overlap) == ("\n\n", 4000, 200)
    assert (splitter._keep_separator, splitter._add_start_index, splitter._strip_whitespace) == (False, False, True)
    assert splitter._length_function is len


# -- Document API ---------------------------------------------------------------------------------------------


def test_create_documents_copies_metadata_per_chunk():
    source_metadata = {"source": "a.txt", "tags": ["x"]}
    splitter = CharacterTextSplitter(separator=" ", chunk_size=3, chunk_overlap=0, add_start_index=True)
    docs = splitter.create_documents(["ab cd", "ef"], metadatas=[source_metadata, {"source": "b.txt"}])
    assert docs == [
        Document("ab", {"source": "a.txt", "tags": ["x"], "start_index": 0}),
        Document("cd", {"source": "a.txt", "tags": ["x"], "start_index": 3}),
        Document("ef", {"source": "b.txt", "start_index": 0}),
    ]
    docs[0].metadata["tags"].append("changed")
    assert docs[1].metadata["tags"] == ["x"]
    assert source_metadata == {"source": "a.txt", "tags": ["x"]}


def test_create_documents_without_start_index_and_metadatas():
    docs = CharacterTextSplitter(separator=" ", chunk_size=3, chunk_overlap=0).create_documents(["ab cd"])
    assert docs == [Document("ab", {}), Document("cd", {})]


def test_create_documents_rejects_mismatched_metadatas():
    with pytest.raises(ValueError, match="2 metadatas for 1 texts"):
        CharacterTextSplitter(chunk_size=3, chunk_overlap=0).create_documents(["a"], [{}, {}])


def test_split_and_transform_documents():
    splitter = CharacterTextSplitter(separator=" ", chunk_size=3, chunk_overlap=0, add_start_index=True)
    source = [Document("ab cd", {"page": 1})]
    expected = [Document("ab", {"page": 1, "start_index": 0}), Document("cd", {"page": 1, "start_index": 3})]
    assert splitter.split_documents(source) == expected
    assert splitter.transform_documents(source) == expected
    assert source[0].metadata == {"page": 1}


def test_split_text_is_the_strings_of_split_text_with_offsets():
    splitter = CharacterTextSplitter(separator=" ", chunk_size=3, chunk_overlap=0)
    assert splitter.split_text("ab cd") == ["ab", "cd"]


# -- token lengths ------------------------------------------------------------------------------------------


def test_from_tiktoken_encoder_counts_tokens():
    # Pieces and separators are each measured once and summed: "hello" + " " + "world" is 3 tokens.
    splitter = CharacterTextSplitter.from_tiktoken_encoder(separator=" ", chunk_size=3, chunk_overlap=0)
    out = pairs(splitter, "hello world again and again")
    assert out == [("hello world", 0), ("again and", 12), ("again", 22)]
    assert all(count_tokens(c) <= 3 for c, _ in out)


def test_from_tiktoken_encoder_treats_special_token_text_as_text():
    splitter = CharacterTextSplitter.from_tiktoken_encoder(separator=" ", chunk_size=100, chunk_overlap=0)
    assert splitter.split_text("a <|endoftext|> b") == ["a <|endoftext|> b"]
    # <|endoftext|> counted as text is several tokens; as an allowed special token it is one.
    plain = CharacterTextSplitter.from_tiktoken_encoder(separator="", chunk_size=3, chunk_overlap=0)
    special = CharacterTextSplitter.from_tiktoken_encoder(
        separator=" ", chunk_size=3, chunk_overlap=0, allowed_special={"<|endoftext|>"}
    )
    assert special.split_text("a <|endoftext|>") == ["a <|endoftext|>"]
    assert len(plain.split_text("a <|endoftext|>")) > 1


def test_from_tiktoken_encoder_with_model_name_and_unknown_encoding():
    splitter = CharacterTextSplitter.from_tiktoken_encoder(model_name="gpt-4", separator=" ", chunk_size=1,
                                                           chunk_overlap=0)
    assert splitter.split_text("hello world") == ["hello", "world"]
    with pytest.raises(ValueError, match="not shipped"):
        CharacterTextSplitter.from_tiktoken_encoder(encoding_name="gpt2")
    with pytest.raises(ValueError, match="no tiktoken encoding"):
        CharacterTextSplitter.from_tiktoken_encoder(model_name="no-such-model")


def test_token_measured_chunk_over_size_moves_its_last_piece():
    # A length that is not additive: the measured whole is larger than the sum of its parts.
    def length(text: str) -> int:
        return len(text) + (3 if "b" in text and "c" in text else 0)

    splitter = CharacterTextSplitter(separator="", chunk_size=4, chunk_overlap=0, length_function=length)
    assert pairs(splitter, "abcd") == [("ab", 0), ("cd", 2)]
