"""Step 5 of the sentence splitter: split a ``<figure>`` block above ``max_figure_tokens``
(docs/splitters.md#step-5-oversize-figure).

The reference (azure-search-openai-demo) never splits figures, so one large table can exceed the embedding
model's input limit (R4 of docs/splitters.md#departures-from-azure-search-openai-demo). A figure holding exactly
one (non-nested) ``<table>`` is split between
row groups (rows bound by ``rowspan`` stay together) with the header block repeated; any other figure is cut
with step 4's phase A at tag-aware positions. Every part is a balanced ``<figure …>…</figure>``.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from itertools import accumulate
from typing import Callable, NamedTuple

from chunking.tokens.backends import PRE_TOKEN_BOUNDARY

from .boundaries import Boundaries, is_combining

__all__ = ["FigurePart", "FigureSplitter", "figure_budget", "is_table_figure", "split_figure"]

_FLAGS = re.IGNORECASE | re.DOTALL
_START_TAG = re.compile(r"<figure[^>]*>", _FLAGS)
_END_TAG = re.compile(r"</figure\s*>\s*\Z", _FLAGS)
_TABLE_OPEN = re.compile(r"<table(?=[\s>/])[^>]*>", _FLAGS)
_TABLE_CLOSE = re.compile(r"</table\s*>", _FLAGS)
_THEAD = re.compile(r"<thead(?=[\s>/]).*?</thead\s*>", _FLAGS)
_CAPTION = re.compile(r"<caption(?=[\s>/]).*?</caption\s*>", _FLAGS)
# A row: ``<tr`` up to the first ``</tr>`` after it (as ``<tr….*?</tr\s*>``, but runs of characters other than
# ``<`` are skipped whole rather than one character at a time).
_ROW = re.compile(r"<tr(?=[\s>/])[^<]*(?:<(?!/tr\s*>)[^<]*)*</tr\s*>", _FLAGS)
_CELL = re.compile(r"<(t[hd])(?=[\s>/])", _FLAGS)
_ROWSPAN = re.compile(r"""\browspan\s*=\s*["']?\s*(\d+)""", _FLAGS)
_FIGCAPTION = re.compile(r"<figcaption(?=[\s>/]).*?</figcaption\s*>", _FLAGS)
_TAG = re.compile(r"<[^<>]*>")
_FIGURE_TAG = re.compile(r"<(/?)figure(?=[\s>/])", _FLAGS)
# Preferred cut positions of a non-table figure: right after these tags.
_PREFERRED = re.compile(r"</tr\s*>|</p\s*>|</li\s*>|<br\s*/?>|</table\s*>|</figcaption\s*>", _FLAGS)
# Next best inside a row over the budget: after a cell, so cells stay whole where the budget allows.
_CELL_END = re.compile(r"</t[dh]\s*>", _FLAGS)
# The last pre-token boundary of a range (``.*`` runs to the end and backs off to the nearest one).
_LAST_PRE_TOKEN_BOUNDARY = re.compile("(?s:.*)" + PRE_TOKEN_BOUNDARY.pattern)


class FigurePart(NamedTuple):
    """One part of a split figure: its text, its own span ``[start, end)`` in the page and its exact tokens."""

    text: str
    start: int
    end: int
    tokens: int


def is_table_figure(fig: str) -> bool:
    """True if the figure block ``fig`` holds exactly one, non-nested ``<table>`` (split by rows in step 5)."""
    opens = list(_TABLE_OPEN.finditer(fig))
    closes = list(_TABLE_CLOSE.finditer(fig))
    return len(opens) == 1 and len(closes) == 1 and opens[0].end() <= closes[0].start()


def figure_budget(fig: str, *, table_tokens: int, figure_tokens: int) -> int:
    """Token budget of the figure block ``fig`` in step 5: ``table_tokens`` (``max_table_tokens``, by default
    ``max_tokens``) for a table figure, else ``figure_tokens`` (``max_figure_tokens``)."""
    return table_tokens if is_table_figure(fig) else figure_tokens


