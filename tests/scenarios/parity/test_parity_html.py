"""Differential parity of the HTML splitters with langchain-text-splitters 1.1.3 on generated HTML
(``html_strategies.py``): equal outputs pass; a difference passes only when a documented difference applies
(``html_differences.py``). CI runs a fixed-seed subset (``PARITY_EXAMPLES``, default 150); by hand 10000.
"""

from __future__ import annotations

import logging
import os
import warnings

import langchain_text_splitters as langchain  # the reference: a test dependency (requirements-dev.txt)
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunking import splitters as ours
from tests.scenarios.parity import html_differences as html_diff
from tests.scenarios.parity.differences import compare
from tests.scenarios.parity.html_strategies import html_documents, well_formed_documents

EXAMPLES = int(os.environ.get("PARITY_EXAMPLES", "150"))
PARITY = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
HEADERS = st.sampled_from([[], [("h1", "Header 1")], [("h1", "Header 1"), ("h2", "Header 2")],
                           [("h2", "Header 2"), ("h3", "Header 3")], [("h1", "H1"), ("h2", "H2"), ("h3", "H3")]])


@pytest.fixture(autouse=True)
def _quiet():
    logging.disable(logging.WARNING)  # both libraries warn about oversize pieces
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # LangChain's beta warning
        yield
    logging.disable(logging.NOTSET)


def docs(documents):
    return [(d.page_content, d.metadata) for d in documents]


def iframe_link(tag):
    return f"[iframe:{tag.get('src', '')}]({tag.get('src', '')})"


@st.composite
def semantic_options(draw):
    size = draw(st.sampled_from([1000, 1000, 200, 60, 25, 12]))
    options = dict(headers_to_split_on=draw(HEADERS), max_chunk_size=size,
                   chunk_overlap=draw(st.integers(0, min(size, 20))))
    optional = {
        "separators": st.sampled_from([None, [". "], [" "], ["\n", " ", ""]]),
        "elements_to_preserve": st.sampled_from([None, ["table"], ["table", "ul"], ["code"], ["p"], ["div"]]),
        "preserve_links": st.booleans(), "preserve_images": st.booleans(), "preserve_videos": st.booleans(),
        "preserve_audio": st.booleans(), "custom_handlers": st.sampled_from([None, {"iframe": iframe_link}]),
        "normalize_text": st.booleans(), "external_metadata": st.sampled_from([None, {"source": "example.com"}]),
        "allowlist_tags": st.sampled_from([None, ["p", "span", "b"], ["p", "div", "table", "tr", "td"]]),
        "denylist_tags": st.sampled_from([None, ["span"], ["span", "h1", "td"]]),
        "keep_separator": st.sampled_from([True, False, "start", "end"]),
    }
    for name, strategy in optional.items():
        if draw(st.integers(0, 3)) == 0:
            options[name] = draw(strategy)
    return options


@PARITY
@given(text=html_documents, options=semantic_options())
def test_html_semantic_preserving_splitter(text, options):
    theirs = docs(langchain.HTMLSemanticPreservingSplitter(**options).split_text(text))
    mine = docs(ours.HTMLSemanticPreservingSplitter(**options).split_text(text))
    compare("test_html_semantic_preserving_splitter", dict(text=text, options=options, ours=mine, theirs=theirs),
            html_diff.SEMANTIC)


def test_the_html_predicates_are_not_vacuous():
    """On plain HTML that shows none of the differences, every predicate is false (a real difference there fails)."""
    options = dict(headers_to_split_on=[("h1", "H1")], max_chunk_size=1000, elements_to_preserve=["table"])
    case = dict(text="<h1>A</h1><p>x y</p><table><tr><td>1</td></tr></table>", options=options,
                ours=[("x y 1 wrong", {"H1": "A"})], theirs=[("x y 1", {"H1": "A"})])
    assert [d.name for d in html_diff.SEMANTIC if d.applies(case)] == []


SECTION_HEADERS = [("h1", "Header 1"), ("h2", "Header 2"), ("h3", "Header 3")]


@PARITY
@given(text=html_documents, headers=st.sampled_from([SECTION_HEADERS, SECTION_HEADERS[:2], [("h1", "H1")]]))
def test_html_section_splitter(text, headers):
    try:
        theirs = docs(langchain.HTMLSectionSplitter(headers).split_text(text))
    except ValueError as error:  # lxml: "Input object has no document"
        theirs = f"ValueError: {error}"
    except KeyError as error:  # a section whose tag is not configured
        theirs = f"KeyError: {error}"
    mine = docs(ours.HTMLSectionSplitter(headers).split_text(text))
    compare("test_html_section_splitter", dict(text=text, options={"headers_to_split_on": headers}, ours=mine,
                                                theirs=theirs), html_diff.SECTION)


@PARITY
@given(text=well_formed_documents, headers=HEADERS, each=st.booleans())
def test_html_header_text_splitter(text, headers, each):
    theirs = docs(langchain.HTMLHeaderTextSplitter(headers, return_each_element=each).split_text(text))
    mine = docs(ours.HTMLHeaderTextSplitter(headers, return_each_element=each).split_text(text))
    compare("test_html_header_text_splitter", dict(text=text, options={"headers_to_split_on": headers}, ours=mine,
                                                    theirs=theirs), html_diff.HEADER)
