"""Fixed-size token windows that cut only on character boundaries (docs/splitters.md#tokentextsplitter).

Algorithm, over the token ids of the whole text, encoded once:
1. Token boundary ``k`` (0 … n) is valid when token ``k`` starts on a UTF-8 character boundary (a character split
   across tokens makes the boundaries inside it invalid).
2. From start ``s``, the window end ``e`` is the largest valid boundary with ``s < e ≤ s + chunk_size``; if there is
   none (one character needs more tokens than ``chunk_size``), the smallest valid boundary after ``s``.
3. Emit the text of tokens ``[s, e)`` unless it is whitespace-only; stop when ``e = n``.
4. The next start is the largest valid boundary ``b`` with ``s < b ≤ e − chunk_overlap``, else ``e``.

For ASCII text this is LangChain's window (stride ``chunk_size − chunk_overlap``).
"""

from __future__ import annotations

import bisect
from typing import Any, Collection, Literal

import tiktoken

from chunking.splitters.base import TextSplitter
from chunking.splitters.encodings import resolve_encoding

__all__ = ["TokenTextSplitter", "resolve_encoding"]


def _window_offsets(encoding: tiktoken.Encoding, tokens: list[int]) -> tuple[list[int], list[int]]:
    """(valid boundaries in increasing order, character offset of each boundary index)."""
    valid: list[int] = []
    char_offsets = [0] * (len(tokens) + 1)
    chars = 0
    for index, token in enumerate(tokens):
        data = encoding.decode_single_token_bytes(token)
        if not data or (data[0] & 0xC0) != 0x80:
            valid.append(index)
        char_offsets[index] = chars
        chars += sum(1 for byte in data if (byte & 0xC0) != 0x80)
    valid.append(len(tokens))
    char_offsets[len(tokens)] = chars
    return valid, char_offsets


class TokenTextSplitter(TextSplitter):
    """Split text into windows of at most ``chunk_size`` tokens, overlapping by up to ``chunk_overlap`` tokens,
    cutting only between characters.

    Algorithm: module docstring (docs/splitters.md#tokentextsplitter), after LangChain's ``TokenTextSplitter`` window.
    Chunks are not stripped and are verbatim substrings of the input; whitespace-only windows are skipped.

    Args:
        encoding_name: tiktoken encoding shipped with ``chunking.tokens`` (default ``"cl100k_base"``).
        model_name: an OpenAI model name; selects its encoding instead of *encoding_name*.
        allowed_special: special-token texts encoded as special tokens; by default none.
        disallowed_special: special-token texts that raise; by default none, so text such as ``<|endoftext|>`` is
            counted as ordinary text.
        chunk_size: window size in tokens (default 4000).
        chunk_overlap: tokens shared by consecutive windows (default 200), at most; must be ``< chunk_size``.
        add_start_index: add ``metadata["start_index"]`` (character offset) in :meth:`create_documents`.

    Raises:
        ValueError: ``chunk_overlap >= chunk_size``, invalid sizes, or an encoding not shipped.

    Example (cl100k_base, ``chunk_size=2, chunk_overlap=0``): ``"東京は雨です"`` → ``"東"``, ``"京は"``, ``"雨"``,
    ``"です"`` (``東`` and ``雨`` take two tokens each, which are never separated).

    Differs from LangChain on purpose:
        - Windows end only on character boundaries, so no chunk contains U+FFFD unless the input does; LangChain
          decodes arbitrary token windows and destroys multi-byte characters (CJK, emoji) at the edges.
        - The default encoding is ``cl100k_base`` (LangChain: ``gpt2``), and special-token text is counted as text
          instead of raising.
        - ``start_index`` is the window's exact character offset.
        - Whitespace-only windows are not emitted (LangChain emits them).
    """

    def __init__(
        self,
        encoding_name: str = "cl100k_base",
        model_name: str | None = None,
        allowed_special: Literal["all"] | Collection[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = (),
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if self._chunk_overlap >= self._chunk_size:
            raise ValueError(
                f"chunk_overlap ({self._chunk_overlap}) must be smaller than chunk_size ({self._chunk_size})"
            )
        self._encoding = resolve_encoding(encoding_name, model_name)
        self._allowed_special = allowed_special if allowed_special == "all" else set(allowed_special)
        self._disallowed_special = disallowed_special if disallowed_special == "all" else tuple(disallowed_special)

    @classmethod
    def from_tiktoken_encoder(
        cls,
        encoding_name: str = "cl100k_base",
        model_name: str | None = None,
        allowed_special: Literal["all"] | Collection[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = (),
        **kwargs: Any,
    ) -> "TokenTextSplitter":
        """The same as the constructor (LangChain compatibility): the encoding defines the window unit."""
        return cls(encoding_name=encoding_name, model_name=model_name, allowed_special=allowed_special,
                   disallowed_special=disallowed_special, **kwargs)

    def split_text_with_offsets(self, text: str) -> list[tuple[str, int]]:
        """Split *text* into ``(chunk, start)`` pairs; ``start`` is the chunk's offset in *text* (characters)."""
        if not text or text.isspace():
            return []
        tokens = self._encoding.encode(
            text, allowed_special=self._allowed_special, disallowed_special=self._disallowed_special
        )
        valid, char_offsets = _window_offsets(self._encoding, tokens)
        n = len(tokens)
        out: list[tuple[str, int]] = []
        start = 0
        while True:
            index = bisect.bisect_right(valid, start + self._chunk_size) - 1
            end = valid[index] if valid[index] > start else valid[bisect.bisect_right(valid, start)]
            chunk = text[char_offsets[start] : char_offsets[end]]
            if chunk and not chunk.isspace():
                out.append((chunk, char_offsets[start]))
            if end == n:
                return out
            index = bisect.bisect_right(valid, end - self._chunk_overlap) - 1
            start = valid[index] if valid[index] > start else end
