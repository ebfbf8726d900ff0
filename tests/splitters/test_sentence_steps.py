"""One test per algorithm step (0–10) and per required improvement (R1–R16) of
the sentence splitter (docs/splitters.md#the-steps, docs/splitters.md#departures-from-azure-search-openai-demo),
each on a small literal input with its exact output.

Inputs use distinct alphabetic and CJK sentences (R16): an overlap or a cut at the wrong place changes the
expected text. Rows are ``(text, char_start, char_end, page_start, page_end, token_count, overlap_chars, kind)``.
"""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from chunking.model import Chunk, Page
from chunking.splitters import SentenceSplitterConfig, SentenceTextSplitter
from chunking.splitters.sentence.boundaries import Boundaries, is_heading_like, join_separator
from chunking.splitters.sentence.oversize import _longest_fitting
from tests.splitters.sentence_invariants import check_invariants, pages, rows, tokens

# 498 distinct common ideographs, each about one token: unpunctuated CJK
# (docs/splitters.md#departures-from-azure-search-openai-demo, R6).
COMMON_HANZI = (
    "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行"
    "学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前"
    "外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军"
    "很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别"
    "她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油"
    "思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才"
    "科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿"
    "千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按"
    "格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严"
)


def split(text_or_pages, **settings) -> list[Chunk]:
    splitter = SentenceTextSplitter(**settings)
    if isinstance(text_or_pages, str):
        chunks = splitter.split_text(text_or_pages)
        check_invariants([Page(0, 0, text_or_pages)], chunks, splitter.config)
    else:
        chunks = list(splitter.split_pages(text_or_pages))
        check_invariants(text_or_pages, chunks, splitter.config)
    return chunks


# ---- steps ---------------------------------------------------------------------------------------------------


def test_step0_blank_page_keeps_the_sentence_open_and_its_newline_joins():
    assert rows(split(pages("The cat", "   \n ", "sat on the mat."))) == [
        ("The cat\nsat on the mat.", 0, 27, 0, 2, 8, 0, "text"),
    ]


def test_step0_blank_and_empty_documents_give_no_chunks():
    assert split(pages("", "  \n\t ")) == []
    assert list(SentenceTextSplitter().split_pages([])) == []
    assert list(SentenceTextSplitter().split_pages([Page(0, 0, None)])) == []  # type: ignore[arg-type]


def test_step1_figure_blocks_are_case_insensitive_and_unpaired_tags_are_text():
    assert rows(split("Before. <FIGURE class='x'><img/></FIGURE> After it.", max_tokens=100)) == [
        ("Before. <FIGURE class='x'><img/></FIGURE>", 0, 41, 0, 0, 14, 0, "figure"),
        ("After it.", 42, 51, 0, 0, 3, 0, "text"),
    ]
    # A close before any opening and an opening never closed are ordinary text.
    text = "A </figure> stray close. Then <figure> never closed."
    assert [(c.text, c.kind) for c in split(text, max_chars=30, semantic_overlap_percent=0)] == [
        ("A </figure> stray close.", "text"),
        ("Then <figure> never closed.", "text"),
    ]


def test_step2_spans_end_with_their_cluster_and_whitespace_starts_the_next():
    assert rows(split("A. B.", max_chars=3)) == [
        ("A.", 0, 2, 0, 0, 2, 0, "text"),
        ("B.", 3, 5, 0, 0, 2, 0, "text"),
    ]


def test_step3_accumulates_up_to_max_chars():
    assert rows(split("Alpha one. Beta two. Gamma three.", max_chars=21, semantic_overlap_percent=0)) == [
        ("Alpha one. Beta two.", 0, 20, 0, 0, 6, 0, "text"),
        ("Gamma three.", 21, 33, 0, 0, 3, 0, "text"),
    ]


def test_step3_accumulates_up_to_max_tokens():
    assert rows(split("Alpha one. Beta two. Gamma three. Delta four.", max_tokens=6,
                      semantic_overlap_percent=0)) == [
        ("Alpha one. Beta two.", 0, 20, 0, 0, 6, 0, "text"),
        ("Gamma three. Delta four.", 21, 45, 0, 0, 6, 0, "text"),
    ]


