"""chunking.parsers.rtf: RTF documents written by hand after the RTF 1.9.1 specification, parsed to exact texts."""

from __future__ import annotations

import pytest

from chunking.parsers import ParseError, ReadContext, parse_document
from chunking.parsers.limits import Limits
from chunking.parsers.rtf import group_depth
from chunking.parsers.titles import property_title
from tests.parsers.made import rtf

_BODY = (
    r"{\colortbl;\red0\green0\blue0;}{\stylesheet{\s1 heading 1;}}"
    r"{\pard\s1\b Quarterly report\b0\par}"
    r"{\pard Caf\'e9 cr\u232?me, {\i italic} text and a \{brace\}.\par}"
    r"{\header Running header\par}{\*\generator Hand 1.0;}"
    r"\trowd\cellx1000\cellx2000 Cell A\cell Cell B\cell\row"
    r"{\pard Last\par\par\par\par}"
)


def test_text_is_kept_and_the_info_title_read():
    data = rtf(_BODY, title=r"Report \'e9t\'e9")
    pages = parse_document(data, source="r.rtf")

    assert [page.text for page in pages] == [
        "Quarterly report\nCafé crème, italic text and a {brace}.\nCell A|Cell B|\nLast\n"
    ]
    assert property_title(data, "r.rtf") == "Report été"


def test_group_depth_is_counted_without_escaped_braces():
    assert group_depth(rb"{\rtf1{a}{\b{c}}\{\}}", stop_above=10) == 3
    assert group_depth(b"{" * 50, stop_above=10) == 11


@pytest.mark.parametrize(("data", "limits", "reason"), [
    (b"Just text, renamed.", Limits(), r"not a valid RTF: it does not start with \{\\rtf"),
    (rtf("{" * 40 + "x" + "}" * 40), Limits(max_nesting_depth=30), r"RTF groups nested more than 30 levels deep"),
    (rtf(r"{\pard " + "word " * 100 + r"\par}"), Limits(max_document_chars=100), r"MAX_DOCUMENT_CHARS"),
])
def test_refusals_name_their_reason(data, limits, reason):
    with pytest.raises(ParseError, match=reason):
        parse_document(data, source="r.rtf", context=ReadContext(limits))
