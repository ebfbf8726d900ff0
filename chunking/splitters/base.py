"""The shared base of the size-driven text splitters, and the greedy merge with overlap.

Merge (docs/splitters.md#charactertextsplitter, step 4; LangChain's ``_merge_splits`` behaviour on spans):
1. Walk the pieces keeping a current group; a candidate's length is the group's pieces plus the text between them
   plus the new piece, each length measured once and summed.
2. When the new piece would make the group exceed ``chunk_size``, emit the group: the source text from its first
   piece's start to its last piece's end (separators and whitespace runs inside stay verbatim), stripped if asked.
   The emitted text is measured once exactly; while it is over ``chunk_size`` (token counts are not additive) and
   it has more than one piece, its last piece moves to the next chunk (or, when only one new piece is left, a
   leading overlap piece is dropped).
3. Drop pieces from the group's front while its length is ``> chunk_overlap`` or the group plus the new piece
   would still exceed ``chunk_size``; the pieces left are the overlap. Add the new piece and go on.
4. Emit what is left at the end.
"""

from __future__ import annotations

import copy
import logging
from abc import ABC
from typing import Any, Callable, Collection, Iterable, Literal, Sequence, TypeVar

from chunking.model import Document
from chunking.splitters._spans import Span, cut_to_fit, normalize_keep, strip_span
from chunking.splitters.encodings import resolve_encoding
from chunking.splitters.extras import import_extra

__all__ = ["DocumentSplitting", "TextSplitter", "derive_offsets", "in_executor", "merge_pieces",
           "tiktoken_length_function"]

logger = logging.getLogger(__name__)

_T = TypeVar("_T", bound="TextSplitter")


def merge_pieces(
    text: str,
    pieces: Sequence[Span],
    chunk_size: int,
    chunk_overlap: int,
    measure: Callable[[str], int],
    strip_whitespace: bool = True,
    lengths: Sequence[int] | None = None,
) -> list[Span]:
    """Merge ordered, non-overlapping pieces of *text* into chunk spans (module docstring, steps 1–4).

    Args:
        text: the whole source text; *pieces* are spans into it.
        pieces: non-empty spans in increasing order (the text between two pieces is their separator).
        chunk_size: maximum chunk length, in the units of *measure*.
        chunk_overlap: maximum length of the pieces repeated from one chunk at the start of the next.
        measure: the length function (``len`` counts code points).
        strip_whitespace: strip each chunk's leading and trailing whitespace (its span moves accordingly).
        lengths: the pieces' lengths if the caller already measured them (each piece is measured once).

    Returns:
        Chunk spans in order; whitespace-only chunks are left out.
    """
    n = len(pieces)
    if n == 0:
        return []
    if lengths is None:
        lengths = [measure(text[s:e]) for s, e in pieces]
    gaps = [0] + [measure(text[pieces[k - 1][1] : pieces[k][0]]) if pieces[k][0] > pieces[k - 1][1] else 0
                  for k in range(1, n)]

    def group_length(first: int, last: int) -> int:  # additive length of pieces[first:last]
        return sum(lengths[first:last]) + sum(gaps[first + 1 : last])

    out: list[Span] = []
    first = 0  # the group is pieces[first:i]
    carried = 0  # how many pieces at the group's front were already emitted (the overlap)
    total = 0
    i = 0
    while True:
        if i < n and (i == first or total + gaps[i] + lengths[i] <= chunk_size):
            total += (gaps[i] if i > first else 0) + lengths[i]
            i += 1
            continue
        if i == first:  # nothing left to emit
            break
        # Step 2: emit pieces[first:last], measured exactly once per try.
        last = i
        while True:
            span = (pieces[first][0], pieces[last - 1][1])
            emitted = strip_span(text, *span) if strip_whitespace else span
            if emitted is None or last - first == 1 or measure(text[emitted[0] : emitted[1]]) <= chunk_size:
                break
            if last - 1 > first + carried:
                last -= 1  # move the last piece to the next chunk
            else:
                first += 1  # only one new piece left: give up overlap instead
                carried -= 1
        if emitted is not None and not text[emitted[0] : emitted[1]].isspace():
            if last - first == 1 and measure is not len and measure(text[emitted[0] : emitted[1]]) > chunk_size:
                # Stripping can raise a token count (" 🙂a🙂" is 4 cl100k tokens, "🙂a🙂" 5): cut the stripped piece.
                out.extend(part for part in (strip_span(text, *cut) for cut in cut_to_fit(text, *emitted, measure,
                                             chunk_size)) if part is not None)
            else:
                out.append(emitted)
        if last == n:
            break
        moved = last < i
        i = last
        # Step 3: overlap back-off.
        total = group_length(first, i)
        while first < i and (total > chunk_overlap or total + gaps[i] + lengths[i] > chunk_size):
            total -= lengths[first] + (gaps[first + 1] if first + 1 < i else 0)
            first += 1
        if moved:  # the additive estimate was wrong for this group: check the next one exactly
            while first < i and measure(text[pieces[first][0] : pieces[i][1]]) > chunk_size:
                first += 1
            total = group_length(first, i)
        carried = i - first
    return out


