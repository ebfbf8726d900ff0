"""JSON values with their character spans in the source text, and token-capped chunks of them.

``parse_spans`` reads a JSON text into a tree of ``JsonNode``s, each knowing where its value (and, for an
object member, its key) starts and ends in the text. ``split_json_spans`` walks that tree in document order and
packs whole subtrees into chunks:

1. an item (object member or array element, with its whole value) joins the current chunk if the chunk's
   tokens stay within ``max_tokens``;
2. if not, the current chunk (when non-empty) is closed and the item tried again in a new one;
3. an item that does not fit even alone is descended into when its value is a non-empty object or array (its
   items take its place); a leaf that does not fit is a chunk of its own (``oversize``).

A chunk's text is valid JSON repeating the path from the root to its items (``{"a": {"b": [1, 2]}}``): objects
stay objects and arrays stay arrays (an array split over chunks keeps, in each, the elements it holds, in
order). Its span runs from its first item's start (the key of a member) to its last item's end, so
``text[char_start:char_end]`` is the source region the chunk was built from. Its heading is the RFC 6901 JSON
Pointer of the path its items share (array indexes as in the source).

Token counts while packing are estimates (the sum of each item's serialisation); every closed chunk is counted
exactly and halved while it is over the cap and holds more than one item, so no chunk of several items is ever
over ``max_tokens``. Parsing and walking use explicit stacks, so depth is bounded by memory, not recursion.
"""

from __future__ import annotations

import json
import re
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Union

__all__ = ["JsonNode", "JsonPiece", "parse_spans", "split_json_spans"]

_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()

Key = Union[str, int]


@dataclass
class JsonNode:
    """One JSON value of a text.

    Attributes:
        kind: ``"object"``, ``"array"`` or ``"scalar"``.
        start, end: character span of the value in the text (``end`` exclusive).
        value: the decoded Python value (dicts and lists share their children's values).
        items: for objects and arrays, ``(key, item_start, child)`` in source order: the key (``str``) or array
            index (``int``), where the item starts (an object member at its key's opening quote), the child.
    """

    kind: str
    start: int
    end: int = -1
    value: Any = None
    items: list[tuple[Key, int, "JsonNode"]] = field(default_factory=list)


@dataclass(frozen=True)
class JsonPiece:
    """One chunk of a JSON text: ``text`` (valid JSON), its source span, exact tokens, JSON Pointer heading;
    ``oversize`` when it is a single leaf over the token cap."""

    text: str
    char_start: int
    char_end: int
    token_count: int
    pointer: str
    oversize: bool = False


def parse_spans(text: str) -> JsonNode:
    """The root ``JsonNode`` of *text*, a complete JSON text (surrounding whitespace allowed).

    Raises:
        ValueError: *text* is not valid JSON (``json.JSONDecodeError`` for bad scalars, ``ValueError`` naming the
            offset for bad structure).
    """
    stack: list[JsonNode] = []
    pending: list[tuple[str, int]] = []  # the key (and its start) waiting for its value, per open object
    root: JsonNode | None = None
    pos = _WS.match(text, 0).end()
    while True:
        # A value starts at pos.
        char = text[pos:pos + 1]
        if char in ("{", "["):
            node = JsonNode("object" if char == "{" else "array", pos, value={} if char == "{" else [])
        else:
            value, end = _DECODER.raw_decode(text, pos)
            node = JsonNode("scalar", pos, end, value)
        if stack:
            _attach(stack[-1], node, pending)
        else:
            root = node
        if node.kind == "scalar":
            pos = node.end
        else:
            stack.append(node)
            pos = _WS.match(text, pos + 1).end()
            closing = "}" if node.kind == "object" else "]"
            if text[pos:pos + 1] != closing:
                if node.kind == "object":
                    pos = _key(text, pos, pending)
                continue
            # an empty container: closed just below
        # After a value: close containers, or move to the next item.
        while stack:
            pos = _WS.match(text, pos).end()
            char = text[pos:pos + 1]
            top = stack[-1]
            if char == ("}" if top.kind == "object" else "]"):
                top.end = pos + 1
                stack.pop()
                pos += 1
                continue
            if char != ",":
                raise ValueError(f"expected ',' or a closing bracket at offset {pos}")
            pos = _WS.match(text, pos + 1).end()
            if top.kind == "object":
                pos = _key(text, pos, pending)
            break
        if not stack:
            if text[_WS.match(text, pos).end():]:
                raise ValueError(f"extra data at offset {pos}")
            assert root is not None
            return root


def _key(text: str, pos: int, pending: list[tuple[str, int]]) -> int:
    """Read ``"key" :`` at *pos*; remember the key; return where its value starts."""
    if text[pos:pos + 1] != '"':
        raise ValueError(f"expected a key at offset {pos}")
    key, end = json.decoder.scanstring(text, pos + 1)
    end = _WS.match(text, end).end()
    if text[end:end + 1] != ":":
        raise ValueError(f"expected ':' at offset {end}")
    pending.append((key, pos))
    return _WS.match(text, end + 1).end()


