"""chunking.parsers.pdf: the corpus manuals, hand-made PDFs and the clean-up rules."""

from __future__ import annotations

import io
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunking.parsers import ParseError, ReadContext, parse_document, pdf
from tests.parsers.helpers import assert_page_invariants, count_page_loads, document_text, parse_corpus

pypdf = pytest.importorskip("pypdf")  # dev dependency, only used here to write encrypted PDFs


def _tiny_pdf(page_texts: list[str]) -> bytes:
    """A minimal valid PDF of Helvetica text, a page per item ("" for a blank page, "\\n" between lines)."""
    objects = ["<< /Type /Catalog /Pages 2 0 R >>", ""]
    kids = []
    for text in page_texts:
        page_id, content_id = len(objects) + 1, len(objects) + 2
        kids.append(f"{page_id} 0 R")
        escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)").split("\n")
        stream = f"BT /F1 12 Tf 14 TL 72 720 Td {' T* '.join(f'({line}) Tj' for line in escaped)} ET" if text else ""
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {content_id} 0 R "
            f"/Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>"
        )
        objects.append(f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream")
    objects[1] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(kids)} >>"
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def _encrypted_pdf(user_password: str, owner_password: str) -> bytes:
    writer = pypdf.PdfWriter()
    writer.append(pypdf.PdfReader(io.BytesIO(_tiny_pdf(["Secret text"]))))
    writer.encrypt(user_password=user_password, owner_password=owner_password, algorithm="AES-128")
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


# --- corpus ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "page_count"), [("amc-manual.en.pdf", 101), ("amc-manual.ja.pdf", 78)])
def test_corpus_pdf_has_one_page_per_pdf_page_with_exact_offsets(name, page_count):
    pages = parse_corpus(name)

    assert len(pages) == page_count
    assert_page_invariants(pages)


@pytest.mark.parametrize(
    ("name", "page_num", "phrase"),
    [
        ("amc-manual.en.pdf", 0, "Design of MCQ tests with automated\ncorrection and grading"),
        ("amc-manual.en.pdf", 10, "The maximum number of students per test is limited to 4,095"),
        # PDFium's line-end hyphen mark is joined back into the word ("com-" + "mand").
        ("amc-manual.en.pdf", 10, "thanks to the \\usepackage{etex} command."),
        # A compound name broken at one of its own hyphens keeps the hyphen.
        ("amc-manual.en.pdf", 7, "auto-multiple-choice-analyse"),
        ("amc-manual.ja.pdf", 0, "自動採点と評定の可能な選択式試験問題のデザイン"),
        ("amc-manual.ja.pdf", 10, "インストールが完了したら、Gnome の一般メニュー"),
        ("amc-manual.ja.pdf", 10, "カメルーンの首都はどれですか？"),
        # This justified line comes out of PDFium letter-spaced ("特 定 の 設 問 …").
        ("amc-manual.ja.pdf", 27, "特定の設問の番号を非表示にして、番号の増加を抑制するには"),
    ],
)
def test_corpus_pdf_phrase_is_on_its_page(name, page_num, phrase):
    pages = parse_corpus(name)
    whole = [p.header + p.text + p.footer for p in pages]  # page 7 is a contents page: all of it is furniture

    assert phrase in whole[page_num]
    assert phrase not in whole[page_num - 1] if page_num else True


@pytest.mark.parametrize(
    ("name", "approx_chars"), [("amc-manual.en.pdf", 196_350), ("amc-manual.ja.pdf", 103_843)]
)
def test_corpus_pdf_text_is_clean(name, approx_chars):
    text = document_text(parse_corpus(name))

    assert abs(len(text) - approx_chars) < approx_chars * 0.02
    assert not any(c in text for c in "\x00\x02\x0c\r\ufffe\ufffd")
    assert " \n" not in text and "\t\n" not in text
    assert all(page.text.endswith("\n") for page in parse_corpus(name) if page.text)


# --- small PDFs -----------------------------------------------------------------------------------------


def test_pages_keep_pdf_numbering_and_offsets_including_a_blank_page():
    pages = parse_document(_tiny_pdf(["First page", "", "Third (last) page"]), source="three.pdf")

    assert [(p.page_num, p.offset, p.text) for p in pages] == [
        (0, 0, "First page\n"),
        (1, 11, ""),
        (2, 11, "Third (last) page\n"),
    ]


def test_encrypted_pdf_is_refused_with_its_name():
    with pytest.raises(ParseError) as caught:
        parse_document(_encrypted_pdf("secret", "owner"), source="reports/locked.pdf")

    assert caught.value.reason == "encrypted PDF"
    assert str(caught.value) == "reports/locked.pdf: encrypted PDF"


def test_pdf_with_only_an_owner_password_is_read():
    pages = parse_document(_encrypted_pdf("", "owner"), source="restricted.pdf")

    assert pages[0].text == "Secret text\n"


@pytest.mark.parametrize(
    "data", [b"%PDF-1.7\nthis is not a PDF body", b"PK\x03\x04 a zip, not a PDF", _tiny_pdf(["x"])[:60]]
)
def test_corrupt_pdf_is_refused_with_its_name(data):
    with pytest.raises(ParseError) as caught:
        parse_document(data, source="broken.pdf")

    assert caught.value.reason.startswith("not a valid PDF: ")
    assert str(caught.value).startswith("broken.pdf: not a valid PDF")