def tiktoken_length_function(
    encoding_name: str = "cl100k_base",
    model_name: str | None = None,
    allowed_special: Literal["all"] | Collection[str] = frozenset(),
    disallowed_special: Literal["all"] | Collection[str] = (),
) -> Callable[[str], int]:
    """A length function counting tokens of a tiktoken encoding shipped with this package (never downloaded).

    Args:
        encoding_name: encoding to use when *model_name* is not given.
        model_name: an OpenAI model name; it selects its encoding (``"gpt-4"`` → ``cl100k_base``).
        allowed_special: special-token texts counted as one special token; by default none (counted as text).
        disallowed_special: special-token texts that raise; by default none, so ``"<|endoftext|>"`` never raises.

    Raises:
        ValueError: the encoding (or the model's encoding) is not shipped with ``chunking.tokens``.
    """
    encoding = resolve_encoding(encoding_name, model_name)
    if not allowed_special and not disallowed_special:
        encode_ordinary = encoding.encode_ordinary
        return lambda text: len(encode_ordinary(text))
    allowed = allowed_special if allowed_special == "all" else set(allowed_special)
    disallowed = disallowed_special if disallowed_special == "all" else tuple(disallowed_special)
    return lambda text: len(encoding.encode(text, allowed_special=allowed, disallowed_special=disallowed))


async def in_executor(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)`` on the running event loop's default executor (the async forms of the
    splitters' methods, as LangChain's ``atransform_documents`` does)."""
    import asyncio
    import functools

    return await asyncio.get_running_loop().run_in_executor(None, functools.partial(function, *args, **kwargs))


class DocumentSplitting:
    """``split_documents``/``transform_documents`` for the header splitters, whose ``_split(text, metadata)``
    returns the Documents of one text with a deep copy of *metadata* first in each."""

    def _split(self, text: str, base: dict[str, Any]) -> list[Document]:
        raise NotImplementedError

    def split_documents(self, documents: Iterable[Document]) -> list[Document]:
        """Split each Document; metadata is a deep copy of its own, then the header path."""
        out: list[Document] = []
        for document in documents:
            out.extend(self._split(document.page_content, document.metadata))
        return out

    def transform_documents(self, documents: Iterable[Document], **kwargs: Any) -> list[Document]:
        """Same as :meth:`split_documents`."""
        return self.split_documents(documents)

    async def atransform_documents(self, documents: Iterable[Document], **kwargs: Any) -> list[Document]:
        """:meth:`transform_documents` in the event loop's default executor."""
        return await in_executor(self.transform_documents, list(documents), **kwargs)


def derive_offsets(text: str, chunks: Iterable[str]) -> list[tuple[str, int]]:
    """Pair each chunk with its offset in *text*: the first occurrence at or after the previous chunk's start
    (+1 once a chunk was found, so a repeated passage moves forward), ``-1`` when the chunk is not in *text*."""
    out: list[tuple[str, int]] = []
    cursor = 0
    for chunk in chunks:
        start = text.find(chunk, cursor)
        if start < 0 and cursor > 0:
            start = text.find(chunk)  # a subclass may reorder chunks: any occurrence beats none
        out.append((chunk, start))
        if start >= 0:
            cursor = max(cursor, start + 1)
    return out


