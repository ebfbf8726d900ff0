"""HTMLSemanticPreservingSplitter: sections at headers, preserved elements whole, safe on hostile HTML."""

import asyncio
import socket
import sys
import types

import pytest

from chunking.model import Document
from chunking.splitters import HTMLSemanticPreservingSplitter

H1 = [("h1", "Header 1")]


def docs(documents):
    return [(d.page_content, d.metadata) for d in documents]


def test_sections_in_document_order_with_links_media_and_metadata():
    html = ('<h1>Intro <b>part</b></h1><p>Tea <b>costs</b> more <a href="/p">than <i>coffee</i></a>.</p>'
            '<img src="i.png"><h1>Next</h1>loose <span>text</span>')
    splitter = HTMLSemanticPreservingSplitter(H1, preserve_links=True, preserve_images=True,
                                              external_metadata={"source": "s"})
    assert docs(splitter.split_text(html)) == [
        ("Tea costs more [than coffee](/p) . ![image:i.png](i.png)", {"Header 1": "Intro part", "source": "s"}),
        ("loose text", {"Header 1": "Next", "source": "s"}),
    ]


def test_a_section_keeps_every_enclosing_header_unlike_langchain():
    # LangChain gives the second section {"H2": "B"} only; a header of the same or a higher level closes the
    # deeper ones; a tag that is not h1-h6 ranks after them in list order.
    html = "<h1>A</h1><p>a</p><h2>B</h2><p>b</p><h3>C</h3><p>c</p><h2>D</h2><p>d</p><h1>E</h1><p>e</p>"
    splitter = HTMLSemanticPreservingSplitter([("h1", "H1"), ("h2", "H2"), ("h3", "H3")])
    assert docs(splitter.split_text(html)) == [
        ("a", {"H1": "A"}), ("b", {"H1": "A", "H2": "B"}), ("c", {"H1": "A", "H2": "B", "H3": "C"}),
        ("d", {"H1": "A", "H2": "D"}), ("e", {"H1": "E"})]
    custom = HTMLSemanticPreservingSplitter([("h2", "H2"), ("dt", "Term")])
    assert docs(custom.split_text("<h2>B</h2><dt>x</dt><p>1</p><dt>y</dt><p>2</p><h2>C</h2><p>3</p>")) == [
        ("1", {"H2": "B", "Term": "x"}), ("2", {"H2": "B", "Term": "y"}), ("3", {"H2": "C"})]


def test_preserved_elements_are_never_cut_and_count_by_their_text():
    table = "<table><tr><td>" + " ".join(f"cell{i}" for i in range(8)) + "</td></tr></table>"
    html = f"<p>one two three four</p>{table}<p>five six</p>"
    splitter = HTMLSemanticPreservingSplitter([], max_chunk_size=30, elements_to_preserve=["table"])
    assert [d.page_content for d in splitter.split_text(html)] == [
        "one two three four",
        "cell0 cell1 cell2 cell3 cell4 cell5 cell6 cell7",  # 47 characters: alone, over the limit, whole
        "five six",
    ]


def test_preserved_text_keeps_inner_line_breaks_and_placeholder_lookalikes_stay_text():
    html = "<p>PRESERVED_0 and \U000f0000 stay</p><pre>line 1\n  line 2</pre>"
    splitter = HTMLSemanticPreservingSplitter([], elements_to_preserve=["pre"])
    assert [d.page_content for d in splitter.split_text(html)] == [
        "PRESERVED_0 and \U000f0000 stay line 1\n  line 2"]


def test_long_sections_are_split_by_the_recursive_splitter_with_overlap():
    html = "<h1>S</h1><p>This is some long text that should be split into multiple chunks.</p>"
    splitter = HTMLSemanticPreservingSplitter(H1, max_chunk_size=20, chunk_overlap=5)
    assert [d.page_content for d in splitter.split_text(html)] == [
        "This is some long", "long text that", "that should be", "be split into", "into multiple", "chunks."]


def test_keep_separator_true_ends_a_chunk_with_its_full_stop():
    html = "<p>First sentence here. Second one follows.</p>"
    splitter = HTMLSemanticPreservingSplitter([], max_chunk_size=25, separators=[". "])
    assert [d.page_content for d in splitter.split_text(html)] == ["First sentence here.", "Second one follows."]


def test_filters_normalisation_and_custom_handlers():
    html = ('<h1>T</h1><div>Keep <span>drop</span> THIS, please!</div><iframe src="u"><b>x</b></iframe>'
            "<!-- a comment --><script>alert(1)</script><style>p{}</style>")
    splitter = HTMLSemanticPreservingSplitter(
        H1, denylist_tags=["span", "h1"], normalize_text=True,
        custom_handlers={"iframe": lambda tag: f"[Frame:{tag['src']}]"})
    assert docs(splitter.split_text(html)) == [("keep this please [Frame:u]", {"Header 1": "T"})]
    allow = HTMLSemanticPreservingSplitter(H1, allowlist_tags=["p"], preserve_images=True)
    assert docs(allow.split_text('<h1>T</h1><p>kept <img src="i"></p><div>gone</div>')) == [
        ("kept ![image:i](i)", {"Header 1": "T"})]


