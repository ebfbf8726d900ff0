"""The worked examples of docs/splitters.md#worked-examples, as exact outputs.

Each expected chunk is ``(text, char_start, char_end, page_start, page_end, token_count, overlap_chars, kind)``.
"""

from __future__ import annotations

import pytest

from chunking.model import Page
from chunking.splitters import SentenceTextSplitter
from tests.splitters.sentence_invariants import pages, rows

X = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
FIGURE_TABLE = (
    "<figure><figcaption>Prices</figcaption><table><tr><th>Item</th><th>Price</th></tr>"
    "<tr><td>Tea</td><td>3.50</td></tr><tr><td>Coffee</td><td>4.10</td></tr>"
    "<tr><td>Cake</td><td>5.25</td></tr><tr><td>Juice</td><td>2.80</td></tr></table></figure>"
)
PART_WRAPPER = "<figure><figcaption>Prices</figcaption><table><tr><th>Item</th><th>Price</th></tr>"
EX5_P0 = "Intro sentence finishes here. This clause is long but near the limit and the following portion would push it over"
EX5_P1 = "so the trailing fragment carry-forward moves this trailing portion forward. Remaining context continues here."


@pytest.mark.parametrize("max_tokens", [13, 500])
def test_example_1_simple_page(max_tokens):
    text = "Sentence one. Sentence two is slightly longer. Final short one."
    assert rows(SentenceTextSplitter(max_tokens=max_tokens).split_text(text)) == [
        (text, 0, 63, 0, 0, 13, 0, "text"),
    ]


@pytest.mark.parametrize("max_tokens", [24, 500])  # 23 exact; the estimate counts the space before the figure
def test_example_2_figure_stays_with_the_text_before_it(max_tokens):
    text = ('Heading line\nIntro before the figure. <figure><img src="x.png" alt="X"></figure> '
            "Text that follows the figure. Another sentence.")
    assert len(text) == 128
    assert rows(SentenceTextSplitter(max_tokens=max_tokens).split_text(text)) == [
        ('Heading line\nIntro before the figure. <figure><img src="x.png" alt="X"></figure>', 0, 80, 0, 0, 23, 0,
         "figure"),
        ("Text that follows the figure. Another sentence.", 81, 128, 0, 0, 9, 0, "text"),
    ]


def test_example_2_prose_is_flushed_when_prose_and_figure_exceed_the_cap():
    text = ('Heading line\nIntro before the figure. <figure><img src="x.png" alt="X"></figure> '
            "Text that follows the figure. Another sentence.")
    chunks = SentenceTextSplitter(max_tokens=9).split_text(text)
    assert rows(chunks) == [
        ("Heading line\nIntro before the figure.", 0, 37, 0, 0, 8, 0, "text"),
        ('<figure><img src="x.png" alt="X"></figure>', 38, 80, 0, 0, 15, 0, "figure"),
        ("Text that follows the figure. Another sentence.", 81, 128, 0, 0, 9, 0, "text"),
    ]
    # The image figure (no table) is kept whole within max_figure_tokens, and flagged as over the cap.
    assert [c.metadata for c in chunks] == [{}, {"over_max_tokens": True}, {}]


def test_example_3_hard_cut_at_11_reproduces_the_published_output():
    assert rows(SentenceTextSplitter(max_tokens=11).split_text(X + X)) == [
        (X + "ABCDEFGHIJKL", 0, 74, 0, 0, 9, 0, "text"),
        ("yz0123456789" + X, 50, 124, 0, 0, 11, 0, "text"),
    ]


def test_example_3_at_10_shrinks_the_left_extension():
    assert rows(SentenceTextSplitter(max_tokens=10).split_text(X + X)) == [
        (X + "ABCDEFGHIJKL", 0, 74, 0, 0, 9, 0, "text"),
        ("0123456789" + X, 52, 124, 0, 0, 10, 0, "text"),
    ]


