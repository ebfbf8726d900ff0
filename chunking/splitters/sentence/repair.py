"""Steps 6 and 8 of the sentence splitter: cross-page repair and look-ahead overlap
(docs/splitters.md#step-6-cross-page-repair, docs/splitters.md#step-8-look-ahead-overlap).

After azure-search-openai-demo's ``SentenceTextSplitter`` (merge a sentence broken by a page break, else shift
the broken fragment forward; append a short look-ahead from the next chunk), with our fixes (numbered in
docs/splitters.md#departures-from-azure-search-openai-demo): one continuation test for merge and look-ahead (R13)
that accepts caseless scripts (R8); an order-preserving carry-forward that cuts only at word breaks and never
inside a figure (R1, R2, R3); every concatenation uses the join rule (R2); the look-ahead shrinks by whole words
and respects both caps (R5).
"""

from __future__ import annotations

import re

from .boundaries import (
    FIGURE_OPEN,
    Boundaries,
    figure_blocks,
    gap_class,
    is_heading_like,
    is_spaceless,
    join_separator,
)
from .config import SPACELESS_RANGES, SentenceSplitterConfig
from .draft import Draft
from .measure import BlockTokens, TokenMeasure

_NON_SPACE = re.compile(r"\S")

__all__ = ["Repairer"]

# A first line that starts a list item or a numbered section starts something new (step 6, item 3): a bullet and a
# space, an enumerator of up to three letters or digits with "." or ")" and a space, or "1.2" / "4.9.1".
_NEW_ITEM = re.compile(r"(?:[-*+\u2022\u2023\u25e6\u25aa\u2013\u2014]\s|\(?[0-9A-Za-z]{1,3}[.)]\s|[0-9]+(?:\.[0-9]+)+\.?\s)")

# A run of spaceless characters, matched on the reversed text: the run that ends where a prefix ends, found in
# one pass (a search for "run at the end" would retry the run from every start position).
_SPACELESS_RUN_REVERSED = re.compile(
    "[" + "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in SPACELESS_RANGES) + "]+"
)


def _spaceless_run_start(text: str, end: int) -> int:
    """Start of the longest run of spaceless characters that ends at ``end``, or -1 if ``text[end - 1]`` is none."""
    m = _SPACELESS_RUN_REVERSED.match(text[end - 1::-1]) if end > 0 else None
    return -1 if m is None else end - m.end()


