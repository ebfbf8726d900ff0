"""HTMLSectionSplitter: sections at headers and large-font elements, safe on hostile HTML."""

import socket

from chunking.model import Document
from chunking.splitters import HTMLSectionSplitter

PAGE = """<html><body>
<div>
<h1>Foo</h1>
<p>Intro to Foo.</p>
<div><h2>Bar</h2><p>About Bar.</p><h3>Sub</h3><p>Deeper.</p></div>
<span style="font-size: 24px">Big</span>
<p>Under big.</p>
<span style="font-size:12px">small</span>
</div>
</body></html>"""


def test_sections_at_headers_and_large_fonts():
    splitter = HTMLSectionSplitter([("h1", "Header 1"), ("h2", "Header 2")])
    assert [(d.page_content, d.metadata) for d in splitter.split_text(PAGE)] == [
        ("Foo \n Intro to Foo.", {"Header 1": "Foo"}),
        ("Bar About Bar. Sub Deeper.", {"Header 2": "Bar"}),
        ("Big \n Under big. \n small", {"Header 1": "Big"}),
    ]


def test_create_documents_titles_the_first_section_and_split_documents_applies_the_size():
    splitter = HTMLSectionSplitter([("h1", "Header 1")], chunk_size=12, chunk_overlap=0)
    html = "<html><body><p>Before any header.</p><h1>A</h1><p>text of A</p></body></html>"
    assert splitter.create_documents([html], [{"Title": "Page"}]) == [
        Document("Before any header.", {"Title": "Page", "Header 1": "Page"}),
        Document("A text of A", {"Title": "Page", "Header 1": "A"}),
    ]
    assert [d.page_content for d in splitter.split_documents([Document(html, {"Title": "Page"})])] == [
        "Before any", "header.", "A text of A"]


def test_hostile_html_defines_no_entity_and_fetches_nothing(monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError("network access")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    html = """<?xml version="1.0"?>
<!DOCTYPE html [
  <!ENTITY test "expanded entity">
  <!ENTITY external SYSTEM "http://example.invalid/xxe">
  <!ENTITY file SYSTEM "file:///etc/passwd">
]>
<html><body><h1>Header</h1><p>&test; &external; &file;</p><img src="http://example.invalid/x.png"></body></html>"""
    documents = HTMLSectionSplitter([("h1", "Header 1")]).split_text(html)
    text = " ".join(d.page_content for d in documents)
    assert "expanded entity" not in text and "root:" not in text
    assert documents[-1].metadata == {"Header 1": "Header"} and "&test" in documents[-1].page_content


def test_deeply_nested_html_does_not_crash():
    html = "<div>" * 3000 + "<h1>Deep</h1><p>text</p>" + "</div>" * 3000
    documents = HTMLSectionSplitter([("h1", "Header 1")]).split_text(html)
    assert documents[-1].metadata == {"Header 1": "Deep"}


def test_fragments_are_repaired_as_langchain_repairs_them():
    splitter = HTMLSectionSplitter([("h1", "Header 1"), ("h2", "Header 2")])
    assert [(d.page_content, d.metadata) for d in splitter.split_text("<div>loose\r\ntext</div><h2>B</h2>b")] == [
        ("loose\ntext", {"Header 1": "#TITLE#"}), ("B b", {"Header 2": "B"})]
    assert splitter.split_text("") == [] and splitter.split_text("<![CDATA[x]]>") == []