def _entry_point(cls: type) -> str | None:
    """Which of ``split_text``/``split_text_with_offsets`` the most derived class below TextSplitter defines."""
    for klass in cls.__mro__:
        if klass is TextSplitter:
            return None
        if "split_text_with_offsets" in vars(klass):
            return "split_text_with_offsets"
        if "split_text" in vars(klass):
            return "split_text"
    return None


class TextSplitter(ABC):
    """Base of the size-driven splitters: shared parameters, the Document API and offsets.

    Subclasses implement :meth:`split_text_with_offsets` or, as with LangChain, only :meth:`split_text`; every
    other method derives from the one implemented (the most derived wins when a subclass of a splitter of ours
    overrides :meth:`split_text`). Offsets of a ``split_text``-only subclass are derived by finding each chunk in
    the text at or after the previous chunk's start (``-1`` when a chunk is not a substring of the text).

    Args:
        chunk_size: maximum chunk length, in the units of *length_function* (characters by default, tokens with
            :meth:`from_tiktoken_encoder`).
        chunk_overlap: maximum length (same units) of the whole pieces a chunk repeats from the previous one; an
            upper bound, not a target.
        length_function: measures a string; default ``len`` (code points).
        keep_separator: ``False`` (separators belong to no piece; kept verbatim between merged pieces),
            ``True``/``"start"`` (glued to the following piece) or ``"end"`` (glued to the preceding piece).
        add_start_index: add ``metadata["start_index"]``, the exact offset of the chunk in its source text.
        strip_whitespace: strip leading and trailing whitespace of every chunk.

    Raises:
        ValueError: ``chunk_size <= 0``, ``chunk_overlap < 0``, ``chunk_overlap > chunk_size`` or an unknown
            *keep_separator*.
        TypeError: instantiating a subclass that implements neither ``split_text`` nor ``split_text_with_offsets``.
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> "TextSplitter":
        if _entry_point(cls) is None:
            raise TypeError(f"Can't instantiate {cls.__name__}: implement split_text or split_text_with_offsets")
        return super().__new__(cls)

    def __init__(
        self,
        chunk_size: int = 4000,
        chunk_overlap: int = 200,
        length_function: Callable[[str], int] = len,
        keep_separator: bool | Literal["start", "end"] = False,
        add_start_index: bool = False,
        strip_whitespace: bool = True,
    ) -> None:
        if chunk_size <= 0:
            raise ValueError(f"chunk_size must be > 0, got {chunk_size}")
        if chunk_overlap < 0:
            raise ValueError(f"chunk_overlap must be >= 0, got {chunk_overlap}")
        if chunk_overlap > chunk_size:
            raise ValueError(
                f"Got a larger chunk overlap ({chunk_overlap}) than chunk size ({chunk_size}), should be smaller."
            )
        self._chunk_size = chunk_size
        self._chunk_overlap = chunk_overlap
        self._length_function = length_function
        self._keep_separator = keep_separator
        self._keep = normalize_keep(keep_separator)
        self._add_start_index = add_start_index
        self._strip_whitespace = strip_whitespace

    def split_text_with_offsets(self, text: str) -> list[tuple[str, int]]:
        """Split *text* into ``(chunk, start)`` pairs, ``start`` being the chunk's offset (characters) in *text*."""
        return derive_offsets(text, self.split_text(text))

    def split_text(self, text: str) -> list[str]:
        """Split *text* into chunk strings, in order; ``[]`` for empty or whitespace-only text."""
        return [chunk for chunk, _ in self.split_text_with_offsets(text)]

    def _chunks_with_offsets(self, text: str) -> list[tuple[str, int]]:
        if _entry_point(type(self)) == "split_text":
            return derive_offsets(text, self.split_text(text))
        return self.split_text_with_offsets(text)

    def create_documents(self, texts: Iterable[str], metadatas: Sequence[dict[str, Any]] | None = None) -> list[Document]:
        """One Document per chunk of each text, each with its own deep copy of that text's metadata.

        Raises:
            ValueError: *metadatas* is given and its length differs from the number of texts.
        """
        texts = list(texts)
        if metadatas is not None and len(metadatas) != len(texts):
            raise ValueError(f"got {len(metadatas)} metadatas for {len(texts)} texts")
        documents: list[Document] = []
        for index, text in enumerate(texts):
            base = metadatas[index] if metadatas is not None else {}
            for chunk, start in self._chunks_with_offsets(text):
                metadata = copy.deepcopy(base)
                if self._add_start_index:
                    metadata["start_index"] = start
                documents.append(Document(chunk, metadata))
        return documents

    def split_documents(self, documents: Iterable[Document]) -> list[Document]:
        """Split each Document's ``page_content``; every chunk gets a deep copy of its source's metadata."""
        documents = list(documents)
        return self.create_documents([d.page_content for d in documents], [d.metadata for d in documents])

    def transform_documents(self, documents: Iterable[Document], **kwargs: Any) -> list[Document]:
        """Same as :meth:`split_documents` (LangChain's document-transformer interface)."""
        return self.split_documents(documents)

    async def atransform_documents(self, documents: Iterable[Document], **kwargs: Any) -> list[Document]:
        """:meth:`transform_documents` in the event loop's default executor (LangChain's async interface)."""
        return await in_executor(self.transform_documents, list(documents), **kwargs)

    @classmethod
    def from_huggingface_tokenizer(cls: type[_T], tokenizer: Any, **kwargs: Any) -> _T:
        """A splitter whose lengths count the tokens of a Hugging Face tokenizer (``len(tokenizer.tokenize(t))``).

        Raises:
            ImportError: ``transformers`` is not installed (``pip install chunking[transformers]``).
            ValueError: *tokenizer* is not a ``PreTrainedTokenizerBase``.
        """
        base = import_extra("transformers.tokenization_utils_base", "transformers", "transformers")
        if not isinstance(tokenizer, base.PreTrainedTokenizerBase):
            raise ValueError("Tokenizer received was not an instance of PreTrainedTokenizerBase")
        return cls(length_function=lambda text: len(tokenizer.tokenize(text)), **kwargs)

    @classmethod
    def from_tiktoken_encoder(
        cls: type[_T],
        encoding_name: str = "cl100k_base",
        model_name: str | None = None,
        allowed_special: Literal["all"] | Collection[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = (),
        **kwargs: Any,
    ) -> _T:
        """A splitter whose ``chunk_size`` and ``chunk_overlap`` count tokens of a tiktoken encoding.

        The encoding is resolved through ``chunking.tokens.get_encoding`` (shipped files, no download). Text that
        looks like a special token is counted as ordinary text unless listed in *allowed_special*. Other keyword
        arguments go to the constructor.

        Raises:
            ValueError: the encoding is not shipped, or the constructor rejects *kwargs*.
        """
        length_function = tiktoken_length_function(encoding_name, model_name, allowed_special, disallowed_special)
        return cls(length_function=length_function, **kwargs)

    def _merge_splits(self, splits: Iterable[str], separator: str) -> list[str]:
        """Merge *splits* joined by *separator* into chunks (the helper LangChain subclasses call); empty splits are
        left out, and each chunk is the splits' text with *separator* between them."""
        splits = list(splits)
        pieces: list[Span] = []
        position = 0
        for split in splits:
            if split:
                pieces.append((position, position + len(split)))
            position += len(split) + len(separator)
        text = separator.join(splits)
        return [text[s:e] for s, e in self._merge(text, pieces)]

    def _join_docs(self, docs: list[str], separator: str) -> str | None:
        """*docs* joined by *separator*, stripped if ``strip_whitespace``; ``None`` when nothing is left."""
        text = separator.join(docs)
        if self._strip_whitespace:
            text = text.strip()
        return text or None

    def _merge(self, text: str, pieces: Sequence[Span], lengths: Sequence[int] | None = None) -> list[Span]:
        return merge_pieces(
            text, pieces, self._chunk_size, self._chunk_overlap, self._length_function, self._strip_whitespace,
            lengths,
        )

    @staticmethod
    def _pairs(text: str, spans: Iterable[Span]) -> list[tuple[str, int]]:
        return [(text[s:e], s) for s, e in spans]
