"""LangChain-style TextSplitter subclasses: ``split_text`` is the extension point, offsets derived."""

import pytest

from chunking.splitters import CharacterTextSplitter, RecursiveCharacterTextSplitter, TextSplitter
from chunking.splitters.base import derive_offsets


class PipeSplitter(TextSplitter):
    def split_text(self, text):
        return [part for part in text.split("|") if part]


def test_a_split_text_only_subclass_can_be_made_and_gets_documents_with_offsets():
    splitter = PipeSplitter(add_start_index=True)
    assert splitter.split_text("a|b|a") == ["a", "b", "a"]
    assert splitter.split_text_with_offsets("a|b|a") == [("a", 0), ("b", 2), ("a", 4)]
    docs = splitter.create_documents(["a|b|a"], [{"source": "x"}])
    assert [(d.page_content, d.metadata) for d in docs] == [
        ("a", {"source": "x", "start_index": 0}),
        ("b", {"source": "x", "start_index": 2}),
        ("a", {"source": "x", "start_index": 4}),
    ]


def test_overriding_split_text_of_one_of_our_splitters_is_what_documents_use():
    class Upper(RecursiveCharacterTextSplitter):
        def split_text(self, text):
            return [chunk.upper() for chunk in super().split_text(text)]

    splitter = Upper(chunk_size=3, chunk_overlap=0, add_start_index=True)
    assert splitter.split_text("ab cd") == ["AB", "CD"]
    # The chunks are no longer substrings of the text: start_index is -1, as LangChain reports a failed search.
    assert [(d.page_content, d.metadata) for d in splitter.create_documents(["ab cd"])] == [
        ("AB", {"start_index": -1}), ("CD", {"start_index": -1})]


def test_a_subclass_implementing_neither_method_cannot_be_instantiated():
    class Nothing(TextSplitter):
        pass

    with pytest.raises(TypeError, match="implement split_text or split_text_with_offsets"):
        Nothing()


def test_derived_offsets_move_forward_over_repeats_and_overlap():
    assert derive_offsets("one one one", ["one one", "one one"]) == [("one one", 0), ("one one", 4)]
    assert derive_offsets("abc", ["x"]) == [("x", -1)]


def test_merge_splits_helper_for_subclasses():
    splitter = CharacterTextSplitter(separator=" ", chunk_size=9, chunk_overlap=2)
    assert splitter._merge_splits(["foo", "bar", "baz"], separator=" ") == ["foo bar", "baz"]
    assert splitter._join_docs([" a", "b "], " ") == "a b"
    assert splitter._join_docs([" "], " ") is None