def split_figure(
    text: str, start: int, end: int, *, budget: int, boundaries: Boundaries, count: Callable[[str], int],
    count_within: Callable[[str, int], int | None] | None = None, additive: bool = False,
) -> list[FigurePart]:
    """Split the figure block ``text[start:end]`` into parts of at most ``budget`` tokens each (step 5).

    Args:
        text: page text; start, end: the figure block's character range.
        budget: ``max_figure_tokens``; count: exact token counter.
        count_within: optional ``(text, limit) -> exact tokens, or None if over limit``, which may stop
            counting at the limit (the backend's ``count_till_limit``); for the "does it fit?" questions.
        additive: True if ``count`` is the cl100k-style encoding's own count, whose counts add up across
            pre-token boundaries (docs/splitters.md#exact-counts-from-pre-token-boundaries); then each row of a
            table is counted once and runs of rows are counted by addition. False for an injected counter.

    Returns:
        Parts in order; their own spans partition ``[start, end)``. The same as
        ``FigureSplitter(text, start, end, …).split(budget)``.
    """
    return FigureSplitter(text, start, end, boundaries=boundaries, count=count, count_within=count_within,
                          additive=additive).split(budget)


class FigureSplitter:
    """One figure block ``text[start:end]``, split at one budget or more (step 5).

    What does not depend on the budget is found once, at the first split that needs it, and reused by the
    next ones: the table's rows, row groups and header, and the exact tokens of every row group. The splitter
    splits a figure a second time, a little smaller, when a caption before it may join its first part
    (docs/splitters.md#step-5-oversize-figure); the second split then only packs the counted rows again.

    Args: as :func:`split_figure`, without the budget.
    """

    def __init__(self, text: str, start: int, end: int, *, boundaries: Boundaries, count: Callable[[str], int],
                 count_within: Callable[[str, int], int | None] | None = None, additive: bool = False) -> None:
        self._text, self._start, self._end = text, start, end
        self._boundaries, self._count, self._additive = boundaries, count, additive
        if count_within is None:
            def count_within(piece: str, limit: int) -> int | None:
                n = count(piece)
                return n if n <= limit else None
        self._within = count_within
        self._table: _Table | None = None
        self._table_done = False  # True once the table (or that there is none to split by rows) is known

    def _table_of(self, fig: str) -> "_Table | None":
        if not self._table_done:
            self._table, self._table_done = _Table.of(fig, self._count, self._additive), True
        return self._table

    def tokens_at_least(self) -> int:
        """A lower bound of the figure's exact tokens known without counting it whole: when a table is split by
        rows, the rows it counts for that (additive counts only); else 0. Counts the rows if not yet done."""
        if not self._additive:
            return 0
        table = self._table_of(self._text[self._start:self._end])
        return 0 if table is None else table.tokens_at_least()

    def split(self, budget: int) -> list[FigurePart]:
        """Parts of at most ``budget`` tokens each, in order; their own spans partition ``[start, end)``."""
        text, start, end, count = self._text, self._start, self._end, self._count
        fig = text[start:end]
        head = _START_TAG.match(fig)
        tail = _END_TAG.search(fig)
        if head is None or tail is None or tail.start() < head.end():
            return [FigurePart(fig, start, end, count(fig))]
        self._table_of(fig)
        if self._table is not None:
            parts = self._table.split(budget, self._boundaries, self._within)
            if parts is not None:
                return [FigurePart(t, start + s, start + e, n) for t, s, e, n in parts]
        parts = _cut_content(fig, head.end(), tail.start(), head.group(), "</figure>", budget, self._boundaries,
                             count, self._within)
        return [FigurePart(t, start + s, start + e, n) for t, s, e, n in _partition(parts, 0, len(fig))]


def _partition(parts: list[tuple[str, int, int, int]], lo: int, hi: int) -> list[tuple[str, int, int, int]]:
    """Make own spans contiguous: the first starts at ``lo``, each ends where the next starts, the last at ``hi``."""
    out = []
    for i, (t, s, _e, n) in enumerate(parts):
        s = lo if i == 0 else s
        e = hi if i == len(parts) - 1 else parts[i + 1][1]
        out.append((t, s, e, n))
    return out