def test_step3_span_over_max_chars_is_cut_and_never_combined():
    assert rows(split("Hi. A somewhat long one. Ok.", max_chars=10, semantic_overlap_percent=0)) == [
        ("Hi.", 0, 3, 0, 0, 2, 0, "text"),
        ("A somewhat", 4, 14, 0, 0, 2, 0, "text"),
        ("long one.", 15, 24, 0, 0, 3, 0, "text"),
        ("Ok.", 25, 28, 0, 0, 2, 0, "text"),
    ]


def test_step4_hard_cut_never_separates_a_combining_mark():
    text = "e\u0301" * 12
    chunks = split(text, max_tokens=4)
    assert [(c.char_start, c.char_end) for c in chunks] == [(0, 2), (2, 6), (6, 8), (8, 12), (12, 14), (14, 18),
                                                            (18, 20), (20, 24)]
    assert all(c.text[0] == "e" for c in chunks)



@pytest.mark.parametrize("o", [1, 2, 3, 7, 8, 48, 100])
def test_step4_overlap_search_finds_the_longest_fitting_extension_in_few_counts(o):
    for longest in range(o + 1):
        probes: list[int] = []

        def fits_at(r: int) -> bool:
            probes.append(r)
            return r <= longest

        assert _longest_fitting(o, fits_at) == longest
        assert all(1 <= r <= o for r in probes)
        # o, then 1, then galloping and bisection: never the o counts of a scan from o down.
        assert len(probes) <= 2 + 2 * o.bit_length()
    assert _longest_fitting(0, lambda r: True) == 0


def test_step4_overlap_search_probes_in_order():
    probes: list[int] = []
    assert _longest_fitting(48, lambda r: probes.append(r) or r <= 12) == 12
    assert probes == [48, 1, 2, 4, 8, 16, 12, 14, 13]

def test_step5_non_table_figure_is_cut_after_paragraphs():
    text = "<figure><p>First paragraph text here.</p><p>Second paragraph text there.</p></figure>"
    assert rows(split(text, max_figure_tokens=15)) == [
        ("<figure><p>First paragraph text here.</p></figure>", 0, 41, 0, 0, 14, 0, "figure_part"),
        ("<figure><p>Second paragraph text there.</p></figure>", 41, 85, 0, 0, 14, 0, "figure_part"),
    ]


def test_step5_rowspan_binds_rows_into_one_part():
    text = ("<figure><table><tr><th>K</th><th>V</th></tr><tr><td rowspan=2>a</td><td>1</td></tr>"
            "<tr><td>2</td></tr><tr><td>b</td><td>3</td></tr></table></figure>")
    header = "<figure><table><tr><th>K</th><th>V</th></tr>"
    assert rows(split(text, max_table_tokens=60)) == [
        (header + "<tr><td rowspan=2>a</td><td>1</td></tr><tr><td>2</td></tr></table></figure>", 0, 102, 0, 0, 51,
         0, "figure_part"),
        (header + "<tr><td>b</td><td>3</td></tr></table></figure>", 102, 148, 0, 0, 38, 0, "figure_part"),
    ]


def test_step6_merge_and_step9_chain_across_three_pages():
    assert rows(split(pages("The cat", "sat on", "the mat today."))) == [
        ("The cat sat on the mat today.", 0, 27, 0, 2, 8, 0, "text"),
    ]


def test_step7_chunks_are_stripped_and_offsets_point_at_the_stripped_text():
    assert rows(split("  \n\n\nHello world.  ")) == [("Hello world.", 5, 17, 0, 0, 3, 0, "text")]


def test_step8_look_ahead_stops_at_a_cjk_sentence_end():
    assert rows(split("第一句话在这里结束。第二句话也在这里结束。第三句。", max_chars=20, semantic_overlap_percent=50)) == [
        ("第一句话在这里结束。第二句话也在这里结束。", 0, 10, 0, 0, 21, 11, "text"),
        ("第二句话也在这里结束。第三句。", 10, 25, 0, 0, 16, 0, "text"),
    ]


