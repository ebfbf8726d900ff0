"""Token counting for the sentence splitter: span counts from one encoding per text block, exact chunk counts.

docs/splitters.md#token-counts-and-estimates and docs/splitters.md#performance: each span is counted once,
decisions compare estimates, and every emitted chunk gets its exact count. Encoding spans one by one and then
every chunk again costs more than two passes over the text, so both are derived from a single
``encode_ordinary`` of each text block:

- the **span count** of a span is the number of the block's tokens that start inside it ("the tokens of the
  span as it appears in the page"); the estimate of a run of spans is then the block's token count over that run;
- the **exact count** of a chunk is assembled from pieces whose tokenisation cannot depend on their
  neighbours. With cl100k-style pre-tokenisation (a regex splits the text, then BPE runs inside each piece), a
  pre-token never continues from a letter into a following non-letter, so the position after such a letter is
  a piece boundary in every context (why, and how it is tested:
  docs/splitters.md#exact-counts-from-pre-token-boundaries). The tokens of the block between two such
  boundaries inside the chunk are reused; only the head and tail of the chunk (plus separators and look-ahead)
  are encoded again.

With an injected ``token_counter`` the splitter cannot see tokens, so each span and each chunk is counted by
calling it.
"""

from __future__ import annotations

import functools
import re
from bisect import bisect_left
from concurrent.futures import ThreadPoolExecutor
from itertools import accumulate
from operator import itemgetter
from typing import Callable, Sequence

from chunking.tokens import get_backend, get_encoding
from chunking.tokens.backends import PRE_TOKEN_BOUNDARY

__all__ = ["BlockTokens", "PlainText", "TokenMeasure"]

# Pre-token boundaries (a letter before a certain non-letter): text on either side tokenizes on its own as in
# the whole. The last such boundary of a range: ``.*`` runs to the end and backs off to the nearest boundary.
_SAFE_BOUNDARY = PRE_TOKEN_BOUNDARY
_LAST_SAFE_BOUNDARY = re.compile("(?s:.*)" + _SAFE_BOUNDARY.pattern)
_MEMO_MAX_CHARS = 16
_MEMO_SIZE = 8192
_RECENT_SIZE = 32
# Below this many characters a slice is simply re-encoded.
_MIN_REUSE_CHARS = 48
# A block at least this long is encoded in two halves at once when the backend releases the GIL (tiktoken).
_PARALLEL_MIN_CHARS = 65_536


@functools.cache
def _encoder_thread() -> ThreadPoolExecutor:
    """One background thread that encodes the first half of a long block while the caller encodes the second."""
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="sentence-encode")


_CONTINUATION_BYTES = bytes(range(0x80, 0xC0))  # UTF-8 bytes that continue a character


@functools.cache
def _token_char_tables(encoding_name: str) -> tuple[list[int], bytes]:
    """Per token id of the encoding: the number of UTF-8 lead bytes (characters that begin in the token), and
    whether the token's first byte continues a character begun by the previous token (1) or not (0)."""
    enc = get_encoding(encoding_name)
    leads = [0] * enc.n_vocab
    continues = bytearray(enc.n_vocab)
    for token in range(enc.n_vocab):
        try:
            data = enc.decode_single_token_bytes(token)
        except KeyError:  # ids without a token (gaps before the special tokens)
            continue
        leads[token] = len(data.translate(None, _CONTINUATION_BYTES))
        continues[token] = bool(data) and (data[0] & 0xC0) == 0x80
    return leads, bytes(continues)


