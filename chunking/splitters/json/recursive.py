"""Split JSON objects into smaller valid objects that repeat the path to each value they hold.

Walk (docs/splitters.md#recursivejsonsplitter, after LangChain's ``RecursiveJsonSplitter`` interface), depth-first over
dict items in source order, the size of a chunk being ``len(json.dumps(chunk))`` of the whole chunk, ancestor keys
included:
1. Put the item (with its path) into the current chunk if the result's size ≤ ``max_chunk_size``.
2. If not, and the current chunk is non-empty with size ≥ ``min_chunk_size``: start a new chunk and retry there.
3. If it still does not fit and its value is a non-empty dict, descend into it (its items fill the current chunk
   one by one).
4. A leaf (or empty dict) that does not fit always starts a new chunk; if it alone (with its path) is over the
   maximum, it is a chunk of its own and is reported (warning, or ``ValueError`` with ``on_oversize="raise"``).
"""

from __future__ import annotations

import copy
import json
import logging
from typing import Any, Literal

from chunking.model import Document

__all__ = ["RecursiveJsonSplitter"]

logger = logging.getLogger(__name__)


def _pointer(path: list[str]) -> str:
    """RFC 6901 JSON Pointer of *path* (``""`` for the root)."""
    return "".join("/" + key.replace("~", "~0").replace("/", "~1") for key in path)


def _convert_lists(data: Any) -> Any:
    """Every list, at any depth, as a dict keyed ``"0"``, ``"1"``, …"""
    if isinstance(data, dict):
        return {key: _convert_lists(value) for key, value in data.items()}
    if isinstance(data, list):
        return {str(index): _convert_lists(value) for index, value in enumerate(data)}
    return data


class _Chunk:
    """A chunk being filled: nested dicts, plus insert/undo of one value at a path."""

    def __init__(self) -> None:
        self.data: dict[str, Any] = {}
        self.oversize = False

    def size(self) -> int:
        return len(json.dumps(self.data))

    def insert(self, path: list[str], value: Any) -> list[tuple[dict[str, Any], str]]:
        """Put *value* at *path*; returns what to delete to undo it (innermost first)."""
        created: list[tuple[dict[str, Any], str]] = []
        node = self.data
        for key in path[:-1]:
            if key not in node:
                node[key] = {}
                created.append((node, key))
            node = node[key]
        node[path[-1]] = value
        created.append((node, path[-1]))
        return created[::-1]

    @staticmethod
    def undo(created: list[tuple[dict[str, Any], str]]) -> None:
        for node, key in created:
            del node[key]