class _Table:
    """The table of a figure block split by row groups: what every budget shares (module docstring)."""

    __slots__ = ("fig", "count", "additive", "h", "o", "tl", "header", "groups", "_wrapper", "_rows")

    def __init__(self, fig, count, additive, h, o, tl, header, groups):
        self.fig, self.count, self.additive = fig, count, additive
        self.h, self.o, self.tl, self.header, self.groups = h, o, tl, header, groups
        self._wrapper: dict[str, int] = {}
        self._rows = None  # (group_text, group_tokens, runs), counted at the first packing

    @classmethod
    def of(cls, fig: str, count, additive: bool) -> "_Table | None":
        """The table of *fig* if it holds exactly one, non-nested ``<table>`` with rows, else None."""
        opens = list(_TABLE_OPEN.finditer(fig))
        closes = list(_TABLE_CLOSE.finditer(fig))
        if not (len(opens) == 1 and len(closes) == 1 and opens[0].end() <= closes[0].start()):
            return None
        table_open, table_close = opens[0], closes[0]
        h, o, tl = fig[: table_open.start()], table_open.group(), fig[table_close.end():]
        body_lo, body_hi = table_open.end(), table_close.start()
        thead = _THEAD.search(fig, body_lo, body_hi)
        rows = list(_ROW.finditer(fig, body_lo, body_hi))
        if thead is not None:
            rows = [m for m in rows if not (thead.start() <= m.start() < thead.end())]
        header_items: list[tuple[int, str]] = []
        if thead is not None:
            header_items.append((thead.start(), thead.group()))
        else:
            k = 0
            while k < len(rows) and _all_th(rows[k].group()):
                header_items.append((rows[k].start(), rows[k].group()))
                k += 1
            del rows[:k]
        first_row = min([m.start() for m in rows[:1]] + [p for p, _ in header_items] + [body_hi])
        caption = _CAPTION.search(fig, body_lo, body_hi)
        if caption is not None and caption.start() < first_row:
            header_items.append((caption.start(), caption.group()))
        header = "".join(t for _, t in sorted(header_items))
        if not rows:
            return None
        groups = _row_groups(rows) if _may_hold_rowspan(fig, body_lo, body_hi) else [[r] for r in rows]
        return cls(fig, count, additive, h, o, tl, header, groups)

    def wrapper_tokens(self, prefix: str) -> int:
        """Exact tokens of ``prefix`` + ``</table>`` + the figure's tail, counted once per prefix."""
        n = self._wrapper.get(prefix)
        if n is None:
            n = self._wrapper[prefix] = self.count(prefix + "</table>" + self.tl)
        return n

    def rows(self):
        """``(group_text, group_tokens, runs)``: each row group's text and exact tokens, and its
        :class:`_RowRuns` (None unless additive), counted at the first call."""
        if self._rows is None:
            count = self.count
            group_text = [g[0].group() if len(g) == 1 else "".join(r.group() for r in g) for g in self.groups]
            runs = _RowRuns.of(group_text, count) if self.additive else None
            group_tokens = [count(t) for t in group_text] if runs is None else runs.group_tokens
            self._rows = group_text, group_tokens, runs
        return self._rows

    def tokens_at_least(self) -> int:
        """A lower bound of the figure's exact tokens: the sum of the interiors of its one-row groups. Each is a
        piece of the figure between two pre-token boundaries, so the figure's count is the sum of these and
        of the pieces between them (docs/splitters.md#exact-counts-from-pre-token-boundaries). 0 unless
        additive."""
        runs = self.rows()[2]
        if runs is None:
            return 0
        acc = runs.interior_sums
        return sum(acc[k + 1] - acc[k] for k, g in enumerate(self.groups) if len(g) == 1)

    def split(self, budget, boundaries, within):
        """Parts ``(text, start, end, tokens)`` within *fig* at ``budget``, or None if the table cannot be split
        by rows at this budget (its wrapper leaves too little room)."""
        fig, count, tl, groups = self.fig, self.count, self.tl, self.groups
        h, o = self.h, self.o
        close = "</table>"
        wrapper_tokens = self.wrapper_tokens
        full = h + o + self.header
        later = full
        if wrapper_tokens(full) > budget / 2:
            later = h + o
            if wrapper_tokens(later) > budget / 2:
                later = _FIGCAPTION.sub("", h) + o
        if wrapper_tokens(full) >= budget or wrapper_tokens(later) >= budget:
            return None
        group_text, group_tokens, runs = self.rows()
        if runs is None:
            def run_within(prefix: str, i: int, j: int, suffix: str) -> int | None:
                return within(prefix + "".join(group_text[i:j]) + suffix, budget)
        else:
            def run_within(prefix: str, i: int, j: int, suffix: str) -> int | None:
                n = runs.tokens(prefix, i, j, suffix)
                return n if n <= budget else None
        parts = []
        i = 0
        while i < len(groups):
            prefix = full if not parts else later
            if prefix is not later and run_within(prefix, i, i + 1, close + tl) is None:
                # The first group does not fit under the full header: start with the reduced wrapper.
                prefix = later
            j, exact = _pack(prefix, close + tl, wrapper_tokens(prefix), group_tokens, i, budget, run_within)
            if exact > budget:
                # One group alone does not fit: cut its rows like a non-table figure, inside the same wrapper,
                # provided the wrapper leaves room; otherwise the whole figure is cut without the table logic.
                if wrapper_tokens(prefix) > budget / 2:
                    return None
                g_lo, g_hi = groups[i][0].start(), groups[i][-1].end()
                for t, s, e, n in _cut_content(fig, g_lo, g_hi, prefix, close + tl, budget, boundaries, count,
                                               within):
                    parts.append((t, s, e, n))
            else:
                parts.append((prefix + "".join(group_text[i:j]) + close + tl, groups[i][0].start(),
                              groups[j - 1][-1].end(), exact))
            i = j
        return _partition(parts, 0, len(fig))