class Repairer:
    """Cross-page repair (step 6) and look-ahead (step 8) for one configuration."""

    def __init__(self, config: SentenceSplitterConfig, boundaries: Boundaries, measure: TokenMeasure) -> None:
        self.max_tokens = config.max_tokens
        self.hard_chars = config.hard_chars
        self.target = config.overlap_target_chars
        self.window = config.overlap_window_chars
        self.advance = config.word_break_min_advance
        self.boundaries = boundaries
        self.measure = measure
        self.byte_bound = not measure.injected

    # ---- step 6 --------------------------------------------------------------------------------------------

    def continues(self, p: Draft, n: Draft) -> bool:
        """Continuation test ``cont(P, N)``: ``N`` carries on the sentence that ``P`` leaves unfinished."""
        if p.kind == "figure_part" or n.kind == "figure_part":
            return False
        if not n.text[0].isalnum():  # any letter or digit; not punctuation, "<", "#" or a bullet
            return False
        line = n.text.split("\n", 1)[0]
        if is_heading_like(line) or _NEW_ITEM.match(line):
            return False
        if FIGURE_OPEN.search(n.text, 0, 20):
            return False
        figures = figure_blocks(p.text) if "<" in p.text else []
        lo = figures[-1][1] if figures else 0
        return not self.boundaries.ends_with_sentence_end(p.text, lo)

    def _fits_tokens(self, text: str, est_other: int) -> bool:
        # A BPE token is at least one UTF-8 byte, so the byte length bounds the count without encoding
        # (not for an injected counter, which may count anything).
        if self.byte_bound and est_other + len(text.encode("utf-8", "surrogatepass")) <= self.max_tokens:
            return True
        return self.measure.fits(text, self.max_tokens - est_other)

    def cross_page(self, p: Draft, drafts: list[Draft], gap: int,
                   cont: bool | None = None) -> tuple[Draft | None, int]:
        """Merge ``P`` with the page's first chunk or carry its broken fragment forward (step 6).

        Args:
            p: the held chunk; drafts: the page's chunk list (changed in place); gap: gap class between them;
            cont: ``continues(p, drafts[0])`` if the caller already knows it.

        Returns:
            The held chunk after repair (None if all of it moved) and the gap class between it and the new
            first chunk of the list.
        """
        n = drafts[0]
        if not (self.continues(p, n) if cont is None else cont):
            return p, gap
        sep = join_separator(gap, p.text[-1], n.text[0])
        if len(p.text) + len(sep) + len(n.text) <= self.hard_chars and p.est + n.est <= self.max_tokens:
            p.text = p.text + sep + n.text
            p.parts = p.parts + ([sep] if sep else []) + n.parts
            p.end, p.page_end, p.est, p.exact = n.end, n.page_end, p.est + n.est, None
            p.hard_right = n.hard_right
            if n.kind == "figure":
                p.kind = "figure"
            del drafts[0]
            return p, gap
        return self._carry_forward(p, drafts, gap)

    def _carry_forward(self, p: Draft, drafts: list[Draft], gap: int) -> tuple[Draft | None, int]:
        n, text = drafts[0], p.text
        figures = figure_blocks(text) if "<" in text else []
        fs = figures[-1][1] if figures else 0
        seg_lo = fs
        cuts = self.boundaries.sentence_cuts(text, seg_lo, len(text))
        if cuts:
            fs = max(fs, cuts[-1])
        if not figures and p.covered and len(text[:fs].rstrip()) <= p.covered:
            # What P would keep is all in the previous chunk's look-ahead: move all of P, or re-accumulate it.
            fs = 0
        candidates = [fs] + [i + 1 for i in self.boundaries.word_break_positions(text, fs, len(text) - 1)]
        room = self.hard_chars - len(n.text)
        # The moved suffix of candidate c is text[cs:ce] (text[c:] stripped) and P keeps text[:kept]; both are
        # found by stepping over whitespace, not by copying text[c:] and text[:c] for every candidate.
        ce = len(text.rstrip())
        sep = join_separator(gap, text[ce - 1], n.text[0]) if ce else ""
        for k, c in enumerate(candidates):
            if k == 1:  # the whole fragment does not fit in front of N: in front of N's first sentences?
                done = self._carry_with_head(p, drafts, gap, fs)
                if done is not None:
                    return done
            cs, kept = c, c
            while cs < ce and text[cs].isspace():
                cs += 1
            while kept > 0 and text[kept - 1].isspace():
                kept -= 1
            if cs >= ce or 0 < kept <= p.covered:
                continue  # nothing to move, or P would keep only what the previous look-ahead holds
            if ce - cs + len(sep) > room:
                continue
            suffix = text[cs:ce]
            if not self._fits_tokens(suffix, n.est):
                continue
            # The sum of the two counts can miss the join: a space before a CJK character is a token of its own.
            # A carried chunk over the cap would be cut again when measured, its first piece possibly no more than
            # the previous chunk's look-ahead; so the joined text is counted once more.
            if not self._fits_tokens(suffix + sep + n.text, 0):
                continue
            moved_tokens = self.measure.count(suffix)
            doc, page = p.locate(cs)
            n.text = suffix + sep + n.text
            n.parts = p.sub_parts(cs, ce) + ([sep] if sep else []) + n.parts
            n.start, n.page_start, n.est, n.exact = doc, page, moved_tokens + n.est, None
            return self._keep_head(p, c, cs, gap)
        if len(candidates) == 1:  # no word break in the fragment: re-accumulating is all that is left
            done = self._carry_with_head(p, drafts, gap, fs)
            if done is not None:
                return done
        return p, gap

    def _carry_with_head(self, p: Draft, drafts: list[Draft], gap: int, fs: int) -> tuple[Draft | None, int] | None:
        """Re-accumulate the broken fragment ``p.text[fs:]`` with the first sentences of ``N`` (step 6, item 3):
        the fragment and the longest run of ``N``'s leading sentences that fits the caps become one chunk, placed
        between ``P``'s kept part and the rest of ``N``. Returns what :meth:`cross_page` returns, or None when
        not even ``N``'s first sentence fits with the fragment (or ``N`` is no plain text chunk)."""
        n = drafts[0]
        if n.kind != "text" or n.hard_left or "<" in n.text and FIGURE_OPEN.search(n.text):
            return None
        text = p.text
        cs = len(text) - len(text[fs:].lstrip())
        suffix = text[cs:].rstrip()
        if not suffix or 0 < len(text[:cs].rstrip()) <= p.covered:
            return None
        sep = join_separator(gap, suffix[-1], n.text[0])
        room = self.hard_chars - len(suffix) - len(sep)
        heads = [c for c in self.boundaries.sentence_cuts(n.text) if c <= room and c < len(n.text)]
        for c in reversed(heads):
            head = n.text[:c]
            if not self._fits_tokens(suffix + sep + head, 0):
                continue
            rest = len(n.text) - len(n.text[c:].lstrip())
            doc, page = p.locate(cs)
            merged = suffix + sep + head
            m = Draft(merged, p.sub_parts(cs, cs + len(suffix)) + ([sep] if sep else []) + n.sub_parts(0, c), doc,
                      n.locate(c - 1)[0] + 1, page, n.locate(c - 1)[1], self.measure.count(merged))
            m.exact = m.est
            tail_text = n.text[rest:]
            tail_doc, tail_page = n.locate(rest)
            tail = Draft(tail_text, n.sub_parts(rest, len(n.text)), tail_doc, n.end, tail_page, n.page_end,
                         self.measure.count(tail_text))
            tail.exact, tail.hard_right = tail.est, n.hard_right
            drafts[0:1] = [m, tail]
            return self._keep_head(p, cs, cs, gap)
        return None

    def _keep_head(self, p: Draft, cut: int, moved_from: int, gap: int) -> tuple[Draft | None, int]:
        """What stays of ``P`` once its text from *moved_from* on went to the next chunk: ``P.text[:cut]`` without
        trailing space, re-measured, and the gap class of what separated it from the moved text; ``(None, gap)``
        when nothing stays."""
        text = p.text
        kept = text[:cut].rstrip()
        if not kept:
            return None, gap
        between = gap_class(text[len(kept):moved_from])
        p.text, p.parts = kept, p.sub_parts(0, len(kept))
        last_doc, p.page_end = p.locate(len(kept) - 1)
        p.end = last_doc + 1
        p.est = p.exact = self.measure.count(kept)
        p.hard_right = False
        return p, between

    # ---- step 8 --------------------------------------------------------------------------------------------

    def look_ahead(self, a: Draft, b: Draft, gap: int) -> None:
        """Append to ``a`` a short prefix of ``b``'s text (step 8); ``b`` is never changed."""
        if self.target <= 0 or a.kind != "text" or b.kind != "text" or a.hard_right or b.hard_left:
            return
        if ("<" in a.text and FIGURE_OPEN.search(a.text)) or ("<" in b.text and FIGURE_OPEN.search(b.text)):
            return
        prefix = self._prefix(b.text)
        if not prefix or prefix.isspace() or a.text.endswith(prefix):
            return
        sep = join_separator(gap, a.text[-1], b.text[0])
        room = self.hard_chars - len(a.text) - len(sep)
        if (self.byte_bound and len(prefix) <= room
                and a.est + len((sep + prefix).encode("utf-8", "surrogatepass")) <= self.max_tokens):
            # A BPE token is at least one UTF-8 byte: the whole prefix fits without counting it.
            self._attach(a, b, sep, prefix)
            return
        # Step 8, item 4 (docs/splitters.md#step-8-look-ahead-overlap) shortens the prefix by rules that do not depend
        # on tokens, so the candidates are known in advance; the token cap is found by galloping and bisection from
        # the candidate the block's tokens point at (token counts grow with the prefix), instead of encoding every
        # candidate in turn, and only the candidates near it are listed (docs/splitters.md#performance).
        budget = self.max_tokens - a.est
        if budget < (1 if self.byte_bound else 0):  # a non-empty text is at least one BPE token
            return
        # The candidates, shortest first, are listed only as far as the search looks (_Candidates): a long
        # prefix (the whole next chunk when max_chars is out of the way) is not scanned beyond the few lengths
        # near the token cap.
        cands = _Candidates(self, prefix, room)
        if not self._anchor(b, sep, cands, budget):
            return
        count = self.measure.count
        if b.is_single_slice() and isinstance(b.parts[0][0], BlockTokens):
            # The prefix is a slice of b's block: its exact count reuses the block's tokens between two pre-token
            # boundaries (what TokenMeasure.exact does for these parts, without building them).
            block, start = b.parts[0][0], b.parts[0][1]  # type: ignore[index]
            text, tokens_before, interior = block.text, block.tokens_before, block.reusable_interior

            def fits(r: int) -> bool:
                end = start + cands.length(r)
                inner = interior(start, end)
                if inner is None:
                    return count(sep + text[start:end]) <= budget
                q1, q2 = inner
                middle = tokens_before(q2) - tokens_before(q1)
                if middle > budget:  # a lower bound of the count: too long without encoding the ends
                    return False
                return count(sep + text[start:q1]) + middle + count(text[q2:end]) <= budget
        else:

            def fits(r: int) -> bool:
                return count(sep + prefix[: cands.length(r)]) <= budget

        # Token counts grow with the prefix: the fitting candidates are the shortest ones. The block's tokens
        # give a good first probe; exact counts then confirm the boundary by galloping and bisection.
        good = _last_true(cands, fits)
        if good is not None:
            self._attach(a, b, sep, prefix[: cands.length(good)])

    def absorb_covered(self, a: Draft, b: Draft) -> bool:
        """If ``a``'s look-ahead already holds all of ``b`` (step 8, item 6), move ``b`` into ``a``'s own text,
        with ``b``'s look-ahead, and return True; ``b`` is then dropped by the caller."""
        if not a.overlap or b.kind != "text" or a.overlap[len(a.overlap) - len(a.overlap.lstrip()):] != b.text:
            return False
        sep = a.overlap[: len(a.overlap) - len(a.overlap.lstrip())]
        a.text = a.text + sep + b.text
        a.parts = a.parts + ([sep] if sep else []) + b.parts
        a.end, a.page_end, a.est, a.exact = b.end, b.page_end, a.est + b.est, None
        a.hard_right = b.hard_right
        keep = bool(b.overlap) and len(a.text) + len(b.overlap) <= self.hard_chars
        a.overlap = b.overlap if keep else ""
        a.overlap_parts = b.overlap_parts if keep else None
        return True

    @staticmethod
    def _anchor(b: Draft, sep: str, cands: "_Candidates", budget: int) -> bool:
        """Anchor *cands* at the first probe: the longest candidate whose estimated tokens (the block's tokens
        over it) fit ``budget``, or the shortest if none does or the estimate is unknown. False if there is no
        candidate at all."""
        block = b.parts[0][0] if b.is_single_slice() else None
        if not isinstance(block, BlockTokens) or not block.knows_offsets:
            return cands.anchor_at_shortest()
        start = b.parts[0][1]  # type: ignore[index]
        tokens_before = block.tokens_before
        base = tokens_before(start) - (1 if sep else 0)
        # Estimates grow with the length: the candidates that fit are the shortest ones. They are listed around
        # the cap's position until the list holds the last one that fits and the first one that does not.
        cands.start_at(block.char_limit(start, base, budget) - start)
        known = cands.known
        while not cands.right_done and (not known or tokens_before(start + known[-1]) - base <= budget):
            cands.extend_right()
        while not cands.left_done and (not known or tokens_before(start + known[0]) - base > budget):
            cands.extend_left()
        if not known:
            return False
        lo, hi = -1, len(known)  # candidate lo fits (or lo is -1); hi does not (or is past the last)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if tokens_before(start + known[mid]) - base <= budget:
                lo = mid
            else:
                hi = mid
        cands.anchor = max(lo, 0)  # none fits: the shortest (the list reaches it, left_done)
        return True

    @staticmethod
    def _attach(a: Draft, b: Draft, sep: str, prefix: str) -> None:
        a.overlap = sep + prefix
        b.covered = len(prefix)
        # The look-ahead is a slice of b's block: keeping it as one lets the final measurement reuse the
        # block's tokens; when the separator is exactly the page text between them, own text and look-ahead
        # even form one slice.
        if b.is_single_slice():
            b_block, b_s, _, b_doc, b_page = b.parts[0]  # type: ignore[misc]
            tail = (b_block, b_s, b_s + len(prefix), b_doc, b_page)
            last = a.parts[-1]
            if not isinstance(last, str) and last[0] is b_block and b_block.text[last[2]:b_s] == sep:
                a.overlap_parts = [(b_block, last[2], b_s + len(prefix), last[3] + last[2] - last[1], last[4])]
            else:
                a.overlap_parts = ([sep] if sep else []) + [tail]

    def _shrink_lengths(self, prefix: str) -> list[int]:
        """Lengths of ``prefix`` and of each successive :meth:`shrink` of it, longest first.

        Shrinking cuts after the last stop (word break or sentence end) before the final character and strips
        trailing whitespace, so the lengths are ``len(prefix)`` and every end of a non-space character that a
        stop follows across whitespace only (found with one pattern); once no stop is left, a trailing spaceless
        run loses one character at a time.
        """
        if not prefix or prefix[0].isspace() or prefix[-1].isspace():
            return self._shrink_lengths_stepwise(prefix)
        ends = {m.end() for m in self.boundaries.stop_ends(prefix)}
        ends.update(self.boundaries.sentence_cuts(prefix, 0, len(prefix)))
        ends.add(len(prefix))
        out = sorted(ends, reverse=True)
        n = out[-1]
        run_start = _spaceless_run_start(prefix, n)
        if run_start >= 0:
            out.extend(range(n - 1, run_start, -1))
            rest = len(prefix[:run_start].rstrip())
            if rest:
                # Shrinking depends on the text alone: what is left shrinks on as a prefix of its own (it may
                # end in another spaceless run, after a space that is no word break such as "\r").
                out.extend(self._shrink_lengths(prefix[:rest]))
        return out

    def _shrink_lengths_stepwise(self, prefix: str) -> list[int]:
        """:meth:`_shrink_lengths` by applying :meth:`shrink` until nothing is left (for a prefix that starts or
        ends with whitespace, where a cut may leave nothing or a final break does not count)."""
        out: list[int] = []
        while prefix:
            out.append(len(prefix))
            prefix = self.shrink(prefix)
        return out

    def _prefix(self, bt: str) -> str:
        """Step 8.1: the look-ahead candidate taken from the front of ``bt``."""
        t = self.target
        if len(bt) <= t:
            return bt
        hi = min(len(bt), self.window)
        stop = -1
        if hi > t:
            # j in [T, hi): a sentence end stops at once; a word break only beyond T + advance.
            end = self.boundaries.first_sentence_cut(bt, t + 1, hi + 1)
            brk = self.boundaries.first_word_break(bt, t + self.advance + 1, hi)
            if end > 0 and (brk < 0 or end - 1 < brk):
                return bt[:end]
            stop = brk
        if stop >= 0:
            return bt[: stop + 1].rstrip()
        # The fallback looks at bt[:T + advance + 1], but never beyond the window (2T), so the look-ahead
        # stays within 2T characters even when T is smaller than the advance.
        breaks = self.boundaries.word_break_positions(bt, 0, min(len(bt), t + self.advance + 1, max(self.window, t)))
        if breaks:
            return bt[: breaks[-1] + 1].rstrip()
        # No break at all: the first T characters (right-stripped, so the chunk never ends in whitespace).
        return bt[:t].rstrip()

    def shrink(self, prefix: str) -> str:
        """Step 8, item 4: shorten a look-ahead that does not fit, by whole words (or one spaceless character)."""
        last = len(prefix) - 1
        # The last word break before the final character, and the last sentence end before it: both found by
        # searching back from the end rather than listing all of them.
        end = self.boundaries.last_cut(prefix, 0, len(prefix), 0, last)
        k = max(self.boundaries.last_word_break(prefix, 0, last), end - 1 if end > 0 else -1)
        if k >= 0:
            return prefix[: k + 1].rstrip()
        if is_spaceless(prefix[-1]):
            return prefix[:-1].rstrip()
        return ""