def test_example_3_at_12_keeps_the_span_whole():
    assert rows(SentenceTextSplitter(max_tokens=12).split_text(X + X)) == [(X + X, 0, 124, 0, 0, 12, 0, "text")]


@pytest.mark.parametrize("max_tokens", [10, 13, 17])
def test_example_3b_word_break_fallback_with_look_ahead(max_tokens):
    text = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron"
    assert rows(SentenceTextSplitter(max_tokens=max_tokens).split_text(text))[1] == (
        "theta iota kappa lambda mu nu xi omicron", 40, 80, 0, 0, 10, 0, "text")
    if max_tokens == 10:
        assert rows(SentenceTextSplitter(max_tokens=10).split_text(text)) == [
            ("alpha beta gamma delta epsilon zeta eta theta iota", 0, 39, 0, 0, 10, 11, "text"),
            ("theta iota kappa lambda mu nu xi omicron", 40, 80, 0, 0, 10, 0, "text"),
        ]


@pytest.mark.parametrize("max_tokens", [16, 500])
def test_example_4_cross_page_merge(max_tokens):
    chunks = SentenceTextSplitter(max_tokens=max_tokens).split_pages([
        Page(0, 0, "The procedure continues to operate"),
        Page(1, 34, "under heavy load and completes successfully. Follow-up sentence."),
    ])
    assert rows(chunks) == [(
        "The procedure continues to operate under heavy load and completes successfully. Follow-up sentence.",
        0, 98, 0, 1, 16, 0, "text")]


def test_example_5_carry_forward_at_35():
    chunks = list(SentenceTextSplitter(max_tokens=35).split_pages([Page(0, 0, EX5_P0), Page(1, 113, EX5_P1)]))
    assert rows(chunks) == [
        ("Intro sentence finishes here.", 0, 29, 0, 0, 5, 0, "text"),
        (EX5_P0[30:] + " " + EX5_P1, 30, 222, 0, 1, 33, 0, "text"),
    ]
    assert chunks[1].page_num == 0


def test_example_5_at_500_merges_both_pages():
    chunks = SentenceTextSplitter(max_tokens=500).split_pages([Page(0, 0, EX5_P0), Page(1, 113, EX5_P1)])
    assert rows(chunks) == [(EX5_P0 + " " + EX5_P1, 0, 222, 0, 1, 38, 0, "text")]


# ---- "Further exact cases (ours)" ------------------------------------------------------------------------------


def test_decimals_and_abbreviations_do_not_end_sentences():
    chunks = SentenceTextSplitter(max_tokens=8).split_text("Dr. Smith paid $3.50 for e.g. apples. Then he left.")
    assert rows(chunks) == [
        ("Dr. Smith paid $3.50", 0, 20, 0, 0, 8, 0, "text"),
        ("for e.g. apples. Then he", 21, 37, 0, 0, 8, 8, "text"),
        ("Then he left.", 38, 51, 0, 0, 4, 0, "text"),
    ]


def test_cjk_sentence_continues_on_the_next_page():
    chunks = SentenceTextSplitter().split_pages(pages("这是一个没有结束的句子", "继续在下一页。"))
    assert rows(chunks) == [("这是一个没有结束的句子继续在下一页。", 0, 18, 0, 1, 17, 0, "text")]


def test_merges_chain_across_pages():
    chunks = SentenceTextSplitter().split_pages(pages("The cat", "sat on", "the mat today."))
    assert rows(chunks) == [("The cat sat on the mat today.", 0, 27, 0, 2, 8, 0, "text")]


def test_upper_case_start_continues_an_unfinished_sentence():
    chunks = SentenceTextSplitter().split_pages(pages("We met with", "Microsoft engineers yesterday."))
    assert rows(chunks) == [("We met with Microsoft engineers yesterday.", 0, 41, 0, 1, 7, 0, "text")]


