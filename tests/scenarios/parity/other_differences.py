"""Documented differences of the JSON, token and code splitters from LangChain 1.1.3, each a named predicate.

Same contract as ``differences.py``: a predicate says whether the case can show the difference; the reasons
repeat the class docstrings and the table of docs/splitters.md#coming-from-langchain in short.
"""

from __future__ import annotations

import json
from typing import Any

from tests.scenarios.parity.differences import RECURSIVE as RECURSIVE_DIFFERENCES
from tests.scenarios.parity.differences import Difference, explained


def _size(chunk: Any) -> int:
    return len(json.dumps(chunk))


def _nested(value: Any, depth: int = 0) -> bool:
    """Whether *value* holds a dict inside a dict (lists count as dicts when converted)."""
    if isinstance(value, dict):
        return depth >= 1 or any(_nested(v, depth + 1) for v in value.values())
    return False


def _whole_chunk_measured(case: dict[str, Any]) -> bool:
    """LangChain adds an item when the item alone fits what the chunk has left, ignoring the keys that lead to it
    (so its chunks can exceed the maximum); ours measures the whole chunk after the insertion. The two agree on
    flat data, so the difference can show only when an item sits below the top level or a chunk of theirs is over
    the maximum."""
    data = case["data"]
    if case.get("convert_lists"):
        from chunking.splitters.json.recursive import _convert_lists

        data = _convert_lists(data)
    return _nested(data) or any(_size(chunk) > case["max_chunk_size"] for chunk in case["theirs"])


def _exact_fit(case: dict[str, Any]) -> bool:
    return any(_size(chunk) == case["max_chunk_size"] for chunk in case["ours"])


def _default_minimum(case: dict[str, Any]) -> bool:
    return case.get("min_chunk_size") is None and case["max_chunk_size"] < 50  # LangChain's default is at least 50


JSON_WHOLE = Difference(
    "json_whole_chunk_measured", "the whole chunk, ancestor keys included, is measured after each insertion; "
    "LangChain measures only the new item against what is left", _whole_chunk_measured)
JSON_EXACT = Difference(
    "json_exact_fit_kept", "an item that makes the chunk exactly max_chunk_size joins it (<=); LangChain needs <",
    _exact_fit)
JSON_MINIMUM = Difference(
    "json_default_minimum_within_maximum", "the default min_chunk_size, max(max_chunk_size - 200, 50), is capped at "
    "max_chunk_size; LangChain's exceeds a maximum under 50", _default_minimum)
JSON_EMPTY = Difference(
    "json_no_empty_chunks", "no empty chunk is emitted; LangChain emits {} when its first item does not fit",
    lambda case: {} in case["theirs"] and case["ours"] == [c for c in case["theirs"] if c])
JSON = [JSON_WHOLE, JSON_EXACT, JSON_MINIMUM, JSON_EMPTY]


def _split_characters(case: dict[str, Any]) -> bool:
    """Some character of the text is spread over several tokens, so a LangChain window can cut it."""
    encoding = case["encoding"]
    for token in encoding.encode_ordinary(case["text"]):
        try:
            encoding.decode_single_token_bytes(token).decode("utf-8")
        except UnicodeDecodeError:
            return True
    return False


def _whitespace_windows(case: dict[str, Any]) -> bool:
    return isinstance(case["theirs"], list) and case["ours"] == [c for c in case["theirs"] if c.strip()]


def _special_tokens(case: dict[str, Any]) -> bool:
    return isinstance(case["theirs"], str) and any(s in case["text"] for s in case["encoding"].special_tokens_set)


TOKEN_BOUNDARIES = Difference(
    "token_windows_end_on_character_boundaries", "windows cut only between characters (no U+FFFD halves of CJK or "
    "emoji); LangChain cuts at any token", _split_characters)
TOKEN_BLANK = Difference(
    "whitespace_windows_skipped", "whitespace-only windows are not emitted; LangChain emits them",
    _whitespace_windows)
TOKEN_SPECIAL = Difference(
    "special_token_lookalikes_are_text", "text such as '<|endoftext|>' is counted as text; LangChain raises "
    "ValueError (disallowed_special='all')", _special_tokens)
TOKEN = [TOKEN_BOUNDARIES, TOKEN_BLANK, TOKEN_SPECIAL]


def _code_preset(case: dict[str, Any]) -> bool:
    """Our preset splits this text otherwise than LangChain's literal separators would in our engine, and our
    engine on LangChain's separators gives LangChain's output or a documented difference of the recursive splitter.
    So the whole difference comes from the separators, never from an undocumented engine difference."""
    engine = case["ours_with_their_separators"]
    if engine != case["theirs"]:
        engine_case = dict(case, ours=engine, separators=case["their_separators"], keep_separator=True)
        if not explained(engine_case, RECURSIVE_DIFFERENCES):
            return False
    return case["ours"] != engine


def _engine_only(case: dict[str, Any]) -> bool:
    """Our preset splits like LangChain's separators in our engine; the engine difference is a documented one."""
    if case["ours"] != case["ours_with_their_separators"]:
        return False
    engine_case = dict(case, separators=case["their_separators"], keep_separator=True)
    return bool(explained(engine_case, RECURSIVE_DIFFERENCES))


CODE_PRESET = Difference(
    "code_presets_are_our_regexes", "code presets are our own regular expressions (whole keywords at any "
    "indentation); chunk edges differ where LangChain's literal separators match otherwise", _code_preset)
CODE_ENGINE = Difference(
    "recursive_splitter_differences", "the separators agree; the recursive splitter's documented differences "
    "apply (oversize pieces cut, punctuation, verbatim separator runs, exact-size pieces)", _engine_only)
CODE = [CODE_PRESET, CODE_ENGINE]
