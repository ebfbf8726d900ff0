"""Markdown splitters: by headings (:class:`MarkdownHeaderTextSplitter`), by syntax
(:class:`ExperimentalMarkdownSyntaxTextSplitter`) and the code-safe hybrid (:class:`MarkdownSectionSplitter`)."""

from chunking.splitters.markdown.header import MarkdownHeaderTextSplitter
from chunking.splitters.markdown.outline import HeadingOutline
from chunking.splitters.markdown.section import MarkdownChunk, MarkdownSectionSplitter
from chunking.splitters.markdown.syntax import ExperimentalMarkdownSyntaxTextSplitter

__all__ = [
    "ExperimentalMarkdownSyntaxTextSplitter",
    "HeadingOutline",
    "MarkdownChunk",
    "MarkdownHeaderTextSplitter",
    "MarkdownSectionSplitter",
]