def _pack(prefix, suffix, base, group_tokens, i, budget, run_within):
    """Greedy packing of groups ``i, i+1, …`` after ``prefix`` (``base``: the exact tokens of ``prefix +
    suffix``): returns the end index and the exact tokens (``budget + 1`` when even group ``i`` alone is over
    the budget).

    The sum of the group counts chooses the candidate (no growing string is re-encoded); exact counts then
    confirm it, one group at a time in either direction, each ``None`` over the budget
    (``run_within(prefix, i, j, suffix)``: the exact tokens of groups ``i..j-1`` between prefix and suffix).
    """
    j, est = i, base
    while j < len(group_tokens) and est + group_tokens[j] <= budget:
        est += group_tokens[j]
        j += 1
    j = max(j, i + 1)
    exact = run_within(prefix, i, j, suffix)
    while exact is None and j > i + 1:
        j -= 1
        exact = run_within(prefix, i, j, suffix)
    while exact is not None and j < len(group_tokens):
        grown = run_within(prefix, i, j + 1, suffix)
        if grown is None:
            break
        j, exact = j + 1, grown
    return j, budget + 1 if exact is None else exact


class _RowRuns:
    """Exact token counts of runs of a table's row groups, each group's text counted once.

    Each group is cut at its first and last pre-token boundary (after ``<tr`` and after ``</tr``: a letter
    before ``>`` or a space) into head, interior and tail. Text on either side of such a boundary tokenizes as
    in the whole (docs/splitters.md#exact-counts-from-pre-token-boundaries), so the tokens of
    ``prefix + groups i..j-1 + suffix`` are those of ``prefix + head_i``, of every interior, of every
    ``tail_k + head_k+1`` junction and of ``tail_j-1 + suffix``: the interiors and junctions are counted once
    for the table, only the two short ends per run. Valid only for the encoding's own count (not an injected
    counter).
    """

    __slots__ = ("count", "heads", "tails", "group_tokens", "interior_sums", "_junction")

    def __init__(self, count, heads, tails, interiors):
        self.count, self.heads, self.tails = count, heads, tails
        # Heads, tails and junctions are a few characters that repeat down the table (``<tr``, ``>``, ``><tr``):
        # each distinct one is counted once.
        counted: dict[str, int] = {}

        def short(piece: str) -> int:
            n = counted.get(piece)
            if n is None:
                n = counted[piece] = count(piece)
            return n

        self.group_tokens = [short(h) + n + short(t) for h, n, t in zip(heads, interiors, tails)]
        self.interior_sums = list(accumulate(interiors, initial=0))
        self._junction = list(accumulate((short(tails[k] + heads[k + 1]) for k in range(len(heads) - 1)),
                                         initial=0))

    @classmethod
    def of(cls, group_text: list[str], count: Callable[[str], int]) -> "_RowRuns | None":
        """The runs of *group_text*, or None if a group holds no pre-token boundary."""
        heads, tails, interiors = [], [], []
        for t in group_text:
            first = PRE_TOKEN_BOUNDARY.search(t)
            if first is None:
                return None
            p = first.end()
            last = _LAST_PRE_TOKEN_BOUNDARY.match(t, p)
            q = p if last is None else last.end()
            heads.append(t[:p])
            tails.append(t[q:])
            interiors.append(count(t[p:q]) if q > p else 0)
        return cls(count, heads, tails, interiors)

    def tokens(self, prefix: str, i: int, j: int, suffix: str) -> int:
        """Exact tokens of ``prefix`` + groups ``i..j-1`` + ``suffix`` (``i < j``)."""
        count = self.count
        return (count(prefix + self.heads[i]) + self.interior_sums[j] - self.interior_sums[i]
                + self._junction[j - 1] - self._junction[i] + count(self.tails[j - 1] + suffix))