class RecursiveJsonSplitter:
    """Split a JSON object into valid JSON objects of at most ``max_chunk_size`` characters of ``json.dumps``.

    Every chunk is a nested dict repeating the path from the root to each value it holds
    (``{"address": {"city": "London"}}``), keys in source order, chunks in document order. Algorithm: module
    docstring (docs/splitters.md#recursivejsonsplitter).

    Args:
        max_chunk_size: maximum size of a chunk: ``len(json.dumps(chunk))`` (ASCII-escaped), ancestor keys
            included (default 2000).
        min_chunk_size: a chunk at least this size is closed rather than descended into when the next item does
            not fit; default ``min(max(max_chunk_size - 200, 50), max_chunk_size)``.

    Raises:
        ValueError: ``max_chunk_size <= 0``, or ``min_chunk_size`` outside ``0 … max_chunk_size``.

    Example (``max_chunk_size=40``): ``{"a": {"b": {"c": "deep value here", "d": "another value"}}}`` →
    ``{"a": {"b": {"c": "deep value here"}}}`` (38) and ``{"a": {"b": {"d": "another value"}}}`` (36).

    Differs from LangChain on purpose:
        - The size is that of the whole chunk, ancestor path included, so no chunk exceeds the maximum unless a
          single leaf with its path is bigger (then it is flagged); LangChain checks only the new item's own size,
          and nested chunks exceed the maximum.
        - The default ``min_chunk_size`` never exceeds ``max_chunk_size`` (LangChain's can).
        - An item that makes the chunk exactly ``max_chunk_size`` joins it (``≤``; LangChain needs ``<``), and no
          empty chunk is emitted (LangChain emits ``{}`` when its first item does not fit).
        - A top-level list without ``convert_lists`` or a scalar raises ``TypeError`` instead of giving garbage.
    """

    def __init__(self, max_chunk_size: int = 2000, min_chunk_size: int | None = None) -> None:
        if max_chunk_size <= 0:
            raise ValueError(f"max_chunk_size must be > 0, got {max_chunk_size}")
        if min_chunk_size is None:
            min_chunk_size = min(max(max_chunk_size - 200, 50), max_chunk_size)
        if not 0 <= min_chunk_size <= max_chunk_size:
            raise ValueError(f"min_chunk_size must be in 0…{max_chunk_size}, got {min_chunk_size}")
        self.max_chunk_size = max_chunk_size
        self.min_chunk_size = min_chunk_size

    def split_json(
        self,
        json_data: Any,
        convert_lists: bool = False,
        on_oversize: Literal["warn", "raise"] = "warn",
    ) -> list[dict[str, Any]]:
        """Split *json_data* (a dict) into chunk dicts, in document order.

        Args:
            json_data: the parsed JSON object.
            convert_lists: first turn every list into a dict keyed ``"0"``, ``"1"``, …, so lists are split too
                (otherwise a list is a leaf).
            on_oversize: ``"warn"`` logs a warning naming the JSON Pointer of a leaf that alone is over the
                maximum (it becomes a chunk of its own); ``"raise"`` raises ``ValueError`` instead.

        Returns:
            Chunk dicts (independent copies); ``[]`` for ``None`` or ``{}``.

        Raises:
            TypeError: *json_data* is a list without *convert_lists*, or a scalar.
            ValueError: an oversized leaf with ``on_oversize="raise"``.
        """
        return [chunk.data for chunk in self._split(json_data, convert_lists, on_oversize)]

    def split_text(self, json_data: Any, convert_lists: bool = False, ensure_ascii: bool = True) -> list[str]:
        """The chunks of :meth:`split_json` as JSON strings (``json.dumps`` with *ensure_ascii*)."""
        return [json.dumps(chunk, ensure_ascii=ensure_ascii) for chunk in self.split_json(json_data, convert_lists)]

    def create_documents(
        self,
        texts: list[Any],
        convert_lists: bool = False,
        ensure_ascii: bool = True,
        metadatas: list[dict[str, Any]] | None = None,
    ) -> list[Document]:
        """One Document per chunk of each JSON object in *texts* (parsed dicts, as LangChain names them).

        Metadata: a deep copy of the object's metadata, ``json_path`` (JSON Pointer of the longest path common to
        the chunk's values, ``""`` for the root) and ``json_oversize: True`` for a chunk over the maximum.

        Raises:
            ValueError: *metadatas* has a different length than *texts*.
            TypeError: as :meth:`split_json`.
        """
        if metadatas is not None and len(metadatas) != len(texts):
            raise ValueError(f"got {len(metadatas)} metadatas for {len(texts)} texts")
        documents: list[Document] = []
        for index, data in enumerate(texts):
            for chunk in self._split(data, convert_lists, "warn"):
                metadata = copy.deepcopy(metadatas[index]) if metadatas is not None else {}
                metadata["json_path"] = _pointer(_common_path(chunk.data))
                if chunk.oversize:
                    metadata["json_oversize"] = True
                documents.append(Document(json.dumps(chunk.data, ensure_ascii=ensure_ascii), metadata))
        return documents

    def _split(self, json_data: Any, convert_lists: bool, on_oversize: str) -> list[_Chunk]:
        if json_data is None:
            return []
        if convert_lists:
            json_data = _convert_lists(json_data)
        if isinstance(json_data, list):
            raise TypeError("json_data is a list: pass convert_lists=True to split it by index")
        if not isinstance(json_data, dict):
            raise TypeError(f"json_data must be a dict, got {type(json_data).__name__}")
        chunks = [_Chunk()]
        self._walk(json_data, [], chunks, on_oversize)
        return [chunk for chunk in chunks if chunk.data]

    def _walk(self, data: dict[str, Any], path: list[str], chunks: list[_Chunk], on_oversize: str) -> None:
        for key, value in data.items():
            item_path = [*path, str(key)]
            if self._try_insert(chunks[-1], item_path, value):  # step 1
                continue
            current = chunks[-1]
            if current.data and current.size() >= self.min_chunk_size:  # step 2
                chunks.append(_Chunk())
                if self._try_insert(chunks[-1], item_path, value):
                    continue
            if isinstance(value, dict) and value:  # step 3
                self._walk(value, item_path, chunks, on_oversize)
                continue
            if chunks[-1].data:  # step 4
                chunks.append(_Chunk())
            chunks[-1].insert(item_path, copy.deepcopy(value))
            if chunks[-1].size() > self.max_chunk_size:
                message = (
                    f"JSON value at {_pointer(item_path)!r} is {chunks[-1].size()} characters with its path, "
                    f"over max_chunk_size={self.max_chunk_size}"
                )
                if on_oversize == "raise":
                    raise ValueError(message)
                logger.warning("%s: kept as a chunk of its own", message)
                chunks[-1].oversize = True

    def _try_insert(self, chunk: _Chunk, path: list[str], value: Any) -> bool:
        created = chunk.insert(path, value)
        if chunk.size() <= self.max_chunk_size:
            if created:
                node, key = created[0]
                node[key] = copy.deepcopy(value)  # the chunk must not share objects with the input
            return True
        chunk.undo(created)
        return False


def _common_path(data: dict[str, Any]) -> list[str]:
    """The longest path shared by every value in the chunk *data*."""
    path: list[str] = []
    node: Any = data
    while isinstance(node, dict) and len(node) == 1:
        key = next(iter(node))
        path.append(key)
        node = node[key]
    return path
