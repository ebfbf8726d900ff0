"""``chunking.splitters.json.spans``: JSON values with their source spans; chunks that keep lists as lists and
carry the span of what they hold."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from chunking.splitters.json.spans import parse_spans, split_json_spans
from chunking.tokens import token_counter

count = token_counter("cl100k_base")


def test_spans_of_members_and_elements():
    text = '{"a": {"b": [1, 2, {"c": "x"}], "d": "long text here"},\n "e": [], "f": {}}'
    root = parse_spans(text)
    assert (root.kind, root.start, root.end) == ("object", 0, len(text))
    a = root.items[0]
    assert (a[0], text[a[1]:a[2].end]) == ("a", '"a": {"b": [1, 2, {"c": "x"}], "d": "long text here"}')
    b = a[2].items[0][2]
    assert [(key, text[start:node.end]) for key, start, node in b.items] == [(0, "1"), (1, "2"), (2, '{"c": "x"}')]
    assert root.value == json.loads(text)


def test_chunks_keep_lists_as_lists_and_carry_their_source_span():
    text = '{"a": {"b": [1, 2, {"c": "x"}], "d": "long text here"},\n "e": [], "f": {}}'
    pieces = split_json_spans(text, 15, count)
    assert [(p.text, text[p.char_start:p.char_end], p.pointer) for p in pieces] == [
        ('{"a": {"b": [1, 2]}}', "1, 2", "/a/b"),
        ('{"a": {"b": [{"c": "x"}]}}', '{"c": "x"}', "/a/b/2"),
        ('{"a": {"d": "long text here"}}', '"d": "long text here"', "/a/d"),
        ('{"e": [], "f": {}}', '"e": [], "f": {}', ""),
    ]
    assert all(p.token_count == count(p.text) <= 15 and not p.oversize for p in pieces)
    whole = split_json_spans(text, 100, count)
    assert [(p.text, p.char_start, p.char_end) for p in whole] == [(json.dumps(json.loads(text)), 1, len(text) - 1)]


def test_top_level_list_and_an_oversize_leaf():
    text = json.dumps(["short", "word " * 40, {"k": [True, None]}])
    pieces = split_json_spans(text, 12, count)
    assert [json.loads(p.text) for p in pieces] == [["short"], ["word " * 40], [{"k": [True, None]}]]
    assert [p.oversize for p in pieces] == [False, True, False]
    assert [text[p.char_start:p.char_end] for p in pieces] == [json.dumps(v) for v in json.loads(text)]


def leaves(value, path=()):
    """Scalars and empty containers in document order, with their key paths (list positions as '*')."""
    if isinstance(value, dict) and value:
        for key, item in value.items():
            yield from leaves(item, (*path, key))
    elif isinstance(value, list) and value:
        for item in value:
            yield from leaves(item, (*path, "*"))
    else:
        yield path, value


keys = st.text(alphabet="abcxyz", min_size=1, max_size=3)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(alphabet="ab c\"\\é日", max_size=30),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(keys, inner, max_size=5),
    max_leaves=40,
)


@settings(max_examples=400, deadline=None)
@given(data=st.dictionaries(keys, json_values, min_size=1, max_size=5) | st.lists(json_values, min_size=1, max_size=6),
       indent=st.sampled_from([None, 1, 2]), max_tokens=st.integers(1, 80))
def test_pieces_hold_every_value_once_in_order_within_their_spans(data, indent, max_tokens):
    text = json.dumps(data, indent=indent, ensure_ascii=False)
    pieces = split_json_spans(text, max_tokens, count)
    values = [json.loads(p.text) for p in pieces]
    # Every value once, in order, at the same key path: nothing lost, nothing repeated, lists still lists.
    assert [leaf for v in values for leaf in leaves(v)] == list(leaves(data))
    assert all(type(v) is type(data) for v in values)
    # Spans are in document order, disjoint, and each holds the source text of its piece's values.
    assert all(a.char_end <= b.char_start for a, b in zip(pieces, pieces[1:]))
    for piece, value in zip(pieces, values):
        span = text[piece.char_start:piece.char_end]
        for _, leaf in leaves(value):
            assert json.dumps(leaf, ensure_ascii=False, indent=indent) in span
    # The cap holds for every piece but a single value that alone is over it.
    for piece in pieces:
        assert piece.token_count == count(piece.text)
        assert piece.token_count <= max_tokens or piece.oversize
        if piece.oversize:  # only a value that cannot be divided: a scalar or an empty container
            assert len(list(leaves(json.loads(piece.text)))) == 1
