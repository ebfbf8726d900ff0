"""HierarchicalChunker (docs/splitters.md#hierarchical): an exact Markdown example with keys and parent links, sentence
levels, embed levels, and properties (children inside and partitioning their parent, caps, coverage)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunking.documents.records import build_records
from chunking.model import Page
from chunking.strategies.hierarchical import HierarchicalChunker, Level
from chunking.tokens import token_counter

from .helpers import assert_covers, assert_verbatim, squash

COUNT = token_counter()
DOC = ("# Install\nRun the installer. Accept the license.\n\n## Linux\nUse the package manager. It resolves "
       "dependencies.\n# Usage\nStart the program.")


def test_sections_then_sentences_with_keys_and_parents():
    chunks = HierarchicalChunker([Level(60, "sections"), Level(8)], headings=True).split_text(DOC)
    assert [(c.metadata["level"], c.metadata["path"], c.text, c.char_start, c.char_end, c.headings)
            for c in chunks] == [
        (0, [0], "# Install\nRun the installer. Accept the license.", 0, 48, ("Install",)),
        (1, [0, 0], "# Install\nRun the installer.", 0, 28, ("Install",)),
        (1, [0, 1], "Accept the license.", 29, 48, ("Install",)),
        (0, [1], "## Linux\nUse the package manager. It resolves dependencies.", 50, 109, ("Install", "Linux")),
        (1, [1, 0], "## Linux\nUse the package manager.", 50, 83, ("Install", "Linux")),
        (1, [1, 1], "It resolves dependencies.", 84, 109, ("Install", "Linux")),
        (0, [2], "# Usage\nStart the program.", 110, 136, ("Usage",)),
        (1, [2, 0], "# Usage\nStart the program.", 110, 136, ("Usage",)),
    ]  # fmt: skip
    records = build_records(chunks, doc_id="dabc", version="0123456789", source="a.md", paginated=False)
    assert [(r.id, r.parent_id, r.level) for r in records[:3]] == [
        ("dabc-01234567-0-0", None, 0),
        ("dabc-01234567-1-0_0", "dabc-01234567-0-0", 1),
        ("dabc-01234567-1-0_1", "dabc-01234567-0-0", 1),
    ]
    assert [r.ordinal for r in records] == list(range(8)) and all(r.has_vector for r in records)


def test_without_headings_hash_lines_are_text_and_levels_not_embedded_have_no_vector():
    chunks = HierarchicalChunker([Level(60, "sections"), Level(8)], embed_levels=[1]).split_text(DOC)
    assert [c.text for c in chunks if c.metadata["level"] == 0] == [DOC]  # no cut at "#" lines
    assert all(c.headings == () for c in chunks)
    records = build_records(chunks, doc_id="dabc", version="v", source="a.txt", paginated=False)
    assert [r.has_vector for r in records] == [r.level == 1 for r in records]


def test_sentences_level_gives_one_chunk_per_sentence():
    text = "Alpha is first. Beta follows it. Gamma ends the list."
    chunks = HierarchicalChunker([Level(100), Level(50, "sentences")]).split_text(text)
    assert [c.text for c in chunks] == [text, "Alpha is first.", "Beta follows it.", "Gamma ends the list."]
    assert [(c.char_start, c.char_end) for c in chunks[1:]] == [(0, 15), (16, 32), (33, 53)]


def test_embed_levels_must_exist():
    with pytest.raises(ValueError, match="name levels that do not exist"):
        HierarchicalChunker([Level(10)], embed_levels=[1])
    with pytest.raises(ValueError):
        Level(0)


_sentence = st.lists(st.sampled_from(["tea", "green", "leaf", "water", "茶葉", "boil", "cup", "x" * 30]),
                     min_size=1, max_size=15).map(lambda ws: " ".join(ws).capitalize() + ".")
_block = st.one_of(_sentence, st.sampled_from(["# Tea", "## Green", "### Water", "\n"]))
_page = st.lists(_block, min_size=0, max_size=12).map("\n".join)


@settings(max_examples=40, deadline=None)
@given(st.lists(_page, min_size=1, max_size=3), st.integers(20, 120), st.integers(8, 40), st.integers(3, 12),
       st.booleans())
def test_properties(texts, top, middle, bottom, headings):
    pages, offset = [], 0
    for n, t in enumerate(texts):
        pages.append(Page(n, offset, t))
        offset += len(t) + 2  # a gap between pages
    levels = [Level(top, "sections"), Level(middle), Level(bottom)]
    chunks = HierarchicalChunker(levels, headings=headings).split_pages(pages)
    by_path = {tuple(c.metadata["path"]): c for c in chunks}
    assert len(by_path) == len(chunks)
    for n, c in enumerate(chunks):
        path, level = tuple(c.metadata["path"]), c.metadata["level"]
        assert len(path) == level + 1
        assert c.kind == "figure" or c.token_count <= levels[level].max_tokens
        assert c.token_count == COUNT(c.text) and c.text == c.text.strip() and c.text
        if level:
            parent = by_path[path[:-1]]
            assert chunks.index(parent) < n  # pre-order
            assert parent.char_start <= c.char_start and c.char_end <= parent.char_end
    for path, parent in by_path.items():
        kids = [by_path[p] for p in sorted(by_path) if p[:-1] == path]
        if kids:  # the children partition their parent, whitespace aside
            assert "".join(squash(k.text) for k in kids) == squash(parent.text)
    for level in range(3):
        assert_covers([c for c in chunks if c.metadata["level"] == level], pages)
    assert_verbatim(chunks, pages)
    assert HierarchicalChunker(levels, headings=headings).split_pages(pages) == chunks
