"""chunking.parsers.html: the DocBook corpus pages and small pages with one rule each."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunking.parsers import html
from tests.parsers.helpers import (
    assert_balanced_figures,
    assert_page_invariants,
    document_text,
    lines_outside_code,
    parse_corpus,
)

APTITUDE = "aptitude-ch02s05s05.ja.html"
DEBIAN_REFERENCE = "debian-reference-ch02.zh-cn.html"


def _text(markup: str | bytes, encoding: str = "utf-8") -> str:
    data = markup.encode(encoding) if isinstance(markup, str) else markup
    pages = list(html.parse(data, source="page.html"))
    assert len(pages) == 1
    assert_page_invariants(pages)
    return pages[0].text


# --- corpus ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [APTITUDE, DEBIAN_REFERENCE])
def test_corpus_html_is_one_page_at_offset_zero(name):
    pages = parse_corpus(name)

    assert len(pages) == 1
    assert_page_invariants(pages)
    assert len(pages[0].text) > 30_000


@pytest.mark.parametrize(
    ("name", "heading"),
    [
        (APTITUDE, "### Configuration file reference"),
        (APTITUDE, "#### 設定ファイルの書式"),
        (APTITUDE, "#### Available configuration options"),
        (DEBIAN_REFERENCE, "# 第 2 章 Debian 软件包管理"),
        (DEBIAN_REFERENCE, "## 2.1. Debian 软件包管理的前提"),
        (DEBIAN_REFERENCE, "### 2.1.1. 软件包配置"),
    ],
)
def test_corpus_html_headings_are_markdown_lines(name, heading):
    assert heading in lines_outside_code(document_text(parse_corpus(name)))


@pytest.mark.parametrize(
    ("name", "phrase"),
    [
        # Source lines break inside Japanese; as in a browser, no space is left between the characters.
        (APTITUDE, "aptitude の設定ファイルの基本形は、オプションとその値のリストです。"),
        (DEBIAN_REFERENCE, "Debian 是一个志愿者组织，它建立一致的自由软件的预编译二进制包并从档案库中分发它们。"),
        (DEBIAN_REFERENCE, "- apt(8) 用于所有的交互式命令行操作，包含软件包的安装、移除和版本升级。"),
        (DEBIAN_REFERENCE, "```\ndeb http://deb.debian.org/debian/ bullseye main non-free-firmware contrib non-free\n"),
    ],
)
def test_corpus_html_text_is_decoded_and_shaped(name, phrase):
    assert phrase in document_text(parse_corpus(name))


def test_corpus_html_tables_are_balanced_figures_with_header_cells():
    text = document_text(parse_corpus(DEBIAN_REFERENCE))

    assert assert_balanced_figures(text) == 19  # the chapter's 19 data tables; admonition tables are prose
    assert "<tr><th>软件包</th><th>流行度</th><th>大小</th><th>说明</th></tr>" in text
    assert "<tr><td>dpkg</td><td>V:919, I:999</td><td>5989</td>" in text


@pytest.mark.parametrize(
    ("name", "chrome"),
    [
        (APTITUDE, "Customizing the display layout"),  # navfooter: title of the previous page
        (APTITUDE, "ホーム"),
        (DEBIAN_REFERENCE, "第 1 章 GNU/Linux 教程"),  # navfooter
        (DEBIAN_REFERENCE, "第 3 章 系统初始化"),
        (DEBIAN_REFERENCE, "目录"),  # the table of contents
    ],
)
def test_corpus_html_has_no_navigation(name, chrome):
    assert chrome not in lines_outside_code(document_text(parse_corpus(name)))


def test_corpus_html_table_of_contents_is_dropped():
    text = document_text(parse_corpus(DEBIAN_REFERENCE))

    assert text.count("2.1.1. 软件包配置") == 1  # the heading, not also the table-of-contents entry


# --- chrome and non-content -----------------------------------------------------------------------------


def test_scripts_styles_comments_and_navigation_are_dropped():
    text = _text(
        "<html><head><title>Title</title><style>p { color: red }</style><script>var tracker = 1;</script></head>"
        "<body><header>Site banner</header><nav><ul><li>Menu item</li></ul></nav>"
        "<div role='navigation'>Skip links</div><!-- a comment --><div class='navheader'>Prev Next</div>"
        "<main><p>Real content.</p><script>alert('x')</script><noscript>Enable JavaScript</noscript>"
        "<template><p>Template text</p></template><aside>Related posts</aside><p hidden>Hidden</p></main>"
        "<footer>Copyright</footer><div class='navfooter'>Up Home</div></body></html>"
    )

    assert text == "Real content."


def test_header_of_an_article_is_content():
    text = _text("<body><header>Banner</header><article><header><h1>Post title</h1></header><p>Body.</p></article>")

    assert text == "# Post title\n\nBody."


# --- blocks ---------------------------------------------------------------------------------------------


def test_headings_paragraphs_lists_and_code_golden():
    text = _text(
        "<h1>Guide <em>one</em></h1><p>First   paragraph\n spans lines.<br>After a break.</p><h3>Deep</h3>"
        "<ul><li>one</li><li>two<ol><li>two.a</li></ol></li><li><p>three</p></li></ul>"
        "<pre>\n# apt-get update\n  indented = True\n</pre>"
    )

    assert text == (
        "# Guide one\n\nFirst paragraph spans lines.\nAfter a break.\n\n### Deep\n\n"
        "- one\n- two\n  - two.a\n- three\n\n```\n# apt-get update\n  indented = True\n```"
    )


def test_code_containing_backticks_gets_a_longer_fence():
    assert _text("<pre>a ``` b</pre>") == "````\na ``` b\n````"


def test_line_break_between_cjk_characters_is_removed_but_not_beside_latin():
    assert _text("<p>日本\n語の\nテキスト and\nmore</p>") == "日本語のテキスト and more"


# --- tables ---------------------------------------------------------------------------------------------


def test_table_golden_with_spans_escaping_header_cells_and_nested_table():
    text = _text(
        "<p>Before</p><table><caption>Sizes</caption><thead><tr><td>Name</td><th colspan='2'>Value</th></tr></thead>"
        "<tbody><tr><td rowspan='2'>a &lt; b &amp; c</td><td>x<table><tr><td>in1</td><td>in2</td></tr></table></td>"
        "<td></td></tr></tbody></table><p>After</p>"
    )

    assert text == (
        "Before\n\n<figure><table>\n<caption>Sizes</caption>\n"
        '<tr><th>Name</th><th colspan="2">Value</th></tr>\n'
        '<tr><td rowspan="2">a &lt; b &amp; c</td><td>x in1 in2</td><td></td></tr>\n'
        "</table></figure>\n\nAfter"
    )


def test_layout_tables_are_written_as_prose():
    text = _text(
        "<div class='note'><table><tr><td><img alt='[Note]'></td><th>Note</th></tr>"
        "<tr><td><p>Body text.</p></td></tr></table></div>"
        "<table role='presentation'><tr><td>Layout cell</td></tr></table>"
    )

    assert text == "Note\n\nBody text.\n\nLayout cell"


def test_empty_table_is_dropped():
    assert _text("<p>x</p><table><tr><td> </td></tr></table>") == "x"


# --- decoding -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ("<meta charset='windows-1252'><p>café “quoted”</p>".encode("cp1252"), "café “quoted”"),
        ("<meta charset='iso-8859-1'><p>Grüße — €</p>".encode("cp1252"), "Grüße — €"),
        (
            "<meta http-equiv='Content-Type' content='text/html; charset=Shift_JIS'><p>日本語のテキスト</p>".encode(
                "shift_jis"
            ),
            "日本語のテキスト",
        ),
        (b"\xff\xfe" + "<p>UTF-16 página</p>".encode("utf-16-le"), "UTF-16 página"),
        (b"\xef\xbb\xbf<p>BOM first</p>", "BOM first"),
    ],
)
def test_declared_encoding_and_bom_are_honoured(data, expected):
    assert _text(data) == expected


def test_code_inside_a_list_item_splits_the_list_around_its_fence():
    text = _text("<ol><li>Run:<pre>make\n  install</pre></li><li>Done</li></ol>")

    assert text == "- Run:\n\n```\nmake\n  install\n```\n\n- Done"


def test_inline_elements_in_a_cell_do_not_split_words_but_blocks_do():
    text = _text("<table><tr><td>foo<kbd>bar</kbd><abbr>baz</abbr><p>para</p>x<br>y</td></tr></table>")

    assert text == "<figure><table>\n<tr><td>foobarbaz para x y</td></tr>\n</table></figure>"


# --- the tree's edges -----------------------------------------------------------------------------------


def test_content_after_the_closing_html_tag_is_kept_in_order():
    # libxml2 opens a second top-level html element for what follows </html>; the text between stays out.
    assert _text("<p>one</p></html>\n<!-- c --><p>two</p></html>three") == "one\n\ntwo\n\nthree"


def test_stray_texts_of_a_list_are_items_of_their_own_even_split_by_a_comment():
    assert _text("<ul>first<!-- c -->second<li>third</li> </ul>") == "- first\n- second\n- third"


def test_code_leaves_out_comments_scripts_and_ruby_annotations_but_keeps_the_text_of_other_elements():
    text = _text("<pre>a<!-- c --><b>b</b><script>s()</script><ruby>漢<rt>かん</rt></ruby><nav>n</nav></pre>"
                 "<p>字<ruby>漢<rp>(</rp><rt>かん</rt><rp>)</rp></ruby></p>")

    assert text == "```\nab漢n\n```\n\n字漢(かん)"


def test_code_inside_a_ruby_annotation_is_no_code():
    assert _text("<p>x</p><ruby>a<rt><pre>code</pre></rt></ruby>") == "x\n\na"


def test_an_empty_or_comment_only_page_has_an_empty_page():
    for markup in ("", "  \n", "<!-- only a comment -->", "<?xml version='1.0'?>"):
        assert _text(markup) == ""


@settings(max_examples=300)
@given(st.text(alphabet="a日語 \t\n\f\xa0\u3000.", max_size=40))
def test_whitespace_runs_collapse_to_a_space_or_to_nothing_at_a_break_between_wide_characters(text):
    # The rule of each run, decided on the text as written (CSS Text 3, §4.1.3); U+3000 is wide, not a space here.
    pieces = re.split(r"([ \t\n\f\xa0]+)", text)  # text, run, text, run, …, text
    out = []
    for i, piece in enumerate(pieces):
        if i % 2 == 0:
            out.append(piece)
            continue
        wide = all(re.fullmatch(r"[日語\u3000]", char) for char in (pieces[i - 1][-1:], pieces[i + 1][:1]))
        out.append("" if "\n" in piece and wide else " ")

    assert html._collapse_whitespace(text) == "".join(out).strip()