def test_digit_start_continues_an_unfinished_sentence():
    chunks = SentenceTextSplitter().split_pages(pages("The total for the year was", "42 units, all sold."))
    assert [(c.text, c.char_start, c.char_end, c.page_start, c.page_end) for c in chunks] == [
        ("The total for the year was 42 units, all sold.", 0, 45, 0, 1)]


@pytest.mark.parametrize("first_line", ["Installation Notes", "1. First step.", "4.9 Pieces of code", "- an item",
                                        "\u2022 a bullet", "a) first case", "# Title"])
def test_heading_or_list_item_on_the_next_page_is_not_a_continuation(first_line):
    # Not glued as one sentence: the heading starts a line of its own. The fragment before it is a runt without
    # a sentence end, which joins what follows (as a title page does) instead of standing alone.
    chunks = list(SentenceTextSplitter().split_pages(pages("We met with", first_line + "\nMore text here.")))
    assert [(c.own_text, c.page_start, c.page_end) for c in chunks] == [
        ("We met with\n" + first_line + "\nMore text here.", 0, 1)]
    finished = list(SentenceTextSplitter().split_pages(pages("We met.", first_line + "\nMore text here.")))
    assert [(c.own_text, c.page_start) for c in finished][0] == ("We met.", 0)


def test_a_finished_sentence_is_not_continued_by_a_capital():
    chunks = SentenceTextSplitter(semantic_overlap_percent=0).split_pages(pages("We met.", "Microsoft came too."))
    assert [(c.text, c.page_start) for c in chunks] == [("We met.", 0), ("Microsoft came too.", 1)]


def test_join_after_a_tag_inserts_no_space():
    chunks = SentenceTextSplitter(max_tokens=80).split_pages(
        pages("<b>Bold tag close></b>", "continues here without leading space."))
    assert rows(chunks) == [("<b>Bold tag close></b>continues here without leading space.", 0, 59, 0, 1, 15, 0,
                             "text")]


def test_adjacent_figures():
    text = "Heading before.<figure><img src='a.png'/></figure><figure><img src='b.png'/></figure>Tail sentence."
    assert rows(SentenceTextSplitter(max_tokens=100).split_text(text)) == [
        ("Heading before.<figure><img src='a.png'/></figure>", 0, 50, 0, 0, 14, 0, "figure"),
        ("<figure><img src='b.png'/></figure>", 50, 85, 0, 0, 12, 0, "figure"),
        ("Tail sentence.", 85, 99, 0, 0, 3, 0, "text"),
    ]


def test_figure_at_the_end_of_a_page_is_never_torn():
    page0 = "Intro. <figure><figcaption>A chart. It shows growth</figcaption></figure>"
    page1 = "continues on the next page with more words here."
    chunks = SentenceTextSplitter(max_tokens=25).split_pages([Page(0, 0, page0), Page(1, 73, page1)])
    assert rows(chunks) == [
        (page0, 0, 73, 0, 0, 17, 0, "figure"),
        (page1, 73, 121, 1, 1, 11, 0, "text"),
    ]


@pytest.mark.parametrize("settings", [{"max_tokens": 70}, {"max_table_tokens": 70}])
def test_oversize_table_is_split_by_rows_with_the_header_repeated(settings):
    assert len(FIGURE_TABLE) == 241
    chunks = list(SentenceTextSplitter(**settings).split_text(FIGURE_TABLE))
    assert rows(chunks) == [
        (PART_WRAPPER + "<tr><td>Tea</td><td>3.50</td></tr><tr><td>Coffee</td><td>4.10</td></tr></table></figure>",
         0, 153, 0, 0, 68, 0, "figure_part"),
        (PART_WRAPPER + "<tr><td>Cake</td><td>5.25</td></tr><tr><td>Juice</td><td>2.80</td></tr></table></figure>",
         153, 241, 0, 0, 68, 0, "figure_part"),
    ]
    assert [(c.part_index, c.part_count) for c in chunks] == [(0, 2), (1, 2)]