class TokenMeasure:
    """Counts tokens with the configured encoding (ordinary-text semantics) or an injected counter.

    Args:
        encoding: tiktoken encoding name, loaded offline by :func:`chunking.tokens.get_encoding`.
        token_counter: optional ``str -> int``; when given, the encoding is not used at all.

    Raises:
        ValueError: the encoding is not shipped with the package.
    """

    def __init__(self, encoding: str, token_counter: Callable[[str], int] | None = None) -> None:
        self.injected = token_counter is not None
        if token_counter is not None:
            self.count: Callable[[str], int] = token_counter
            self.count_till_limit: Callable[[str, int], int | None] | None = None
            self._encode = None
        else:
            backend = get_backend(encoding)
            self._encode = backend.encode
            self._count = backend.count
            self.count_till_limit = backend.count_till_limit
            self._parallel = backend.releases_gil
            self.count = self._count_memo
            self._memo: dict[str, int] = {}
            self._recent: dict[str, int] = {}
            self._lead_bytes, self._continues_char = _token_char_tables(encoding)

    def _count_memo(self, text: str) -> int:
        # Chunk heads and tails are a word or two ("The", "here."), which natural text repeats: short strings
        # are memoised. Longer ones only in a small recent memo: a look-ahead probe and the later final
        # measurement of the same chunk share their head (a repeated document gains nothing from it).
        memo = self._memo if len(text) <= _MEMO_MAX_CHARS else self._recent
        n = memo.get(text)
        if n is None:
            if len(memo) >= (_MEMO_SIZE if memo is self._memo else _RECENT_SIZE):
                memo.clear()
            n = memo[text] = self._count(text)
        return n

    def fits(self, text: str, budget: int) -> bool:
        """True if *text* has at most *budget* tokens (the backend may stop counting at the budget)."""
        if self.injected:
            return self.count(text) <= budget
        n = self._memo.get(text) if len(text) <= _MEMO_MAX_CHARS else None
        if n is not None:
            return n <= budget
        return self.count_till_limit(text, budget) is not None  # type: ignore[misc]

    def count_within(self, text: str, limit: int) -> int | None:
        """Exact tokens of *text* if at most *limit*, else None (the backend may stop counting at the limit)."""
        if self.injected:
            n = self.count(text)
            return n if n <= limit else None
        return self.count_till_limit(text, limit)  # type: ignore[misc]

    def with_suffix(self, text: str, tokens: int, parts: Sequence[object] = (), suffix: str = "") -> int:
        """Exact tokens of *text* followed by ``parts`` and ``suffix`` (as in :meth:`exact`), given ``tokens``,
        the exact tokens of *text*.

        Only the tail of *text* after its last pre-token boundary is counted again, with what follows: the text
        before that boundary tokenizes as on its own (docs/splitters.md#exact-counts-from-pre-token-boundaries).
        A text without such a boundary, or an injected counter, is counted again whole.
        """
        if not parts and not suffix:
            return tokens
        last = None if self.injected else _LAST_SAFE_BOUNDARY.match(text)
        if last is None:
            return self.exact([text, *parts], suffix)
        tail = text[last.end():]
        return tokens - self.count(tail) + self.exact([tail, *parts], suffix)

    def range_counter(self, block: "BlockTokens | PlainText | None" = None,
                      text: str | None = None) -> Callable[[int, int, int], int | None] | None:
        """``(lo, hi, limit) -> exact tokens of text[lo:hi], or None if more than limit`` over *block*'s page
        text (or over *text*), for cap searches; None with an injected counter.

        Inside a block whose tokens are known only the head and tail of the range are encoded (the interior's
        tokens are reused, as in :meth:`exact`); otherwise the backend stops counting at the limit.
        """
        if self.injected:
            return None
        till, count = self.count_till_limit, self.count
        if text is None:
            text = block.text  # type: ignore[union-attr]
        if not isinstance(block, BlockTokens) or not block.knows_offsets:
            return lambda lo, hi, limit: till(text[lo:hi], limit)  # type: ignore[misc,index]

        def count_range(lo: int, hi: int, limit: int) -> int | None:
            inner = block.reusable_interior(lo, hi)
            if inner is None:
                return till(text[lo:hi], limit)  # type: ignore[misc]
            q1, q2 = inner
            n = count(text[lo:q1]) + block.tokens_before(q2) - block.tokens_before(q1)
            if n > limit:
                return None
            n += count(text[q2:hi])
            return n if n <= limit else None

        return count_range

    def block(self, text: str, lo: int, hi: int) -> "BlockTokens":
        """The tokens of the text block ``text[lo:hi]`` (encoded once, unless a counter was injected)."""
        return BlockTokens(self, text, lo, hi)

    def encode(self, block: str) -> list[int]:
        """The tokens of *block*; a long block is encoded as two halves at once, cut where the tokenizer always
        cuts (so the tokens are identical)."""
        encode = self._encode
        if self._parallel and len(block) >= _PARALLEL_MIN_CHARS:
            cut = _SAFE_BOUNDARY.search(block, len(block) // 2)
            if cut is not None:
                head = _encoder_thread().submit(encode, block[: cut.end()])
                tail = encode(block[cut.end():])  # type: ignore[misc]
                return head.result() + tail
        return encode(block)  # type: ignore[misc]

    def token_char_starts(self, block: str, lo: int) -> tuple[list[int], list[int] | None] | None:
        """Where the tokens of *block* start, as character indices of the page (``lo`` + index in *block*).

        Returns ``(leads, ids)``: ``leads[k]`` is the number of characters that begin before token ``k`` (UTF-8
        lead bytes, summed over the tokens before it), ``leads[-1] == lo + len(block)``; ``ids`` is the token
        list when some token may start inside a multi-byte character (byte-level BPE splits CJK and emoji),
        else None. Such a token starts at character ``leads[k] - 1``. None if the tokenizer would alter the
        text (lone surrogates).
        """
        ascii_only = block.isascii()
        if not ascii_only:
            try:
                block.encode("utf-8")
            except UnicodeEncodeError:
                return None
        ids = self.encode(block)
        # itemgetter gathers all the counts in one call (a tuple), a little faster than map; it needs ≥ 2 ids.
        counts = itemgetter(*ids)(self._lead_bytes) if len(ids) > 1 else [self._lead_bytes[i] for i in ids]
        leads = list(accumulate(counts, initial=lo))
        return leads, (None if ascii_only else ids)

    def exact(self, parts: Sequence[object], suffix: str = "") -> int:
        """Exact token count of the concatenation of ``parts`` and ``suffix``.

        Args:
            parts: strings, or tuples ``(BlockTokens | PlainText, start, end, ...)``: slices of a page's text
                (character indices).
            suffix: text appended after the parts (separator and look-ahead).
        """
        if len(parts) == 1 and not suffix:
            part = parts[0]
            if not isinstance(part, str) and isinstance(part[0], BlockTokens):  # the common case: one slice
                return part[0].exact_count(part[1], part[2], self.count)  # type: ignore[index]
        pending: list[str] = []
        total = 0
        last = parts[-1]
        for part in parts:
            if isinstance(part, str):
                pending.append(part)
                continue
            block, start, end = part[0], part[1], part[2]  # type: ignore[index]
            text = block.text
            if part is last and not suffix and isinstance(block, PlainText) and (start, end) in block.known:
                # A figure measured before, at the end of the chunk: after a line break and before a non-space
                # character the text is cut at a pre-token boundary, so the two sides add up
                # (docs/splitters.md#exact-counts-from-pre-token-boundaries).
                head = "".join(pending)
                if head and head[-1] in "\r\n" and not text[start].isspace():
                    return total + self.count(head) + block.known[(start, end)]
            inner = block.reusable_interior(start, end)
            if inner is not None:
                q1, q2 = inner
                interior = block.tokens_before(q2) - block.tokens_before(q1)
            elif not self.injected and isinstance(block, PlainText) and (start, end) in block.known:
                # A figure measured before, followed by more text: its tokens between its first and last
                # pre-token boundary are its count less those of its two ends.
                inner = block.boundaries(start, end)
                if inner is None:
                    pending.append(text[start:end])
                    continue
                q1, q2 = inner
                interior = block.known[(start, end)] - self.count(text[start:q1]) - self.count(text[q2:end])
            else:
                pending.append(text[start:end])
                continue
            pending.append(text[start:q1])
            total += self.count("".join(pending))
            total += interior
            pending = [text[q2:end]]
        pending.append(suffix)
        return total + self.count("".join(pending))


class PlainText:
    """Page text whose tokens are not known (figure blocks): slices of it are re-encoded, except a slice whose
    exact count was recorded in ``known`` (``(start, end) -> tokens``) when it is measured after a line break
    (see :meth:`TokenMeasure.exact`)."""

    __slots__ = ("text", "known")

    def __init__(self, text: str) -> None:
        self.text = text
        self.known: dict[tuple[int, int], int] = {}

    def reusable_interior(self, start: int, end: int) -> None:
        return None

    def boundaries(self, start: int, end: int) -> tuple[int, int] | None:
        """The first and last pre-token boundary ``start < q1 ≤ q2 < end`` of ``text[start:end]``, or None."""
        first = _SAFE_BOUNDARY.search(self.text, start, end)
        if first is None:
            return None
        q1 = first.end()
        last = _LAST_SAFE_BOUNDARY.match(self.text, q1, end)
        return q1, (q1 if last is None else last.end())


class BlockTokens:
    """The tokens of one text block of a page, for span counts and exact slice counts.

    The block is encoded once; the start of every token is kept as a character index of the page (a token
    that starts inside a multi-byte character, as byte-level BPE allows for CJK, is listed at the next
    character and flagged, and :meth:`tokens_before` counts it before that character).

    Attributes:
        text: the page text; the block is ``text[lo:hi]`` (character indices).
    """

    __slots__ = ("text", "lo", "hi", "_starts", "_ids", "_continues", "_prefix")

    def __init__(self, measure: TokenMeasure, text: str, lo: int, hi: int) -> None:
        self.text, self.lo, self.hi = text, lo, hi
        self._starts: list[int] | None = None
        self._ids: list[int] | None = None
        self._prefix: dict[int, int] | None = None
        if measure._encode is not None:
            known = measure.token_char_starts(text if lo == 0 and hi == len(text) else text[lo:hi], lo)
            if known is not None:
                self._starts, self._ids = known
                self._continues = measure._continues_char

    def count_spans(self, cuts: Sequence[int], count: Callable[[str], int]) -> None:
        """Count each span ``[previous cut, cut)`` on its own with *count* (injected counter, or text the
        tokenizer would alter); afterwards :meth:`tokens_before` answers at ``lo`` and at every cut."""
        text = self.text
        prefix = {self.lo: 0}
        total, prev = 0, self.lo
        for cut in cuts:
            if cut > prev:
                total += count(text[prev:cut])
                prefix[cut] = total
                prev = cut
        self._prefix = prefix

    @property
    def knows_offsets(self) -> bool:
        """True if token counts are known at every position, not only at span boundaries."""
        return self._starts is not None

    def tokens_before(self, pos: int) -> int:
        """Number of the block's tokens that start before character ``pos`` (``lo ≤ pos ≤ hi``)."""
        starts = self._starts
        if starts is None:
            return self._prefix[pos]  # type: ignore[index]
        k = bisect_left(starts, pos)
        ids = self._ids
        if ids is not None:
            # Tokens that start inside the character before ``pos`` are listed at ``pos``: they count too.
            continues, n = self._continues, len(ids)
            while k < n and starts[k] == pos and continues[ids[k]]:
                k += 1
        return k

    def char_limit(self, start: int, tokens_at_start: int, max_tokens: int) -> int:
        """Largest position ``p ≥ start`` with ``tokens_before(p) - tokens_at_start ≤ max_tokens`` (or ``hi``).

        The start of the first token beyond the cap; a character that token starts inside is left out.
        """
        if self._starts is None:
            raise ValueError("token offsets are unknown for this block")
        k = tokens_at_start + max_tokens
        if k >= len(self._starts) - 1:
            return self.hi
        if self._ids is not None and self._continues[self._ids[k]]:
            return self._starts[k] - 1
        return self._starts[k]

    def reusable_interior(self, start: int, end: int) -> tuple[int, int] | None:
        """Two piece boundaries ``start < q1 ≤ q2 < end`` whose tokens between can be reused, or None."""
        if self._starts is None or end - start < _MIN_REUSE_CHARS:
            return None
        text = self.text
        first = _SAFE_BOUNDARY.search(text, start, end)
        if first is None:
            return None
        q1 = first.end()
        last = _LAST_SAFE_BOUNDARY.match(text, q1, end)
        return q1, (q1 if last is None else last.end())

    def exact_count(self, start: int, end: int, count: Callable[[str], int]) -> int:
        """Exact tokens of ``text[start:end]`` encoded on its own: the head and tail are encoded with ``count``,
        the block's tokens between two piece boundaries are reused."""
        text = self.text
        inner = self.reusable_interior(start, end)
        if inner is None:
            return count(text[start:end])
        q1, q2 = inner
        return count(text[start:q1]) + self.tokens_before(q2) - self.tokens_before(q1) + count(text[q2:end])
