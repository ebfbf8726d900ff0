"""Separator-driven splitters: one separator (:class:`CharacterTextSplitter`) or a hierarchy of them
(:class:`RecursiveCharacterTextSplitter`), with LangChain's names, parameters and defaults.

Recursive split of a span (docs/splitters.md#recursivecharactertextsplitter, LangChain's
``RecursiveCharacterTextSplitter`` behaviour):
1. Choose the first separator that matches in the span (``""`` always matches); the ones after it are the finer
   list. If none matches, the span is one piece with no finer list.
2. Cut the span at that separator's matches (verbatim, ``keep_separator``).
3. Pieces whose length is ≤ ``chunk_size`` are "good". At an oversized piece, merge the good pieces so far, then
   recurse into the piece with the finer list, or, with no finer list, cut it at character level and merge those
   parts.
4. Merge the remaining good pieces.
"""

from __future__ import annotations

import logging
import re
from typing import Any, Callable, Literal

from chunking.splitters._spans import Span, compile_separator, cut_to_fit, has_match, separator_pieces, strip_span
from chunking.splitters.base import TextSplitter
from chunking.splitters.languages import Language, LanguageRules, get_language_rules, rules_for_separators
from chunking.splitters.markdown.fences import FenceIndex, find_fenced_blocks

__all__ = [
    "CharacterTextSplitter",
    "LatexTextSplitter",
    "MarkdownTextSplitter",
    "PythonCodeTextSplitter",
    "RecursiveCharacterTextSplitter",
]

logger = logging.getLogger(__name__)

_DECORATOR_LINE = re.compile(r"[ \t]*@[^\n]*")

#: Paragraph, line, CJK sentence ends (full stop, exclamation and question marks), word, character. Text without
#: the CJK marks splits exactly as with LangChain's ``["\n\n", "\n", " ", ""]``.
DEFAULT_SEPARATORS = ("\n\n", "\n", "。", "！", "？", " ", "")


