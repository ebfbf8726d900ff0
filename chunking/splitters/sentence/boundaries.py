"""Where text may be cut: figure blocks, sentence ends, word breaks, heading-like lines and the join rule.

The definitions of docs/splitters.md#definitions, compiled once per configuration into regular
expressions so that no per-character Python loop runs over a whole page. The sentence-end predicate is the
reference's (azure-search-openai-demo's ``SentenceTextSplitter``) "every terminator ends a sentence", corrected
for decimals, abbreviations, initials, enumerators and URLs (docs/splitters.md#sentence-end; departure R7 of
docs/splitters.md#departures-from-azure-search-openai-demo).
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Iterator

from .config import OPENING_CHARS, SPACELESS_RANGES, SentenceSplitterConfig

__all__ = [
    "GAP_EMPTY",
    "GAP_NEWLINE",
    "GAP_SPACE",
    "Boundaries",
    "figure_blocks",
    "nearest_match",
    "gap_class",
    "is_combining",
    "is_heading_like",
    "is_spaceless",
    "join_separator",
]

_ASCII_ENDINGS = frozenset(".!?")
# Characters that end a line for the enumerator rule ("1. Introduction" at the start of a line).
_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
_OPENING = "".join(sorted(OPENING_CHARS))
_NEXT_NON_SPACE = re.compile(r"\s*(\S)")
_WORD_TAIL_WINDOW = 24
# A list number or a section number ("1.", "12.", "1.2.7."): one to three digits, or dotted numbers.
_ENUMERATOR = re.compile(r"[0-9]{1,3}|[0-9]{1,3}(?:\.[0-9]{1,3})+")
# Whether a lone "." is a dot leader depends on the next lone "." up to 2 spaces away: scans that stop early read
# this many characters past the last cut they may report.
_LEADER_LOOKAHEAD = 4


# docs/splitters.md#figure-block: an opening tag is "<figure" followed by whitespace, ">" or "/"; a closing tag
# "</figure" + spaces + ">".
_FIGURE_TAG = re.compile(r"<(?:(/)figure\s*>|figure(?=[\s>/]))", re.IGNORECASE)
FIGURE_OPEN = re.compile(r"<figure", re.IGNORECASE)

# Heading-like line (docs/splitters.md#heading-like-line).
_HEADING_NUMBER = re.compile(r"(?:[0-9]+|[IVXLCDM]+)[.)]\s")
_HEADING_BULLETS = ("- ", "* ", "\u2022 ")

GAP_EMPTY, GAP_SPACE, GAP_NEWLINE = 0, 1, 2

_SPACELESS_STARTS = [lo for lo, _ in SPACELESS_RANGES]


def _char_class(chars: frozenset[str]) -> str:
    return "".join(re.escape(ch) for ch in sorted(chars))


def figure_blocks(text: str, lo: int = 0, hi: int | None = None) -> list[tuple[int, int]]:
    """Return the outermost balanced ``<figure …>…</figure>`` blocks of ``text[lo:hi]``
    (docs/splitters.md#figure-block).

    Each close matches the latest unmatched opening; an opening never closed and an unpaired close are
    ordinary text. Returns half-open character ranges in ascending order.
    """
    hi = len(text) if hi is None else hi
    if text.find("<", lo, hi) < 0:
        return []
    stack: list[int] = []
    pairs: list[tuple[int, int]] = []
    for m in _FIGURE_TAG.finditer(text, lo, hi):
        if m.group(1) is None:
            stack.append(m.start())
        elif stack:
            pairs.append((stack.pop(), m.end()))
    if not pairs:
        return []
    pairs.sort()
    blocks: list[tuple[int, int]] = []
    for start, end in pairs:
        # A pair nested inside the previous outermost block is part of it.
        if not blocks or start >= blocks[-1][1]:
            blocks.append((start, end))
    return blocks


def is_spaceless(ch: str) -> bool:
    """True if ``ch`` belongs to a script written without spaces between words (docs/splitters.md#character-classes)."""
    cp = ord(ch)
    i = bisect_right(_SPACELESS_STARTS, cp) - 1
    return i >= 0 and cp <= SPACELESS_RANGES[i][1]


def is_combining(ch: str) -> bool:
    """True for combining marks (categories Mn, Mc, Me), which a hard cut never separates from their base."""
    return unicodedata.category(ch) in ("Mn", "Mc", "Me")


def is_heading_like(line: str) -> bool:
    """Return True if the stripped ``line`` looks like a heading or a list item
    (docs/splitters.md#heading-like-line)."""
    line = line.strip()
    if not line:
        return False
    if line.startswith("#") or line.startswith(_HEADING_BULLETS):
        return True
    if len(line) <= 80 and (line.isupper() or line.istitle()) and len(line.split()) <= 12:
        return True
    return _HEADING_NUMBER.match(line) is not None


def gap_class(gap: str) -> int:
    """Classify the whitespace between two joined pieces: newline, other whitespace, or nothing."""
    if not gap:
        return GAP_EMPTY
    return GAP_NEWLINE if "\n" in gap else GAP_SPACE


def join_separator(gap: int, a_last: str, b_first: str) -> str:
    """Return the separator put between own texts ``a`` and ``b`` (docs/splitters.md#join-rule, R2).

    Args:
        gap: :func:`gap_class` of the document text between ``a``'s last and ``b``'s first character.
        a_last: last character of ``a``; b_first: first character of ``b``.
    """
    if gap == GAP_NEWLINE:
        return "\n"
    if gap == GAP_SPACE:
        return " "
    if a_last == ">":
        return ""
    if a_last.isalnum() and b_first.isalnum() and not is_spaceless(a_last) and not is_spaceless(b_first):
        return " "
    return ""


class Boundaries:
    """The sentence-end predicate (docs/splitters.md#sentence-end) and word breaks of one configuration, as
    compiled patterns.

    Every query takes ``text`` with bounds ``lo``/``hi`` (character indices): the slice is evaluated as if it
    were the whole text, so "the character after the cluster exists" and "start of the text" refer to it.
    """

    def __init__(self, config: SentenceSplitterConfig) -> None:
        ends = config.sentence_endings
        ascii_ends = ends & _ASCII_ENDINGS
        other_ends = ends - _ASCII_ENDINGS
        e, c = _char_class(ends), _char_class(config.closing_chars)
        closing = f"[{c}]*" if c else ""
        dot = "." in ascii_ends
        a = _char_class(ascii_ends)
        # Every match starts by consuming one terminator, so the regex engine skips to candidates with its fast
        # character-set scan; the alternatives then look back at that first character. Group 1 marks a run of
        # dot leaders (". . . .", common in PDF tables of contents): one match for the whole run, and no
        # sentence end in it (rule 3). Group 2 marks a single "." whose word must still be checked (rule 2).
        never = "(?!)()"
        longest = max((len(w) for w in config.abbreviations | config.abbreviations_before_number), default=3)
        # Exceptions are at most `longest` characters (digits: 3, an initial: 1) after the opening characters.
        long = max(longest, 3) + 1
        alternatives = [
            r"(?<=\s\.)((?:[ \t]{1,2}\.)+)(?=\s|\Z)" if dot else never,
            # An ASCII run ends a sentence only before whitespace or the end of the text (rule 1); a lone "."
            # right after another lone "." is the tail of a leader whose scan started inside it (rule 3).
            rf"(?<=\s\.)(?<!\s\.[ \t]\.)(?<!\s\.[ \t][ \t]\.)(?![{a}]){closing}(?=\s|\Z)" if dot else "(?!)",
            # Rule 2's common answers, decided here instead of per dot in Python: a dot after a character that
            # is neither alphanumeric nor whitespace, and (group 2) a dot after a word longer than every
            # exception, which only holds if that word lies inside the scanned text (checked by the caller).
            rf"(?<=[^\w\s]\.)(?![{a}]){closing}(?=\s|\Z)" if dot else "(?!)",
            rf"(?<=[^\s{re.escape(_OPENING)}]{{{long}}}\.)()(?![{a}]){closing}(?=\s|\Z)" if dot else never,
            rf"(?<=\.)()(?![{a}]){closing}(?=\s|\Z)" if dot else never,
            rf"(?<=[{a}])[{a}]*{closing}(?=\s|\Z)" if ascii_ends else "(?!)",
        ]
        if other_ends:
            # A run holding any non-ASCII terminator always ends a sentence (CJK needs no following space).
            o = _char_class(other_ends)
            alternatives += [rf"(?<=[{o}])[{e}]*{closing}", rf"[{e}]*[{o}][{e}]*{closing}"]
        self._cluster = re.compile(f"[{e}](?:{'|'.join(alternatives)})")
        self._cut_end = re.compile(f"[{e}{c}]")
        self._word_break = re.compile(f"[{_char_class(config.word_breaks)}]") if config.word_breaks else None
        # The last word break of a range: ``.*`` runs to the end and backs off to the nearest break.
        self._last_word_break = (re.compile(f"(?s:.*)[{_char_class(config.word_breaks)}]")
                                 if config.word_breaks else None)
        # A non-space character after which a word break follows across whitespace only (the character is the
        # break, or whitespace holding a break comes next).
        spaces = frozenset(ch for ch in config.word_breaks if ch.isspace())
        marks = config.word_breaks - spaces
        stop_end = ([f"[{_char_class(marks)}]"] if marks else []) + \
            ([f"\\S(?=\\s*[{_char_class(spaces)}])"] if spaces else [])
        self._stop_end = re.compile("|".join(stop_end)) if stop_end else None
        self._abbreviations = config.abbreviations
        self._before_number = config.abbreviations_before_number
        self._window = max(_WORD_TAIL_WINDOW, longest + 8)
        self._word_tail = re.compile(r"\S+\Z")
        self._long = long
        self._long_word = re.compile(f"[^\\s{re.escape(_OPENING)}]{{{self._long}}}")
        self.endings = ends
        self.closing = config.closing_chars

    # ---- sentence ends -------------------------------------------------------------------------------------

    def sentence_cuts(self, text: str, lo: int = 0, hi: int | None = None) -> list[int]:
        """Positions just after each sentence end in ``text[lo:hi]``, ascending (docs/splitters.md#sentence-end).

        A value ``p`` means ``text[p - 1]`` is the last character of a terminal cluster.
        """
        hi = len(text) if hi is None else hi
        return list(self._scan(text, lo, hi, lo, hi))

    def _scan(self, text: str, lo: int, hi: int, start: int, stop: int) -> Iterator[int]:
        """The cuts of ``text[lo:hi]`` found by scanning ``text[start:stop]``, ascending. ``start`` must not cut
        a cluster in two; a cluster that reaches ``stop`` is cut short, so only cuts before ``stop`` hold."""
        dot_is_terminal, long = self._dot_is_terminal, self._long
        for m in self._cluster.finditer(text, start, stop):
            group = m.lastindex
            if group is None:
                yield m.end()
            elif group == 1:  # dot leaders ". . . .": no sentence ends inside (rule 3)
                continue
            elif (group == 2 and m.start() - lo >= long) or dot_is_terminal(text, m.start(), m.end(), lo, hi):
                yield m.end()

    def _scan_start(self, text: str, lo: int, cmin: int) -> int:
        """Where to start scanning for cuts ``≥ cmin``: before ``cmin - 1``, stepping back over terminators and
        closing characters so that no cluster is cut in two (a run of dot leaders cut in two gives no cut either
        way)."""
        start, endings, closing = cmin - 1, self.endings, self.closing
        while start > lo and (text[start - 1] in endings or text[start - 1] in closing):
            start -= 1
        return start

    def cuts_between(self, text: str, lo: int, hi: int, cmin: int, cmax: int) -> list[int]:
        """The cuts ``c`` of :meth:`sentence_cuts` over ``text[lo:hi]`` with ``cmin ≤ c ≤ cmax``, ascending,
        scanning only the text near that range."""
        cmin, cmax = max(cmin, lo + 1), min(cmax, hi)
        if cmin > cmax or self._cut_end.search(text, cmin - 1, cmax) is None:
            # A cut c follows the last character of its cluster, a terminator or a closing character: none in
            # text[cmin - 1:cmax], no cut in the range.
            return []
        # The scan stops just after cmax, so every cut kept was decided on the real text after it.
        stop = min(hi, cmax + 1 + _LEADER_LOOKAHEAD)
        return [c for c in self._scan(text, lo, hi, self._scan_start(text, lo, cmin), stop) if cmin <= c <= cmax]

    def last_cut(self, text: str, lo: int, hi: int, after: int, limit: int) -> int:
        """The last cut of ``text[lo:hi]`` in ``(after, limit]``, or -1; scans backwards from ``limit`` in
        growing windows, so a page is not scanned in full to find where its first chunks end."""
        width = 64  # half of the chunks end within 61 characters of the cap (English PDF pages, 1000 chars)
        limit = min(limit, hi)
        while True:
            cmin = max(after + 1, lo + 1, limit - width)
            if cmin > limit:
                return -1
            last = -1
            stop = min(hi, limit + 1 + _LEADER_LOOKAHEAD)
            for c in self._scan(text, lo, hi, self._scan_start(text, lo, cmin), stop):
                if cmin <= c <= limit:
                    last = c
            if last > 0 or cmin <= after + 1:
                return last
            width *= 4

    def next_cut(self, text: str, lo: int, hi: int, after: int) -> int:
        """The first cut of ``text[lo:hi]`` after position ``after``, or ``hi`` if there is none."""
        width = 256
        cmin = after + 1
        while cmin <= hi:
            cmax = min(hi, cmin + width)
            cuts = self.cuts_between(text, lo, hi, cmin, cmax)
            if cuts:
                return cuts[0]
            cmin, width = cmax + 1, width * 4
        return hi

    def _dot_is_terminal(self, text: str, dot: int, end: int, lo: int, hi: int) -> bool:
        """Rule 2 of docs/splitters.md#sentence-end for a single ``.`` at ``dot`` whose cluster ends at ``end``
        (exclusive)."""
        if dot == lo:
            return True
        if text[dot - 1].isspace():  # no word before the dot: an end, unless it ends a dot leader (rule 3)
            j = dot - 1
            while j > lo and dot - j < 2 and text[j - 1] in " \t":
                j -= 1
            return not (j > lo and text[j - 1] == "." and (j - 1 == lo or text[j - 2].isspace()))
        if not text[dot - 1].isalnum():
            return True  # every exception ends in a letter or digit ("dr", "e.g", "J", "12")
        if dot - lo >= self._long and self._long_word.match(text, dot - self._long, dot):
            return True  # a word longer than every exception (the common case in prose)
        start = max(lo, dot - self._window)
        m = self._word_tail.search(text, start, dot)
        if m is None:
            return True
        j = m.start()
        if j == start and j > lo and not text[j - 1].isspace():
            # The word is longer than every abbreviation unless it starts with many opening characters.
            while j > lo and not text[j - 1].isspace():
                j -= 1
        word = text[j:dot].lstrip(_OPENING)
        if not word:
            return True
        lower = word.lower()
        if lower in self._abbreviations:
            return False
        if lower in self._before_number:
            nxt = _NEXT_NON_SPACE.match(text, end, hi)
            if nxt is not None and nxt.group(1) in "0123456789":
                return False
        if len(word) == 1 and "A" <= word <= "Z":
            return False
        if word.isascii() and _ENUMERATOR.fullmatch(word) and _opens_line(text, lo, j):
            return False
        return True

    def ends_with_sentence_end(self, text: str, lo: int = 0) -> bool:
        """True if the last character of ``text[lo:]`` is a sentence end (evaluated on that slice)."""
        hi = len(text)
        if hi <= lo or (text[-1] not in self.endings and text[-1] not in self.closing):
            return False
        cuts = list(self._scan(text, lo, hi, _cluster_scan_start(text, lo, self.endings, self.closing), hi))
        return bool(cuts) and cuts[-1] == hi

    def first_sentence_cut(self, text: str, cmin: int, cmax: int) -> int:
        """The first cut ``c`` (see :meth:`sentence_cuts`, evaluated on all of ``text``) with
        ``cmin ≤ c < cmax``, or -1. Only the text near ``cmin`` is scanned."""
        hi = len(text)
        cmin = max(cmin, 1)
        if cmin >= cmax or cmin > hi:
            return -1
        for c in self._scan(text, 0, hi, self._scan_start(text, 0, cmin), min(hi, cmax + _LEADER_LOOKAHEAD)):
            if c >= cmax:
                break
            if c >= cmin:
                return c
        return -1

    # ---- word breaks ---------------------------------------------------------------------------------------

    def stop_ends(self, text: str, pos: int = 0, endpos: int | None = None) -> Iterator[re.Match[str]]:
        """Matches ending just after each non-space character that a word break follows across whitespace only
        (a character in ``text[pos:endpos]``, whose following whitespace is read up to ``endpos``)."""
        if self._stop_end is None:
            return iter(())
        return self._stop_end.finditer(text, pos, len(text) if endpos is None else endpos)

    def word_break_positions(self, text: str, lo: int, hi: int) -> list[int]:
        """Indices ``i`` in ``[lo, hi)`` where ``text[i]`` is a word-break character."""
        if self._word_break is None:
            return []
        return [m.start() for m in self._word_break.finditer(text, lo, hi)]

    def nearest_word_break(self, text: str, lo: int, mid: int, hi: int) -> int:
        """Index of the word-break character in ``text[lo:hi]`` nearest to ``mid`` (the left one on a tie), or
        -1. Only the two breaks on either side of ``mid`` are looked at (no list of all breaks)."""
        if self._word_break is None:
            return -1
        return nearest_match(self._word_break, self._last_word_break, text, lo, mid, hi)  # type: ignore[arg-type]

    def last_word_break(self, text: str, lo: int, hi: int) -> int:
        """Index of the last word-break character in ``text[lo:hi]``, or -1."""
        if self._last_word_break is None:
            return -1
        m = self._last_word_break.match(text, lo, hi) if hi > lo else None
        return -1 if m is None else m.end() - 1

    def first_word_break(self, text: str, lo: int, hi: int) -> int:
        """Index of the first word-break character in ``text[lo:hi]``, or -1."""
        if self._word_break is None:
            return -1
        m = self._word_break.search(text, lo, hi)
        return -1 if m is None else m.start()


def _opens_line(text: str, lo: int, j: int) -> bool:
    """True if only spaces, tabs and Markdown heading marks (``#``) lie between the start of the line (or ``lo``)
    and index ``j``: a number there is a list or section number (``   1. Update``, ``### 1.1.7. Title``)."""
    i = j
    while i > lo and text[i - 1] in " \t#":
        i -= 1
    return i == lo or text[i - 1] in _LINE_BREAKS


def _cluster_scan_start(text: str, lo: int, endings: frozenset[str], closing: frozenset[str]) -> int:
    """Start of the word that holds the final cluster, so a scan from there sees the cluster and its word."""
    i = len(text)
    while i > lo and (text[i - 1] in endings or text[i - 1] in closing):
        i -= 1
    while i > lo and not text[i - 1].isspace():
        i -= 1
    return i


def nearest_match(one: re.Pattern[str], last: re.Pattern[str], text: str, lo: int, mid: int, hi: int) -> int:
    """Index of the character matched by *one* in ``text[lo:hi]`` nearest to ``mid`` (the left one on a tie), or
    -1. *last* is ``(?s:.*)`` followed by the same character class, so that only the two matches on either side of
    ``mid`` are looked at (no list of all matches)."""
    if lo >= hi:
        return -1
    right = one.search(text, max(mid, lo), hi)
    left = last.match(text, lo, min(mid, hi)) if mid > lo else None
    if left is None:
        return -1 if right is None else right.start()
    i = left.end() - 1
    if right is not None and right.start() - mid < mid - i:
        return right.start()
    return i