def _attach(parent: JsonNode, node: JsonNode, pending: list[tuple[str, int]]) -> None:
    if parent.kind == "object":
        key, start = pending.pop()
        parent.items.append((key, start, node))
        parent.value[key] = node.value
    else:
        parent.items.append((len(parent.items), node.start, node))
        parent.value.append(node.value)


# ------------------------------------------------------------------------------------------------- chunks

Step = tuple[JsonNode, Key]  # a container and the key of the item taken in it


@dataclass
class _Entry:
    path: tuple[Step, ...]  # from the root to the item (the last step names the item itself)
    start: int
    node: JsonNode
    tokens: int


def split_json_spans(text: str, max_tokens: int, count: Callable[[str], int]) -> list[JsonPiece]:
    """Chunks of the JSON *text* (an object or array) of at most *max_tokens* tokens (by *count*) each, in
    document order; a single leaf over the cap is a piece of its own, flagged ``oversize``. Algorithm: module
    docstring.

    Raises:
        ValueError: *max_tokens* < 1, or *text* is not JSON.
    """
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be ≥ 1, got {max_tokens}")
    root = parse_spans(text)
    return _pack(deque(_children(_Entry((), 0, root, 0))), max_tokens, count)


def _children(entry: _Entry) -> list[_Entry]:
    return [_Entry((*entry.path, (entry.node, key)), start, child, -1) for key, start, child in entry.node.items]


def _pack(todo: deque[_Entry], max_tokens: int, count: Callable[[str], int]) -> list[JsonPiece]:
    """Steps 1-3 of the module docstring over *todo* (items in document order)."""
    pieces: list[JsonPiece] = []
    current: list[_Entry] = []
    used = 0
    while todo:
        entry = todo.popleft()
        if entry.tokens < 0:
            entry.tokens = _tokens(entry, count)
        if current and used + entry.tokens <= max_tokens:
            current.append(entry)
            used += entry.tokens
            continue
        if current:
            pieces.extend(_close(current, max_tokens, count))
            current, used = [], 0
        alone = count(json.dumps(_build([entry]), ensure_ascii=False))  # exact: the chunk it would start
        if alone <= max_tokens or not entry.node.items:
            current, used = [entry], alone
            continue
        todo.extendleft(reversed(_children(entry)))
    if current:
        pieces.extend(_close(current, max_tokens, count))
    return pieces


def _tokens(entry: _Entry, count: Callable[[str], int]) -> int:
    """Estimated tokens the item adds to a chunk: its key, separators and value."""
    container, key = entry.path[-1]
    own = count(json.dumps(entry.node.value, ensure_ascii=False))
    return own + (count(json.dumps(key, ensure_ascii=False)) + 2 if container.kind == "object" else 1)


def _close(entries: list[_Entry], max_tokens: int, count: Callable[[str], int]) -> list[JsonPiece]:
    """The pieces of one packed run of entries: exact counts, halving runs of several entries over the cap."""
    out: list[JsonPiece] = []
    runs = [entries]
    while runs:
        run = runs.pop()
        chunk_text = json.dumps(_build(run), ensure_ascii=False)
        tokens = count(chunk_text)
        if tokens > max_tokens and len(run) > 1:
            half = len(run) // 2
            runs.extend((run[half:], run[:half]))  # the first half is popped first: document order
            continue
        if tokens > max_tokens and run[0].node.items:  # one divisible value over the cap: its items instead
            out.extend(_pack(deque(_children(run[0])), max_tokens, count))
            continue
        out.append(JsonPiece(chunk_text, run[0].start, run[-1].node.end, tokens, _pointer(run),
                             oversize=tokens > max_tokens))
    return out


def _build(entries: list[_Entry]) -> Any:
    """The nested value holding *entries* at their paths; arrays keep only the elements taken, in order."""
    root_node = entries[0].path[0][0]
    root: Any = {} if root_node.kind == "object" else []
    made: dict[tuple, Any] = {}  # prefix of item positions -> the container built for it
    for entry in entries:
        parent, prefix = root, ()
        for depth, (container, key) in enumerate(entry.path):
            prefix = (*prefix, id(container), key)
            if depth == len(entry.path) - 1:
                value = entry.node.value
            else:
                child_node = entry.path[depth + 1][0]
                if prefix in made:
                    parent = made[prefix]
                    continue
                value = {} if child_node.kind == "object" else []
                made[prefix] = value
            if container.kind == "object":
                parent[key] = value
            else:
                parent.append(value)
            parent = value
    return root


def _pointer(entries: list[_Entry]) -> str:
    """RFC 6901 pointer of the path the entries share; a single entry's path includes its own key."""
    paths = [tuple(key for _, key in e.path) for e in entries]
    common = paths[0] if len(paths) == 1 else _common_prefix(paths)
    return "".join("/" + str(key).replace("~", "~0").replace("/", "~1") for key in common)


def _common_prefix(paths: list[tuple[Key, ...]]) -> tuple[Key, ...]:
    first, last = paths[0], paths[-1]  # paths are in document order: what the extremes share, all share
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return first[:n]
