"""The CSV splitter (``chunking.documents.splitter.split_csv``): the header row in every chunk a row fits in with
it, rows packed to the exact token cap, a row too big for header + row split by the sentence splitter."""

from __future__ import annotations

import csv
import io

import pytest

from chunking.documents.splitter import _format_splitter, split_csv
from chunking.model import Page
from chunking.settings import Settings
from chunking.tokens import count_tokens

# Tokens (cl100k_base): "id,name\n" 3, "1,alpha" 2, "2,a longer row with several words" 7, "3,delta" 3.
TEXT = "id,name\n1,alpha\n2,a longer row with several words\n3,delta\n"


def _split(text: str, max_tokens: int) -> list[tuple[str, int, int, int]]:
    return [(c.text, c.token_count, c.char_start, c.char_end) for c in split_csv([Page(0, 0, text)], max_tokens,
                                                                                 1000)]


def test_a_row_that_fits_with_the_header_exactly_at_the_cap_gets_it():
    # header 3 + row 7 = 10 tokens: the chunk is at the cap, not over it (the row's line end is not in the chunk).
    assert _split(TEXT, 10) == [
        ("id,name\n1,alpha", 5, 8, 15),
        ("id,name\n2,a longer row with several words", 10, 16, 49),
        ("id,name\n3,delta", 6, 50, 57),
    ]


def test_rows_are_packed_up_to_the_exact_cap():
    text = "city,country,population\nOslo,Norway,709000\nBergen,Norway,291000\nLyon,France,522000\n"
    # header 7 + Oslo 8 + line end 1 + Bergen 9 = 25 > 24; header 7 + Bergen 9 + 1 + Lyon 7 = 24.
    assert _split(text, 24) == [
        ("city,country,population\nOslo,Norway,709000", 15, 24, 42),
        ("city,country,population\nBergen,Norway,291000\nLyon,France,522000", 24, 43, 82),
    ]
    assert _split(text, 25)[0] == ("city,country,population\nOslo,Norway,709000\nBergen,Norway,291000", 25, 24, 63)


def test_a_row_too_big_for_the_header_is_split_and_each_piece_gets_the_header():
    # 3 + 7 > 8: the row is split at 8 - 3 = 5 tokens by the sentence splitter (its look-ahead overlap kept).
    chunks = split_csv([Page(0, 0, TEXT)], 8, 1000)
    assert [(c.text, c.token_count, c.char_start, c.char_end, c.overlap_chars) for c in chunks] == [
        ("id,name\n1,alpha", 5, 8, 15, 0),
        ("id,name\n2,a longer row with", 8, 16, 30, 5),
        ("id,name\nwith several words", 6, 31, 49, 0),
        ("id,name\n3,delta", 6, 50, 57, 0),
    ]
    assert TEXT[16:30] == "2,a longer row" and TEXT[31:49] == "with several words"


def test_a_header_over_half_the_cap_is_left_off_the_pieces_of_a_big_row():
    # 2 x 3 > 5: the long row is split at 5 tokens without the header; "3,delta" does not fit with the header
    # either (3 + 3 > 5), so it is one piece without it; "1,alpha" fits (3 + 2 = 5).
    assert _split(TEXT, 5) == [
        ("id,name\n1,alpha", 5, 8, 15),
        ("2,a longer row with", 5, 16, 30),
        ("with several words", 3, 31, 49),
        ("3,delta", 3, 50, 57),
    ]


def test_blank_records_are_passed_over_and_no_chunk_ends_with_white_space():
    text = "\nid,name\n\n1,alpha  \n\n2,beta\n\n"
    assert _split(text, 50) == [("id,name\n1,alpha  \n\n2,beta", 9, 10, 27)]
    assert text[10:27] == "1,alpha  \n\n2,beta"


def test_quoted_newlines_and_crlf_stay_inside_a_record():
    text = 'id,note\n1,"two\nlines"\r\n2,x\r\n'
    # "id,note\n" 4 tokens, the quoted record 6 with or without its CRLF, "2,x" 2: 12 in all.
    assert _split(text, 12) == [('id,note\n1,"two\nlines"\r\n2,x', 12, 8, 26)]
    assert _split(text, 11) == [('id,note\n1,"two\nlines"', 10, 8, 21), ("id,note\n2,x", 6, 23, 26)]


def test_the_csv_rules_are_in_the_fingerprint():
    config, _ = _format_splitter("csv", Settings())
    assert config["csv_rules"] == 2


@pytest.mark.parametrize("max_tokens", [30, 50, 65, 500])
def test_debian_releases_every_row_kept_within_the_cap(corpus, max_tokens):
    text = (corpus / "debian-releases.csv").read_text(encoding="utf-8")
    header, *rows = text.rstrip("\n").split("\n")  # no quoted newlines in this file
    assert [",".join(r) for r in csv.reader(io.StringIO(text))] == [header, *rows]
    header_tokens, longest_row = count_tokens(header + "\n"), max(map(count_tokens, rows))
    assert (header_tokens, longest_row) == (21, 44)
    chunks = split_csv([Page(0, 0, text)], max_tokens, 1000)
    assert all(c.token_count == count_tokens(c.text) <= max_tokens for c in chunks)
    covered = {i for c in chunks for i in range(c.char_start, c.char_end)}
    assert all(i in covered for i, ch in enumerate(text) if i >= len(header) + 1 and ch != "\n")
    with_header = [c.text.startswith(header + "\n") for c in chunks]
    # 2 x 21 > 30 and no row fits with the header in 30 tokens (21 + 11 > 30): no chunk has it; from 42 on, all.
    assert with_header == [2 * header_tokens <= max_tokens] * len(chunks)
    if max_tokens >= header_tokens + longest_row:  # no row is cut: the spans are whole rows, in order
        own = [text[c.char_start:c.char_end] for c in chunks]
        assert [row for part in own for row in part.split("\n")] == rows
        assert [c.text for c in chunks] == [f"{header}\n{part}" for part in own]