def test_step8_look_ahead_drops_spaceless_characters_one_at_a_time_and_skips_hard_pairs():
    assert rows(split("第一句话在这里结束。第二句话也在这里继续下去然后结束。", max_chars=12, semantic_overlap_percent=50)) == [
        ("第一句话在这里结束。第二句话", 0, 10, 0, 0, 15, 4, "text"),
        ("第二句话也在这里继", 10, 19, 0, 0, 11, 0, "text"),  # hard pair with the next: no look-ahead
        ("里继续下去然后结束。", 17, 27, 0, 0, 11, 0, "text"),
    ]


def test_step9_streams_page_by_page():
    pulled = []

    def gen():
        for page in pages("First page sentence.", "Second page sentence.", "Third page sentence."):
            pulled.append(page.page_num)
            yield page

    chunks = SentenceTextSplitter().split_pages(gen())
    first = next(chunks)
    assert (first.text, pulled) == ("First page sentence.", [0, 1])
    assert [c.text for c in chunks] == ["Second page sentence.", "Third page sentence."]


def test_step10_a_chunk_whose_estimate_was_too_low_is_cut_again():
    calls: list[str] = []

    def counter(text: str) -> int:  # span counts add up to less than the count of the joined text
        calls.append(text)
        return len(text.strip()) // 10

    chunks = list(SentenceTextSplitter(max_tokens=3, max_chars=100, token_counter=counter).split_text(
        "Nineteen chars one. Nineteen chars two. Nineteen chars six."))
    assert rows(chunks) == [
        ("Nineteen chars one. Nineteen chars two.", 0, 39, 0, 0, 3, 0, "text"),
        ("Nineteen chars six.", 40, 59, 0, 0, 1, 0, "text"),
    ]
    assert calls[:3] == ["Nineteen chars one.", " Nineteen chars two.", " Nineteen chars six."]


def test_step10_token_count_is_exact_after_look_ahead():
    text = " ".join(f"Sentence number {w} is here." for w in ("one", "two", "three", "four", "five", "six"))
    for c in split(text, max_chars=60):
        assert c.token_count == tokens(c.text)



@pytest.mark.parametrize(
    "text, max_tokens, expected",
    [
        # "`sh\npyenv install" (look-ahead " install") before "install 3.10.4\n`", which is then cut again at its
        # exact count: its first piece, "install", was no longer than the look-ahead before it.
        ("`sh\npyenv install 3.10.4\n`", 8, [
            ("`sh\npyenv", 0, 9, 0, 0, 5, 0, "text"),
            ("install", 10, 17, 0, 0, 1, 0, "text"),
            ("3.10.4\n`", 18, 26, 0, 0, 7, 0, "text"),
        ]),
        ("。unstable 版对开发者调试软件包合适，但对普通的桌面使用而言，", 16, [
            ("。", 0, 1, 0, 0, 1, 0, "text"),
            ("unstable", 1, 9, 0, 0, 2, 0, "text"),
            ("版对开发者调试软件包合适，", 10, 23, 0, 0, 14, 0, "text"),
            ("但对普通的桌面使用而言，", 23, 35, 0, 0, 13, 0, "text"),
        ]),
    ],
)
def test_step10_a_chunk_cut_again_is_not_only_the_look_ahead_before_it(text, max_tokens, expected):
    assert rows(split(text, max_tokens=max_tokens)) == expected

# ---- required improvements ------------------------------------------------------------------------------------


def test_r1_carry_forward_keeps_text_order():
    chunks = split(pages("First sentence ends. alpha beta gamma delta epsilon",
                         "zeta eta theta iota kappa lambda mu nu xi omicron pi rho."), max_tokens=20)
    assert rows(chunks) == [
        ("First sentence ends. alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi",
         0, 26, 0, 0, 19, 67, "text"),
        ("beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho.", 27, 108, 0, 1, 20, 0,
         "text"),
    ]


