"""Page-aware sentence splitter: ``SentenceTextSplitter`` (docs/splitters.md#the-sentence-splitter).

After azure-search-openai-demo's ``SentenceTextSplitter``, with the fixes of
docs/splitters.md#departures-from-azure-search-openai-demo. Per page, in input order (state between pages: at most
one held chunk ``P``):

0. skip blank pages (``P`` stays held);
1. cut the page into ``<figure>`` blocks and the text blocks between them;
2. cut each text block after every sentence end into spans;
3. accumulate spans up to ``max_chars`` / ``max_tokens``, ending chunks at paragraph and line ends where the text
   allows and leaving no runts (``cuts.py``); a figure joins the text before it while both fit ``max_tokens``;
   a caption line before a figure moves into it, and a runt without a sentence end (a title block) joins the
   chunk after it, within the page and from ``P`` to the next page (``_keep_small_pieces_with_what_follows``);
4. cut a span over the caps (``oversize.py``); 5. split a figure over its budget, ``max_table_tokens`` for a
   table and ``max_figure_tokens`` otherwise (``figures.py``);
6. merge ``P`` with the page's first chunk, or carry ``P``'s broken fragment forward, re-accumulating it with
   the next page's first sentences (``repair.py``);
7. every chunk is stripped and joined by the join rule;
8. append a look-ahead to each chunk from the next one; a chunk the look-ahead holds entirely joins the chunk
   before it (``repair.py``);
9. emit ``P`` and all but the last chunk, hold the last one;
10. measure each emitted chunk exactly and repair the rare chunk whose estimate was too low.
"""

from __future__ import annotations

import dataclasses
import re
from bisect import bisect_right
from typing import Any, Callable, Iterable, Iterator

from chunking.model import Chunk, Page

from .boundaries import GAP_EMPTY, Boundaries, figure_blocks, gap_class, join_separator
from .config import SentenceSplitterConfig
from .cuts import balanced_cut, chunk_end, is_runt, paragraph_cuts
from .draft import Draft
from .figures import FigureSplitter, figure_budget, is_table_figure
from .measure import BlockTokens, PlainText, TokenMeasure
from .oversize import cut_oversize
from .repair import Repairer

__all__ = ["SentenceTextSplitter"]

_NON_SPACE = re.compile(r"\S")
# A table figure this many characters per token of its budget or longer is split by rows without being counted
# up to the budget first when its rows alone are over it (tables run 2–3 characters per token).
_LONG_TABLE_CHARS_PER_TOKEN = 3
_SPACE_RUNS = re.compile(r"\s+")