def test_max_table_tokens_keeps_a_table_whole_over_the_cap():
    chunks = list(SentenceTextSplitter(max_tokens=70, max_table_tokens=8191).split_text(FIGURE_TABLE))
    assert rows(chunks) == [(FIGURE_TABLE, 0, 241, 0, 0, 105, 0, "figure")]
    assert chunks[0].metadata == {"over_max_tokens": True}


def test_a_row_over_the_cap_is_cut_between_cells():
    row = "".join(f"<td>cell number {i} holds words</td>" for i in range(6))
    text = f"<figure><table><tr><th>A</th><th>B</th></tr><tr>{row}</tr></table></figure>"
    chunks = SentenceTextSplitter(max_tokens=60).split_text(text)
    assert all(c.kind == "figure_part" and c.token_count <= 60 for c in chunks) and len(chunks) > 1
    for c in chunks:  # every part keeps the header and holds whole cells only
        assert c.text.startswith("<figure><table><tr><th>A</th><th>B</th></tr>")
        body = c.text[len("<figure><table><tr><th>A</th><th>B</th></tr>"):]
        assert body.count("<td>") == body.count("</td>") >= 1


def test_dot_leaders_are_not_sentence_ends():
    toc = "1 License . . . . . . . 1\n2 Installation . . . . 3\n3 Usage notes . . . . . 5\n"
    chunks = SentenceTextSplitter(max_tokens=500).split_text(toc)
    assert [(c.text, c.char_start, c.char_end) for c in chunks] == [(toc.strip(), 0, len(toc) - 1)]


@pytest.mark.parametrize(("text", "cuts"), [
    ("1 License . . . . 24\n2 Intro . . . 30\n", []),
    ("Done. Next . . . 5 The end.", [5, 27]),
    ("A lone dot . ends here", [12]),
    ("Wide .  .  . 7", []),
])
def test_dot_leader_cuts_do_not_depend_on_where_the_scan_starts(text, cuts):
    from chunking.splitters.sentence.boundaries import Boundaries
    from chunking.splitters.sentence.config import SentenceSplitterConfig

    boundaries = Boundaries(SentenceSplitterConfig())
    assert boundaries.sentence_cuts(text) == cuts
    for cmin in range(1, len(text)):
        assert boundaries.cuts_between(text, 0, len(text), cmin, len(text)) == [c for c in cuts if c >= cmin]


_PROSE = "The firewall tools are many. " * 20


def _table(rows: int, cell: str = "filters packets on port") -> str:
    body = "".join(f"<tr><td>tool{i}</td><td>{cell} {i}</td></tr>" for i in range(rows))
    return f"<figure><table><tr><th>Tool</th><th>Use</th></tr>{body}</table></figure>"


def test_a_caption_before_an_oversize_table_travels_with_its_first_part():
    text = _PROSE + "\nCuadro 5.7: Relación de herramientas de cortafuegos\n" + _table(40) + "\nAfter it."
    chunks = SentenceTextSplitter(max_tokens=500).split_text(text)
    assert [(c.kind, c.part_index) for c in chunks] == [("text", None), ("figure_part", 0), ("figure_part", 1),
                                                       ("text", None)]
    assert chunks[0].text == _PROSE.strip()
    assert chunks[1].text.startswith("Cuadro 5.7: Relación de herramientas de cortafuegos\n<figure><table><tr><th>")
    assert chunks[1].char_start == text.index("Cuadro") and chunks[1].token_count <= 500
    assert all(c.token_count <= 500 for c in chunks)


def test_a_caption_before_a_table_that_fits_alone_travels_with_it():
    table = _table(6)  # about 160 tokens: alone within 200, not with the prose before it
    text = _PROSE + "\nTable 2: Ports of the tools\n" + table
    chunks = SentenceTextSplitter(max_tokens=200).split_text(text)
    figure = [c for c in chunks if c.kind == "figure"]
    assert len(figure) == 1 and figure[0].text == "Table 2: Ports of the tools\n" + table
    assert not any("Table 2" in c.text for c in chunks if c.kind == "text")


