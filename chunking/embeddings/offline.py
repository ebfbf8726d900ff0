"""The offline lexical embedder: deterministic, in-process, no network; hashes words and character trigrams, so
it measures *lexical overlap*, not meaning. It is the embedded default (``EMBEDDING_BACKEND=offline``), so the
pipeline runs with no account; ``chunking.embeddings`` re-exports it with the other embedders.
"""

from __future__ import annotations

import functools
import hashlib
import re
from itertools import chain
from typing import Mapping, Sequence

import numpy as np

from chunking.embeddings.stopwords import is_stop_word

__all__ = ["CJK_RUN", "OfflineLexicalEmbedder", "content_words"]

# Word tokens: runs of letters/digits/underscore in any script (Python's Unicode-aware \w).
_WORD_RE = re.compile(r"\w+")
# Scripts written without spaces between words (Han, kana, Hangul and their compatibility/extension blocks);
# the same ranges as chunking/index/local/fts.py, which segments them the same way for BM25.
_CJK = (
    "\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3040-\u30ff\u3100-\u312f\u3130-\u318f\u31f0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0002fa1f"
)
CJK_RUN = re.compile(f"[{_CJK}]+")
# One pass over text with CJK: group 1 a CJK run, group 2 a run of other word characters.
_MIXED_RE = re.compile(f"([{_CJK}]+)|([^\\W{_CJK}]+)")
# Distinct words remembered per embedder; bounded so a long-running worker does not grow without limit (the
# vocabulary is dropped wholesale when full: cheap, rare, and it never changes a vector).
_VOCAB_MAX = 500_000
# Measured on the shared corpus (60-character snippet → its 1,000-character chunk, top-1 at 256 dims):
# 0.25 beats 0.5 and 1.0 on English and matches them on Chinese.
_TRIGRAM_WEIGHT = 0.25


def _words(text: str) -> list[str]:
    """Lower-cased words of *text*; a CJK run gives its overlapping character bigrams (a lone character itself)."""
    text = text.lower()
    if not CJK_RUN.search(text):
        return _WORD_RE.findall(text)
    out: list[str] = []
    for cjk, other in _MIXED_RE.findall(text):
        if other:
            out.append(other)
        elif len(cjk) == 1:
            out.append(cjk)
        else:
            out.extend([cjk[i : i + 2] for i in range(len(cjk) - 1)])
    return out


def _word_features(word: str) -> list[tuple[str, float]]:
    """The features of *word* and their weights (class docstring, step 3): ``"w:" + word`` (1) and each
    character trigram of the word padded with one space, ``"c:" + trigram`` (``_TRIGRAM_WEIGHT`` each). The
    prefixes keep the word ``"cat"`` and the trigram ``"cat"`` apart."""
    padded = f" {word} "
    return [("w:" + word, 1.0)] + [("c:" + padded[i : i + 3], _TRIGRAM_WEIGHT) for i in range(len(padded) - 2)]


@functools.lru_cache(maxsize=256)
def _query_words(query: str) -> frozenset[str]:
    """``content_words(query)`` as a set, once per query: a search asks :meth:`OfflineLexicalEmbedder.shares_word`
    about every vector-only candidate with the same query."""
    return frozenset(content_words(query))


def content_words(text: str) -> list[str]:
    """The words of *text* (lower-cased; a CJK run as its character bigrams) without stop words
    (``chunking.embeddings.stopwords``); all of them when every word is one, so a query such as
    ``"to be or not to be"`` still has a vector. The highlighter marks the same words."""
    words = _words(text)
    kept = [w for w in words if not is_stop_word(w)]
    return kept if kept else words


