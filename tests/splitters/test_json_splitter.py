"""RecursiveJsonSplitter (docs/splitters.md#recursivejsonsplitter)."""

from __future__ import annotations

import copy
import json
import logging

import pytest

from chunking.model import Document
from chunking.splitters import RecursiveJsonSplitter as Json

PERSON = {"name": "Ada", "address": {"city": "London", "zip": "NW1"}, "tags": ["x", "y"]}


def sized(chunks: list[dict]) -> list[tuple[dict, int]]:
    return [(chunk, len(json.dumps(chunk))) for chunk in chunks]


# -- the examples of docs/splitters.md#recursivejsonsplitter -----------------------------------------------------------


def test_max_60_keeps_the_address_whole():
    assert sized(Json(60).split_json(PERSON)) == [
        ({"name": "Ada", "address": {"city": "London", "zip": "NW1"}}, 60),
        ({"tags": ["x", "y"]}, 20),
    ]


def test_max_40_descends_into_the_address_repeating_its_key():
    assert Json(40).split_json(PERSON) == [
        {"name": "Ada"},
        {"address": {"city": "London"}},
        {"address": {"zip": "NW1"}},
        {"tags": ["x", "y"]},
    ]


def test_regression_nested_chunks_count_their_ancestor_path():
    # LangChain measures only the new item, so the chunk with its path exceeds the maximum.
    data = {"a": {"b": {"c": "deep value here", "d": "another value"}}}
    assert sized(Json(40).split_json(data)) == [
        ({"a": {"b": {"c": "deep value here"}}}, 38),
        ({"a": {"b": {"d": "another value"}}}, 36),
    ]


def test_oversized_leaf_is_a_chunk_of_its_own_and_reported(caplog):
    data = {"id": 7, "body": "x" * 50}
    with caplog.at_level(logging.WARNING, logger="chunking.splitters.json.recursive"):
        chunks = Json(30).split_json(data)
    assert sized(chunks) == [({"id": 7}, 9), ({"body": "x" * 50}, 62)]
    assert "'/body'" in caplog.text
    with pytest.raises(ValueError, match="/body"):
        Json(30).split_json(data, on_oversize="raise")


# -- defaults and validation ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("max_size", "min_size"), [(2000, 1800), (300, 100), (100, 50), (40, 40), (10, 10)])
def test_default_min_chunk_size_never_exceeds_max(max_size, min_size):
    assert Json(max_size).min_chunk_size == min_size


def test_invalid_sizes():
    with pytest.raises(ValueError):
        Json(0)
    with pytest.raises(ValueError):
        Json(50, min_chunk_size=60)


def test_min_chunk_size_decides_between_closing_and_descending():
    data = {"k": "v", "obj": {"a": "aaaa", "b": "bbbb"}}
    # {"k": "v"} is 10 characters and the whole object 45: below min 20 the splitter descends and fills the
    # current chunk; at min 5 it closes it and the object (35 on its own) fits in a new one.
    assert Json(35, min_chunk_size=20).split_json(data) == [{"k": "v", "obj": {"a": "aaaa"}}, {"obj": {"b": "bbbb"}}]
    assert Json(35, min_chunk_size=5).split_json(data) == [{"k": "v"}, {"obj": {"a": "aaaa", "b": "bbbb"}}]


@pytest.mark.parametrize("data", [None, {}])
def test_empty_input(data):
    assert Json(50).split_json(data) == []


def test_top_level_list_and_scalars_raise_type_error():
    with pytest.raises(TypeError, match="convert_lists=True"):
        Json(50).split_json([1, 2])
    with pytest.raises(TypeError, match="str"):
        Json(50).split_json("text")


# -- lists, empty dicts, order ---------------------------------------------------------------------------------


def test_convert_lists_splits_lists_by_index_at_any_depth():
    data = {"items": [{"n": "one"}, {"n": "two"}], "top": [1]}
    assert sized(Json(30).split_json(data, convert_lists=True)) == [
        ({"items": {"0": {"n": "one"}}}, 30),
        ({"items": {"1": {"n": "two"}}}, 30),
        ({"top": {"0": 1}}, 17),
    ]
    assert Json(30).split_json([{"a": 1}, {"b": 2}], convert_lists=True) == [{"0": {"a": 1}, "1": {"b": 2}}]


def test_empty_dicts_are_kept_and_keys_stay_in_source_order():
    data = {"z": {}, "a": {"y": 1, "b": {}}, "m": 2}
    chunks = Json(1000).split_json(data)
    assert chunks == [data] and list(chunks[0]) == ["z", "a", "m"]


def test_chunks_do_not_share_objects_with_the_input():
    data = {"a": {"list": [1, 2]}, "b": {"c": [3]}}
    original = copy.deepcopy(data)
    chunks = Json(1000).split_json(data)
    chunks[0]["a"]["list"].append(99)
    assert data == original


# -- text and documents --------------------------------------------------------------------------------------


def test_split_text_and_ensure_ascii():
    data = {"city": "Zürich", "name": "東京"}
    assert Json(100).split_text(data) == ['{"city": "Z\\u00fcrich", "name": "\\u6771\\u4eac"}']
    assert Json(100).split_text(data, ensure_ascii=False) == ['{"city": "Zürich", "name": "東京"}']
    # Sizes are always measured ASCII-escaped: 47 characters with escapes, so max 40 splits it.
    assert Json(40).split_text(data, ensure_ascii=False) == ['{"city": "Zürich"}', '{"name": "東京"}']


def test_create_documents_sets_json_path_and_oversize_flag():
    docs = Json(30).create_documents(
        [{"id": 7, "body": "x" * 50}, {"a": {"b": {"c": 1, "d": 2}}}],
        metadatas=[{"src": "one", "tags": []}, {"src": "two"}],
    )
    assert docs == [
        Document('{"id": 7}', {"src": "one", "tags": [], "json_path": "/id"}),
        Document('{"body": "' + "x" * 50 + '"}', {"src": "one", "tags": [], "json_path": "/body", "json_oversize": True}),
        Document('{"a": {"b": {"c": 1, "d": 2}}}', {"src": "two", "json_path": "/a/b"}),
    ]
    docs[0].metadata["tags"].append("changed")
    assert docs[1].metadata["tags"] == []


def test_json_pointer_escapes_and_root_path():
    docs = Json(100).create_documents([{"a/b": {"c~d": 1}}, {"x": 1, "y": 2}])
    assert [d.metadata["json_path"] for d in docs] == ["/a~1b/c~0d", ""]


def test_create_documents_rejects_mismatched_metadatas():
    with pytest.raises(ValueError):
        Json(100).create_documents([{"a": 1}], metadatas=[{}, {}])