class _Candidates:
    """The look-ahead candidates of one prefix (the lengths of :meth:`Repairer._shrink_lengths` within ``room``),
    listed only around where the search looks, shortest first; ``length(r)`` is the candidate ``r`` places
    longer than the anchor (the first probe; shorter if ``r`` is negative).

    The lengths are the ends of the prefix's stops and sentence ends and ``len(prefix)``, and below the shortest
    of these the lengths that shrinking its word gives (found from the text before it). Stops and sentence ends
    are scanned window by window, in both directions from where the list starts; each window's scan reads only
    as far past it as its patterns look ahead (a run of whitespace, a few characters for sentence ends), so it
    finds what one scan of the whole prefix finds.
    """

    __slots__ = ("repair", "prefix", "room", "known", "lo_pos", "hi_pos", "left_done", "right_done", "anchor",
                 "_left_width", "_right_width")

    def __init__(self, repair: Repairer, prefix: str, room: int) -> None:
        self.repair, self.prefix, self.room = repair, prefix, room
        self.known: list[int] = []  # the candidates of lengths in (lo_pos, hi_pos], ascending
        self.lo_pos = self.hi_pos = 0
        self.left_done = self.right_done = False
        self.anchor = 0  # index in known of the candidate r = 0
        self._left_width = self._right_width = 32
        if not prefix or prefix[0].isspace() or prefix[-1].isspace():
            self.known = sorted(n for n in repair._shrink_lengths_stepwise(prefix) if n <= room)
            self.left_done = self.right_done = True
            self.hi_pos = len(prefix)

    def start_at(self, pos: int) -> None:
        """Start the list (still empty) with the candidates of lengths within 32 of *pos* (one scan)."""
        if not self.left_done:
            self.lo_pos = self.hi_pos = min(max(pos - 32, 0), len(self.prefix))
            self._right_width = 64
            self.extend_right()

    def anchor_at_shortest(self) -> bool:
        """Anchor at the shortest candidate; False if there is none."""
        while not self.left_done:
            self.extend_left()
        while not self.known and not self.right_done:
            self.extend_right()
        self.anchor = 0
        return bool(self.known)

    def _ends(self, lo: int, hi: int) -> list[int]:
        """The ends of stops and sentence ends (and the end of the prefix) in ``(lo, hi]``, ascending."""
        prefix, n = self.prefix, len(self.prefix)
        bounds = self.repair.boundaries
        # A stop end's lookahead reads a whitespace run: scanning up to the first non-space character at or after
        # ``hi`` sees every run that starts before it.
        after = _NON_SPACE.search(prefix, hi)
        endpos = n if after is None else after.start()
        ends = {m.end() for m in bounds.stop_ends(prefix, lo, endpos) if m.end() <= hi}
        ends.update(bounds.cuts_between(prefix, 0, n, lo + 1, hi))
        if lo < n <= hi:
            ends.add(n)
        return sorted(ends)

    def extend_right(self) -> None:
        n = len(self.prefix)
        hi = min(n, self.hi_pos + self._right_width)
        self._right_width *= 4
        room = self.room
        self.known.extend(x for x in self._ends(self.hi_pos, hi) if x <= room)
        self.hi_pos = hi
        self.right_done = hi >= n or hi >= room

    def extend_left(self) -> None:
        lo = max(0, self.lo_pos - self._left_width)
        self._left_width *= 4
        room = self.room
        new = [x for x in self._ends(lo, self.lo_pos) if x <= room]
        if lo == 0:
            # Below the shortest end: the lengths that shrinking its word gives (shortest first).
            first = self._first_end()
            head: list[int] = []
            run_start = _spaceless_run_start(self.prefix, first)
            if run_start >= 0:
                head.extend(range(first - 1, run_start, -1))
                rest = len(self.prefix[:run_start].rstrip())
                if rest:
                    head.extend(self.repair._shrink_lengths(self.prefix[:rest]))
            new = sorted(x for x in head if x <= room) + new
            self.left_done = True
        self.known[0:0] = new
        self.anchor += len(new)
        self.lo_pos = lo

    def _first_end(self) -> int:
        lo, width, n = 0, 64, len(self.prefix)
        while True:
            hi = min(n, lo + width)
            ends = self._ends(lo, hi)
            if ends:
                return ends[0]
            lo, width = hi, width * 4

    def has(self, r: int) -> bool:
        """True if there is a candidate ``r`` places from the anchor (lists it if needed)."""
        while self.anchor + r < 0 and not self.left_done:
            self.extend_left()
        while self.anchor + r >= len(self.known) and not self.right_done:
            self.extend_right()
        return 0 <= self.anchor + r < len(self.known)

    def length(self, r: int) -> int:
        """The candidate ``r`` places from the anchor (which must exist)."""
        k = self.anchor + r
        if not 0 <= k < len(self.known):
            self.has(r)
            k = self.anchor + r
        return self.known[k]

    def shortest(self) -> int:
        """``r`` of the shortest candidate."""
        while not self.left_done:
            self.extend_left()
        return -self.anchor

    def longest(self) -> int:
        """``r`` of the longest candidate."""
        while not self.right_done:
            self.extend_right()
        return len(self.known) - 1 - self.anchor


def _last_true(cands: _Candidates, pred) -> int | None:
    """The longest candidate ``r`` with ``pred(r)``, for a predicate true then false, probing from the anchor.

    The probes are those of a search over the candidates longest first (index ``i``) that gallops from the
    anchor towards the boundary (steps 1, 2, 4, ...) and then bisects (``mid = (good + bad) // 2`` in ``i``,
    which is ``ceil`` in ``r``); so the answer is that search's, even where the predicate is not monotone, and
    only the candidates it probes (and the ends of the list when a step passes them) are listed.
    """
    has = cands.has
    if pred(0):
        good, step = 0, 1
        while has(good + step) and pred(good + step):
            good += step
            step *= 2
        bad = good + step
        if not has(bad):  # past the longest: one beyond it bounds the search
            bad = cands.longest() + 1
    else:
        bad, step = 0, 1
        while has(bad - step - 1) and not pred(bad - step):
            bad -= step
            step *= 2
        good = bad - step if has(bad - step) else cands.shortest()
        if not has(good - 1) and not pred(good):  # the shortest does not fit either
            return None
    while bad - good > 1:
        mid = (good + bad + 1) // 2
        if pred(mid):
            good = mid
        else:
            bad = mid
    return good