def test_pdf_without_text_says_so():
    with pytest.raises(ParseError) as caught:
        parse_document(_tiny_pdf(["", ""]), source="scan.pdf")

    assert caught.value.reason == ("no text found (scanned or image-only PDF?): needs OCR: install the OCR extra "
                                   "(pip install 'chunking[ocr]', or pip install -r requirements-ocr.txt), or set "
                                   "DOCUMENT_INTELLIGENCE_ENDPOINT to read it with Document Intelligence")


# --- clean-up rules (golden examples) -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("line one\r\nline two\rline three", "line one\nline two\nline three\n"),
        ("the com\ufffemand works", "the command works\n"),
        ("a com\x02\r\nmand", "a command\n"),
        ("see auto-multiple-choice\ufffeanalyse", "see auto-multiple-choice-analyse\n"),
        ("NUL\x00 and form\x0cfeed", "NUL and formfeed\n"),
        ("特 定 の 設 問、 番 号", "特定の設問、番号\n"),
        ("한국어 띄어쓰기", "한국어 띄어쓰기\n"),
        ("Latin words stay spaced", "Latin words stay spaced\n"),
        ("trailing   \nspaces\t \n\n", "trailing\nspaces\n"),
        ("  \n\n", ""),
    ],
)
def test_clean_page_text(raw, clean):
    assert pdf._clean_page_text(raw) == clean


_MARKS_AND_SPACES = st.text(alphabet=["a", "b", "-", " ", "\t", "\n", "\u3000", "\x1c", "\ufffe", "\x02"], max_size=40)


@settings(max_examples=200, deadline=None)
@given(_MARKS_AND_SPACES)
def test_hyphen_marks_are_joined_as_the_rule_says(text):
    # The linear-time join gives what the rule, as the regular expression, gives.
    def rule(match):
        left = match.group(1)
        return left + "-" if "-" in left else left

    assert pdf._join_hyphenated(text) == pdf._HYPHEN_MARK.sub(rule, text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=["a", "-", " ", "\t", "\r", "\n", "\x00", "特", "定", "\ufffe", "\x02"], max_size=40))
def test_the_clean_up_is_its_rules_as_regular_expressions(text):
    # Steps 2 and 5 run without regular expressions (linear time); these are the rules they implement.
    def joined(match):
        left = match.group(1)
        return left + "-" if "-" in left else left

    expected = pdf._HYPHEN_MARK.sub(joined, text.replace("\r\n", "\n").replace("\r", "\n"))
    expected = pdf._CJK_SPACE.sub("", pdf._CONTROL_CHARS.sub("", expected))
    expected = re.sub(r"[ \t]+$", "", expected, flags=re.MULTILINE).strip("\n")
    assert pdf._clean_page_text(text) == (expected + "\n" if expected else "")


def test_a_range_read_takes_the_page_loads_a_head_read_recorded_and_loads_each_page_once(monkeypatch):
    # Stage 1 reads a PDF's first pages for its title and language, then its first page range: the range's read
    # takes what loading those pages gave (text layer, table gate) instead of loading them again.
    words = ["apple", "pear", "plum", "quince", "cherry", "grape", "lemon", "mango"]
    data = _tiny_pdf([f"Running head\nA {word} is a fruit.\nPage {i + 1}" for i, word in enumerate(words)])
    expected_head = list(pdf.parse(data, source="a.pdf", end=3))
    expected = list(pdf.parse(data, source="a.pdf"))
    loaded = count_page_loads(monkeypatch)
    recorded: pdf.PageLoads = {}
    assert list(pdf.parse(data, source="a.pdf", end=3, record_loads=recorded)) == expected_head
    assert (sorted(recorded), loaded) == ([0, 1, 2], [0, 1, 2])
    assert recorded[1] == ("Running head\r\nA pear is a fruit.\r\nPage 2", False)  # PDFium's text, no grid
    loaded.clear()
    assert list(pdf.parse(data, source="a.pdf", page_loads=recorded)) == expected
    assert (loaded, recorded) == ([3, 4, 5, 6, 7], {})  # each taken once


def test_texts_past_the_memory_hold_wait_in_a_file_and_each_page_is_read_once(monkeypatch):
    # Past HOLD_CHARS the range's texts go to a temporary file instead of being read from PDFium again; past
    # twice MAX_DOCUMENT_CHARS, the pages are read again as before. The pages are the same every way.
    from chunking.parsers.limits import Limits

    words = ["apple", "pear", "plum", "quince", "cherry", "grape", "lemon", "mango"]
    data = _tiny_pdf([f"Running head\nA {word} is a fruit.\nPage {i + 1}" for i, word in enumerate(words)])
    expected = list(pdf.parse(data, source="a.pdf"))
    reads: list[int] = []
    real = pdf._read_page

    def counting(document, index, source, context, *loads):
        reads.append(index)
        return real(document, index, source, context, *loads)

    monkeypatch.setattr(pdf, "_read_page", counting)
    monkeypatch.setattr(pdf, "HOLD_CHARS", 40)  # two pages in memory, then the file
    assert list(pdf.parse(data, source="a.pdf")) == expected and reads == list(range(8))
    assert (expected[3].header, expected[3].text, expected[3].footer) == ("Running head\n", "A quince is a fruit.\n",
                                                                          "Page 4\n")
    reads.clear()
    context = ReadContext(limits=Limits(max_document_chars=60))  # more than twice this: read again
    assert list(pdf.parse(data, source="a.pdf", context=context)) == expected and reads == list(range(8)) * 2
