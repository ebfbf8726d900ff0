"""The look-ahead search of step 8 lists its shrink candidates only near the token cap
(docs/splitters.md#performance); these properties check that this changes nothing:

- the candidates listed window by window, from any starting length, are exactly those of
  ``Repairer._shrink_lengths`` within the room;
- the search from an anchor over the lazily listed candidates returns what the galloping search over the whole
  list, longest first, returns, for any predicate (BPE counts of a growing prefix need not be monotone).
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from chunking.splitters import SentenceTextSplitter
from chunking.splitters.sentence.repair import _Candidates, _last_true

SEARCH_SETTINGS = settings(max_examples=200, deadline=None)
PIECES = list(" \t\n\r\u3000,.;:()。、，！？「」\"'-—") + ["ab", "Xyz", "中文", "かな", "3.5", "Dr", "e.g", "word "]
prefixes = st.lists(st.sampled_from(PIECES), min_size=1, max_size=90).map("".join)


def _whole_list_search(n: int, pred, guess: int) -> int | None:
    """The reference: smallest ``i`` with ``pred(i)`` over all ``n`` candidates longest first, galloping from
    ``guess`` and bisecting (the search the splitter ran over the whole list before it listed lazily)."""
    last = n - 1
    guess = min(max(guess, 0), last)
    if pred(guess):
        good, step = guess, 1
        while good - step >= 0 and pred(good - step):
            good -= step
            step *= 2
        bad = max(good - step, -1)
    else:
        bad, step = guess, 1
        while bad + step < last and not pred(bad + step):
            bad += step
            step *= 2
        good = min(bad + step, last)
        if good == last and not pred(last):
            return None
    while good - bad > 1:
        mid = (good + bad) // 2
        if pred(mid):
            good = mid
        else:
            bad = mid
    return good


def _expected(repair, prefix: str, room: int) -> list[int]:
    return sorted(n for n in repair._shrink_lengths(prefix) if n <= room)


@SEARCH_SETTINGS
@given(prefix=prefixes, start=st.integers(0, 400), room=st.integers(0, 400))
def test_candidates_listed_by_windows_are_the_whole_lists(prefix, start, room):
    repair = SentenceTextSplitter()._repair
    if prefix.isspace():  # the look-ahead gives up on a blank prefix before searching
        return
    cands = _Candidates(repair, prefix, room)
    cands.start_at(start)
    cands.shortest(), cands.longest()
    assert cands.known == _expected(repair, prefix, room)


@SEARCH_SETTINGS
@given(prefix=prefixes, start=st.integers(0, 400), room=st.integers(1, 400), seed=st.integers(0, 2**32))
def test_the_search_from_an_anchor_probes_as_the_whole_list_search(prefix, start, room, seed):
    repair = SentenceTextSplitter()._repair
    if prefix.isspace():
        return
    whole = _expected(repair, prefix, room)  # ascending
    n = len(whole)
    rng = random.Random(seed)
    for _ in range(30):  # random answers per length (not true-then-false) and anchors, on one prefix
        trial, share = rng.getrandbits(32), rng.choice([0.2, 0.5, 0.8])

        def fits(length: int) -> bool:
            return random.Random(trial * 1009 + length).random() < share

        cands = _Candidates(repair, prefix, room)
        cands.start_at(start)
        if not cands.known:
            cands.anchor_at_shortest()
        if not cands.known:
            assert not whole
            return
        cands.anchor = rng.randrange(len(cands.known))
        at = whole.index(cands.known[cands.anchor])
        got = _last_true(cands, lambda r: fits(cands.length(r)))
        ref = _whole_list_search(n, lambda i: fits(whole[n - 1 - i]), n - 1 - at)
        assert (None if got is None else cands.length(got)) == (None if ref is None else whole[n - 1 - ref])
