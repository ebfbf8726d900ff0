"""chunking.parsers.epub: EPUBs made by tests/parsers/made.py, parsed to exact page texts; the refusals."""

from __future__ import annotations

import pytest

from chunking.parsers import ParseError, ReadContext, parse_document
from chunking.parsers.limits import Limits
from chunking.parsers.titles import property_title
from tests.parsers.helpers import assert_page_invariants
from tests.parsers.made import epub, flag_encrypted, zip_package

_CHAPTERS = [
    ("cover.xhtml", '<img src="cover.png" alt=""/>'),
    ("ch1.xhtml", "<nav><ol><li>Contents</li></ol></nav><h1>Chapter One</h1><p>Alpha <b>bold</b> text.</p>"
                  "<ul><li>one</li><li>two</li></ul>"),
    ("ch%202.xhtml", "<h2>Two</h2><p>Beta &amp; gamma.</p><table><tr><th>a</th><th>b</th></tr>"
                     "<tr><td>1</td><td>2</td></tr></table>"),
]


def _book() -> bytes:
    chapters = [(name.replace("%20", " "), body) for name, body in _CHAPTERS]
    # The manifest's href is URL-encoded, the member name is not (OCF: hrefs are URLs).
    return epub(chapters, title="The Book &amp; Co", hrefs={"ch 2.xhtml": "ch%202.xhtml"})


def test_chapters_are_pages_with_headings_and_the_opf_title():
    data = _book()
    pages = parse_document(data, source="book.epub")

    assert_page_invariants(pages)
    assert [page.text for page in pages] == [
        "",
        "# Chapter One\n\nAlpha bold text.\n\n- one\n- two\n",
        "## Two\n\nBeta & gamma.\n\n<figure><table>\n<tr><th>a</th><th>b</th></tr>\n<tr><td>1</td><td>2</td>"
        "</tr>\n</table></figure>\n",
    ]
    assert property_title(data, "book.epub") == "The Book & Co"


def test_a_spine_item_that_is_not_html_is_not_a_page():
    data = epub([("a.xhtml", "<p>Text.</p>")],
                manifest_extra='<item id="pic" href="p.svg" media-type="image/svg+xml"/>',
                spine_extra='<itemref idref="pic"/>', extra={"OEBPS/p.svg": "<svg/>"})
    assert [page.text for page in parse_document(data, source="b.epub")] == ["Text.\n"]


@pytest.mark.parametrize(("make", "reason"), [
    (lambda: b"PK\x03\x04 not really", "not a valid EPUB: not a ZIP package"),
    (lambda: zip_package({"mimetype": "application/epub+zip"}), "not a valid EPUB: META-INF/container.xml is missing"),
    (lambda: epub([("a.xhtml", "<p>x</p>")], idrefs={"c0": "nope"}),
     "not a valid EPUB: the spine names item 'nope', which the manifest does not list"),
    (lambda: epub([("a.xhtml", "<p>x</p>")], hrefs={"a.xhtml": "b.xhtml"}),
     "not a valid EPUB: the spine names OEBPS/text/b.xhtml, which the package does not hold"),
    (lambda: epub([("a.xhtml", "<p>x</p>")], extra={"META-INF/encryption.xml": (
        '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
        'xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData><enc:CipherData>'
        '<enc:CipherReference URI="OEBPS/text/a.xhtml"/></enc:CipherData></enc:EncryptedData></encryption>')}),
     "not a valid EPUB: OEBPS/text/a.xhtml is encrypted (DRM)"),
    (lambda: epub([("a.xhtml", "<p>x</p>")], extra={"META-INF/container.xml": (
        '<?xml version="1.0"?><!DOCTYPE c [<!ENTITY e "x">]><container/>')}),
     "not a valid EPUB: META-INF/container.xml holds a DTD"),
])
def test_damaged_or_protected_books_are_refused_with_their_reason(make, reason):
    with pytest.raises(ParseError) as caught:
        parse_document(make(), source="b.epub")
    assert caught.value.reason.startswith(reason)


def test_a_member_flagged_as_zip_encrypted_is_refused():
    data = flag_encrypted(epub([("a.xhtml", "<p>x</p>")]), "OEBPS/text/a.xhtml")
    with pytest.raises(ParseError, match=r"^b.epub: not a valid EPUB: OEBPS/text/a.xhtml is encrypted$"):
        parse_document(data, source="b.epub")


def test_limits_zip_bomb_pages_characters_and_nesting():
    bomb = epub([("a.xhtml", "<p>" + "x " * 600_000 + "</p>")])
    assert len(bomb) < 20_000
    with pytest.raises(ParseError, match=r"MAX_DECOMPRESSED_BYTES"):
        parse_document(bomb, source="b.epub", context=ReadContext(Limits(max_decompressed_bytes=1 << 20)))
    three = epub([(f"c{i}.xhtml", f"<p>chapter {i}</p>") for i in range(3)])
    with pytest.raises(ParseError, match=r"^b.epub: 3 pages, more than 2 \(MAX_PAGES\)$"):
        parse_document(three, source="b.epub", context=ReadContext(Limits(max_pages=2)))
    with pytest.raises(ParseError, match=r"page 2 has more than 12 characters \(MAX_PAGE_CHARS\)"):
        parse_document(epub([("a.xhtml", "<p>short</p>"), ("b.xhtml", "<p>a longer chapter</p>")]),
                       source="b.epub", context=ReadContext(Limits(max_page_chars=12)))
    deep = epub([("a.xhtml", "<div>" * 30 + "deep" + "</div>" * 30)])
    with pytest.raises(ParseError, match=r"OEBPS/text/a.xhtml: HTML elements nested more than 20 levels"):
        parse_document(deep, source="b.epub", context=ReadContext(Limits(max_nesting_depth=20)))
