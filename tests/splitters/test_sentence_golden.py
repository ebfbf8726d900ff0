"""Speed work on the sentence splitter changes no chunk: every test document gives the chunks recorded in
``data/sentence_golden.json`` (see ``sentence_golden.py``), and each shortcut equals the plain rule it replaces
on generated text, including the pre-token boundary sums that exact counts are assembled from
(docs/splitters.md#exact-counts-from-pre-token-boundaries)."""

from __future__ import annotations

import functools
import json
import re

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from chunking.splitters.sentence.boundaries import Boundaries
from chunking.splitters.sentence.config import SPACELESS_RANGES, SentenceSplitterConfig
from chunking.splitters.sentence.cuts import _BLANK_LINE, _SPACE, paragraph_cuts
from chunking.splitters.sentence.figures import split_figure
from chunking.splitters.sentence.measure import TokenMeasure
from chunking.splitters.sentence.repair import _spaceless_run_start
from chunking.tokens import get_backend, get_encoding
from chunking.tokens.backends import PRE_TOKEN_BOUNDARY
from tests.splitters.sentence_golden import GOLDEN, PAGES, SETTINGS, compute

PROPERTIES = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_ENCODE = get_encoding().encode_ordinary


def test_every_document_gives_the_recorded_chunks():
    recorded = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert set(recorded) == set(SETTINGS) | {PAGES}
    now = compute()
    assert len(recorded[PAGES]) == 8
    for name, digest in recorded[PAGES].items():
        # New pages mean a parser changed: the chunk digests of that document no longer test the splitter alone.
        assert now[PAGES][name] == digest, (
            f"the parsed pages of {name} changed (a parser change, not the splitter): if that is meant, rewrite the "
            "digests with `python -m tests.splitters.sentence_golden` in the same commit")
    for setting in SETTINGS:
        documents = recorded[setting]
        assert len(documents) == 8
        for name, (count, digest) in documents.items():
            assert now[setting][name] == [count, digest], f"the splitter's chunks of {name} changed ({setting})"
    assert sum(n for setting in SETTINGS for n, _ in recorded[setting].values()) > 3000


# Text where tokenisation is delicate: contractions, digit runs, whitespace runs before words and newlines,
# CJK with its punctuation, emoji sequences, accents, punctuation runs.
PIECES = st.sampled_from([
    "word", "Word", " the", "'s", "'ll", "'VE", "it's", " don't", "12", "2026", "3.14159", " 1234567",
    "  ", "   ", "\t", "\n", "\n\n", "\r\n", " \n ", "東京", "は雨です", "。", "、", "，", "「引用」", "日本語",
    "한국어", "🙂", "👍🏽", "👨\u200d👩\u200d👧", "café", "e\u0301", "naïve", ".", "...", "!?", " (", ")", "--", "<|endoftext|>",
    "x" * 40, "\u3000", "\u00a0",
])
TEXTS = st.lists(PIECES, max_size=60).map("".join)


@PROPERTIES
@given(TEXTS)
@example("Hello world's end.\n\n  Next 12345 東京は、雨です。🙂 done")
def test_counts_add_up_across_every_pre_token_boundary(text):
    count = get_backend().count
    whole = len(_ENCODE(text))
    for m in PRE_TOKEN_BOUNDARY.finditer(text):
        b = m.end()
        assert count(text[:b]) + count(text[b:]) == whole, (text, b)
        assert _ENCODE(text[:b]) + _ENCODE(text[b:]) == _ENCODE(text)


@PROPERTIES
@given(TEXTS, st.sampled_from(["\n", "\r", "\r\n", " \n", "\n\n", ".\n", "\t\n  \n"]), TEXTS)
@example("Tabla", "\n", "<figure><table><tr><td>1</td></tr></table></figure>")
def test_counts_add_up_after_a_line_break_before_a_non_space(head, line_break, tail):
    # The rule that lets a figure's count be reused after the prose before it.
    tail = tail.lstrip()
    if not tail:
        return
    count = get_backend().count
    assert count(head + line_break) + count(tail) == len(_ENCODE(head + line_break + tail))


