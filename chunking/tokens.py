"""Token counting with tiktoken's ``cl100k_base``, fully offline.

``cl100k_base`` is the encoding of text-embedding-3-small/-large and ada-002. tiktoken normally downloads the
BPE file on first use (openaipublic.blob.core.windows.net), which fails without egress and slows every cold
start; so the file ships inside this package (``chunking/_bpe/``), its SHA-256 is checked on load, and the
``Encoding`` is built from it directly. Nothing here ever touches the network.
"""

from __future__ import annotations

import base64
import functools
import hashlib
from pathlib import Path
from typing import Callable, Protocol, Sequence

import tiktoken

__all__ = [
    "BPE_FILES",
    "TokenCounter",
    "TokenizerIntegrityError",
    "count_tokens",
    "count_tokens_batch",
    "get_encoding",
    "token_counter",
]

_BPE_DIR = Path(__file__).parent / "_bpe"

#: name -> (file, SHA-256, regex pattern, special tokens). Hash and pattern as pinned by tiktoken 0.14's
#: ``tiktoken_ext/openai_public.py``.
BPE_FILES: dict[str, tuple[Path, str, str, dict[str, int]]] = {
    "cl100k_base": (
        _BPE_DIR / "cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
        {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
}


class TokenizerIntegrityError(RuntimeError):
    """The shipped BPE file is missing or its SHA-256 does not match the pinned hash."""


class TokenCounter(Protocol):
    """Anything that maps a string to its number of tokens (an int ≥ 0)."""

    def __call__(self, text: str, /) -> int: ...


@functools.cache
def get_encoding(name: str = "cl100k_base") -> tiktoken.Encoding:
    """Return the tiktoken ``Encoding`` *name*, built once per process from the shipped BPE file.

    Raises:
        ValueError: *name* is not an encoding shipped with this package (see ``BPE_FILES``).
        TokenizerIntegrityError: the BPE file is missing or fails its SHA-256 check.
    """
    try:
        path, sha256, pattern, special = BPE_FILES[name]
    except KeyError:
        raise ValueError(
            f"encoding {name!r} is not shipped with chunking; available: {', '.join(sorted(BPE_FILES))}"
        ) from None
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise TokenizerIntegrityError(f"BPE file for {name} not found at {path}: {exc}") from exc
    digest = hashlib.sha256(data).hexdigest()
    if digest != sha256:
        raise TokenizerIntegrityError(f"BPE file {path} has SHA-256 {digest}, expected {sha256}")
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return tiktoken.Encoding(name=name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=special)


def count_tokens(text: str, encoding: str = "cl100k_base") -> int:
    """Exact number of tokens of *text* with ordinary-text semantics.

    Text that looks like a special token (``<|endoftext|>``) is counted as plain text; never raises on content.
    """
    return len(get_encoding(encoding).encode_ordinary(text))


def token_counter(encoding: str = "cl100k_base") -> Callable[[str], int]:
    """A fast ``TokenCounter`` bound to *encoding* (the encoder is resolved once)."""
    encode = get_encoding(encoding).encode_ordinary
    return lambda text: len(encode(text))


def count_tokens_batch(texts: Sequence[str], encoding: str = "cl100k_base") -> list[int]:
    """Token counts of many texts in one call (tiktoken encodes the batch in parallel threads)."""
    if not texts:
        return []
    return [len(ids) for ids in get_encoding(encoding).encode_ordinary_batch(list(texts))]
