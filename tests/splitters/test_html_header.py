"""HTMLHeaderTextSplitter (docs/splitters.md#htmlheadertextsplitter)."""

from __future__ import annotations

import io

import pytest

from chunking.model import Document
from chunking.splitters import HTMLHeaderTextSplitter as HTML
from chunking.tokens import count_tokens

H123 = [("h1", "Header 1"), ("h2", "Header 2"), ("h3", "Header 3")]


def contents(docs: list[Document]) -> list[tuple[str, dict]]:
    return [(d.page_content, d.metadata) for d in docs]


def test_sections_with_header_paths_and_header_as_first_line():
    html = "<h1>Intro</h1><p>Prices <em>rose</em> sharply.</p><h2>Detail</h2><ul><li>one</li></ul>"
    assert contents(HTML(H123).split_text(html)) == [
        ("Intro\nPrices rose sharply.", {"Header 1": "Intro"}),
        ("Detail\n- one", {"Header 1": "Intro", "Header 2": "Detail"}),
    ]


def test_regression_inline_text_keeps_document_order():
    # LangChain can emit an element's own text after its children's ("before after bold ...").
    html = "<h1>T</h1><div>before <b>bold</b> after<p>para <i>x</i> y</p>tail <a href='#'>link</a>.</div>"
    assert contents(HTML(H123).split_text(html)) == [
        ("T\nbefore bold after\npara x y\ntail link.", {"Header 1": "T"}),
    ]


def test_regression_script_style_head_and_comments_are_removed():
    html = (
        "<html><head><title>Title</title><style>p {color: red}</style></head><body>"
        "<h1>A</h1><script>var x = 1;</script><noscript>enable js</noscript><template><p>t</p></template>"
        "<p>kept<!-- a comment --> text</p></body></html>"
    )
    assert contents(HTML(H123).split_text(html)) == [("A\nkept text", {"Header 1": "A"})]


def test_whitespace_collapses_except_in_pre_and_nbsp_is_kept():
    html = "<h1> Spaced \n title </h1><p>a \n\t b&nbsp;&nbsp;c</p><pre>\n  def f():\n      return 1\n</pre>"
    assert contents(HTML(H123).split_text(html)) == [
        ("Spaced title\na b\u00a0\u00a0c\n  def f():\n      return 1", {"Header 1": "Spaced title"}),
    ]


def test_tables_and_lists():
    html = (
        "<h2>Data</h2><table><thead><tr><th>k</th><th>v</th></tr></thead>"
        "<tbody><tr><td>a</td><td><b>1</b></td></tr><tr><td>b</td><td></td></tr></tbody></table>"
        "<ol><li>first<ul><li>nested</li></ul></li><li><p>second</p></li></ol><dl><dt>term</dt><dd>def</dd></dl>"
    )
    assert contents(HTML(H123).split_text(html)) == [
        ("Data\nk | v\na | 1\nb | \n- first\n- nested\n- second\nterm\ndef", {"Header 2": "Data"}),
    ]


def test_header_path_pops_levels_and_text_before_first_header_has_no_keys():
    html = "<p>preface</p><h1>A</h1><p>a</p><h3>C</h3><p>c</p><h2>B</h2><p>b</p><h1>D</h1>"
    assert contents(HTML(H123).split_text(html)) == [
        ("preface", {}),
        ("A\na", {"Header 1": "A"}),
        ("C\nc", {"Header 1": "A", "Header 3": "C"}),
        ("B\nb", {"Header 1": "A", "Header 2": "B"}),
        ("D", {"Header 1": "D"}),
    ]


def test_strip_headers_drops_header_only_sections():
    html = "<h1>A</h1><h2>B</h2><p>b</p>"
    assert contents(HTML(H123, strip_headers=True).split_text(html)) == [("b", {"Header 1": "A", "Header 2": "B"})]


def test_unconfigured_headers_are_ordinary_lines():
    html = "<h1>A</h1><h4>minor</h4><p>x</p>"
    assert contents(HTML([("h1", "H1")]).split_text(html)) == [("A\nminor\nx", {"H1": "A"})]


def test_return_each_element():
    html = "<h1>A</h1><p>one</p><p>two <b>2</b></p><table><tr><td>x</td><td>y</td></tr></table>"
    assert contents(HTML(H123, return_each_element=True).split_text(html)) == [
        ("A", {"Header 1": "A"}),
        ("one", {"Header 1": "A"}),
        ("two 2", {"Header 1": "A"}),
        ("x | y", {"Header 1": "A"}),
    ]


def test_invalid_parameters():
    with pytest.raises(ValueError, match="'p'"):
        HTML([("p", "para")])
    with pytest.raises(ValueError):
        HTML(H123, max_chunk_size=0)