class SentenceTextSplitter:
    """Split the pages of one document into sentence-aligned chunks with offsets, pages and exact token counts.

    Args:
        max_tokens: hard cap in tokens of ``text`` chunks (default 500).
        max_chars: soft length in characters that accumulation aims for (default 1000).
        token_counter: optional ``str -> int`` used instead of the encoding (for tests).
        **settings: the other settings of :class:`SentenceSplitterConfig` (``overflow_ratio``,
            ``split_overlap_percent``, ``semantic_overlap_percent``, ``semantic_overlap_window``,
            ``word_break_min_advance``, ``embedding_max_tokens``, ``max_figure_tokens``, ``max_table_tokens``,
            ``encoding`` and the character sets).

    Every ``text`` chunk and every table part is within ``max_tokens`` (``max_table_tokens`` for tables when
    set); a figure without a table is kept whole up to ``max_figure_tokens`` and then carries
    ``metadata={"over_max_tokens": True}`` if it is over ``max_tokens``.

    Raises:
        ValueError: a setting is invalid, or the encoding is not shipped with the package.

    Example:
        >>> chunks = SentenceTextSplitter().split_text("Sentence one. Sentence two is slightly longer.")
        >>> [(c.text, c.char_start, c.char_end, c.page_num) for c in chunks]
        [('Sentence one. Sentence two is slightly longer.', 0, 46, 0)]
    """

    def __init__(self, max_tokens: int = 500, max_chars: int = 1000, *,
                 token_counter: Callable[[str], int] | None = None, **settings: Any) -> None:
        try:
            self.config = SentenceSplitterConfig(max_tokens=max_tokens, max_chars=max_chars, **settings)
        except TypeError as exc:  # an unknown keyword: report it as an invalid setting
            raise ValueError(str(exc)) from None
        self._measure = TokenMeasure(self.config.encoding, token_counter)
        self._boundaries = Boundaries(self.config)
        self._repair = Repairer(self.config, self._boundaries, self._measure)

    def fingerprint(self) -> str:
        """Stable hash of all settings (see :meth:`SentenceSplitterConfig.fingerprint`)."""
        return self.config.fingerprint()

    def split_text(self, text: str) -> list[Chunk]:
        """Split one text as a single page 0 at offset 0; equals ``list(split_pages([Page(0, 0, text)]))``."""
        return list(self.split_pages([Page(0, 0, text)]))

    def split_pages(self, pages: Iterable[Page]) -> Iterator[Chunk]:
        """Yield the chunks of ``pages`` (ordered, possibly a generator) as they are completed.

        Holds at most one page's chunk list and one chunk beyond what it has yielded, plus, while the chunk after
        it is measured, one finished chunk that carries a look-ahead.

        Raises:
            ValueError: a page has a negative or non-increasing ``page_num``, a negative offset, an offset
                inside the previous page, or a text that is not a string (the message names the page).
        """
        held: Draft | None = None
        # The last finished draft whose last chunk carries a look-ahead, and its chunks, yielded once the next draft
        # is finished: the look-ahead is checked against what the next one became (step 10).
        pending: tuple[Draft, list[Chunk]] | None = None
        gap_after_held = GAP_EMPTY
        previous: tuple[int, int] | None = None  # (page_num, end offset) of the previous page
        for index, page in enumerate(pages):
            page_num, offset, text = _validated(page, index, previous)
            previous = (page_num, offset + len(text))
            first = _NON_SPACE.search(text)
            if first is None:  # step 0: blank page; its whitespace is part of the gap after P
                gap_after_held = max(gap_after_held, gap_class(text))
                continue
            drafts = self._page_drafts(text, offset, page_num)
            self._keep_small_pieces_with_what_follows(drafts, text, offset)
            if held is not None:
                gap = max(gap_after_held, gap_class(text[: first.start()]))
                cont = self._repair.continues(held, drafts[0])
                held, gap = self._repair.cross_page(held, drafts, gap, cont)
                if held is not None and drafts and not cont and self._joins_runt(held, drafts[0], gap,
                                                                                  line_break=True):
                    del drafts[0]  # a title page (a runt) joins the page after it, heading or not
                if held is not None and drafts and cont and self._repair.continues(held, drafts[0]):
                    self._repair.look_ahead(held, drafts[0], gap)
            for a, b in zip(drafts, drafts[1:]):
                self._repair.look_ahead(a, b, gap_class(text[a.end - offset: b.start - offset]))
            while held is not None and drafts and self._repair.absorb_covered(held, drafts[0]):
                del drafts[0]
            i = 0
            while i + 1 < len(drafts):  # step 8: a chunk all in the previous one's look-ahead joins it
                if self._repair.absorb_covered(drafts[i], drafts[i + 1]):
                    del drafts[i + 1]
                else:
                    i += 1
            if not drafts:  # step 9: the page was merged into P, which stays held
                gap_after_held = gap_class(text[held.end - offset:]) if held is not None else GAP_EMPTY
                continue
            out = ([held] if held is not None else []) + drafts[:-1]
            held = drafts[-1]
            gap_after_held = gap_class(text[held.end - offset:])
            for draft in out:
                ready, pending = self._emit(pending, draft)
                yield from ready
        if held is not None:
            ready, pending = self._emit(pending, held)
            yield from ready
        if pending is not None:
            yield from pending[1]

    # ---- step 3b: captions and runts stay with what follows ------------------------------------------------

    def _keep_small_pieces_with_what_follows(self, drafts: list[Draft], text: str, offset: int) -> None:
        """Within one page's chunk list (docs/splitters.md#step-3-accumulate, *captions and runts*): a short last
        line of prose right before a figure chunk (its caption: ``Table 5.7: Firewall tools``) moves into that
        figure chunk when both fit; then a runt chunk that ends without a sentence end (a title block, a lone
        heading) joins the chunk after it when both fit the caps."""
        for i in range(len(drafts) - 1):
            if drafts[i].kind == "text" and drafts[i + 1].kind in ("figure", "figure_part"):
                self._move_caption(drafts[i], drafts[i + 1])
        i = 0
        while i + 1 < len(drafts):
            a, b = drafts[i], drafts[i + 1]
            if self._joins_runt(a, b, gap_class(text[a.end - offset: b.start - offset])):
                del drafts[i + 1]
            else:
                i += 1

    def _figure_limit(self, f: Draft) -> int:
        """The most tokens the chunk of figure draft *f* may reach with text added: the cap of a text chunk, or
        a figure part's own budget."""
        if f.kind == "figure":
            return self.config.max_tokens
        return figure_budget(f.text, table_tokens=self.config.table_tokens, figure_tokens=self.config.max_figure_tokens)

    def _move_caption(self, d: Draft, f: Draft) -> None:
        """Move the last line of prose draft *d* to the front of figure draft *f* when it is a runt, *d* keeps
        other text, and the figure chunk stays within its limit (``_figure_limit``)."""
        if f.part_index not in (None, 0) or f.hard_left or d.hard_right or "\n" not in d.text:
            return
        if f.kind == "figure_part" and not isinstance(f.parts[0], str):
            return  # step 5 already gave this first part its caption line; a part takes one line at most
        k = d.text.rfind("\n")
        head = d.text[:k].rstrip()
        line_start = k + 1
        while line_start < len(d.text) and d.text[line_start].isspace():
            line_start += 1
        line = d.text[line_start:]
        if not head or not line or "<" in line:
            return
        tokens = self._measure.count(line)
        cfg = self.config
        if not is_runt(tokens, len(line), cfg.max_tokens, cfg.max_chars) or tokens + f.est > self._figure_limit(f):
            return
        if is_runt(d.est - tokens, len(head), cfg.max_tokens, cfg.max_chars):
            return  # the prose would be left a runt: the caption stays with it
        if f.exact is not None and not self._measure.injected and not f.text[0].isspace():
            # After a line break and before a non-space character the text is cut at a pre-token boundary, so
            # the figure's exact count adds up (docs/splitters.md#exact-counts-from-pre-token-boundaries).
            joined = self._measure.count(line + "\n") + f.exact
        elif self._measure.injected:
            joined = self._measure.count(line + "\n" + f.text)  # exact: a figure part has no repair after it
        else:  # exact, reusing the tokens of the prose before the figure
            joined = self._measure.exact([line + "\n"] + f.parts)
        if joined > self._figure_limit(f):
            return
        try:
            start, page = d.locate(line_start)
            head_end, head_page = d.locate(len(head) - 1)
        except IndexError:  # the line is not all page text (a join separator inside): leave it
            return
        line_parts, head_parts = d.sub_parts(line_start, len(d.text)), d.sub_parts(0, len(head))
        f.text, f.parts = line + "\n" + f.text, line_parts + ["\n"] + f.parts
        f.start, f.page_start, f.est, f.exact = start, page, joined, joined
        d.text, d.parts, d.end, d.page_end = head, head_parts, head_end + 1, head_page
        d.est, d.exact = max(1, d.est - tokens), None

    def _joins_runt(self, a: Draft, b: Draft, gap: int, *, line_break: bool = False) -> bool:
        """Merge *b* into *a* when *a* is a runt of text (under a quarter of both caps) that does not end with a
        sentence end (a title block, a heading, an author line) and the two fit the caps together (a figure chunk after it: ``max_tokens``); True when merged. *line_break*: *b* starts
        something new on the next page (not a continuation), so the two are joined by a line break."""
        cfg = self.config
        if a.kind != "text" or b.kind not in ("text", "figure") or a.hard_right or b.hard_left or not a.text:
            return False
        if not is_runt(a.est, len(a.text), cfg.max_tokens, cfg.max_chars):
            return False
        ends = self._boundaries.sentence_cuts(a.text, 0, len(a.text))
        if ends and ends[-1] >= len(a.text):  # a finished sentence stands on its own; a title block does not
            return False
        sep = "\n" if line_break else join_separator(gap, a.text[-1], b.text[0])
        if a.est + b.est > cfg.max_tokens or (b.kind == "text" and len(a.text) + len(sep) + len(b.text) >
                                                 cfg.hard_chars):
            return False
        a.text = a.text + sep + b.text
        a.parts = a.parts + ([sep] if sep else []) + b.parts
        a.end, a.page_end, a.est, a.exact, a.kind = b.end, b.page_end, a.est + b.est, None, b.kind
        a.hard_right = b.hard_right
        return True

    # ---- steps 1-5 -----------------------------------------------------------------------------------------

    def _page_drafts(self, text: str, offset: int, page_num: int) -> list[Draft]:
        out: list[Draft] = []
        pos = 0
        open_builder: tuple[BlockTokens, int, int, int] | None = None
        plain: PlainText | None = None
        for fig_start, fig_end in figure_blocks(text):
            open_builder = self._text_block(text, pos, fig_start, offset, page_num, out, keep_open=True)
            plain = plain or PlainText(text)
            self._figure(text, fig_start, fig_end, offset, page_num, out, open_builder, plain)
            pos = fig_end
        if pos < len(text):
            self._text_block(text, pos, len(text), offset, page_num, out, keep_open=False)
        return out

    def _text_block(self, text: str, lo: int, hi: int, offset: int, page_num: int, out: list[Draft],
                    keep_open: bool) -> tuple[BlockTokens, int, int, int] | None:
        """Steps 2–4 for the text block ``text[lo:hi]``; returns the unflushed builder if ``keep_open``.

        A chunk takes the spans from ``a`` up to the last sentence end within both caps. With token offsets
        known everywhere, the caps give a position directly, and only the text just before it is searched for
        that sentence end (:meth:`Boundaries.last_cut`): the result equals accumulating span by span.
        """
        if lo >= hi:
            return None
        block = self._measure.block(text, lo, hi)
        if not block.knows_offsets:
            return self._counted_block(text, block, lo, hi, offset, page_num, out, keep_open)
        cfg, bounds = self.config, self._boundaries
        max_chars, max_tokens, hard_chars = cfg.max_chars, cfg.max_tokens, cfg.hard_chars
        tokens_before = block.tokens_before
        a, ta = lo, 0
        while a < hi:
            limit = min(a + max_chars, block.char_limit(a, ta, max_tokens))
            if limit >= hi:  # the rest of the block fits
                if keep_open:
                    return block, a, hi, tokens_before(hi) - ta
                self._add_range(out, text, block, a, hi, offset, page_num, tokens_before(hi) - ta)
                return None
            c = chunk_end(text, lo, hi, a, limit, bounds)
            if c > 0:
                tc = tokens_before(c)
                if min(c + max_chars, block.char_limit(c, tc, max_tokens)) >= hi and \
                        is_runt(tokens_before(hi) - tc, hi - c, max_tokens, max_chars):
                    # What is left of the block after this chunk is a runt: absorb it, or balance the two.
                    if hi - a <= hard_chars and tokens_before(hi) - ta <= max_tokens:
                        c = hi
                    else:
                        c = balanced_cut(text, lo, hi, a, ta, c, block, bounds, max_tokens=max_tokens,
                                         max_chars=max_chars)
                    tc = tokens_before(c)
                    if c == hi and keep_open:
                        return block, a, hi, tc - ta
                self._add_range(out, text, block, a, c, offset, page_num, tc - ta)
                a, ta = c, tc
                continue
            # The first span alone is over a cap: cut it (step 4) or emit it alone.
            b = bounds.next_cut(text, lo, hi, a)
            paragraph = paragraph_cuts(text, a + 1, b - 1, hi)
            b = paragraph[0] if paragraph else b
            tb = tokens_before(b)
            if tb - ta > max_tokens or b - a > hard_chars:
                self._add_oversize(out, text, block, a, b, offset, page_num)
            else:
                self._add_range(out, text, block, a, b, offset, page_num, tb - ta)
            a, ta = b, tb
        return None

    def _counted_block(self, text: str, block: BlockTokens, lo: int, hi: int, offset: int, page_num: int,
                       out: list[Draft], keep_open: bool) -> tuple[BlockTokens, int, int, int] | None:
        """:meth:`_text_block` when counts are known only at sentence ends (an injected counter): every span
        is counted, and the caps are checked by bisecting the spans' prefix sums."""
        cfg = self.config
        cuts = self._boundaries.sentence_cuts(text, lo, hi)
        if not cuts or cuts[-1] != hi:
            cuts.append(hi)
        block.count_spans(cuts, self._measure.count)
        pos = [lo] + cuts
        m = len(cuts)
        tokens_before = block.tokens_before
        max_chars, max_tokens, hard_chars = cfg.max_chars, cfg.max_tokens, cfg.hard_chars
        i, ta = 0, 0
        while i < m:
            a = pos[i]
            j = bisect_right(pos, a + max_chars, i + 1) - 1
            tj = tokens_before(pos[j]) if j > i else ta
            if j > i and tj - ta > max_tokens:  # prefix sums are monotone: bisect them
                lo_j, hi_j = i, j  # invariant: lo_j fits (or is i), hi_j does not
                while hi_j - lo_j > 1:
                    mid = (lo_j + hi_j) // 2
                    if tokens_before(pos[mid]) - ta <= max_tokens:
                        lo_j = mid
                    else:
                        hi_j = mid
                j = lo_j
                tj = tokens_before(pos[j])
            if j > i:
                if keep_open and j == m:
                    return block, a, hi, tj - ta
                self._add_range(out, text, block, a, pos[j], offset, page_num, tj - ta)
                i, ta = j, tj  # the next chunk starts where this one ends
                continue
            b = pos[i + 1]
            tb = tokens_before(b)
            if tb - ta > max_tokens or b - a > hard_chars:
                self._add_oversize(out, text, block, a, b, offset, page_num)
            else:
                self._add_range(out, text, block, a, b, offset, page_num, tb - ta)
            i, ta = i + 1, tb
        return None

    def _add_range(self, out: list[Draft], text: str, block: Any, a: int, b: int, offset: int, page_num: int,
                   est: int, kind: str = "text", tail: tuple[Any, int, int] | None = None) -> None:
        """Append a draft for ``text[a:b]`` stripped (one slice, plus ``tail`` for a figure after it)."""
        m = _NON_SPACE.search(text, a, b)
        if m is None:
            return
        s = m.start()
        e = b
        while text[e - 1].isspace():
            e -= 1
        if tail is None:
            parts = [(block, s, e, offset + s, page_num)]
        else:
            t_block, t_lo, t_hi = tail
            parts = ([(block, s, t_lo, offset + s, page_num)] if s < t_lo else []) + \
                [(t_block, max(s, t_lo), t_hi, offset + max(s, t_lo), page_num)]
            e = t_hi
        out.append(Draft(text[s:e], parts, offset + s, offset + e, page_num, page_num, est, kind))

    def _add_oversize(self, out: list[Draft], text: str, block: Any, a: int, b: int, offset: int,
                      page_num: int) -> None:
        cfg = self.config
        pieces = cut_oversize(text, a, b, max_tokens=cfg.max_tokens, hard_chars=cfg.hard_chars,
                              overlap_fraction=cfg.split_overlap_percent / 100, boundaries=self._boundaries,
                              count=self._measure.count, count_range=self._measure.range_counter(block, text))
        for piece in pieces:
            d = Draft(text[piece.start:piece.end], [(block, piece.start, piece.end, offset + piece.start, page_num)],
                      offset + piece.start, offset + piece.end, page_num, page_num, piece.tokens,
                      exact=piece.tokens)
            if piece.hard_left and out:
                d.hard_left = out[-1].hard_right = True
            out.append(d)

    def _figure(self, text: str, fs: int, fe: int, offset: int, page_num: int, out: list[Draft],
                builder: tuple[BlockTokens, int, int, int] | None, plain: PlainText) -> None:
        cfg = self.config
        fig = text[fs:fe]
        table = is_table_figure(fig)
        budget = cfg.table_tokens if table else cfg.max_figure_tokens  # figure_budget
        splitter = None
        f: int | None = None
        if table and len(fig) >= _LONG_TABLE_CHARS_PER_TOKEN * budget and not self._measure.injected:
            # Most likely over its budget: the rows its split counts anyway may show it without counting the
            # figure up to the budget first.
            splitter = FigureSplitter(text, fs, fe, boundaries=self._boundaries, count=self._measure.count,
                                      count_within=self._measure.count_within, additive=True)
            if splitter.tokens_at_least() <= budget:
                f = self._measure.count_within(fig, budget)
        else:
            # Only a figure within its budget needs its exact count; counting a larger one stops at the budget.
            f = self._measure.count_within(fig, budget)
        if f is None:
            # A caption right before the figure (its last line, a runt) goes with the first part when cutting every
            # part a little smaller leaves it room without an extra part (docs/splitters.md#step-5-oversize-figure).
            caption = self._caption_before(text, builder) if builder is not None else None
            room = budget - caption[2] - 2 if caption is not None else budget
            # One splitter for both budgets: the table's rows are found and counted once.
            splitter = splitter or FigureSplitter(
                text, fs, fe, boundaries=self._boundaries, count=self._measure.count,
                count_within=self._measure.count_within, additive=not self._measure.injected)
            parts = splitter.split(budget)
            if caption is not None and _NON_SPACE.search(text, builder[1], caption[0]) and is_runt(
                    builder[3] - caption[2], caption[0] - builder[1], cfg.max_tokens, cfg.max_chars):
                caption = None  # the prose before it would be left a runt
            if caption is not None and room >= budget // 2:
                roomy = splitter.split(room)
                if len(roomy) == len(parts):  # the caption costs no extra part
                    parts = roomy
                else:
                    caption = None
            else:
                caption = None
            if builder is not None:
                end = caption[0] if caption is not None else builder[2]
                self._add_range(out, text, builder[0], builder[1], end, offset, page_num,
                                builder[3] - (caption[2] if caption is not None else 0))
            for k, part in enumerate(parts):
                d = Draft(part.text, [part.text], offset + part.start, offset + part.end, page_num, page_num,
                          part.tokens, "figure_part", exact=part.tokens)
                if k == 0 and caption is not None:
                    ls, le, _ = caption
                    joined = text[ls:le] + "\n" + part.text
                    if self._measure.injected or part.text[0].isspace():
                        exact = self._measure.count(joined)
                    else:  # after a line break, before a non-space character: the counts add up
                        exact = self._measure.count(text[ls:le] + "\n") + part.tokens
                    if exact <= budget:
                        d = Draft(joined, [(builder[0], ls, le, offset + ls, page_num), "\n", part.text],
                                  offset + ls, offset + part.end, page_num, page_num, exact, "figure_part",
                                  exact=exact)
                    else:  # cannot happen with the room left; keep the caption as text rather than overflow
                        self._add_range(out, text, builder[0], ls, le, offset, page_num, caption[2])
                d.part_index, d.part_count = k, len(parts)
                out.append(d)
            return
        # Prose joins the figure after it only while both fit the cap together; otherwise the prose is flushed
        # and the figure stands alone (docs/splitters.md#step-3-accumulate).
        if builder is not None and builder[3] + f <= cfg.max_tokens:
            block, a, hi, est = builder
            plain.known[(fs, fe)] = f  # the final measurement adds it to the prose before it
            self._add_range(out, text, block, a, fe, offset, page_num, est + f, "figure", tail=(plain, fs, fe))
            return
        if builder is not None:
            self._add_range(out, text, builder[0], builder[1], builder[2], offset, page_num, builder[3])
        out.append(Draft(text[fs:fe], [(plain, fs, fe, offset + fs, page_num)], offset + fs, offset + fe,
                         page_num, page_num, f, "figure", exact=f))

    def _caption_before(self, text: str, builder: tuple[BlockTokens, int, int, int]) -> tuple[int, int, int] | None:
        """``(start, end, tokens)`` of the last line of the open prose ``text[a:hi]`` of *builder* when it is a
        runt without markup (a caption or a title right before a figure), else ``None``."""
        _, a, hi, _ = builder
        e = hi
        while e > a and text[e - 1].isspace():
            e -= 1
        ls = max(a, text.rfind("\n", a, e) + 1)
        while ls < e and text[ls].isspace():
            ls += 1
        if ls >= e or "<" in text[ls:e]:
            return None
        tokens = self._measure.count(text[ls:e])
        cfg = self.config
        return (ls, e, tokens) if is_runt(tokens, e - ls, cfg.max_tokens, cfg.max_chars) else None

    # ---- step 10 -------------------------------------------------------------------------------------------

    def _finish(self, d: Draft) -> list[Chunk]:
        """Final measurement of one chunk; repairs a chunk whose estimate was too low."""
        cfg = self.config
        if d.exact is not None and (not d.overlap or not self._measure.injected):
            # With a look-ahead, only the end of the own text is counted again with it.
            if d.overlap_parts is None:
                n = self._measure.with_suffix(d.text, d.exact, (), d.overlap)
            else:
                n = self._measure.with_suffix(d.text, d.exact, d.overlap_parts)
        else:
            n = self._measure.exact(*d.measure_parts())
        if d.kind == "text" and n > cfg.max_tokens:
            while d.overlap and n > cfg.max_tokens:
                sep = d.overlap[: len(d.overlap) - len(d.overlap.lstrip())]
                prefix = self._repair.shrink(d.overlap[len(sep):])
                shorter = sep + prefix if prefix else ""
                last = d.overlap_parts[-1] if d.overlap_parts else None
                if shorter and last is not None and not isinstance(last, str) and \
                        last[2] - (len(d.overlap) - len(shorter)) > last[1]:
                    # The shrunk look-ahead is a prefix of the old one: still a slice of the next chunk's block
                    # (ending earlier), so its count keeps reusing the block's tokens.
                    end = last[2] - (len(d.overlap) - len(shorter))
                    d.overlap_parts = d.overlap_parts[:-1] + [(last[0], last[1], end, last[3], last[4])]
                    d.overlap = shorter
                    n = self._measure.exact(*d.measure_parts())
                    continue
                d.overlap = shorter
                d.overlap_parts = None
                n = self._measure.exact(d.parts, d.overlap)
            if n > cfg.max_tokens:
                return list(self._resplit(d))
        elif d.kind == "figure" and n > cfg.max_tokens:
            if figure_blocks(d.text) != [(0, len(d.text))]:  # prose or other figures with it: apart
                return list(self._unbundle_figure(d))
            return [_flagged(d.to_chunk(n))]
        return [d.to_chunk(n)]

    def _emit(self, pending: tuple[Draft, list[Chunk]] | None,
              d: Draft) -> tuple[list[Chunk], tuple[Draft, list[Chunk]]]:
        """Finish *d* (step 10) and return the chunks ready to yield (those of the *pending* draft before it, and
        *d*'s own unless its last chunk carries a look-ahead) and the new pending pair (*d* and its chunks, or None).

        The pending draft's look-ahead copies the start of *d* as *d* was when it was attached. If *d* has been
        cut again since (its exact count was over ``max_tokens``), its first chunk may be no longer than that
        look-ahead: the look-ahead is then shrunk by step 8's rule until it is shorter than that chunk, so that
        no chunk is only a repeat of the previous one's look-ahead and no look-ahead reaches past the next chunk
        (docs/splitters.md#step-10-final-measurement).
        """
        chunks = self._finish(d)
        ready: list[Chunk] = []
        if pending is not None:
            prev, ready = pending
            if chunks and chunks[0].char_end != d.end and prev.overlap:
                own = _non_space_length(chunks[0].own_text)
                if _non_space_length(prev.overlap) >= own:
                    ready[-1:] = self._shorten_look_ahead(prev, own)
        if chunks and chunks[-1].overlap_chars:
            return ready, (d, chunks)
        return ready + chunks, None  # no look-ahead to check: yielded at once

    def _shorten_look_ahead(self, d: Draft, limit: int) -> list[Chunk]:
        """Shrink the look-ahead of *d* until it holds fewer than *limit* non-space characters, re-measure, and
        return *d*'s chunks."""
        while d.overlap and _non_space_length(d.overlap) >= limit:
            sep = d.overlap[: len(d.overlap) - len(d.overlap.lstrip())]
            prefix = self._repair.shrink(d.overlap[len(sep):])
            d.overlap = sep + prefix if prefix else ""
        d.overlap_parts = None
        n = self._measure.exact(d.parts, d.overlap)
        if n > self.config.max_tokens and d.overlap:  # a shorter BPE text can count more: drop the look-ahead
            d.overlap = ""
            n = self._measure.exact(d.parts, "")
        if n > self.config.max_tokens:
            return list(self._resplit(d))
        return [d.to_chunk(n)]

    def _resplit(self, d: Draft) -> Iterator[Chunk]:
        """Replace a text chunk still over ``max_tokens`` by step 4 applied to its own text (no look-ahead)."""
        cfg = self.config
        pieces = cut_oversize(d.text, 0, len(d.text), max_tokens=cfg.max_tokens, hard_chars=cfg.hard_chars,
                              overlap_fraction=cfg.split_overlap_percent / 100, boundaries=self._boundaries,
                              count=self._measure.count, count_range=self._measure.range_counter(text=d.text))
        for piece in pieces:
            yield self._sub_draft(d, piece.start, piece.end, piece.tokens, d.kind).to_chunk(piece.tokens)

    def _sub_draft(self, d: Draft, s: int, e: int, tokens: int, kind: str) -> Draft:
        start, page_start = d.locate(s)
        last, page_end = d.locate(e - 1)
        return Draft(d.text[s:e], d.sub_parts(s, e), start, last + 1, page_start, page_end, tokens, kind,
                     exact=tokens)

    def _unbundle_figure(self, d: Draft) -> Iterator[Chunk]:
        """Emit a figure chunk above ``max_tokens`` as its text pieces and figure blocks, apart."""
        pos = 0
        text = d.text
        for fs, fe in figure_blocks(text) + [(len(text), len(text))]:
            if _NON_SPACE.search(text, pos, fs):
                s = _NON_SPACE.search(text, pos, fs).start()
                e = len(text[:fs].rstrip())
                yield from self._finish(self._sub_draft(d, s, e, self._measure.count(text[s:e]), "text"))
            if fe > fs:
                n = self._measure.count(text[fs:fe])
                chunk = self._sub_draft(d, fs, fe, n, "figure").to_chunk(n)
                yield _flagged(chunk) if n > self.config.max_tokens else chunk
            pos = fe


