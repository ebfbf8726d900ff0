"""chunking.parsers.furniture: running headers, footers and bare page numbers, on small inputs, generated PDFs
and the corpus manuals."""

from __future__ import annotations

import re

import pytest

from chunking.parsers import parse_document
from chunking.parsers.furniture import PageParts, is_toc_page, line_key, split_furniture
from chunking.splitters.sentence import SentenceTextSplitter
from tests.parsers.helpers import assert_page_invariants, document_text, parse_corpus
from tests.parsers.test_pdf import _tiny_pdf


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ("Auto Multiple Choice 12 / 92\n", "Auto Multiple Choice #"),
        ("Auto Multiple Choice xiv", "Auto Multiple Choice #"),
        ("  26 ", "#"),
        ("- vii -", "- # -"),
        ("Page 3 of 10", "Page # of #"),
        ("Debian 参考手册", "Debian 参考手册"),
        ("}", None),  # no letter and no number: never furniture
        ("", None),
        ("x" * 121, None),
    ],
)
def test_line_key(line, key):
    assert line_key(line) == key


def test_header_footer_and_page_number_are_cut_and_kept():
    texts = [
        "Report i\nFirst body line.\nDraft copy\n",
        "Report 2\nSecond body line.\n2\nDraft copy\n",
        "Report 3\n\nThird body line.\n3\nDraft copy\n",
        "Report 4\nFourth body line.\n4\n\nDraft copy\n",
        "Report 5\nThe fifth body line.\n5\n",
    ]

    assert split_furniture(texts) == [
        PageParts("Report i\n", "First body line.\n", "Draft copy\n"),
        PageParts("Report 2\n", "Second body line.\n", "2\nDraft copy\n"),
        PageParts("Report 3\n", "\nThird body line.\n", "3\nDraft copy\n"),
        PageParts("Report 4\n", "Fourth body line.\n", "4\n\nDraft copy\n"),
        PageParts("Report 5\n", "The fifth body line.\n", "5\n"),
    ]


def test_lines_repeating_on_too_few_pages_stay_text():
    # "Summary" heads 2 of 8 pages: under MIN_PAGES; "Intro" differs; nothing is cut.
    texts = ["Summary\nA.\n", "Summary\nB.\n"] + [f"Intro {c}\nBody {c}.\n" for c in "abcdef"]
    assert [p.body for p in split_furniture(texts)] == texts


def test_a_repeated_second_line_under_a_body_line_stays_text():
    words = ["Apples", "Pears", "Plums", "Grapes", "Limes"]
    texts = [f"{w} grow here.\nSee the manual\nMore about {w.lower()}.\n" for w in words]
    # "See the manual" is the second line of every page, but the first line is body: the cut stops there.
    assert [p.body for p in split_furniture(texts)] == texts


def test_a_page_of_only_furniture_keeps_an_empty_body():
    texts = ["Head 1\nBody one.\n", "Head 2\n", "Head 3\nBody three.\n", "Head 4\nBody four.\n"]
    assert split_furniture(texts)[1] == PageParts("Head 2\n", "", "")


TOC = ("Contents\n1 License 1\n2.1 Operating system . . . . . . . 1\n2.2 Software . . . . . . . . . . 1\n"
       "2.3 LaTeX . . . . . . . . . . . . 1\n3 Usage notes 2\n3.1 Limits .......... 2\n3.2 Installation \u2026\u2026 3\n")


def test_a_table_of_contents_page_is_furniture_as_a_whole():
    assert is_toc_page(TOC)  # 5 entries with dot leaders of 8 lines
    texts = ["Manual 1\nTitle page.\n", "Manual 2\n" + TOC, "Manual 3\nThe body starts here.\n",
             "Manual 4\nMore body text.\n"]
    parts = split_furniture(texts)
    assert parts[1] == PageParts("Manual 2\n" + TOC, "", "")
    assert [p.body for p in parts] == ["Title page.\n", "", "The body starts here.\n", "More body text.\n"]


@pytest.mark.parametrize("body", [
    TOC.replace("3.2 Installation \u2026\u2026 3\n", ""),  # 4 entries: too few
    TOC + "".join(f"Body sentence number {i} of a chapter.\n" for i in range(5)),  # entries under half the lines
    "See section 2 . . . and more text\n" * 6,  # a dot leader without a page number at the end
])
def test_pages_with_few_entries_stay_text(body):
    assert not is_toc_page(body)


def test_generated_pdf_furniture_is_in_header_and_footer_and_offsets_count_it():
    bodies = ["Apples grow here.", "Pears are sweet.", "Plums fall early.", "Limes stay green."]
    pdf = _tiny_pdf([f"Handbook {n} / 4\n{body}\n{n}" for n, body in enumerate(bodies, start=1)])
    pages = list(parse_document(pdf, source="handbook.pdf"))

    assert [(p.page_num, p.offset, p.header, p.text, p.footer) for p in pages] == [
        (0, 15, "Handbook 1 / 4\n", "Apples grow here.\n", "1\n"),
        (1, 50, "Handbook 2 / 4\n", "Pears are sweet.\n", "2\n"),
        (2, 84, "Handbook 3 / 4\n", "Plums fall early.\n", "3\n"),
        (3, 119, "Handbook 4 / 4\n", "Limes stay green.\n", "4\n"),
    ]
    assert_page_invariants(pages)
    text = document_text(pages)
    chunks = SentenceTextSplitter().split_pages(pages)
    assert [(c.own_text, c.page_start, text[c.char_start:c.char_end]) for c in chunks] == [
        ("Apples grow here.", 0, "Apples grow here."),
        ("Pears are sweet.", 1, "Pears are sweet."),
        ("Plums fall early.", 2, "Plums fall early."),
        ("Limes stay green.", 3, "Limes stay green."),
    ]


@pytest.mark.parametrize(("name", "total", "with_header"), [("amc-manual.en.pdf", 101, 100),
                                                            ("amc-manual.ja.pdf", 78, 76)])
def test_corpus_running_headers_leave_the_chunks(name, total, with_header):
    pages = parse_corpus(name)
    assert len(pages) == total
    assert sum(1 for p in pages if p.header) == with_header
    assert pages[9].header == ("Auto Multiple Choice 1 / 92\n" if name.endswith("en.pdf")
                               else "Auto Multiple Choice 2 / 70\n")
    assert pages[2].header == "Auto Multiple Choice iii\n"
    assert pages[0].header == "" and pages[0].text.startswith("Auto Multiple Choice\n")  # the title stays
    # The contents pages (iv to viii in English, iv to vii in Japanese) are all header: never indexed.
    toc = [p.page_num for p in pages if p.header.startswith("Auto Multiple Choice ") and not p.text]
    assert toc == ([3, 4, 5, 6, 7] if name.endswith("en.pdf") else [3, 4, 5, 6])
    assert "Contents\n1 " in pages[3].header
    text = document_text(pages)
    chunks = list(SentenceTextSplitter().split_pages(pages))
    headed = [c for c in chunks if re.search(r"Auto Multiple Choice [0-9]+ / ", c.own_text)]
    # ja page 20's header is glued to its first body line by the PDF, so it stays (in one chunk).
    assert len(headed) == (0 if name.endswith("en.pdf") else 1)
    for chunk in chunks:
        # Within a page, own text is the document text exactly (parts of a split table repeat its header).
        if chunk.page_end == chunk.page_start and chunk.kind != "figure_part":
            assert text[chunk.char_start:chunk.char_end] == chunk.own_text
        assert pages[chunk.page_start].offset <= chunk.char_start < pages[chunk.page_start].offset + len(
            pages[chunk.page_start].text)