def test_max_chunk_size_splits_text_but_never_preserved_elements():
    table = "<table><tr><th>name</th><th>value</th></tr>" + "".join(
        f"<tr><td>row{i}</td><td>{i}</td></tr>" for i in range(6)
    ) + "</table>"
    html = "<h1>T</h1><p>" + "word " * 12 + "</p>" + table + "<p>end</p>"
    docs = HTML(H123, elements_to_preserve=["table"], max_chunk_size=40).split_text(html)
    rendered_table = "name | value\n" + "\n".join(f"row{i} | {i}" for i in range(6))
    # The text run "T\nword ... word" goes through RecursiveCharacterTextSplitter(chunk_size=40): "T" and the long
    # line are separate pieces; the table is one unit although longer than 40; pieces are then packed with "\n".
    assert contents(docs) == [
        ("T", {"Header 1": "T"}),
        ("word word word word word word word word", {"Header 1": "T"}),
        ("word word word word", {"Header 1": "T"}),
        (rendered_table, {"Header 1": "T"}),
        ("end", {"Header 1": "T"}),
    ]
    assert len(rendered_table) > 40


def test_preserved_pre_keeps_its_whitespace():
    html = "<h1>T</h1><p>" + "text " * 10 + "</p><pre>def f():\n    return 1</pre>"
    docs = HTML(H123, elements_to_preserve=["pre"], max_chunk_size=30).split_text(html)
    assert [d.page_content for d in docs] == [
        "T", "text text text text text text", "text text text text", "def f():\n    return 1",
    ]


def test_preserved_table_over_the_token_cap_is_cut_by_rows_with_its_header_repeated():
    rows = "".join(f"<tr><td>item number {i}</td><td>{i * 7}</td></tr>" for i in range(1500))
    html = f"<h1>Big</h1><table><tr><th>item</th><th>value</th></tr>{rows}</table>"
    docs = HTML(H123, elements_to_preserve=["table"], max_chunk_size=1000).split_text(html)
    pieces = [d.page_content for d in docs if d.page_content.startswith("item | value")]
    assert len(pieces) >= 2
    assert all(count_tokens(piece) <= 8191 for piece in pieces)
    body = [line for piece in pieces for line in piece.split("\n")[1:]]
    assert body == [f"item number {i} | {i * 7}" for i in range(1500)]


def test_split_documents_and_files(tmp_path):
    source = Document("<h1>A</h1><p>x</p>", {"url": "u", "tags": ["t"]})
    docs = HTML(H123).split_documents([source])
    assert contents(docs) == [("A\nx", {"url": "u", "tags": ["t"], "Header 1": "A"})]
    docs[0].metadata["tags"].append("changed")
    assert source.metadata["tags"] == ["t"]
    assert HTML(H123).transform_documents([source]) == HTML(H123).split_documents([source])
    path = tmp_path / "page.html"
    path.write_text("<h2>Ü</h2><p>ß</p>", encoding="utf-8")
    expected = [Document("Ü\nß", {"Header 2": "Ü"})]
    assert HTML(H123).split_text_from_file(str(path)) == expected
    assert HTML(H123).split_text_from_file(path) == expected
    assert HTML(H123).split_text_from_file(io.BytesIO(path.read_bytes())) == expected
    assert HTML(H123).split_text_from_file(io.StringIO(path.read_text(encoding="utf-8"))) == expected


@pytest.mark.parametrize("html", ["", "<html><head><title>x</title></head><body> </body></html>", "<!-- only -->"])
def test_nothing_to_return(html):
    assert HTML(H123).split_text(html) == []


def test_a_header_goes_out_of_scope_with_the_element_that_holds_it():
    splitter = HTML([("h1", "H1"), ("h2", "H2")])
    html = "<h1>A</h1><section><h2>B</h2><p>in B</p></section><p>after B</p>"
    assert [(d.page_content, d.metadata) for d in splitter.split_text(html)] == [
        ("A", {"H1": "A"}),
        ("B\nin B", {"H1": "A", "H2": "B"}),
        ("after B", {"H1": "A"}),
    ]
    # Text loose in the header's own parent, and content as deep as a header in a sibling element, stay in scope.
    loose = splitter.split_text("<h1>A</h1><section><h2>B</h2>loose <b>x</b></section>")
    assert [(d.page_content, d.metadata) for d in loose][-1] == ("B\nloose x", {"H1": "A", "H2": "B"})
    banner = splitter.split_text("<header><h1>T</h1></header><main><p>body</p><div><p>deep</p></div></main>")
    assert [(d.page_content, d.metadata) for d in banner] == [("T\nbody\ndeep", {"H1": "T"})]


def test_a_header_without_text_names_no_section():
    from chunking.splitters import HTMLHeaderTextSplitter

    splitter = HTMLHeaderTextSplitter([("h2", "Header 2"), ("h3", "Header 3")])
    documents = splitter.split_text("<h2>A</h2><p>a</p><h3>\u00a0\n</h3><p>b</p>")
    assert [(d.page_content, d.metadata) for d in documents] == [("A\na\nb", {"Header 2": "A"})]