def test_r2_look_ahead_is_joined_with_a_space_and_shrinks_by_whole_words():
    assert rows(split("First words here. Second sentence here.", max_chars=20, semantic_overlap_percent=50)) == [
        ("First words here. Second", 0, 17, 0, 0, 5, 7, "text"),
        ("Second sentence here.", 18, 39, 0, 0, 4, 0, "text"),
    ]


@pytest.mark.parametrize(
    "gap, a_last, b_first, sep",
    [(2, "a", "b", "\n"), (1, "a", "b", " "), (0, ">", "b", ""), (0, "a", "b", " "), (0, "7", "b", " "),
     (0, "中", "b", ""), (0, "a", "文", ""), (0, ".", "b", ""), (0, "한", "국", " ")],
)
def test_r2_join_rule(gap, a_last, b_first, sep):
    assert join_separator(gap, a_last, b_first) == sep


def test_r3_figure_caption_with_a_full_stop_is_never_torn_by_repair():
    page0 = "Intro. <figure><figcaption>A chart. It shows growth</figcaption></figure>"
    page1 = "continues on the next page with more words here."
    chunks = split([Page(0, 0, page0), Page(1, 73, page1)], max_tokens=25)
    assert [c.text for c in chunks] == [page0, page1]
    assert chunks[0].overlap_chars == 0


def test_r4_every_chunk_fits_the_embedding_cap_even_for_a_huge_table():
    rows_html = "".join(f"<tr><td>item {i}</td><td>{i * 7} units of stock</td></tr>" for i in range(400))
    figure = f"<figure><table><thead><tr><th>Item</th><th>Stock</th></tr></thead>{rows_html}</table></figure>"
    chunks = split(figure, embedding_max_tokens=1000, max_figure_tokens=1000, max_table_tokens=1000)
    assert len(chunks) > 5 and all(c.kind == "figure_part" and c.token_count <= 1000 for c in chunks)
    assert all(c.text.startswith("<figure><table><thead><tr><th>Item</th>") for c in chunks)
    seen = [r for c in chunks for r in c.text.split("</thead>")[1].split("</table>")[0].split("</tr>") if r]
    assert seen == [f"<tr><td>item {i}</td><td>{i * 7} units of stock</td>" for i in range(400)]


def test_r4_a_figure_chunk_over_the_embedding_cap_is_emitted_as_its_parts():
    def counter(text: str) -> int:  # the joined chunk counts more than its estimate
        return len(text.strip()) // 10

    figure = "<figure><img src='chart-of-the-quarterly-results.png'/></figure>"
    text = "Nineteen chars one. Nineteen chars two. Nineteen chars six. " + figure
    chunks = SentenceTextSplitter(max_tokens=5, max_chars=500, embedding_max_tokens=10, max_figure_tokens=10,
                                  token_counter=counter).split_text(text)
    assert rows(chunks) == [
        ("Nineteen chars one. Nineteen chars two. Nineteen chars six.", 0, 59, 0, 0, 5, 0, "text"),
        (figure, 60, 124, 0, 0, 6, 0, "figure"),
    ]


def test_r5_a_long_run_on_sentence_respects_the_character_cap():
    words = " ".join(f"word{i}" for i in range(300))[:1500]
    chunks = split(words)
    assert [(c.char_start, c.char_end, c.overlap_chars) for c in chunks] == [(0, 753, 128), (754, 1500, 0)]
    assert chunks[0].own_text == words[:753] and chunks[1].text == words[754:]
    assert all(len(c.text) <= 1200 for c in chunks)


def test_r6_unpunctuated_cjk_is_not_duplicated_by_recursion():
    text = (COMMON_HANZI * 100)[:40000]
    chunks = split(text)
    assert len(chunks) == 128
    assert sum(len(c.text) for c in chunks) <= 1.2 * len(text)
    assert all(c.overlap_chars == 0 for c in chunks)  # every pair is a hard pair


