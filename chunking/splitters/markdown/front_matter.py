"""Render chunk metadata as YAML front matter (``---\\n`` YAML ``---\\n\\n``).

The YAML is PyYAML's ``safe_dump(metadata, allow_unicode=True, sort_keys=False)`` when PyYAML is installed. When
it is not, :func:`dump_yaml` produces the same text for the values metadata holds (strings, numbers, booleans,
``None``, and lists and dicts of them): PyYAML's block style, its choice between plain, single-quoted and
double-quoted scalars, and its folding of long scalars at 80 columns.

Sources: YAML 1.1 (yaml.org/spec/1.1) scalar styles and the implicit types of yaml.org/type (bool, int, float,
null, timestamp, merge, value); PyYAML's emitter behaviour for style choice and line folding.
"""

from __future__ import annotations

import math
import re
from typing import Any

__all__ = ["dump_yaml", "render_front_matter"]

_WIDTH = 80  # PyYAML's default best_width, in characters
_STEP = 2  # PyYAML's default indentation step

# Plain scalars that a YAML 1.1 loader would read as another type, so they must be quoted.
_IMPLICIT = re.compile(
    r"""(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)
    |[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)
    |[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+
    |~|null|Null|NULL|<<|=
    |[0-9]{4}-[0-9]{2}-[0-9]{2}
    |[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?
     (?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?""",
    re.VERBOSE,
)
_BREAKS = "\n\x85\u2028\u2029"
_WHITESPACE = "\0 \t\r\n\x85\u2028\u2029"
_ESCAPES = {
    "\0": "0", "\x07": "a", "\x08": "b", "\t": "t", "\n": "n", "\x0b": "v", "\x0c": "f", "\r": "r", "\x1b": "e",
    '"': '"', "\\": "\\", "\x85": "N", "\xa0": "_", "\u2028": "L", "\u2029": "P",
}


def _printable_unicode(char: str) -> bool:
    return char != "\ufeff" and (
        char == "\x85" or "\xa0" <= char <= "\ud7ff" or "\ue000" <= char <= "\ufffd" or "\U00010000" <= char < "\U0010ffff"
    )


def _style(text: str, simple_key: bool) -> str:
    """``""`` (plain), ``"'"`` or ``'"'`` for *text*, as PyYAML's emitter chooses in block context."""
    if not text:
        return "'"
    block_indicators = text.startswith(("---", "..."))
    line_breaks = special = leading = trailing = break_space = space_break = False
    previous_space = previous_break = False
    preceded_by_ws = True
    for index, char in enumerate(text):
        followed_by_ws = index + 1 >= len(text) or text[index + 1] in _WHITESPACE
        if index == 0:
            if char in "#,[]{}&*!|>'\"%@`" or (char in "?:-" and followed_by_ws):
                block_indicators = True
        elif (char == ":" and followed_by_ws) or (char == "#" and preceded_by_ws):
            block_indicators = True
        if char in _BREAKS:
            line_breaks = True
        if not (char == "\n" or " " <= char <= "~") and not _printable_unicode(char):
            special = True
        if char == " ":
            leading |= index == 0
            trailing |= index == len(text) - 1
            break_space |= previous_break
            previous_space, previous_break = True, False
        elif char in _BREAKS:
            leading |= index == 0
            trailing |= index == len(text) - 1
            space_break |= previous_space
            previous_space, previous_break = False, True
        else:
            previous_space = previous_break = False
        preceded_by_ws = char in _WHITESPACE
    plain = not (leading or trailing or break_space or space_break or special or line_breaks or block_indicators)
    if plain and not _IMPLICIT.fullmatch(text):
        return ""
    if not (break_space or space_break or special) and not (simple_key and line_breaks):
        return "'"
    return '"'


class _Writer:
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.column = 0

    def write(self, data: str) -> None:
        self.parts.append(data)
        self.column += len(data)

    def indent(self, indent: int, after_break: bool = False) -> None:
        self.parts.append(("" if after_break else "\n") + " " * indent)
        self.column = indent

    def line_break(self, mark: str) -> None:
        self.parts.append(mark)
        self.column = 0


def _write_folded(out: _Writer, text: str, indent: int, split: bool, quoted: bool) -> None:
    """Plain or single-quoted text, PyYAML's way: a single space past column 80 becomes a line break, a line break
    inside single quotes is written doubled (a YAML line fold) and followed by the indentation."""
    spaces = breaks = False
    start = 0
    for index in range(len(text) + 1):
        char = text[index] if index < len(text) else None
        if spaces:
            if char != " ":
                fold = index - start == 1 and out.column > _WIDTH and split
                if fold and (not quoted or (start != 0 and index != len(text))):
                    out.indent(indent)
                else:
                    out.write(text[start:index])
                start = index
        elif breaks:
            if char is None or char not in _BREAKS:
                if text[start] == "\n":
                    out.line_break("\n")
                for mark in text[start:index]:
                    out.line_break(mark)
                out.indent(indent, after_break=True)
                start = index
        elif (char is None or char == " " or char in _BREAKS or (quoted and char == "'")) and start < index:
            out.write(text[start:index])
            start = index
        if quoted and char == "'":
            out.write("''")
            start = index + 1
        spaces = char == " "
        breaks = char is not None and char in _BREAKS