def test_the_first_part_of_a_table_takes_one_caption_line_at_most():
    # Step 5 moves the last line ("B") into the first part; the line before it ("A") stays with the prose,
    # where it went into the part as well before.
    text = "Alpha beta gamma delta.\nA\nB\n<figure><table><tr><td>a</td></tr><tr><td>b</td></tr></table></figure>"
    chunks = SentenceTextSplitter(max_tokens=24, max_chars=100).split_text(text)
    assert rows(chunks) == [
        ("Alpha beta gamma delta.\nA", 0, 25, 0, 0, 6, 0, "text"),
        ("B\n<figure><table><tr><td>a</td></tr></table></figure>", 26, 62, 0, 0, 20, 0, "figure_part"),
        ("<figure><table><tr><td>b</td></tr></table></figure>", 62, 98, 0, 0, 18, 0, "figure_part"),
    ]
    assert [(c.part_index, c.part_count) for c in chunks] == [(None, None), (0, 2), (1, 2)]


def test_a_hard_cut_piece_merged_with_a_figure_on_the_next_page_overlaps_as_a_figure_chunk():
    # The CJK run is cut hard in two; its second piece continues on the next page, whose first chunk holds a
    # figure, so the merged chunk is of kind figure and still overlaps the first piece (invariant 6).
    chunks = list(SentenceTextSplitter(max_tokens=36, max_chars=100).split_pages(
        pages("说" * 37, "and it goes on and on <figure><img/></figure>")))
    assert rows(chunks) == [
        ("说" * 21, 0, 21, 0, 0, 21, 0, "text"),
        ("说" * 22 + "and it goes on and on <figure><img/></figure>", 15, 82, 0, 1, 35, 0, "figure"),
    ]


def test_a_held_figure_merged_with_the_first_piece_of_a_hard_cut_overlaps_the_next_piece():
    # The mirror case: the figure ends page 0 (ending in </figure> leaves it open to a continuation), the CJK run
    # of page 1 is cut hard in two, and its first piece merges into the figure chunk.
    chunks = list(SentenceTextSplitter(max_tokens=16, max_chars=50).split_pages(
        pages("<figure><img/></figure>", "说" * 17)))
    assert rows(chunks) == [
        ("<figure><img/></figure>" + "说" * 9, 0, 32, 0, 1, 16, 0, "figure"),
        ("说" * 10, 30, 40, 1, 1, 10, 0, "text"),
    ]


def test_a_title_page_joins_the_page_after_it():
    pages = [Page(0, 0, "Guía de referencia de Debian\nOsamu Aoki\n"),
             Page(1, 40, "Capítulo 1\n" + "Debian es un sistema operativo libre. " * 30)]
    chunks = list(SentenceTextSplitter().split_pages(pages))
    assert chunks[0].text.startswith("Guía de referencia de Debian\nOsamu Aoki\nCapítulo 1\nDebian es un")
    assert (chunks[0].page_start, chunks[0].page_end, chunks[0].char_start) == (0, 1, 0)
    assert min(c.token_count for c in chunks) >= 50


def test_no_runts_in_the_repository_pdfs():
    # docs/splitters.md#chunk-quality: chunks under 50 tokens are at most 0.5 % of the PDFs' chunks (none now;
    # the title page of the AMC manuals was one before it joined the page after it).
    from chunking.parsers import parse_document
    from tests.sample_documents import document_path

    for name in ("amc-manual.en.pdf", "amc-manual.ja.pdf"):
        pages = list(parse_document(document_path(name).read_bytes(), source=name))
        chunks = list(SentenceTextSplitter().split_pages(pages))
        assert [c.text[:40] for c in chunks if c.token_count < 50] == [], name
