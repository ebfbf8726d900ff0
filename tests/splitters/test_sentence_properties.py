"""Every invariant of docs/splitters.md#sentence-splitter-invariants as a hypothesis property.

Generated documents mix Latin and CJK sentences, decimals, abbreviations, URLs, figures and tables (small and
over ``max_figure_tokens``), long unpunctuated runs (CJK, base64), blank pages and page gaps; caps are small
(``max_tokens`` 8–60, ``max_chars`` 50–300) or the defaults.
"""

from __future__ import annotations

import string

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from chunking.model import Page
from chunking.splitters import SentenceTextSplitter
from chunking.splitters.sentence.boundaries import Boundaries
from chunking.splitters.sentence.config import SentenceSplitterConfig
from chunking.splitters.sentence.figures import FigureSplitter, _RowRuns
from chunking.splitters.sentence.measure import PlainText, TokenMeasure
from tests.splitters.sentence_invariants import check_determinism, check_invariants, tokens

PROPERTY_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

WORDS = (
    "river stone maple copper lantern orbit velvet harbor meadow signal pepper canvas glacier tunnel violet "
    "quartz falcon ember cedar walnut saddle prism comet basalt tundra willow anchor beacon cobalt dune "
    "fjord garnet hollow island jasper kettle lagoon marble nectar oyster pebble quiver rustle summit thistle"
).split()
HANZI = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法"
BASE64 = string.ascii_letters + string.digits + "+/"


@st.composite
def latin_sentence(draw) -> str:
    words = draw(st.lists(st.sampled_from(WORDS), min_size=2, max_size=14))
    words[0] = words[0].capitalize()
    return " ".join(words) + draw(st.sampled_from([". ", "! ", "? ", ".\n", ".\n\n", '." ', ". "]))


@st.composite
def cjk_sentence(draw) -> str:
    body = draw(st.text(alphabet=HANZI, min_size=2, max_size=40))
    return body + draw(st.sampled_from(["。", "！", "？", "。」", "，然后继续。"]))


@st.composite
def table_figure(draw) -> str:
    n = draw(st.integers(min_value=1, max_value=25))
    header = draw(st.sampled_from(["<thead><tr><th>Name</th><th>Value</th></tr></thead>",
                                   "<tr><th>Name</th><th>Value</th></tr>", ""]))
    rows = []
    for i in range(n):
        span = ' rowspan="2"' if draw(st.booleans()) and i % 5 == 0 else ""
        rows.append(f"<tr><td{span}>{draw(st.sampled_from(WORDS))} {i}</td><td>{i * 3}.{i % 10}</td></tr>")
    caption = draw(st.sampled_from(["", "<figcaption>Table of values. Read it.</figcaption>"]))
    return f"<figure>{caption}<table>{header}{''.join(rows)}</table></figure>"


SEGMENTS = st.one_of(
    latin_sentence(),
    latin_sentence(),
    cjk_sentence(),
    cjk_sentence(),
    st.sampled_from(["It costs $3.50 today. ", "Dr. Smith arrived. ", "Use e.g. apples here. ", "See Fig. 3 below. ",
                     "Visit www.example.com/a.b?q=1 now. ", "Version 1.2.3 is out. ", "1. Introduction\n",
                     "J. Doe wrote it. ", "Contents . . . . 7\n", "mid sentence without an end ",
                     "continues in lower case ", "中ABC DEF\n", "- item in a list\n", "\n\n\n", "   "]),
    st.sampled_from(["<figure><img src='x.png'/></figure>", "<figure><figcaption>A chart. It shows growth"
                     "</figcaption></figure>", "<FIGURE class='wide'><p>Upper case tag.</p></FIGURE> ",
                     "<figure><figure><img src='inner.png'/></figure></figure>"]),
    table_figure(),
    st.text(alphabet=HANZI, min_size=50, max_size=600),
    st.text(alphabet=BASE64, min_size=50, max_size=1500),
)


