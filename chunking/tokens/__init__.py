"""Token counting with tiktoken's ``cl100k_base``, fully offline.

``cl100k_base`` is the encoding of text-embedding-3-small/-large and ada-002. tiktoken normally downloads the
BPE file on first use (openaipublic.blob.core.windows.net), which fails without egress and slows every cold
start; so the file ships inside this package (``chunking/tokens/_bpe/``), its SHA-256 is checked on load, and the
``Encoding`` is built from it directly. Nothing here ever touches the network.

Counting goes through a :class:`~chunking.tokens.backends.TokenBackend`: GitHub's ``bpe`` crate (PyPI
``bpe-openai``, same ids, faster, counts without building token lists) when it is installed and passes a check
against the shipped file, tiktoken otherwise. ``CHUNKING_TOKENIZER=tiktoken`` (or ``bpe-openai``, or ``auto``)
forces the choice.

May import: nothing.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import os
import warnings
from pathlib import Path
from typing import Callable, Protocol, Sequence

import tiktoken

from chunking.tokens.backends import PROBE, TokenBackend, bpe_openai_backend, load_bpe_openai_bindings, tiktoken_backend

__all__ = [
    "BACKEND_ENV",
    "BPE_FILES",
    "TokenBackend",
    "TokenCounter",
    "TokenizerIntegrityError",
    "count_tokens",
    "count_tokens_batch",
    "get_backend",
    "get_encoding",
    "token_counter",
]

#: Environment variable choosing the token backend: ``auto`` (default), ``bpe-openai`` or ``tiktoken``.
BACKEND_ENV = "CHUNKING_TOKENIZER"
_BACKENDS = ("auto", "bpe-openai", "tiktoken")

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


def get_backend(encoding: str = "cl100k_base", prefer: str | None = None) -> TokenBackend:
    """The token backend for *encoding*, built once per process.

    Args:
        encoding: an encoding shipped with the package (``BPE_FILES``).
        prefer: ``"bpe-openai"``, ``"tiktoken"`` or ``"auto"``; default: the ``CHUNKING_TOKENIZER``
            environment variable, else ``"auto"`` (bpe-openai when installed and verified, else tiktoken).

    Raises:
        ValueError: unknown encoding or backend name.
        ImportError: ``"bpe-openai"`` was asked for and is not installed.
        TokenizerIntegrityError: the shipped BPE file fails its check, or ``"bpe-openai"`` was asked for
            and gives other ids than the shipped file on the probe text (under ``"auto"`` that is a
            ``RuntimeWarning`` and tiktoken is used).
    """
    choice = (prefer or os.environ.get(BACKEND_ENV, "") or "auto").strip().lower()
    if choice not in _BACKENDS:
        raise ValueError(f"token backend {choice!r} (from {BACKEND_ENV} or prefer=) is not one of "
                         f"{', '.join(_BACKENDS)}")
    return _backend(encoding, choice)


@functools.cache
def _backend(encoding: str, choice: str) -> TokenBackend:
    fallback = tiktoken_backend(get_encoding(encoding))
    if choice == "tiktoken":
        return fallback
    try:
        bindings = load_bpe_openai_bindings()
        if encoding not in bindings.supported_encodings():
            raise ImportError(f"bpe-openai has no {encoding}")
        backend = bpe_openai_backend(bindings.tokenizer_for_encoding(encoding), fallback)
    except ImportError:
        if choice == "bpe-openai":
            raise
        return fallback
    if backend.encode(PROBE) != fallback.encode(PROBE):
        version = getattr(bindings, "RUST_BACKEND_VERSION", "?")
        message = f"bpe-openai (crate {version}) gives other {encoding} ids than the shipped BPE file"
        if choice == "bpe-openai":
            raise TokenizerIntegrityError(message)
        warnings.warn(message + "; using tiktoken", RuntimeWarning, stacklevel=3)
        return fallback
    return backend


def count_tokens(text: str, encoding: str = "cl100k_base") -> int:
    """Exact number of tokens of *text* with ordinary-text semantics.

    Text that looks like a special token (``<|endoftext|>``) is counted as plain text; never raises on content.
    """
    return get_backend(encoding).count(text)


def token_counter(encoding: str = "cl100k_base") -> Callable[[str], int]:
    """A fast ``TokenCounter`` bound to *encoding* (the backend is resolved once)."""
    return get_backend(encoding).count


def count_tokens_batch(texts: Sequence[str], encoding: str = "cl100k_base") -> list[int]:
    """Token counts of many texts in one call (tiktoken encodes the batch in parallel threads)."""
    if not texts:
        return []
    backend = get_backend(encoding)
    if backend.releases_gil:
        return [len(ids) for ids in get_encoding(encoding).encode_ordinary_batch(list(texts))]
    return [backend.count(text) for text in texts]