@pytest.mark.parametrize(
    "text, cuts",
    [
        ("He left. Then", [8]),
        ("Wait... what", [7]),
        ('He said "Stop." Then', [15]),
        ("这是句子。下一句", [5]),
        ("Dr. Smith", []),
        ("e.g. apples", []),
        ("It costs $3.50 today", []),
        ("See Fig. 3 now", []),
        ("see fig. The end", [8]),
        ("Version 1.2.3 out", []),
        ("1. Introduction", []),
        ("Chapter 1. Then", [10]),
        ("Hello!World", []),
        ("J. Smith wrote", []),
        ("(Dr. Who) came", []),
        ("Visit www.example.com. Next", [22]),
        ("Read report.pdf now", []),
        ("Ask?q=1 ok", []),
        ("Contents . . . 3", []),  # dot leaders end no sentence (rule 3)
        ("本当ですか？はい！", [6, 9]),
    ],
)
def test_r7_sentence_end_predicate(text, cuts):
    assert Boundaries(SentenceSplitterConfig()).sentence_cuts(text) == cuts


@pytest.mark.parametrize(
    "first, second, merged",
    [
        ("한국어 문장은", "다음 페이지에서 계속된다.", "한국어 문장은 다음 페이지에서 계속된다."),
        ("هذه الجملة", "تستمر في الصفحة التالية.", "هذه الجملة تستمر في الصفحة التالية."),
        ("これは次の", "ページに続く文です。", "これは次のページに続く文です。"),
    ],
)
def test_r8_caseless_scripts_continue_across_pages(first, second, merged):
    chunks = split(pages(first, second))
    assert [(c.text, c.page_start, c.page_end) for c in chunks] == [(merged, 0, 1)]


def test_r9_a_fully_merged_page_keeps_the_chunk_held():
    chunks = split(pages("Alpha bravo", "charlie delta", "echo foxtrot", "golf hotel india."))
    assert rows(chunks) == [("Alpha bravo charlie delta echo foxtrot golf hotel india.", 0, 53, 0, 3, 14, 0, "text")]


def test_r10_moved_text_is_attributed_to_its_own_page():
    chunk = split(pages("Intro sentence finishes here. This clause is long but near the limit and the following "
                        "portion would push it over",
                        "so the trailing fragment carry-forward moves this trailing portion forward. Remaining "
                        "context continues here."), max_tokens=35)[1]
    assert (chunk.page_start, chunk.page_end, chunk.page_num) == (0, 1, 0)


def test_r11_r12_offsets_locate_the_own_text_and_the_look_ahead():
    text = "  Alpha sentence one is here.\n\n\nBeta sentence two is here.  Gamma sentence three is here.  "
    # At 30% or more the first look-ahead would hold all of the second chunk, which then joins the first.
    chunks = split(text, max_chars=50, semantic_overlap_percent=20)
    assert [(c.own_text, c.text[len(c.own_text):]) for c in chunks] == [
        ("Alpha sentence one is here.", "\nBeta sentence two"),
        ("Beta sentence two is here.", " Gamma sentence"),
        ("Gamma sentence three is here.", ""),
    ]
    for c in chunks:
        assert text[c.char_start:c.char_end] == c.own_text


def test_r13_heading_like_first_line_blocks_merge_and_look_ahead():
    assert is_heading_like("中ABC DEF") and is_heading_like("II) Scope") and is_heading_like("- item")
    assert not is_heading_like("more text follows here.")
    # The heading is not glued as a continuation (no " " join, no look-ahead into it); the fragment before it is
    # a runt without a sentence end, which joins what follows on a line of its own (as a title page does).
    assert rows(split(pages("The list goes on with", "中ABC DEF\nmore text follows here."))) == [
        ("The list goes on with\n中ABC DEF\nmore text follows here.", 0, 53, 0, 1, 15, 0, "text"),
    ]
    assert rows(split(pages("The list goes on.", "中ABC DEF\nmore text follows here."))) == [
        ("The list goes on.", 0, 17, 0, 0, 5, 0, "text"),
        ("中ABC DEF\nmore text follows here.", 17, 49, 1, 1, 9, 0, "text"),
    ]