def test_blank_sections_give_nothing_and_a_bom_is_no_text():
    splitter = HTMLSemanticPreservingSplitter(H1)
    assert splitter.split_text("\ufeff<h1>A</h1><div> <span></span> </div><h1>B</h1>") == []
    assert splitter.split_text("") == []


def test_documents_do_not_share_metadata_and_transform_keeps_parent_metadata():
    splitter = HTMLSemanticPreservingSplitter(H1, max_chunk_size=10, preserve_parent_metadata=True)
    out = splitter.transform_documents([Document("<h1>A</h1><p>one two three four</p>", {"src": "f"})])
    assert docs(out) == [(text, {"src": "f", "Header 1": "A"}) for text in ("one two", "three", "four")]
    out[0].metadata["src"] = "changed"
    assert out[1].metadata["src"] == "f"
    again = asyncio.run(splitter.atransform_documents([Document("<p>x</p>", {})]))
    assert docs(again) == [("x", {})]


def test_signature_and_defaults_are_langchains():
    import inspect

    parameters = inspect.signature(HTMLSemanticPreservingSplitter.__init__).parameters
    assert list(parameters)[1:] == [
        "headers_to_split_on", "max_chunk_size", "chunk_overlap", "separators", "elements_to_preserve",
        "preserve_links", "preserve_images", "preserve_videos", "preserve_audio", "custom_handlers",
        "stopword_removal", "stopword_lang", "normalize_text", "external_metadata", "allowlist_tags",
        "denylist_tags", "preserve_parent_metadata", "keep_separator"]
    defaults = {name: p.default for name, p in parameters.items() if p.default is not inspect.Parameter.empty}
    assert defaults == {"max_chunk_size": 1000, "chunk_overlap": 0, "separators": None,
                        "elements_to_preserve": None, "preserve_links": False, "preserve_images": False,
                        "preserve_videos": False, "preserve_audio": False, "custom_handlers": None,
                        "stopword_removal": False, "stopword_lang": "english", "normalize_text": False,
                        "external_metadata": None, "allowlist_tags": None, "denylist_tags": None,
                        "preserve_parent_metadata": False, "keep_separator": True}
    with pytest.raises(ValueError, match="chunk overlap"):
        HTMLSemanticPreservingSplitter(H1, max_chunk_size=10, chunk_overlap=11)


def test_hostile_html_is_read_without_network_recursion_or_entity_expansion(monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError("the splitter opened a socket")

    monkeypatch.setattr(socket, "socket", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    deep = "<div>" * 20_000 + "deep text" + "</div>" * 20_000
    hostile = ('<!DOCTYPE html [<!ENTITY test SYSTEM "http://127.0.0.1:9/x">]><p>&test; ok</p>'
               '<img src="http://127.0.0.1:9/i.png"><a href="file:///etc/passwd">p</a>')
    splitter = HTMLSemanticPreservingSplitter(H1, preserve_images=True, preserve_links=True,
                                              elements_to_preserve=["div"])
    assert [d.page_content for d in splitter.split_text(deep)] == ["deep text"]
    assert [d.page_content for d in splitter.split_text(hostile)] == [  # html.parser: the subset ends at ">"
        "]> &test ok ![image:http://127.0.0.1:9/i.png](http://127.0.0.1:9/i.png) [p](file:///etc/passwd)"]


def test_stopwords_come_from_an_installed_nltk_and_are_never_downloaded(monkeypatch):
    def download(*args, **kwargs):
        raise AssertionError("nltk.download was called")

    fake = types.ModuleType("nltk")
    fake.download = download
    fake.corpus = types.SimpleNamespace(stopwords=types.SimpleNamespace(words=lambda lang: ["the", "a", "is"]))
    monkeypatch.setitem(sys.modules, "nltk", fake)
    splitter = HTMLSemanticPreservingSplitter([], stopword_removal=True)
    assert [d.page_content for d in splitter.split_text("<p>the cat is a cat</p>")] == ["cat cat"]

    def missing(lang):
        raise LookupError("Resource stopwords not found.")

    fake.corpus = types.SimpleNamespace(stopwords=types.SimpleNamespace(words=missing))
    with pytest.raises(LookupError, match="never downloaded"):
        HTMLSemanticPreservingSplitter([], stopword_removal=True)


def test_stopword_removal_without_nltk_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "nltk", None)  # importing it raises ImportError
    with pytest.raises(ImportError, match=r"pip install chunking\[nltk\]"):
        HTMLSemanticPreservingSplitter([], stopword_removal=True)