@PROPERTIES
@given(TEXTS, st.data())
def test_exact_slice_counts_from_block_tokens_equal_direct_counts(text, data):
    measure = TokenMeasure("cl100k_base")
    lo = data.draw(st.integers(0, len(text)))
    hi = data.draw(st.integers(lo, len(text)))
    block = measure.block(text, lo, hi)
    start = data.draw(st.integers(lo, hi))
    end = data.draw(st.integers(start, hi))
    assert block.exact_count(start, end, measure.count) == len(_ENCODE(text[start:end]))
    inner = block.reusable_interior(start, end)
    if inner is not None:  # the reused interior is exactly the tokens of its own text
        q1, q2 = inner
        assert block.tokens_before(q2) - block.tokens_before(q1) == len(_ENCODE(text[q1:q2]))


def _paragraph_cuts_full_scan(text: str, cmin: int, cmax: int, hi: int) -> list[int]:
    """The rule of ``paragraph_cuts`` with the blank-line search running to ``hi``."""
    out: list[int] = []
    for m in _BLANK_LINE.finditer(text, max(cmin - 1, 0), hi):
        p = m.start()
        while p > 0 and text[p - 1] in _SPACE:
            p -= 1
        if p > cmax:
            break
        if p >= cmin and p > 0 and (not out or out[-1] != p):
            out.append(p)
    return out


@PROPERTIES
@given(st.lists(st.sampled_from(["a", "word.", " ", "  ", "\t", "\n", "\n\n", " \n \n", "\r\n", "中"]),
                max_size=50).map("".join), st.data())
def test_paragraph_cuts_stop_early_and_agree_with_the_full_scan(text, data):
    hi = data.draw(st.integers(0, len(text)))
    cmin = data.draw(st.integers(0, hi + 1))
    cmax = data.draw(st.integers(cmin - 1, hi + 1))
    assert paragraph_cuts(text, cmin, cmax, hi) == _paragraph_cuts_full_scan(text, cmin, cmax, hi)


_SPACELESS_AT_END = re.compile("[" + "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in SPACELESS_RANGES) + "]+\\Z")


@PROPERTIES
@given(st.lists(st.sampled_from(["中文", "かな", "ก", "a", " ", "。", "、", "X", "\r"]), max_size=30).map("".join),
       st.data())
def test_spaceless_run_at_the_end_is_found_in_one_pass(text, data):
    end = data.draw(st.integers(0, len(text)))
    m = _SPACELESS_AT_END.search(text, 0, end)
    assert _spaceless_run_start(text, end) == (-1 if m is None else m.start())


@functools.cache
def _boundaries() -> Boundaries:
    return Boundaries(SentenceSplitterConfig())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["river", "東京は雨です", "12.5", "a b c d e f", "x" * 60]),
                          st.booleans()), min_size=1, max_size=30),
       st.sampled_from([20, 40, 80]))
def test_figure_split_stopping_at_the_budget_equals_full_counts(rows, budget):
    rowspan = ' rowspan="2"'
    cells = "".join(f"<tr><td{rowspan if span else ''}>{text}</td><td>{i}</td></tr>"
                    for i, (text, span) in enumerate(rows))
    page = f"Intro. <figure><figcaption>Values.</figcaption><table><tr><th>A</th></tr>{cells}</table></figure>"
    start, end = page.index("<figure>"), len(page)
    count = lambda s: len(_ENCODE(s))  # noqa: E731
    full = split_figure(page, start, end, budget=budget, boundaries=_boundaries(), count=count)
    till = get_backend().count_till_limit
    assert split_figure(page, start, end, budget=budget, boundaries=_boundaries(), count=count,
                        count_within=till) == full
    assert all(part.tokens == count(part.text) for part in full)