def test_r14_counts_each_span_once_and_each_chunk_once():
    calls: list[str] = []

    def counter(text: str) -> int:
        calls.append(text)
        return len(text.split())

    sentences = [f"Sentence {word} ends here." for word in
                 ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet")]
    chunks = list(SentenceTextSplitter(max_tokens=12, semantic_overlap_percent=0, token_counter=counter)
                  .split_text(" ".join(sentences)))
    assert [c.token_count for c in chunks] == [12, 12, 12, 4]
    # Ten spans counted once each, then one measurement per emitted chunk: nothing grows and is re-counted.
    assert calls == [s if i == 0 else " " + s for i, s in enumerate(sentences)] + [c.text for c in chunks]


def test_r15_config_is_frozen_validated_and_fingerprinted():
    config = SentenceTextSplitter().config
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.max_tokens = 10  # type: ignore[misc]
    assert config.hard_chars == 1200 and config.overlap_target_chars == 100 and config.overlap_window_chars == 200
    assert SentenceTextSplitter().fingerprint() == SentenceTextSplitter(max_tokens=500).fingerprint()
    assert SentenceTextSplitter().fingerprint() != SentenceTextSplitter(max_chars=999).fingerprint()
    assert SentenceTextSplitter(abbreviations=["dr"]).fingerprint() != SentenceTextSplitter().fingerprint()
    assert json.loads(json.dumps(config.to_dict()))["abbreviations"] == sorted(config.abbreviations)


@pytest.mark.parametrize(
    "settings",
    [
        {"max_tokens": 0}, {"max_tokens": 1.5}, {"max_tokens": True}, {"max_chars": 0},
        {"overflow_ratio": 0.9}, {"split_overlap_percent": 50}, {"split_overlap_percent": -1},
        {"semantic_overlap_percent": 51}, {"semantic_overlap_window": 0.5}, {"word_break_min_advance": -1},
        {"embedding_max_tokens": 100}, {"max_figure_tokens": 9000}, {"max_figure_tokens": 0},
        {"max_table_tokens": 0}, {"max_table_tokens": 9000}, {"max_table_tokens": 2.5},
        {"encoding": "no_such_encoding"}, {"sentence_endings": []}, {"sentence_endings": ["..."]},
        {"sentence_endings": ["a"]}, {"word_breaks": "abc"}, {"abbreviations": ["Dr"]}, {"no_such_setting": 1},
    ],
)
def test_r15_invalid_settings_raise_value_error(settings):
    with pytest.raises(ValueError):
        SentenceTextSplitter(**settings)


@pytest.mark.parametrize(
    "bad, message",
    [
        ([Page(0, 0, "a."), Page(0, 2, "b.")], "page 0 (index 1)"),
        ([Page(1, 0, "a."), Page(2, 1, "b.")], "page 2 (index 1)"),
        ([Page(-1, 0, "a.")], "page -1 (index 0)"),
        ([Page(0, -5, "a.")], "page 0 (index 0)"),
        ([Page(0, 0, b"bytes")], "page 0 (index 0)"),  # type: ignore[arg-type]
    ],
)
def test_invalid_pages_raise_value_error_naming_the_page(bad, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        list(SentenceTextSplitter().split_pages(bad))


def test_r16_look_ahead_copies_the_next_distinct_sentence():
    sentences = [f"The {name} report arrived on day {n}." for n, name in enumerate(
        ("annual", "budget", "census", "dental", "energy", "forest", "garden", "harbor"), start=1)]
    chunks = split(" ".join(sentences), max_chars=80, semantic_overlap_percent=50)
    assert len(chunks) == 4
    for prev, nxt in zip(chunks, chunks[1:]):
        look_ahead = prev.text[len(prev.own_text):].strip()
        assert look_ahead and nxt.text.startswith(look_ahead)
        assert look_ahead not in prev.own_text  # distinct sentences: the probe cannot pass by accident


def test_split_text_equals_split_pages_of_one_page():
    text = "One sentence here. 第二句。 Third one?"
    splitter = SentenceTextSplitter(max_chars=20)
    assert splitter.split_text(text) == list(splitter.split_pages([Page(0, 0, text)]))


def test_long_blocks_are_encoded_in_two_halves_with_identical_tokens(corpus):
    from chunking.splitters.sentence.measure import _PARALLEL_MIN_CHARS, TokenMeasure
    from chunking.tokens import get_encoding

    enc = get_encoding()
    measure = TokenMeasure("cl100k_base")
    zh = (corpus / "debian-reference-ch02.zh-cn.html").read_text(encoding="utf-8") * 2
    en = "The quick brown fox, it said, jumps (over) the lazy dog; twice. " * 2000
    for text in (zh, en):
        assert len(text) >= _PARALLEL_MIN_CHARS
        assert measure.encode(text) == enc.encode_ordinary(text)
    chunks = SentenceTextSplitter().split_text(en)
    assert all(c.token_count == len(enc.encode_ordinary(c.text)) for c in chunks)


@pytest.mark.parametrize("text", ["plain ASCII, twice.", "Ünïcödé wörds — and “quotes”.", "中文句子。日本語の文。🙂🙂 x",
                                  "<|endoftext|> is text here", "𠀋𡈽𡌛 丼 ☃☃☃", ""])
def test_block_tokens_before_counts_tokens_whose_first_byte_lies_before_the_position(text):
    from chunking.splitters.sentence.measure import BlockTokens, TokenMeasure
    from chunking.tokens import get_encoding

    enc = get_encoding()
    page = "xx " + text
    block = BlockTokens(TokenMeasure("cl100k_base"), page, 3, len(page))
    assert block.knows_offsets
    first_bytes, byte = [], 0
    for token in enc.encode_ordinary(text):
        first_bytes.append(byte)
        byte += len(enc.decode_single_token_bytes(token))
    for pos in range(len(text) + 1):
        before = len(text[:pos].encode("utf-8"))
        assert block.tokens_before(3 + pos) == sum(b < before for b in first_bytes), (text, pos)
        # char_limit: the furthest position whose count from the block start stays within the cap.
        cap = block.tokens_before(3 + pos)
        limit = block.char_limit(3, 0, cap)
        assert block.tokens_before(limit) <= cap and (limit == len(page) or block.tokens_before(limit + 1) > cap)


def test_token_char_starts_refuse_lone_surrogates():
    from chunking.splitters.sentence.measure import TokenMeasure

    assert TokenMeasure("cl100k_base").token_char_starts("a\ud800b", 0) is None


def test_step5_an_oversize_figure_of_many_tags_is_never_cut_inside_a_tag():
    # Phase A's cut positions are checked against the figure's tags by a binary search over their starts (a
    # figure of thousands of tags made the linear scan quadratic: 45 s for a 1.4 MB text); every tag is whole.
    words = [f"w{i}" for i in range(1500)]
    body = " ".join(f'<span class="c{i % 7}">{w} {w}x</span>' for i, w in enumerate(words))
    text = f"Intro sentence here.\n<figure>{body}</figure>\nOutro sentence here."
    splitter = SentenceTextSplitter(max_tokens=200, max_chars=1000, max_figure_tokens=400)
    doc = [Page(0, 0, text)]
    chunks = list(splitter.split_pages(doc))
    check_invariants(doc, chunks, splitter.config)
    parts = [c for c in chunks if c.kind == "figure_part"]
    assert len(parts) > 10 and [c.part_index for c in parts] == list(range(len(parts)))
    tags = [(m.start(), m.end()) for m in re.finditer(r"<[^>]*>", text)]
    cuts = [c.char_start for c in parts] + [c.char_end for c in parts]
    assert [pos for pos in cuts if any(s < pos < e for s, e in tags)] == []
    own = "".join(text[c.char_start:c.char_end] for c in parts)
    assert own.count("<span") == own.count("</span>") == len(words)  # the parts hold every tag once
