"""Real documents (``samples/``, ``tests/data/``) split with their structure intact.

Oracles are independent of the splitters: markdown-it-py (CommonMark) for fences and headings, BeautifulSoup for
HTML headings and text order, ``json`` for JSON validity and the source rows for CSV.
"""

from __future__ import annotations

import json
import re

import pytest
from bs4 import BeautifulSoup, Comment, NavigableString
from markdown_it import MarkdownIt

from chunking.splitters import (
    ExperimentalMarkdownSyntaxTextSplitter,
    HTMLHeaderTextSplitter,
    MarkdownHeaderTextSplitter,
    MarkdownSectionSplitter,
    MarkdownTextSplitter,
    RecursiveCharacterTextSplitter,
    RecursiveJsonSplitter,
    TokenTextSplitter,
)
from chunking.tokens import count_tokens
from tests.sample_documents import document_path as corpus_file

# -- Markdown: pyenv README ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def readme() -> str:
    return corpus_file("pyenv-README.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def readme_structure(readme: str) -> tuple[list[tuple[int, int, str]], list[tuple[int, int, str]]]:
    """(fences as (start, end, info), ATX and setext headings as (line start, level, text)) by markdown-it-py."""
    line_starts = [0] + [m.end() for m in re.finditer("\n", readme)]
    tokens = MarkdownIt("commonmark").parse(readme)
    fences, headings = [], []
    for index, token in enumerate(tokens):
        if token.type == "fence":
            first, last = token.map
            end = line_starts[last] - 1 if last < len(line_starts) else len(readme)
            fences.append((line_starts[first], end, token.info.strip()))
        elif token.type == "heading_open":  # ATX and setext
            headings.append((line_starts[token.map[0]], int(token.tag[1]), tokens[index + 1].content))
    return fences, headings


def heading_path(headings: list[tuple[int, int, str]], position: int, max_level: int, key: str) -> dict[str, str]:
    stack: list[tuple[int, str]] = []
    for start, level, text in headings:
        if start > position:
            break
        if level <= max_level:
            stack = [entry for entry in stack if entry[0] < level] + [(level, text)]
    return {f"{key}{level}": text for level, text in stack}


def prose_length(start: int, end: int, fences: list[tuple[int, int, str]]) -> int:
    code = sum(max(0, min(end, f_end) - max(start, f_start)) for f_start, f_end, _ in fences)
    return end - start - code


def test_readme_has_the_structure_these_tests_rely_on(readme, readme_structure):
    fences, headings = readme_structure
    assert len(fences) >= 20 and len(headings) >= 30
    # Several fences are indented under list items: only CommonMark's container rule finds them.
    assert sum(1 for start, _, _ in fences if readme[start:].startswith("    ")) >= 5


def test_readme_hash_lines_inside_its_fences_are_never_headers(readme, readme_structure):
    fences, headings = readme_structure
    # Put a "# comment" line at the top of every code block of the real document.
    injected, cursor = [], 0
    for start, end, _ in fences:
        opening_end = readme.index("\n", start, end) + 1 if "\n" in readme[start:end] else end
        indent = readme[start:opening_end][: len(readme[start:opening_end]) - len(readme[start:opening_end].lstrip())]
        injected.append(readme[cursor:opening_end] + indent + "# not a heading\n")
        cursor = opening_end
    text = "".join(injected) + readme[cursor:]
    tokens = MarkdownIt("commonmark").parse(text)
    assert sum(1 for t in tokens if t.type == "heading_open") == sum(
        1 for t in MarkdownIt("commonmark").parse(readme) if t.type == "heading_open"
    )
    levels = [("#", "Header 1"), ("##", "Header 2"), ("###", "Header 3"), ("####", "Header 4")]
    original = MarkdownHeaderTextSplitter(levels).split_text(readme)
    changed = MarkdownHeaderTextSplitter(levels).split_text(text)
    assert [d.metadata for d in changed] == [d.metadata for d in original]
    assert sum(d.page_content.count("# not a heading") for d in changed) == len(fences)


@pytest.mark.parametrize("chunk_size", [200, 800])
def test_readme_sections_never_cut_code_and_carry_the_heading_path(readme, readme_structure, chunk_size):
    fences, headings = readme_structure
    chunks = MarkdownSectionSplitter(chunk_size=chunk_size).split_text(readme)
    assert len(chunks) > 10
    for chunk in chunks:
        assert readme[chunk.start_index : chunk.end_index] == chunk.page_content
        assert prose_length(chunk.start_index, chunk.end_index, fences) <= chunk_size
        assert chunk.metadata == heading_path(headings, chunk.start_index, 6, "h")
    for start, end, _ in fences:
        holders = [c for c in chunks if c.start_index <= start and end <= c.end_index]
        touching = [c for c in chunks if c.start_index < end and start < c.end_index]
        assert len(holders) == 1 and touching == holders, f"code block at {start} was cut"


def test_readme_front_matter_renders_the_heading_path(readme):
    chunk = next(c for c in MarkdownSectionSplitter(chunk_size=800).split_text(readme) if "h3" in c.metadata)
    rendered = chunk.to_markdown(include_metadata=True)
    assert rendered.startswith("---\nh1: ") and rendered.endswith("---\n\n" + chunk.page_content)


def test_readme_header_splitter_metadata_matches_commonmark_headings(readme, readme_structure):
    fences, headings = readme_structure
    levels = [("#", "Header 1"), ("##", "Header 2"), ("###", "Header 3"), ("####", "Header 4")]
    docs = MarkdownHeaderTextSplitter(levels, add_start_index=True).split_text(readme)
    assert len(docs) > 20
    for doc in docs:
        start = doc.metadata.pop("start_index")
        assert readme[start : start + len(doc.page_content)] == doc.page_content
        assert doc.metadata == heading_path(headings, start, 4, "Header ")
    for start, end, _ in fences:  # every code block is inside one section, whole
        assert sum(1 for d in docs if readme[start:end] in d.page_content) >= 1


def test_readme_syntax_splitter_code_chunks_are_the_commonmark_fences(readme, readme_structure):
    fences, _ = readme_structure
    docs = ExperimentalMarkdownSyntaxTextSplitter(add_start_index=True).split_text(readme)
    code = [d for d in docs if "Code" in d.metadata]
    assert [(d.metadata["start_index"], d.metadata["Code"]) for d in code] == [
        (start, info.split()[0] if info else "") for start, _, info in fences
    ]
    assert [d.page_content.rstrip("\n") for d in code] == [readme[s:e] for s, e, _ in fences]


def test_readme_markdown_preset_cuts_a_fence_only_when_it_alone_is_too_big(readme, readme_structure):
    fences, _ = readme_structure
    chunk_size = 400
    pairs = MarkdownTextSplitter(chunk_size=chunk_size, chunk_overlap=0).split_text_with_offsets(readme)
    for start, end, _ in fences:
        if end - start + 1 > chunk_size:
            continue
        start += len(readme[start:end]) - len(readme[start:end].lstrip())  # chunks are stripped of indentation
        assert any(s <= start and end <= s + len(c) for c, s in pairs), f"fence at {start} was cut"


# -- HTML: aptitude (ja) and Debian Reference (zh-CN) --------------------------------------------------------


HTML_HEADERS = [("h1", "Header 1"), ("h2", "Header 2"), ("h3", "Header 3"), ("h4", "Header 4")]


@pytest.fixture(scope="module", params=["aptitude-ch02s05s05.ja.html", "debian-reference-ch02.zh-cn.html"])
def html_page(request) -> tuple[str, BeautifulSoup]:
    html = corpus_file(request.param).read_text(encoding="utf-8")
    soup = BeautifulSoup(re.sub(r"\A\s*<\?xml[^>]*\?>", "", html), "lxml")
    for tag in soup.find_all(["script", "style", "noscript", "template", "head"]):
        tag.decompose()
    for comment in soup.find_all(string=lambda s: isinstance(s, Comment)):
        comment.extract()
    return html, soup


@pytest.fixture(scope="module")
def html_docs(html_page):
    return HTMLHeaderTextSplitter(HTML_HEADERS).split_text(html_page[0])


def collapse(text: str) -> str:
    return re.sub(r"[ \t\n\r\f]+", " ", text).strip()


def test_html_sections_follow_the_document_headings(html_page, html_docs):
    _, soup = html_page
    expected: list[dict[str, str]] = []
    stack: list[tuple[int, str]] = []
    for heading in soup.find_all(["h1", "h2", "h3", "h4"]):
        level, text = int(heading.name[1]), collapse(heading.get_text())
        stack = [entry for entry in stack if entry[0] < level] + [(level, text)]
        if text:
            expected.append({f"Header {lvl}": txt for lvl, txt in stack})
    seen = [doc.metadata for doc in html_docs]
    distinct = [m for i, m in enumerate(seen) if i == 0 or m != seen[i - 1]]
    assert len(expected) >= 3
    assert [m for m in distinct if m] == expected
    for doc in html_docs:  # with strip_headers=False a section starts with its own header
        if doc.metadata:
            assert doc.page_content.split("\n")[0] == list(doc.metadata.values())[-1]


def test_html_text_order_is_preserved(html_page, html_docs):
    _, soup = html_page
    output = collapse("\n".join(doc.page_content for doc in html_docs))
    position, checked = 0, 0
    for string in soup.find_all(string=True):
        if type(string) is not NavigableString:  # doctype, processing instructions
            continue
        piece = collapse(str(string))
        if len(piece) < 4 or string.find_parent("pre") is not None:
            continue
        found = output.find(piece, position)
        assert found >= 0, f"text {piece[:40]!r} missing or out of order"
        position = found + len(piece)
        checked += 1
    assert checked > 50


def test_html_preserved_pre_blocks_are_never_cut(html_page):
    html, soup = html_page
    splitter = HTMLHeaderTextSplitter(HTML_HEADERS, elements_to_preserve=["pre", "table"], max_chunk_size=500)
    docs = splitter.split_text(html)
    outputs = [collapse(doc.page_content) for doc in docs]
    blocks = [collapse(pre.get_text()) for pre in soup.find_all("pre") if collapse(pre.get_text())]
    for block in blocks:
        assert any(block in out for out in outputs), f"pre block {block[:40]!r} was cut"
    assert all(len(d.page_content) <= 500 or d.page_content.count("\n") > 0 for d in docs)


def test_token_splitter_keeps_cjk_text_intact(html_docs):
    text = "\n".join(doc.page_content for doc in html_docs)[:20000]
    pairs = TokenTextSplitter(chunk_size=64, chunk_overlap=16).split_text_with_offsets(text)
    assert len(pairs) > 10
    for chunk, start in pairs:
        assert "\ufffd" not in chunk and text[start : start + len(chunk)] == chunk
        assert count_tokens(chunk) <= 64


# -- JSON: ISO 3166-1 -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def countries() -> dict:
    return json.loads(corpus_file("iso_3166-1.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("max_size", [300, 1000])
def test_iso_3166_chunks_are_valid_json_within_the_limit(countries, max_size):
    splitter = RecursiveJsonSplitter(max_chunk_size=max_size)
    texts = splitter.split_text(countries, convert_lists=True)
    assert len(texts) > 10
    rebuilt: dict = {}
    for text in texts:
        assert len(text) <= max_size
        chunk = json.loads(text)
        for index, country in chunk["3166-1"].items():
            rebuilt.setdefault(index, {}).update(country)
    assert [rebuilt[str(i)] for i in range(len(rebuilt))] == countries["3166-1"]
    docs = splitter.create_documents([countries], convert_lists=True)
    assert all(d.metadata["json_path"].startswith("/3166-1") and "json_oversize" not in d.metadata for d in docs)


def test_iso_3166_without_convert_lists_flags_the_whole_list(countries):
    docs = RecursiveJsonSplitter(max_chunk_size=1000).create_documents([countries])
    assert len(docs) == 1 and docs[0].metadata == {"json_path": "/3166-1", "json_oversize": True}
    with pytest.raises(ValueError, match="/3166-1"):
        RecursiveJsonSplitter(max_chunk_size=1000).split_json(countries, on_oversize="raise")


# -- CSV: Debian releases ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("chunk_size", "chunk_overlap"), [(120, 0), (200, 0), (300, 100)])
def test_debian_releases_rows_are_never_cut(chunk_size, chunk_overlap):
    text = corpus_file("debian-releases.csv").read_text(encoding="utf-8")
    rows = text.strip("\n").split("\n")
    assert max(map(len, rows)) <= chunk_size
    splitter = RecursiveCharacterTextSplitter(chunk_size=chunk_size, chunk_overlap=chunk_overlap)
    chunks = splitter.split_text(text)
    assert len(chunks) > 1
    seen: list[str] = []  # the rows in order, overlap repeats left out
    for chunk in chunks:
        lines = chunk.split("\n")
        assert all(line in rows for line in lines), f"a row was cut in {chunk!r}"
        for line in lines:
            if not seen or rows.index(line) > rows.index(seen[-1]):
                seen.append(line)
    assert seen == rows
