"""Token-counting backends for ``cl100k_base``: GitHub's ``bpe`` crate (PyPI ``bpe-openai``) or tiktoken.

Both give the same token ids (the property tests in ``tests/tokens/test_backends.py`` compare them on generated
text and on every corpus document); ``bpe-openai`` is 2-4× faster and can count without building a token list
and stop counting at a limit (``count_till_limit``). ``chunking.tokens.get_backend`` picks one.

Offline and checked: ``bpe-openai``'s compiled module embeds its own cl100k_base tables (nothing is read or
downloaded at run time). Before it is trusted, a probe text covering Latin, CJK, emoji, digits, whitespace runs
and special-token lookalikes must give exactly the ids of tiktoken built from the package's hash-checked BPE
file (``chunking.tokens.get_backend`` checks it).

Only the compiled module ``bpe_openai._bindings`` is loaded (it alone has ``count`` and ``count_till_limit``);
the package's ``__init__`` is skipped because it parses the BPE files of three encodings in Python at import
(about 1 s of CPU on every cold start) for a wrapper we do not use.

Long input: texts are encoded in pieces of at most ``max_piece_chars`` characters, cut at a pre-token boundary
(see :data:`PRE_TOKEN_BOUNDARY`), so the ids are those of the whole text. A stretch without any such boundary
(one enormous word) is encoded by tiktoken, which has no length limit.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

__all__ = [
    "MAX_PIECE_CHARS",
    "PRE_TOKEN_BOUNDARY",
    "PROBE",
    "TokenBackend",
    "bpe_openai_backend",
    "load_bpe_openai_bindings",
    "pieces",
    "tiktoken_backend",
]

#: A letter followed by a character that is certainly not a letter (ASCII punctuation, whitespace, common CJK
#: punctuation): the position after the letter is a pre-token boundary of cl100k_base in every context. The
#: pre-tokenizer's letter run (``\p{L}++``) stops at the first non-letter and no pre-token starts with a letter
#: and goes on into punctuation or space, so the text before and after such a position tokenizes on its own
#: exactly as inside the whole. Only letters of stable Unicode categories are used (ASCII, kana, CJK unified
#: ideographs) so that every Unicode table agrees on them.
PRE_TOKEN_BOUNDARY = re.compile(
    "[A-Za-z\u3041-\u3096\u30a1-\u30fa\u4e00-\u9fef]"
    "(?=[\\s!-/:-@\\[-`{-~\u3001\u3002\uff0c\uff01\uff1f\uff08\uff09\u300c\u300d\u300e\u300f\uff1a\uff1b])"
)
# The last boundary of a range: ``.*`` runs to the end and backs off to the nearest boundary.
_LAST_PRE_TOKEN_BOUNDARY = re.compile("(?s:.*)" + PRE_TOKEN_BOUNDARY.pattern)

# bpe-openai's Python wrapper refuses 1,000,000 characters or more ("Input too long to encode safely") and
# 200,000 tokens or more per call; the compiled module has no such check, but pieces stay well below both.
MAX_PIECE_CHARS = 200_000

# Characters per token of the prefix that tiktoken's count_till_limit encodes first (English text averages
# about 4.5, so such a prefix is usually over the limit already).
_PROBE_CHARS_PER_TOKEN = 6

# Latin with contractions, accents and combining marks, CJK, kana, emoji (with ZWJ and skin tone), digits,
# whitespace runs, special-token lookalikes, a long word: the probe on which bpe-openai must match tiktoken.
PROBE = (
    "Hello, world! It's 2026; we'LL see: 12345678 + 3.14159.\n\n\tTabs\t\tand   spaces   \r\n"
    "Ça va? naïve café ñandú e\u0301 a\u0308\u0301 Ελληνικά Русский текст العربية עברית हिन्दी\n"
    "東京は雨です。中文文本，标点！日本語のテキスト、カタカナ。한국어 텍스트\n"
    "🙂👍🏽👨‍👩‍👧 ⚙️ <|endoftext|> <|fim_prefix|><|endofprompt|> <| |>\u3000\u00a0\u2028"
    + "pneumonoultramicroscopicsilicovolcanoconiosis" * 3
    + " ١٢٣ ٤٥٦ ０１２ \n\n\n   "
)


@dataclass(frozen=True, slots=True)
class TokenBackend:
    """One way of turning text into ``cl100k_base`` token ids, with ordinary-text semantics.

    Text that looks like a special token (``<|endoftext|>``) is plain text; lone surrogates are replaced by
    U+FFFD before encoding (tiktoken's rule, which both backends follow).

    Attributes:
        name: ``"bpe-openai"`` or ``"tiktoken"``.
        encoding: the encoding name (``"cl100k_base"``).
        encode: ``str -> list[int]``, the token ids.
        count: ``str -> int``, the number of token ids (without building the list where the backend can).
        count_till_limit: ``(str, limit) -> int | None``, the count if it is at most ``limit``, else None
            (the backend may stop early).
        releases_gil: True if ``encode`` runs in parallel on threads (tiktoken does).
    """

    name: str
    encoding: str
    encode: Callable[[str], list[int]]
    count: Callable[[str], int]
    count_till_limit: Callable[[str, int], int | None]
    releases_gil: bool


def _without_surrogates(text: str) -> str:
    # tiktoken's own repair: paired surrogates become their character, lone ones U+FFFD.
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def tiktoken_backend(enc: Any) -> TokenBackend:
    """The backend over a tiktoken ``Encoding`` (``chunking.tokens.get_encoding``)."""
    encode = enc.encode_ordinary

    def count(text: str) -> int:
        return len(encode(text))

    def count_till_limit(text: str, limit: int) -> int | None:
        # A prefix cut at a pre-token boundary has at most the whole text's tokens: if a short prefix is
        # already over the limit, so is the text (tiktoken cannot stop early by itself).
        probe = _PROBE_CHARS_PER_TOKEN * (limit + 1)
        if len(text) > 2 * probe:
            cut = _LAST_PRE_TOKEN_BOUNDARY.match(text, 0, probe)
            if cut is not None and len(encode(text[:cut.end()])) > limit:
                return None
        n = len(encode(text))
        return n if n <= limit else None

    return TokenBackend("tiktoken", enc.name, encode, count, count_till_limit, True)


def pieces(text: str, max_chars: int) -> Iterator[tuple[int, int, bool]]:
    """Cut *text* into ``(start, end, cut_at_boundary)`` pieces of at most *max_chars* characters.

    Each cut is a pre-token boundary (:data:`PRE_TOKEN_BOUNDARY`), the last one within the limit. Where a
    window holds no boundary, the piece runs on to the next boundary (or the end) and is flagged False: it may
    be longer than *max_chars*.
    """
    start, n = 0, len(text)
    while n - start > max_chars:
        last = _LAST_PRE_TOKEN_BOUNDARY.match(text, start, start + max_chars)
        if last is not None:
            yield start, last.end(), True
            start = last.end()
            continue
        after = PRE_TOKEN_BOUNDARY.search(text, start + max_chars)
        end = n if after is None else after.end()
        yield start, end, False
        start = end
    if start < n:
        yield start, n, True


def bpe_openai_backend(tokenizer: Any, fallback: TokenBackend,
                       max_piece_chars: int = MAX_PIECE_CHARS) -> TokenBackend:
    """The backend over a ``bpe_openai._bindings`` tokenizer.

    Args:
        tokenizer: ``tokenizer_for_encoding("cl100k_base")`` of the compiled module.
        fallback: the tiktoken backend, for the rare stretch longer than *max_piece_chars* that has no
            pre-token boundary.
        max_piece_chars: longest text handed to the tokenizer in one call.
    """
    raw_encode, raw_count, raw_till = tokenizer.encode, tokenizer.count, tokenizer.count_till_limit

    def encode(text: str) -> list[int]:
        if len(text) > max_piece_chars:
            ids: list[int] = []
            for start, end, bounded in pieces(text, max_piece_chars):
                ids += encode_piece(text[start:end]) if bounded else fallback.encode(text[start:end])
            return ids
        return encode_piece(text)

    def encode_piece(text: str) -> list[int]:
        try:
            return raw_encode(text)
        except UnicodeEncodeError:
            return raw_encode(_without_surrogates(text))

    def count(text: str) -> int:
        if len(text) > max_piece_chars:
            return sum(count_piece(text[s:e]) if ok else fallback.count(text[s:e])
                       for s, e, ok in pieces(text, max_piece_chars))
        return count_piece(text)

    def count_piece(text: str) -> int:
        try:
            return raw_count(text)
        except UnicodeEncodeError:
            return raw_count(_without_surrogates(text))

    def count_till_limit(text: str, limit: int) -> int | None:
        if limit < 0:
            return None
        if len(text) > max_piece_chars:
            total = 0
            for s, e, ok in pieces(text, max_piece_chars):
                part = till_piece(text[s:e], limit - total) if ok else fallback.count_till_limit(
                    text[s:e], limit - total)
                if part is None:
                    return None
                total += part
            return total
        return till_piece(text, limit)

    def till_piece(text: str, limit: int) -> int | None:
        try:
            return raw_till(text, limit)
        except UnicodeEncodeError:
            return raw_till(_without_surrogates(text), limit)

    return TokenBackend("bpe-openai", fallback.encoding, encode, count, count_till_limit, False)


def load_bpe_openai_bindings() -> Any:
    """The compiled module ``bpe_openai._bindings``, loaded without running the package's ``__init__``.

    Raises:
        ImportError: bpe-openai is not installed (or its compiled module is missing).
    """
    spec = importlib.util.find_spec("bpe_openai")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("bpe-openai is not installed")
    folder = Path(next(iter(spec.submodule_search_locations)))
    found = sorted(folder.glob("_bindings*.so")) + sorted(folder.glob("_bindings*.pyd"))
    if not found:
        raise ImportError(f"bpe-openai at {folder} has no compiled _bindings module")
    loader = importlib.machinery.ExtensionFileLoader("bpe_openai._bindings", str(found[0]))
    module_spec = importlib.util.spec_from_file_location("bpe_openai._bindings", found[0], loader=loader)
    module = importlib.util.module_from_spec(module_spec)  # type: ignore[arg-type]
    loader.exec_module(module)
    return module
