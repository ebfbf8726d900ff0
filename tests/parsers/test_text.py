"""chunking.parsers.text (and the shared decoder): verbatim text, every encoding we promise to read."""

from __future__ import annotations

import pytest

from chunking.parsers import ParseError, parse_document, text
from tests.parsers.helpers import assert_page_invariants, corpus_bytes, parse_corpus

README = "pyenv-README.md"


def _text(data: bytes, source: str = "notes.txt") -> str:
    pages = list(text.parse(data, source=source))
    assert len(pages) == 1
    assert_page_invariants(pages)
    return pages[0].text


# --- corpus ---------------------------------------------------------------------------------------------


def test_corpus_markdown_is_the_file_verbatim():
    pages = parse_corpus(README)

    assert len(pages) == 1
    assert_page_invariants(pages)
    assert pages[0].text == corpus_bytes(README).decode("utf-8")
    assert len(pages[0].text) == 31_232


@pytest.mark.parametrize(
    "line",
    [
        "# Simple Python Version Management: pyenv",
        "## Installation",
        "#### Linux/Unix",
        "##### 1. Automatic installer (Recommended)",
    ],
)
def test_corpus_markdown_headings_stay_markdown(line):
    assert line in parse_corpus(README)[0].text.split("\n")


# --- decoding -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ("plain UTF-8: naïve — 日本語".encode("utf-8"), "plain UTF-8: naïve — 日本語"),
        (b"\xef\xbb\xbfUTF-8 with BOM", "UTF-8 with BOM"),
        *[
            (sentence.encode("latin-1"), sentence)
            for sentence in ("Café crème brûlée, naïve façade, déjà vu à Zürich.", "¿Qué pasó con el niño en España?")
        ],
        ("Grüße".encode("latin-1"), "Grüße"),
        ("Smart “quotes” — and a €".encode("cp1252"), "Smart “quotes” — and a €"),
        (b"\xff\xfe" + "UTF-16 LE with BOM: 中文".encode("utf-16-le"), "UTF-16 LE with BOM: 中文"),
        (b"\xfe\xff" + "UTF-16 BE with BOM: ελληνικά".encode("utf-16-be"), "UTF-16 BE with BOM: ελληνικά"),
        (b"\xff\xfe\x00\x00" + "UTF-32 with BOM".encode("utf-32-le"), "UTF-32 with BOM"),
        ("UTF-16 text without a BOM.".encode("utf-16-le"), "UTF-16 text without a BOM."),
        (
            "日本語のテキストです。これはシフトJISで書かれたテストの文章です。".encode("shift_jis"),
            "日本語のテキストです。これはシフトJISで書かれたテストの文章です。",
        ),
        *[(sentence.encode("cp1251"), sentence) for sentence in ["Привет, как дела? Это текст на русском языке."]],
    ],
)
def test_text_is_decoded(data, expected):
    assert _text(data) == expected


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"a\r\nb\rc\nd", "a\nb\nc\nd"),
        ("x\r\n".encode("utf-16"), "x\n"),
        (b"  keep\tspacing  \n\n", "  keep\tspacing  \n\n"),
    ],
)
def test_newlines_are_normalised_and_the_rest_is_verbatim(data, expected):
    assert _text(data) == expected


@pytest.mark.parametrize(
    "data",
    [
        bytes(range(256)) * 4,
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00\x00\x00\x01\x00\x08\x06\x00\x00\x00" * 10,
        b"\xff\xfe\x00\xd8",  # a UTF-16 BOM followed by a lone surrogate
    ],
)
def test_binary_data_is_not_text(data):
    with pytest.raises(ParseError) as caught:
        parse_document(data, source="data/blob.txt")

    assert str(caught.value).startswith("data/blob.txt: not valid UTF-8 or any detected encoding")


@pytest.mark.parametrize("source", ["main.py", "lib.rs", "config.yaml", "notes.markdown", "build.log", "pom.xml"])
def test_code_and_other_text_extensions_use_the_text_parser(source):
    data = b"# a comment\r\nvalue = 1\r\n"

    assert parse_document(data, source=source)[0].text == "# a comment\nvalue = 1\n"
