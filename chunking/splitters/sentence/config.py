"""Settings of the sentence splitter and the character classes it uses, as data.

Defaults, units and classes: docs/splitters.md#sentence-splitter-settings and
docs/splitters.md#character-classes. The character classes cite
their sources: the CJK sentence endings are JIS X 4051 classes cl-05/cl-06 (as quoted by the W3C note
"Requirements for Japanese Text Layout", jlreq), the CJK word breaks and brackets jlreq cl-01/cl-02.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from dataclasses import dataclass, field, fields
from typing import Iterable

__all__ = [
    "ABBREVIATIONS",
    "ABBREVIATIONS_BEFORE_NUMBER",
    "CLOSING_CHARS",
    "OPENING_CHARS",
    "SENTENCE_ENDINGS",
    "SPACELESS_RANGES",
    "SentenceSplitterConfig",
    "WORD_BREAKS",
]

#: Sentence endings: ASCII ``. ! ?`` plus the CJK full stops and exclamation/question marks of
#: JIS X 4051 cl-05 (U+3002) and cl-06 (U+FF01, U+FF1F, U+203C, U+2047, U+2048, U+2049).
SENTENCE_ENDINGS: frozenset[str] = frozenset(".!?" "\u3002\uff01\uff1f\u203c\u2047\u2048\u2049")

#: Word breaks: the 12 standard ones (punctuation, brackets, space, tab, newline) and 40 CJK and typographic
#: ones (W3C jlreq cl-01/cl-02 brackets, comma, colon, semicolon; dashes and quotation marks).
WORD_BREAKS: frozenset[str] = frozenset(
    ",;: ()[]{}\t\n"
    "\u3001\uff0c\uff1b\uff1a\uff08\uff09\u3010\u3011\u300c\u300d\u300e\u300f\u3014\u3015\u3008\u3009"
    "\u300a\u300b\u3016\u3017\u3018\u3019\u301a\u301b\u301d\u301e\u301f\u3030\u2013\u2014\u2018\u2019"
    "\u201a\u201b\u201c\u201d\u201e\u201f\u2039\u203a"
)

#: Closing characters absorbed after a sentence terminator (quotes and closing brackets, jlreq cl-02).
CLOSING_CHARS: frozenset[str] = frozenset(
    "\"')]}\u00bb\u203a\u201d\u2019\u300d\u300f\uff09\u3011\u3015\u3009\u300b\u3017\u3019\u301b\u301e\u301f"
)

#: Opening characters stripped from the front of the word before a full stop (jlreq cl-01).
OPENING_CHARS: frozenset[str] = frozenset(
    "\"'([{\u00ab\u2039\u201c\u2018\u300c\u300e\uff08\u3010\u3014\u3008\u300a\u3016\u3018\u301a\u301d"
)

#: Words (lower case, without the final ``.``) after which a single ``.`` never ends a sentence.
ABBREVIATIONS: frozenset[str] = frozenset(
    "mr mrs ms dr prof sr jr st mt rev gen col capt lt sgt hon vs cf viz approx e.g i.e al".split()
)

#: Words after which a single ``.`` does not end a sentence when the next non-whitespace character is a digit.
ABBREVIATIONS_BEFORE_NUMBER: frozenset[str] = frozenset(
    "fig figs eq eqs no nos vol vols p pp sec ch art ref refs tab jan feb mar apr jun jul aug sep sept oct nov dec"
    .split()
)

#: Scripts written without spaces between words: no space is ever inserted between two of these
#: (Thai, Lao, Myanmar, Khmer, CJK radicals to ideographs, kana, bopomofo, halfwidth katakana, CJK extensions).
SPACELESS_RANGES: tuple[tuple[int, int], ...] = (
    (0x0E00, 0x0EFF),
    (0x1000, 0x109F),
    (0x1780, 0x17FF),
    (0x2E80, 0x2FFF),
    (0x3040, 0x30FF),
    (0x3100, 0x312F),
    (0x31F0, 0x31FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xF900, 0xFAFF),
    (0xFF66, 0xFF9F),
    (0x20000, 0x2FA1F),
)

_CHAR_SETS = ("sentence_endings", "word_breaks", "closing_chars")
_WORD_SETS = ("abbreviations", "abbreviations_before_number")


def _int_setting(name: str, value: object, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an int, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")


def _number_setting(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise ValueError(f"{name} must be a number, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class SentenceSplitterConfig:
    """Validated, immutable settings of :class:`SentenceTextSplitter` (docs/splitters.md#sentence-splitter-settings).

    Attributes:
        max_tokens: hard cap, in tokens, of every ``text`` chunk (≥ 1).
        max_chars: soft length, in characters, that accumulation aims for (≥ 1).
        overflow_ratio: ``hard_chars = int(overflow_ratio × max_chars)`` characters is the hard length cap of
            ``text`` chunks and the budget of merge, carry-forward and look-ahead (≥ 1.0).
        split_overlap_percent: overlap at a hard (midpoint) cut, in percent of the span's characters
            (0 ≤ x < 50).
        semantic_overlap_percent: look-ahead target ``T = int(max_chars × x / 100)`` characters (0 ≤ x ≤ 50;
            0 disables the look-ahead).
        semantic_overlap_window: the look-ahead may grow to this many times ``T`` characters (≥ 1).
        word_break_min_advance: a word break ends the look-ahead only at an index > ``T`` + this many
            characters (≥ 0).
        embedding_max_tokens: absolute cap, in tokens, of every chunk (≥ ``max_tokens``).
        max_figure_tokens: a ``<figure>`` block that holds no table is kept whole (and flagged when over
            ``max_tokens``) up to this many tokens, and split above it (1 ≤ x ≤ ``embedding_max_tokens``).
        max_table_tokens: a ``<figure>`` block holding one table is split by rows above this many tokens;
            None (the default) means ``max_tokens``, so every table part fits the cap (1 ≤ x ≤
            ``embedding_max_tokens``). ``max_table_tokens=8191`` keeps tables whole as they were before.
        encoding: tiktoken encoding name, loaded from the BPE file shipped in ``chunking/tokens/_bpe``.
        sentence_endings, word_breaks, closing_chars: single characters (docs/splitters.md#character-classes).
        abbreviations, abbreviations_before_number: lower-case words without their final ``.``
            (docs/splitters.md#sentence-end).

    Raises:
        ValueError: a setting is of the wrong type or out of its range.
    """

    max_tokens: int = 500
    max_chars: int = 1000
    overflow_ratio: float = 1.2
    split_overlap_percent: float = 10
    semantic_overlap_percent: float = 10
    semantic_overlap_window: float = 2
    word_break_min_advance: int = 20
    embedding_max_tokens: int = 8191
    max_figure_tokens: int = 8191
    max_table_tokens: int | None = None
    encoding: str = "cl100k_base"
    sentence_endings: frozenset[str] = field(default=SENTENCE_ENDINGS)
    word_breaks: frozenset[str] = field(default=WORD_BREAKS)
    closing_chars: frozenset[str] = field(default=CLOSING_CHARS)
    abbreviations: frozenset[str] = field(default=ABBREVIATIONS)
    abbreviations_before_number: frozenset[str] = field(default=ABBREVIATIONS_BEFORE_NUMBER)

    def __post_init__(self) -> None:
        _int_setting("max_tokens", self.max_tokens, 1)
        _int_setting("max_chars", self.max_chars, 1)
        _int_setting("word_break_min_advance", self.word_break_min_advance, 0)
        _int_setting("embedding_max_tokens", self.embedding_max_tokens, self.max_tokens)
        _int_setting("max_figure_tokens", self.max_figure_tokens, 1)
        if self.max_figure_tokens > self.embedding_max_tokens:
            raise ValueError(
                f"max_figure_tokens ({self.max_figure_tokens}) must be <= embedding_max_tokens "
                f"({self.embedding_max_tokens})"
            )
        if self.max_table_tokens is not None:
            _int_setting("max_table_tokens", self.max_table_tokens, 1)
            if self.max_table_tokens > self.embedding_max_tokens:
                raise ValueError(
                    f"max_table_tokens ({self.max_table_tokens}) must be <= embedding_max_tokens "
                    f"({self.embedding_max_tokens})"
                )
        if _number_setting("overflow_ratio", self.overflow_ratio) < 1.0:
            raise ValueError(f"overflow_ratio must be >= 1.0, got {self.overflow_ratio}")
        if not 0 <= _number_setting("split_overlap_percent", self.split_overlap_percent) < 50:
            raise ValueError(f"split_overlap_percent must be in [0, 50), got {self.split_overlap_percent}")
        if not 0 <= _number_setting("semantic_overlap_percent", self.semantic_overlap_percent) <= 50:
            raise ValueError(f"semantic_overlap_percent must be in [0, 50], got {self.semantic_overlap_percent}")
        if _number_setting("semantic_overlap_window", self.semantic_overlap_window) < 1:
            raise ValueError(f"semantic_overlap_window must be >= 1, got {self.semantic_overlap_window}")
        if not isinstance(self.encoding, str) or not self.encoding:
            raise ValueError(f"encoding must be a non-empty encoding name, got {self.encoding!r}")
        for name in _CHAR_SETS + _WORD_SETS:
            value = getattr(self, name)
            if isinstance(value, str) or not isinstance(value, Iterable):
                raise ValueError(f"{name} must be an iterable of strings, got {value!r}")
            items = frozenset(value)
            for item in items:
                if not isinstance(item, str) or not item:
                    raise ValueError(f"{name} must hold non-empty strings, got {item!r}")
                if name in _CHAR_SETS and len(item) != 1:
                    raise ValueError(f"{name} must hold single characters, got {item!r}")
                if name in _WORD_SETS and (item != item.lower() or any(ch.isspace() for ch in item)):
                    raise ValueError(f"{name} must hold lower-case words without whitespace, got {item!r}")
            if name == "sentence_endings" and not items:
                raise ValueError("sentence_endings must not be empty")
            # Frozen: sets given as lists or sets are normalised once so equality and hashing work.
            object.__setattr__(self, name, items)
        if any(ch.isspace() or unicodedata.category(ch).startswith(("L", "N")) for ch in self.sentence_endings):
            raise ValueError("sentence_endings must be punctuation (no letters, digits or whitespace)")

    @property
    def table_tokens(self) -> int:
        """Token budget of a table figure: ``max_table_tokens``, or ``max_tokens`` when that is None."""
        return self.max_tokens if self.max_table_tokens is None else self.max_table_tokens

    @property
    def hard_chars(self) -> int:
        """Hard character cap of ``text`` chunks: ``int(overflow_ratio × max_chars)`` (1200 by default)."""
        return int(self.overflow_ratio * self.max_chars)

    @property
    def overlap_target_chars(self) -> int:
        """Look-ahead target ``T`` in characters: ``int(max_chars × semantic_overlap_percent / 100)``."""
        return int(self.max_chars * self.semantic_overlap_percent / 100)

    @property
    def overlap_window_chars(self) -> int:
        """Largest look-ahead scan, in characters: ``int(semantic_overlap_window × T)``."""
        return int(self.semantic_overlap_window * self.overlap_target_chars)

    def to_dict(self) -> dict[str, object]:
        """All settings as JSON-serialisable values (sets become sorted lists)."""
        data: dict[str, object] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            data[f.name] = sorted(value) if isinstance(value, frozenset) else value
        return data

    def fingerprint(self) -> str:
        """Stable SHA-256 hex digest of the sorted JSON of all settings (same settings, same digest)."""
        blob = json.dumps(self.to_dict(), sort_keys=True, ensure_ascii=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode("ascii")).hexdigest()
