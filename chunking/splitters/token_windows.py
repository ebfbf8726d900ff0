"""Token windows over any tokenizer: LangChain's ``Tokenizer`` record and ``split_text_on_tokens``.

Algorithm (fixed stride): encode the whole text once; window ``k`` holds tokens
``[k·stride, k·stride + tokens_per_chunk)`` with ``stride = tokens_per_chunk − chunk_overlap``; each window is
decoded and kept unless the decoded text is empty; the last window is the one reaching the last token.
Unlike :class:`~chunking.splitters.token.TokenTextSplitter` this cannot know where characters begin (the
tokenizer is opaque), so a window edge may cut a multi-byte character: use ``TokenTextSplitter`` for tiktoken
encodings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

__all__ = ["Tokenizer", "split_text_on_tokens"]


@dataclass(frozen=True)
class Tokenizer:
    """How to window a text by tokens (LangChain's field names).

    Attributes:
        chunk_overlap: tokens shared by consecutive windows.
        tokens_per_chunk: window size in tokens; must be greater than *chunk_overlap*.
        decode: token ids → text.
        encode: text → token ids.
    """

    chunk_overlap: int
    tokens_per_chunk: int
    decode: Callable[[list[int]], str]
    encode: Callable[[str], list[int]]


def split_text_on_tokens(*, text: str, tokenizer: Tokenizer) -> list[str]:
    """Decode fixed-stride token windows of *text* (module docstring); empty decodes are left out.

    Example: with one token per character, ``tokens_per_chunk=7`` and ``chunk_overlap=3``,
    ``"foo bar baz 123"`` → ``["foo bar", "bar baz", "baz 123"]``.

    Raises:
        ValueError: ``tokens_per_chunk <= chunk_overlap``.
    """
    if tokenizer.tokens_per_chunk <= tokenizer.chunk_overlap:
        raise ValueError("tokens_per_chunk must be greater than chunk_overlap")
    ids = tokenizer.encode(text)
    stride = tokenizer.tokens_per_chunk - tokenizer.chunk_overlap
    chunks: list[str] = []
    for start in range(0, len(ids), stride):
        window = ids[start : start + tokenizer.tokens_per_chunk]
        decoded = tokenizer.decode(window)
        if decoded:
            chunks.append(decoded)
        if start + tokenizer.tokens_per_chunk >= len(ids):
            break
    return chunks