@st.composite
def documents(draw) -> list[Page]:
    n_pages = draw(st.integers(min_value=1, max_value=6))
    pages, offset = [], 0
    for num in range(n_pages):
        if draw(st.integers(min_value=0, max_value=5)) == 0:
            text = draw(st.sampled_from(["", "   ", "\n\n", " \t\n "]))
        else:
            text = "".join(draw(st.lists(SEGMENTS, min_size=1, max_size=8)))
        offset += draw(st.sampled_from([0, 0, 0, 1, 7]))  # gaps between pages
        pages.append(Page(num, offset, text))
        offset += len(text)
    return pages


SMALL_CAPS = st.fixed_dictionaries({
    "max_tokens": st.integers(min_value=8, max_value=60),
    "max_chars": st.integers(min_value=50, max_value=300),
    "max_figure_tokens": st.sampled_from([40, 80, 300, 8191]),
    "semantic_overlap_percent": st.sampled_from([0, 10, 25, 50]),
})


@PROPERTY_SETTINGS
@given(pages=documents(), caps=SMALL_CAPS)
# A fragment carried across a page break in front of CJK text: the space that joins them is a token of its own
# (without counting it the carried chunk went over max_tokens, was cut again, and its first piece was only the
# previous chunk's look-ahead).
@example(pages=[Page(0, 0, "continues in lower case "), Page(1, 24, "一" * 148 + "River river. "),
                Page(2, 185, ""), Page(3, 185, "")],
         caps={"max_tokens": 8, "max_chars": 50, "max_figure_tokens": 40, "semantic_overlap_percent": 10})
# A chunk cut again at its final measurement ("install 3.10.4\n`" over 8 tokens): its first piece, "install",
# was the whole look-ahead of the chunk before it.
@example(pages=[Page(0, 0, "`sh\npyenv install 3.10.4\n`")],
         caps={"max_tokens": 8, "max_chars": 50, "max_figure_tokens": 40, "semantic_overlap_percent": 10})
@example(pages=[Page(0, 0, "。unstable 版对开发者调试软件包合适，但对普通的桌面使用而言，")],
         caps={"max_tokens": 16, "max_chars": 100, "max_figure_tokens": 40, "semantic_overlap_percent": 25})
# The last piece of a hard cut merges with the next page's first chunk, which holds a figure: the pair still
# overlaps, and the later chunk is of kind figure (invariant 6).
@example(pages=[Page(0, 0, "说" * 37), Page(1, 37, "and it goes on and on <figure><img/></figure>")],
         caps={"max_tokens": 36, "max_chars": 100, "max_figure_tokens": 8191, "semantic_overlap_percent": 10})
# The mirror case: the first piece of a hard cut continues a held figure chunk and merges into it.
@example(pages=[Page(0, 0, "<figure><img/></figure>"), Page(1, 23, "说" * 17)],
         caps={"max_tokens": 16, "max_chars": 50, "max_figure_tokens": 8191, "semantic_overlap_percent": 10})
# Step 5 gives the first part of a table its caption line ("B"); the line before it ("A") must not follow it.
@example(pages=[Page(0, 0, "Alpha beta gamma delta.\nA\nB\n<figure><table><tr><td>a</td></tr><tr><td>b</td></tr>"
                           "</table></figure>")],
         caps={"max_tokens": 24, "max_chars": 100, "max_figure_tokens": 8191, "semantic_overlap_percent": 10})
def test_invariants_with_small_caps(pages, caps):
    splitter = SentenceTextSplitter(**caps)
    chunks = check_determinism(splitter, pages)
    check_invariants(pages, chunks, splitter.config)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pages=documents())
def test_invariants_with_defaults(pages):
    splitter = SentenceTextSplitter()
    chunks = list(splitter.split_pages(pages))
    check_invariants(pages, chunks, splitter.config)


@settings(max_examples=60, deadline=None)
@given(text=st.text(alphabet=HANZI + BASE64 + "=", min_size=1, max_size=5000),
       max_tokens=st.integers(min_value=8, max_value=60))
def test_unpunctuated_text_is_duplicated_at_most_30_percent(text, max_tokens):
    splitter = SentenceTextSplitter(max_tokens=max_tokens, max_chars=300)
    chunks = splitter.split_text(text)
    check_invariants([Page(0, 0, text)], chunks, splitter.config)
    assert sum(len(c.text) for c in chunks) <= 1.3 * len(text)