def _all_th(row: str) -> bool:
    cells = [m.group(1).lower() for m in _CELL.finditer(row)]
    return bool(cells) and all(c == "th" for c in cells)


def _may_hold_rowspan(fig: str, lo: int, hi: int) -> bool:
    """False only if ``fig[lo:hi]`` holds no ``rowspan=`` (then every row is a group of its own, the usual
    table). Cheaper than searching for ``_ROWSPAN`` itself, which tries every position: a ``rowspan`` needs an
    ``=``, and case folding maps every character that ``_ROWSPAN`` matches case-insensitively to ``rowspan``'s
    letters (the long ``ſ`` included)."""
    return fig.find("=", lo, hi) >= 0 and "rowspan" in fig[lo:hi].casefold()


def _row_groups(rows):
    groups, i = [], 0
    while i < len(rows):
        last = i
        j = i
        # A row with rowspan=N binds the next N-1 rows; rows bound in turn may extend the group.
        while j <= last:
            spans = [int(v) for v in _ROWSPAN.findall(rows[j].group())]
            if spans:
                last = max(last, min(len(rows) - 1, j + max(spans) - 1))
            j += 1
        groups.append(rows[i:last + 1])
        i = last + 1
    return groups


def _balanced(piece: str) -> str:
    """Close figures opened in ``piece`` and open figures it closes, so its figure tags nest."""
    depth, missing_opens = 0, 0
    for m in _FIGURE_TAG.finditer(piece):
        if m.group(1):
            if depth:
                depth -= 1
            else:
                missing_opens += 1
        else:
            depth += 1
    return "<figure>" * missing_opens + piece + "</figure>" * depth


def _cut_content(fig, lo, hi, prefix, suffix, budget, boundaries, count, within):
    """Phase A of step 4 on ``fig[lo:hi]`` with tag-aware cut positions; each piece is wrapped."""
    tags = [(m.start(), m.end()) for m in _TAG.finditer(fig, lo, hi)]
    starts = [s for s, _ in tags]

    def in_tag(pos: int) -> tuple[int, int] | None:
        # The tags do not overlap and come in order, so only the last one starting before pos can hold it: a
        # binary search, not a scan (a figure of thousands of tags has as many cut positions).
        i = bisect_left(starts, pos) - 1
        return tags[i] if i >= 0 and pos < tags[i][1] else None

    def wrap(a: int, b: int) -> str:
        return prefix + _balanced(fig[a:b]) + suffix

    out = []
    stack = [(lo, hi)]
    while stack:
        a, b = stack.pop()
        while a < b and fig[a].isspace():
            a += 1
        while b > a and fig[b - 1].isspace():
            b -= 1
        if a >= b:
            continue
        text = wrap(a, b)
        n_tokens = within(text, budget)
        n = b - a
        if n_tokens is not None or n == 1:
            out.append((text, a, b, count(text) if n_tokens is None else n_tokens))
            continue
        mid, reach = n // 2, n // 2 - n // 3
        cut = -1
        if n >= 4 and reach > 0:
            candidates = (
                [m.end() for m in _PREFERRED.finditer(fig, a, b)],
                [m.end() for m in _CELL_END.finditer(fig, a, b)],
                [c for c in boundaries.sentence_cuts(fig, a, b) if in_tag(c) is None],
                [p + 1 for p in boundaries.word_break_positions(fig, a, b) if in_tag(p + 1) is None],
            )
            for positions in candidates:
                best = None
                for pos in positions:
                    i = pos - 1 - a
                    d = abs(i - mid)
                    if d < reach and a < pos < b and (best is None or (d, i) < best[0]):
                        best = ((d, i), pos)
                if best is not None:
                    cut = best[1]
                    break
        if cut < 0:
            h = mid
            while h > 1 and is_combining(fig[a + h]):
                h -= 1
            cut = a + max(h, 1)
            tag = in_tag(cut)
            if tag is not None:
                cut = tag[0] if tag[0] > a else (tag[1] if tag[1] < b else cut)
        stack.append((cut, b))
        stack.append((a, cut))
    return out