def _non_space_length(text: str) -> int:
    """Number of characters of *text* that are not whitespace."""
    return len(text) - sum(map(len, _SPACE_RUNS.findall(text)))


def _flagged(chunk: Chunk) -> Chunk:
    """A figure kept whole over ``max_tokens`` (it is within ``max_figure_tokens``) says so in its metadata."""
    return dataclasses.replace(chunk, metadata={"over_max_tokens": True})


def _validated(page: Any, index: int, previous: tuple[int, int] | None) -> tuple[int, int, str]:
    """Check one page against the input rules (docs/splitters.md#what-a-chunk-carries); return
    ``(page_num, offset, text)``."""
    try:
        page_num, offset, text = page.page_num, page.offset, page.text
    except AttributeError:
        raise ValueError(f"page at index {index} is not a Page: {page!r}") from None
    name = f"page {page_num!r} (index {index})"
    if isinstance(page_num, bool) or not isinstance(page_num, int) or page_num < 0:
        raise ValueError(f"{name}: page_num must be an int >= 0")
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise ValueError(f"{name}: offset must be an int >= 0, got {offset!r}")
    if text is None:
        text = ""
    elif not isinstance(text, str):
        raise ValueError(f"{name}: text must be a str or None, got {type(text).__name__}")
    if previous is not None:
        prev_num, prev_end = previous
        if page_num <= prev_num:
            raise ValueError(f"{name}: page_num must be greater than the previous page's ({prev_num})")
        if offset < prev_end:
            raise ValueError(f"{name}: offset {offset} overlaps the previous page, which ends at {prev_end}")
    return page_num, offset, text
