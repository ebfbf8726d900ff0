"""CSV files: parsed as text (chunking.parsers.text), CSV verbatim."""

from __future__ import annotations

from chunking.parsers import parse_document, text
from tests.parsers.helpers import assert_page_invariants, corpus_bytes, parse_corpus

RELEASES = "debian-releases.csv"


def test_corpus_csv_is_the_file_verbatim():
    pages = parse_corpus(RELEASES)

    assert len(pages) == 1
    assert_page_invariants(pages)
    assert pages[0].text == corpus_bytes(RELEASES).decode("ascii")
    assert len(pages[0].text) == 1_220


def test_corpus_csv_keeps_header_and_rows():
    lines = parse_corpus(RELEASES)[0].text.split("\n")

    assert lines[0] == "version,codename,series,created,release,eol,eol-lts,eol-elts"
    assert "12,Bookworm,bookworm,2021-08-14,2023-06-10,2026-07-11,2028-06-30,2033-06-30" in lines


def test_quoted_newlines_are_normalised_and_a_bom_is_dropped():
    data = b'\xef\xbb\xbfname,note\r\n"A","two\r\nlines"\r\n'

    assert [p.text for p in text.parse(data, source="t.csv")] == ['name,note\n"A","two\nlines"\n']


def test_stray_quote_does_not_fail_the_file():
    assert parse_document(b'a,b\n1,"unterminated\n', source="odd.csv")[0].text == 'a,b\n1,"unterminated\n'