class OfflineLexicalEmbedder:
    """A deterministic **lexical** embedder (hashing trick); explicitly **not semantic**.

    1. Lower-case the text and split it into words (``\\w+``, any script). Scripts written without spaces (Han,
       kana, Hangul) have no word boundaries to find, so a run of them gives its overlapping character bigrams
       as words (``"東京都"`` → ``"東京"``, ``"京都"``), the CJK-bigram strategy of Lucene's ``CJKBigramFilter``.
       Stop words are dropped (``chunking.embeddings.stopwords``: per language, CJK included), unless the text has no
       other word.
    2. Give each distinct word the weight ``1 + ln(count)`` (sublinear term frequency); a query embedded with
       ``embed_query`` multiplies it by the word's inverse document frequency in the index searched, so a rare
       query word outweighs a common one (chunks are embedded without it, so their vectors never depend on
       the rest of the corpus).
    3. A word's features are the word itself (weight 1) and the character trigrams of the word padded with one
       space on both sides (weight 0.25 each; ``"cat"`` → ``" ca"``, ``"cat"``, ``"at "``), so inflected forms
       still share features.
    4. Hash every feature with BLAKE2b (8-byte digest: stable across runs, processes and platforms, unlike
       Python's salted ``hash``) to a column (``digest mod dimensions``) and a sign (the digest's top bit).
    5. Sum the signed, weighted features into a vector and L2-normalise it.

    Texts that share words get a positive cosine; texts that share nothing get a cosine near 0. Synonyms and
    paraphrases score nothing: this is keyword overlap in vector form, a stand-in for a real model.

    Sources: feature hashing with signs, Weinberger et al. 2009 ("Feature Hashing for Large Scale Multitask
    Learning"); sublinear tf and idf weighting of the query only (the ``lnc.ltc`` scheme), Manning et al.,
    *Introduction to Information Retrieval* §6.4.1 and §6.4.3.

    Args:
        dimensions: vector length, ≥ 1 (default 256).

    Attributes:
        name: ``"offline-lexical-v2/<dimensions>"``.
        requests: ``embed`` calls so far. tokens: words hashed so far (nothing is billed; the count only lets
            the pipeline report comparable figures).

    Raises:
        ValueError: *dimensions* < 1.
    """

    VERSION = "offline-lexical-v2"
    _TRIGRAM_WEIGHT = _TRIGRAM_WEIGHT

    def __init__(self, dimensions: int = 256) -> None:
        if dimensions < 1:
            raise ValueError(f"dimensions must be ≥ 1, got {dimensions}")
        self.dimensions = dimensions
        self.name = f"{self.VERSION}/{dimensions}"
        self.requests = 0
        self.tokens = 0
        self._reset_vocabulary()

    def _reset_vocabulary(self) -> None:
        # Words repeat across chunks, so each word is hashed once and its features kept as one row of a CSR
        # matrix (word id -> columns, signed weights); embedding a batch is then a few numpy gathers.
        self._vocab: dict[str, int] = {}
        self._indptr = np.zeros(1, dtype=np.int64)
        self._cols = np.zeros(0, dtype=np.int64)
        self._vals = np.zeros(0, dtype=np.float64)

    def _hash(self, feature: str) -> tuple[int, float]:
        digest = int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "big")
        return digest % self.dimensions, (-1.0 if digest >> 63 else 1.0)

    def _add_words(self, words: set[str]) -> None:
        cols: list[int] = []
        vals: list[float] = []
        ends: list[int] = []
        base = int(self._indptr[-1])
        for word in sorted(words):  # sorted: ids (not vectors) would otherwise depend on set order
            merged: dict[int, float] = {}
            for feature, weight in _word_features(word):
                col, sign = self._hash(feature)
                merged[col] = merged.get(col, 0.0) + sign * weight
            cols.extend(merged)
            vals.extend(merged.values())
            ends.append(base + len(cols))
            self._vocab[word] = len(self._vocab)
        self._cols = np.concatenate([self._cols, np.asarray(cols, dtype=np.int64)])
        self._vals = np.concatenate([self._vals, np.asarray(vals, dtype=np.float64)])
        self._indptr = np.concatenate([self._indptr, np.asarray(ends, dtype=np.int64)])

    def shares_word(self, query: str, text: str) -> bool:
        """Whether *text* holds a word of *query* (as ``embed`` splits them: lower-cased, stop words dropped,
        CJK as bigrams). Without one, the cosine of their vectors comes only from hash collisions (columns
        two different features landed on), never from the texts themselves: ``chunking.retrieval`` drops such
        vector-only candidates, so a query sharing nothing with the documents gets no hits."""
        wanted = _query_words(query)
        return bool(wanted) and not wanted.isdisjoint(content_words(text))

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed *texts* (any number, any length; a text without words gives the zero vector).

        Returns:
            one list of ``dimensions`` floats per text, in input order, each of L2 norm 1 (or all zeros).
        """
        return self._embed([content_words(text) for text in texts], None)

    def query_words(self, text: str) -> list[str]:
        """The distinct words of *text* that ``embed`` keeps (stop words dropped), in order of first use."""
        return list(dict.fromkeys(content_words(text)))

    def embed_query(self, text: str, idf: Mapping[str, float]) -> list[float]:
        """Embed the query *text* as ``embed`` does, each word's weight multiplied by ``idf[word]`` (words not in
        *idf*: 1). Returns one vector of ``dimensions`` floats, of L2 norm 1 (or all zeros)."""
        return self._embed([content_words(text)], idf)[0]

    def _embed(self, tokenized: list[list[str]], idf: Mapping[str, float] | None) -> list[list[float]]:
        texts = tokenized
        if len(self._vocab) > _VOCAB_MAX:
            self._reset_vocabulary()
        vocab = self._vocab
        unseen = set(chain.from_iterable(tokenized)).difference(vocab)
        if unseen:
            self._add_words(unseen)
        lengths = np.fromiter(map(len, tokenized), dtype=np.int64, count=len(tokenized))
        flat_words = chain.from_iterable(tokenized)
        ids = np.fromiter(map(vocab.__getitem__, flat_words), dtype=np.int64, count=int(lengths.sum()))
        rows = np.repeat(np.arange(len(texts), dtype=np.int64), lengths)
        self.tokens += int(ids.size)
        self.requests += 1
        # 1-2: distinct (text, word) pairs and their counts -> weight 1 + ln(tf).
        pairs, counts = np.unique(rows * len(vocab) + ids, return_counts=True)
        pair_rows, pair_ids = np.divmod(pairs, len(vocab)) if len(vocab) else (pairs, pairs)
        pair_weight = 1.0 + np.log(counts)
        if idf:
            factors = np.ones(len(vocab), dtype=np.float64)
            for word, value in idf.items():
                if word in vocab:
                    factors[vocab[word]] = value
            pair_weight = pair_weight * factors[pair_ids]
        # 3: gather each word's CSR row (the usual "repeat starts + running offset" gather).
        starts = self._indptr[pair_ids]
        sizes = self._indptr[pair_ids + 1] - starts
        offsets = np.arange(int(sizes.sum()), dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        entries = np.repeat(starts, sizes) + offsets
        # 4-5: scatter-add into the (texts x dimensions) matrix, then L2-normalise each row.
        flat = np.bincount(
            np.repeat(pair_rows, sizes) * self.dimensions + self._cols[entries],
            weights=np.repeat(pair_weight, sizes) * self._vals[entries],
            minlength=len(texts) * self.dimensions,
        )
        matrix = flat.astype(np.float64, copy=False).reshape(len(texts), self.dimensions)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrix = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
        return matrix.tolist()
