"""chunking.parsers.json: JSON text verbatim, after validation with a located error."""

from __future__ import annotations

import json as stdlib_json

import pytest

from chunking.parsers import ParseError, json, parse_document
from tests.parsers.helpers import assert_page_invariants, corpus_bytes, parse_corpus

COUNTRIES = "iso_3166-1.json"


def test_corpus_json_is_the_file_verbatim_and_still_json():
    pages = parse_corpus(COUNTRIES)

    assert len(pages) == 1
    assert_page_invariants(pages)
    assert pages[0].text == corpus_bytes(COUNTRIES).decode("utf-8")
    assert len(pages[0].text) == 41_781
    countries = stdlib_json.loads(pages[0].text)["3166-1"]
    assert {"alpha_2": "JP", "alpha_3": "JPN", "flag": "🇯🇵", "name": "Japan", "numeric": "392"} in countries


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b'{\n  "a": 1,\n  "b": \n}', "invalid JSON: line 4 column 1: Expecting value"),
        (b'{"a": 1,}', "invalid JSON: line 1 column 9: Expecting property name enclosed in double quotes"),
        (b"[1, 2", "invalid JSON: line 1 column 6: Expecting ',' delimiter"),
        (b"[" * 100_000, "JSON nested more than 100 levels deep (MAX_NESTING_DEPTH)"),
    ],
)
def test_invalid_json_names_line_and_column(data, reason):
    with pytest.raises(ParseError) as caught:
        parse_document(data, source="conf/settings.json")

    assert caught.value.reason == reason
    assert str(caught.value) == f"conf/settings.json: {reason}"


def test_utf16_json_with_bom_is_read():
    data = b"\xff\xfe" + '{"name": "日本"}'.encode("utf-16-le")

    assert [p.text for p in json.parse(data, source="u.json")] == ['{"name": "日本"}']