class CharacterTextSplitter(TextSplitter):
    """Split text at one separator, then merge the pieces greedily up to ``chunk_size`` with overlap.

    Algorithm: docs/splitters.md#charactertextsplitter, after LangChain's ``CharacterTextSplitter`` behaviour. Chunks
    are verbatim substrings of the input: ``text[start:start + len(chunk)] == chunk`` with ``start`` from
    :meth:`split_text_with_offsets` (or ``metadata["start_index"]``).

    Args:
        separator: where to cut; a literal string, or a regular expression with ``is_separator_regex=True``
            (zero-width lookarounds such as ``(?=Step \\d)`` are valid; ``""`` cuts between every character).
        is_separator_regex: treat *separator* as a regular expression.
        **kwargs: ``chunk_size`` (default 4000, in units of ``length_function``: characters by default, tokens
            with :meth:`from_tiktoken_encoder`), ``chunk_overlap`` (200, same units), ``length_function``,
            ``keep_separator`` (``False``), ``add_start_index``, ``strip_whitespace``; see :class:`TextSplitter`.

    Raises:
        ValueError: invalid sizes (see :class:`TextSplitter`).
        re.error: *separator* is an invalid regular expression.

    Example: ``CharacterTextSplitter(separator=" ", chunk_size=6, chunk_overlap=0)`` on ``"tiny enormousword ok"``
    gives ``("tiny", 0), ("enormo", 5), ("usword", 11), ("ok", 18)`` as ``(chunk, start)``.

    Differs from LangChain on purpose:
        - The text between two merged pieces is the original separator match, verbatim; LangChain re-inserts the
          separator pattern (a regex ``\\s+`` appears literally as ``\\s+``) and collapses runs of separators.
        - A piece longer than ``chunk_size`` is cut (with a warning) so that no chunk is over the limit, at the last
          whitespace within the cap when there is one, else at a character; LangChain emits it whole.
        - ``keep_separator=True`` glues sentence punctuation (``. ! ? 。 ！ ？ ; …``) to the end of the piece it
          closes and any other separator to the start of the next; LangChain puts every separator at the start
          (``"Text 1. Text 2."`` at ``". "`` gives ``". Text 2"``).
        - ``start_index`` comes from bookkeeping and is exact; LangChain searches for the chunk and can report -1
          or an earlier repeat.
    """

    def __init__(self, separator: str = "\n\n", is_separator_regex: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._separator = separator
        self._is_separator_regex = is_separator_regex
        self._pattern = compile_separator(separator, is_separator_regex)

    def split_text_with_offsets(self, text: str) -> list[tuple[str, int]]:
        """Split *text* into ``(chunk, start)`` pairs; ``start`` is the chunk's offset in *text* (characters)."""
        pieces: list[Span] = []
        lengths: list[int] = []
        for start, end in separator_pieces(text, self._pattern, 0, len(text), self._keep):
            length = self._length_function(text[start:end])
            if length > self._chunk_size and self._strip_whitespace:
                stripped = strip_span(text, start, end)  # whitespace stripped from the chunk does not count
                if stripped is not None and self._length_function(text[stripped[0] : stripped[1]]) <= self._chunk_size:
                    pieces.append((start, end))
                    lengths.append(length)
                    continue
            if length > self._chunk_size:
                logger.warning("piece of %d characters is over chunk_size=%d: cut at character level",
                               end - start, self._chunk_size)
                parts = cut_to_fit(text, start, end, self._length_function, self._chunk_size)
                pieces.extend(parts)
                lengths.extend(self._length_function(text[s:e]) for s, e in parts)
            else:
                pieces.append((start, end))
                lengths.append(length)
        return self._pairs(text, self._merge(text, pieces, lengths))


class RecursiveCharacterTextSplitter(TextSplitter):
    """Split text by a hierarchy of separators (paragraph, line, word, character by default), keeping every
    piece that fits whole and merging pieces greedily up to ``chunk_size`` with overlap.

    Algorithm: module docstring (docs/splitters.md#recursivecharactertextsplitter), after LangChain's
    ``RecursiveCharacterTextSplitter`` behaviour. Chunks are verbatim substrings of the input, with exact ``start``
    offsets.

    Args:
        separators: separators, most significant first; default :data:`DEFAULT_SEPARATORS`
            (``["\\n\\n", "\\n", "。", "！", "？", " ", ""]``). Latin sentence ends are not a level by default: add
            ``". "`` and the full stop stays with its sentence (``keep_separator=True``).
        keep_separator: default ``True``: sentence punctuation (``. ! ? 。 ！ ？ ; …``) ends the piece before it,
            any other separator (newlines, headings, code keywords) begins the following piece; ``"start"`` and
            ``"end"`` put every separator at one side.
        is_separator_regex: treat *separators* as regular expressions.
        **kwargs: ``chunk_size`` (default 4000, in units of ``length_function``: characters by default, tokens
            with :meth:`from_tiktoken_encoder`), ``chunk_overlap`` (200), ``length_function``,
            ``add_start_index``, ``strip_whitespace``; see :class:`TextSplitter`.

    Raises:
        ValueError: invalid sizes; ``from_language`` with an unknown language.
        re.error: an invalid regular expression.

    Example: ``RecursiveCharacterTextSplitter(chunk_size=10, chunk_overlap=4)`` on ``"one one one one one one"``
    gives ``"one one"`` five times, at offsets 0, 4, 8, 12 and 16.

    Differs from LangChain on purpose:
        - A piece of exactly ``chunk_size`` is kept (``≤``); LangChain requires ``<`` and re-splits it.
        - No chunk exceeds ``chunk_size`` when a cut can make it fit, even when the separator list has no ``""``;
          LangChain emits the piece whole. The cut is at the last whitespace within the cap when there is one.
        - ``keep_separator=True`` glues sentence punctuation (``. ! ? 。 ！ ？ ; …``) to the end of the piece it
          closes; LangChain moves it to the start of the next chunk (``". Text 2"``, a chunk starting ``。``).
        - The default separators have CJK sentence ends (``。 ！ ？``) between ``"\\n"`` and ``" "``, so Chinese or
          Japanese prose is cut between sentences, not mid-sentence; text without them splits as LangChain's. With
          ``keep_separator=False`` these marks still end their sentence (they are text: dropping them loses it).
        - Separators inside a chunk are the original matched text, verbatim (never the regex pattern), and
          ``start_index`` is exact (LangChain searches for it and can get it wrong with overlap or repeats).
        - The Markdown preset ignores separator matches inside fenced code blocks, and the Python preset keeps
          decorators with what they decorate.
    """

    def __init__(
        self,
        separators: list[str] | None = None,
        keep_separator: bool | Literal["start", "end"] = True,
        is_separator_regex: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(keep_separator=keep_separator, **kwargs)
        self._separators = list(separators) if separators is not None else list(DEFAULT_SEPARATORS)
        # The default CJK marks stay with their sentence even with keep_separator=False: they are text, not space.
        self._level_keep = [
            "end" if separators is None and self._keep == "none" and sep in ("。", "！", "？") else self._keep
            for sep in self._separators
        ]
        self._is_separator_regex = is_separator_regex
        self._patterns = [compile_separator(s, is_separator_regex) for s in self._separators]
        self._rules: LanguageRules | None = rules_for_separators(self._separators, is_separator_regex)

    @classmethod
    def from_language(cls, language: Language | str, **kwargs: Any) -> "RecursiveCharacterTextSplitter":
        """A splitter with *language*'s separator preset (regular expressions) and its extra rules.

        Raises:
            ValueError: *language* is unknown.
        """
        separators = cls.get_separators_for_language(language)
        return cls(separators=separators, is_separator_regex=True, **kwargs)

    @staticmethod
    def get_separators_for_language(language: Language | str) -> list[str]:
        """The separator preset of *language*: regular expressions, most significant first.

        Raises:
            ValueError: *language* is unknown.
        """
        return list(get_language_rules(language).separators)

    def split_text_with_offsets(self, text: str) -> list[tuple[str, int]]:
        """Split *text* into ``(chunk, start)`` pairs; ``start`` is the chunk's offset in *text* (characters)."""
        fence_filter: Callable[[int], bool] | None = None
        if self._rules is not None and self._rules.fence_levels:
            blocks = find_fenced_blocks(text)
            if blocks:
                fence_filter = FenceIndex(blocks).outside
        return self._pairs(text, self._split(text, 0, len(text), 0, fence_filter))

    def _split(self, text: str, start: int, end: int, level: int, fence_filter: Callable[[int], bool] | None) -> list[Span]:
        chosen = None
        for index in range(level, len(self._separators)):
            allowed = fence_filter if self._rules is not None and index < self._rules.fence_levels else None
            if self._separators[index] == "" or has_match(text, self._patterns[index], start, end, allowed):
                chosen = index
                break
        if chosen is None:
            pieces, finer = [(start, end)], None
        else:
            allowed = fence_filter if self._rules is not None and chosen < self._rules.fence_levels else None
            pieces = separator_pieces(text, self._patterns[chosen], start, end, self._level_keep[chosen], allowed)
            finer = chosen + 1 if chosen + 1 < len(self._separators) else None
        if self._rules is not None and self._rules.glue_decorators:
            pieces = _glue_decorators(text, pieces)
        out: list[Span] = []
        good: list[Span] = []
        good_lengths: list[int] = []
        for piece in pieces:
            length = self._length_function(text[piece[0] : piece[1]])
            if length <= self._chunk_size:
                good.append(piece)
                good_lengths.append(length)
                continue
            if good:
                out.extend(self._merge(text, good, good_lengths))
                good, good_lengths = [], []
            if finer is not None:
                out.extend(self._split(text, piece[0], piece[1], finer, fence_filter))
            else:
                logger.warning("piece of %d characters is over chunk_size=%d: cut at character level",
                               piece[1] - piece[0], self._chunk_size)
                out.extend(self._merge(text, cut_to_fit(text, *piece, self._length_function, self._chunk_size)))
        if good:
            out.extend(self._merge(text, good, good_lengths))
        return out


def _glue_decorators(text: str, pieces: list[Span]) -> list[Span]:
    """Glue each piece made only of ``@decorator`` lines (and blank lines) to the piece after it."""
    glued: list[Span] = []
    pending: int | None = None  # start of decorator-only pieces waiting for their target
    for start, end in pieces:
        lines = [line for line in text[start:end].split("\n") if line.strip()]
        if lines and all(_DECORATOR_LINE.fullmatch(line.rstrip("\r")) for line in lines):
            pending = start if pending is None else pending
            continue
        glued.append((start if pending is None else pending, end))
        pending = None
    if pending is not None:
        glued.append((pending, pieces[-1][1]))
    return glued


class _LanguagePreset(RecursiveCharacterTextSplitter):
    """A recursive splitter whose separators are the regex preset of ``_language`` (unless given)."""

    _language: Language

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("separators", self.get_separators_for_language(self._language))
        kwargs["is_separator_regex"] = True
        super().__init__(**kwargs)


class PythonCodeTextSplitter(_LanguagePreset):
    """:meth:`RecursiveCharacterTextSplitter.from_language` with ``Language.PYTHON`` (regex separators)."""

    _language = Language.PYTHON


class MarkdownTextSplitter(_LanguagePreset):
    """:meth:`RecursiveCharacterTextSplitter.from_language` with ``Language.MARKDOWN``.

    Differs from LangChain on purpose: the separators are regular expressions and match; LangChain's subclass
    escapes them, so its heading and rule separators never match.
    """

    _language = Language.MARKDOWN


class LatexTextSplitter(_LanguagePreset):
    """:meth:`RecursiveCharacterTextSplitter.from_language` with ``Language.LATEX``.

    Differs from LangChain on purpose: the separators are regular expressions and match; LangChain's subclass
    escapes them, so they never match.
    """

    _language = Language.LATEX