@settings(max_examples=60, deadline=None)
@given(pages=documents(), caps=SMALL_CAPS)
def test_split_text_is_split_pages_of_one_page(pages, caps):
    text = "".join(p.text for p in pages)
    splitter = SentenceTextSplitter(**caps)
    assert splitter.split_text(text) == list(splitter.split_pages([Page(0, 0, text)]))


CUT_TEXT = st.lists(st.sampled_from(list(".!?。！？\"')」 \n\tabcXYZ123") + ["e.g", "Dr", "J", "3.50", " . . ."]),
                    max_size=80).map("".join)


@PROPERTY_SETTINGS
@given(text=st.lists(st.one_of(CUT_TEXT, st.sampled_from(["Dr. Smith. ", "e.g. this. ", ". . . . 7", "3.50?! ",
                                                          "end.\")] Next", "1. Intro\n", "中文。"])),
                     max_size=12).map("".join),
       data=st.data())
def test_windowed_cut_search_agrees_with_the_full_scan(text, data):
    from chunking.splitters.sentence.boundaries import Boundaries
    from chunking.splitters.sentence.config import SentenceSplitterConfig

    bounds = Boundaries(SentenceSplitterConfig())
    lo = data.draw(st.integers(0, len(text)))
    hi = data.draw(st.integers(lo, len(text)))
    full = bounds.sentence_cuts(text, lo, hi)
    a = data.draw(st.integers(lo, hi))
    limit = data.draw(st.integers(a, hi))
    assert bounds.cuts_between(text, lo, hi, a, limit) == [c for c in full if a <= c <= limit]
    assert bounds.last_cut(text, lo, hi, a, limit) == max([c for c in full if a < c <= limit], default=-1)
    assert bounds.next_cut(text, lo, hi, a) == min([c for c in full if c > a], default=hi)
    whole = bounds.sentence_cuts(text)
    assert bounds.first_sentence_cut(text, a, limit) == min([c for c in whole if a <= c < limit], default=-1)


@PROPERTY_SETTINGS
@given(prefix=st.lists(st.sampled_from(list(" \t\n\r\u3000,.;:()。、，！？「」\"'-—") + ["ab", "X", "中文", "かな", "3.5", "Dr",
                                                                                 "e.g"]), max_size=40).map("".join))
@example(prefix="中文\r中文")  # a spaceless run after a space that is no word break, then another run
def test_look_ahead_shrink_lengths_match_the_step_by_step_rule(prefix):
    repair = SentenceTextSplitter()._repair
    for text in (prefix, prefix.strip()):
        expected, rest = [], text
        while rest:  # step 8's shrink rule (docs/splitters.md#step-8-look-ahead-overlap, item 4), again and again
            expected.append(len(rest))
            rest = repair.shrink(rest)
        assert repair._shrink_lengths(text) == expected


CELL_TEXT = st.lists(st.sampled_from(WORDS + list(HANZI[:12]) + [" ", "  ", "\n", "3.5", "&amp;", "é", "😀", "-"]),
                     max_size=6).map("".join)
ROW = st.builds(lambda attrs, cells, close: f"<tr{attrs}>{''.join(cells)}</tr{close}>",
                st.sampled_from(["", ' class="x"']),
                st.lists(st.builds(lambda tag, span, text: f"<{tag}{span}>{text}</{tag}>", st.sampled_from(["td", "th"]),
                                   st.sampled_from(["", ' rowspan="2"']), CELL_TEXT), min_size=1, max_size=4),
                st.sampled_from(["", " "]))


