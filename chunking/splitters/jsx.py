"""Split React (JSX), Vue and Svelte component code (LangChain's ``JSFrameworkTextSplitter``).

Per call (the instance is never changed): the separators are the user's, then JavaScript statement starts
(``export``, ``function``, ``const``, ``if``, …, each after a newline or a space), then ``<tag`` for every distinct
opening tag in the text in order of first appearance, then ``<>``, blank lines and line-ending ``&&``/``||``; the
text is split by :class:`RecursiveCharacterTextSplitter` with them (literal separators, each starting its piece).
"""

from __future__ import annotations

import re
from typing import Any

from chunking.splitters.character import RecursiveCharacterTextSplitter

__all__ = ["JSFrameworkTextSplitter"]

_OPENING_TAG = re.compile(r"<\s*([a-zA-Z0-9]+)[^>]*>")
_STATEMENTS = ("export", "function", "async function", "const", "let", "var", "class", "if", "for", "while",
               "switch", "case", "default")
_AFTER_NEWLINE_ONLY = frozenset({"function", "const", "let", "var"})


def _js_separators() -> list[str]:
    separators: list[str] = []
    for word in _STATEMENTS:
        separators.append(f"\n{word} ")
        if word not in _AFTER_NEWLINE_ONLY:
            separators.append(f" {word} ")
    return separators


class JSFrameworkTextSplitter(RecursiveCharacterTextSplitter):
    """Split component code at JavaScript statements and at the component and HTML tags it uses.

    Args:
        separators: extra separators tried first (literal strings); default none.
        chunk_size: default 2000 (characters, or the units of ``length_function``).
        chunk_overlap: default 0.
        **kwargs: see :class:`RecursiveCharacterTextSplitter`.

    Differs from LangChain on purpose: like every splitter here, a piece still over ``chunk_size`` is cut (at
    whitespace when possible) instead of emitted whole, and separators inside a chunk are the original text.
    """

    def __init__(self, separators: list[str] | None = None, chunk_size: int = 2000, chunk_overlap: int = 0,
                 **kwargs: Any) -> None:
        kwargs.pop("is_separator_regex", None)
        super().__init__(separators=list(separators or []) + [""], chunk_size=chunk_size,
                         chunk_overlap=chunk_overlap, **kwargs)
        self._separators = list(separators or [])
        self._options = dict(kwargs, chunk_size=chunk_size, chunk_overlap=chunk_overlap)

    def split_text_with_offsets(self, text: str) -> list[tuple[str, int]]:
        """Split *text* into ``(chunk, start)`` pairs; ``start`` is the chunk's offset in *text* (characters)."""
        tags = list(dict.fromkeys(_OPENING_TAG.findall(text)))
        separators = self._separators + _js_separators() + [f"<{tag}" for tag in tags] + ["<>", "\n\n", "&&\n", "||\n"]
        return RecursiveCharacterTextSplitter(separators=separators, **self._options).split_text_with_offsets(text)