def _write_double(out: _Writer, text: str, indent: int, split: bool) -> None:
    out.write('"')
    start = 0
    for index in range(len(text) + 1):
        char = text[index] if index < len(text) else None
        if char is None or char in '"\\\x85\u2028\u2029\ufeff' or not (
            " " <= char <= "~" or "\xa0" <= char <= "\ud7ff" or "\ue000" <= char <= "\ufffd"
        ):
            if start < index:
                out.write(text[start:index])
                start = index
            if char is not None:
                if char in _ESCAPES:
                    out.write("\\" + _ESCAPES[char])
                elif char <= "\xff":
                    out.write(f"\\x{ord(char):02X}")
                elif char <= "\uffff":
                    out.write(f"\\u{ord(char):04X}")
                else:
                    out.write(f"\\U{ord(char):08X}")
                start = index + 1
        if (
            split and 0 < index < len(text) - 1 and (char == " " or start >= index)
            and out.column + (index - start) > _WIDTH
        ):
            out.write(text[start:index] + "\\")
            start = max(start, index)
            out.indent(indent)
            if text[start] == " ":
                out.write("\\")
    out.write('"')


def _scalar(value: Any) -> tuple[str | None, str]:
    """(style, text): style ``None`` for non-string scalars written as they are."""
    if value is None:
        return None, "null"
    if isinstance(value, bool):
        return None, "true" if value else "false"
    if isinstance(value, int):
        return None, str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return None, ".nan"
        if math.isinf(value):
            return None, ".inf" if value > 0 else "-.inf"
        text = repr(value).lower()
        if "." not in text and "e" in text:
            text = text.replace("e", ".0e", 1)
        return None, text
    if isinstance(value, str):
        return "str", value
    raise TypeError(f"cannot render metadata value of type {type(value).__name__} as YAML")


def _write_scalar(out: _Writer, value: Any, indent: int, simple_key: bool) -> None:
    kind, text = _scalar(value)
    if kind is None:
        out.write(text)
        return
    style = _style(text, simple_key)
    if style == '"':
        _write_double(out, text, indent, split=not simple_key)
    elif style == "'":
        out.write("'")
        _write_folded(out, text, indent, split=not simple_key, quoted=True)
        out.write("'")
    else:
        _write_folded(out, text, indent, split=not simple_key, quoted=False)


def _write_leaf(out: _Writer, value: Any, indent: int) -> None:
    if isinstance(value, dict):
        out.write("{}")
    elif isinstance(value, (list, tuple)):
        out.write("[]")
    else:
        _write_scalar(out, value, indent, simple_key=False)


def _write_collection(out: _Writer, value: dict[Any, Any] | list[Any] | tuple[Any, ...], indent: int) -> None:
    """Write a non-empty mapping or sequence in block style; the cursor is at its first entry's column."""
    if isinstance(value, dict):
        for number, (key, item) in enumerate(value.items()):
            if number:
                out.indent(indent)
            key_text = _scalar(key)[1]
            if key_text and len(key_text) < 128 and not any(char in _BREAKS for char in key_text):
                _write_scalar(out, key, indent + _STEP, simple_key=True)
                out.write(":")
            else:  # PyYAML's explicit ("complex") key for empty, multi-line or long keys
                out.write("? ")
                _write_scalar(out, key, indent + _STEP, simple_key=False)
                out.indent(indent)
                out.write(":")
                if isinstance(item, (dict, list, tuple)) and item:
                    out.write(" ")
                    _write_collection(out, item, indent + _STEP)
                    continue
            if isinstance(item, dict) and item:
                out.indent(indent + _STEP)
                _write_collection(out, item, indent + _STEP)
            elif isinstance(item, (list, tuple)) and item:
                out.indent(indent)  # PyYAML writes a sequence inside a mapping without extra indentation
                _write_collection(out, item, indent)
            else:
                out.write(" ")
                _write_leaf(out, item, indent + _STEP)
        return
    for number, item in enumerate(value):
        if number:
            out.indent(indent)
        out.write("- ")
        if isinstance(item, (dict, list, tuple)) and item:
            _write_collection(out, item, indent + _STEP)
        else:
            _write_leaf(out, item, indent + _STEP)


def dump_yaml(data: Any) -> str:
    """YAML text of *data* as ``yaml.safe_dump(data, allow_unicode=True, sort_keys=False)`` writes it.

    Raises:
        TypeError: a value that is not a string, number, boolean, ``None``, list, tuple or dict.
    """
    out = _Writer()
    if isinstance(data, (dict, list, tuple)) and data:
        _write_collection(out, data, 0)
        return "".join(out.parts) + "\n"
    _write_leaf(out, data, _STEP)
    text = "".join(out.parts)
    return text + ("\n" if isinstance(data, (dict, list, tuple)) else "\n...\n")


def render_front_matter(metadata: dict[str, Any]) -> str:
    """``"---\\n" + YAML + "---\\n"`` for non-empty *metadata*, else ``""``. Uses PyYAML when installed."""
    if not metadata:
        return ""
    try:
        import yaml
    except ImportError:
        body = dump_yaml(metadata)
    else:
        body = yaml.safe_dump(metadata, allow_unicode=True, sort_keys=False)
    return "---\n" + body + "---\n"