@settings(max_examples=200, deadline=None)
@given(groups=st.lists(ROW, min_size=1, max_size=6), data=st.data())
def test_table_row_runs_count_exactly_what_encoding_the_joined_rows_counts(groups, data):
    # Step 5 counts each row of a table once and a run of rows by addition (docs/splitters.md#performance);
    # every run, between any wrapper, must count what encoding it whole counts.
    runs = _RowRuns.of(groups, tokens)
    assert runs is not None and runs.group_tokens == [tokens(g) for g in groups]
    i = data.draw(st.integers(0, len(groups) - 1))
    j = data.draw(st.integers(i + 1, len(groups)))
    prefix = data.draw(st.sampled_from(["", "<figure><table>", "<figure><figcaption>Caption 中</figcaption><table>"]))
    suffix = data.draw(st.sampled_from(["", "</table></figure>", "</table>\n</figure>"]))
    assert runs.tokens(prefix, i, j, suffix) == tokens(prefix + "".join(groups[i:j]) + suffix)


LOOK_AHEAD = st.lists(st.sampled_from(WORDS + list(HANZI[:12]) + [" ", "\n", "\n\n", ". ", "3.5", "é", "😀", "-",
                                                                   "'s"]), min_size=1, max_size=8).map("".join)


@settings(max_examples=200, deadline=None)
@given(text=st.one_of(CELL_TEXT, ROW, table_figure(), latin_sentence()), suffix=LOOK_AHEAD)
def test_a_known_count_extended_by_a_look_ahead_counts_what_encoding_the_whole_counts(text, suffix):
    # The final measurement of a chunk whose own count is known re-counts only its end with the look-ahead
    # (docs/splitters.md#performance).
    measure = TokenMeasure("cl100k_base")
    assert measure.with_suffix(text, tokens(text), (), suffix) == tokens(text + suffix)
    page = "Next, a sentence long enough for its inner tokens to be reused. " + suffix
    block = measure.block(page, 0, len(page))
    assert measure.with_suffix(text, tokens(text), [(block, 0, len(page), 0, 0)]) == tokens(text + page)


@settings(max_examples=200, deadline=None)
@given(figure=table_figure(), before=st.sampled_from(["", "Intro.\n", "Intro ", "中文。"]), suffix=LOOK_AHEAD)
def test_a_measured_figure_followed_by_text_counts_what_encoding_the_whole_counts(figure, before, suffix):
    # A figure whose count is recorded is not re-encoded when text follows it: its two ends are counted with
    # their neighbours and the rest is its recorded count less those ends.
    page = "Prose. " + figure + " after"
    fs = page.index("<figure>")
    fe = fs + len(figure)
    plain = PlainText(page)
    plain.known[(fs, fe)] = tokens(figure)
    measure = TokenMeasure("cl100k_base")
    assert measure.exact([before, (plain, fs, fe, fs, 0)], suffix) == tokens(before + figure + suffix)


def _figure_splitter(page: str, additive: bool = True) -> FigureSplitter:
    start = page.index("<figure")
    return FigureSplitter(page, start, len(page), boundaries=Boundaries(SentenceSplitterConfig()), count=tokens,
                          additive=additive)


def test_the_rows_of_a_table_bound_its_tokens_by_their_interiors():
    # Between the first and the last pre-token boundary of each row (after "<tr" and after "</tr").
    page = "Intro. <figure><table><tr><td>alpha</td></tr>\n<tr><td>beta 2</td></tr></table></figure>"
    assert _figure_splitter(page).tokens_at_least() == tokens("><td>alpha</td></tr") + tokens("><td>beta 2</td></tr")
    assert _figure_splitter(page, additive=False).tokens_at_least() == 0  # an injected counter: no bound
    assert _figure_splitter("<figure><img src='x.png'/></figure>").tokens_at_least() == 0


@settings(max_examples=200, deadline=None)
@given(figure=table_figure(), separator=st.sampled_from(["", "\n", " "]))
def test_the_rows_of_a_table_never_count_more_than_the_table(figure, separator):
    # Step 5 skips counting a long table up to its budget when its rows alone are over it
    # (docs/splitters.md#performance): the rows' count must never exceed the figure's.
    figure = figure.replace("</tr><tr>", "</tr>" + separator + "<tr>")
    bound = _figure_splitter(figure).tokens_at_least()
    assert bound <= tokens(figure)
    assert bound > 0 or "rowspan" in figure  # rows bound by a rowspan are left out of the bound
