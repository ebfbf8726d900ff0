"""The expected differences from LangChain, each a named predicate tied to its documented reason.

A parity test runs one input through LangChain's class and ours; when the outputs differ, the difference must be
explained by at least one predicate here whose condition holds for that input, else the test fails. Each reason
repeats the table of docs/splitters.md#coming-from-langchain (and the class docstring) in short.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any, Callable

from chunking.splitters._spans import SENTENCE_PUNCTUATION


@dataclass(frozen=True)
class Difference:
    """A documented difference: *applies(case)* is true when the input can show it."""

    name: str
    reason: str
    applies: Callable[[dict[str, Any]], bool]


def explained(case: dict[str, Any], differences: list[Difference]) -> list[str]:
    """Names of the differences that apply to *case* (empty: an undocumented difference)."""
    return [d.name for d in differences if d.applies(case)]


#: test name -> outcome -> count, over every input compared in this run ("equal", "undocumented", or the name of
#: the first documented difference that applied); printed at the end of a run (``conftest.py``).
TALLY: defaultdict[str, Counter[str]] = defaultdict(Counter)


def compare(test: str, case: dict[str, Any], differences: list[Difference]) -> None:
    """Pass when ``case["ours"] == case["theirs"]`` or a documented difference applies; count the outcome."""
    if case["ours"] == case["theirs"]:
        TALLY[test]["equal"] += 1
        return
    names = explained(case, differences)
    TALLY[test][names[0] if names else "undocumented"] += 1
    assert names, f"undocumented difference for {case!r}"


def _oversize(case: dict[str, Any]) -> bool:
    length = case.get("length", len)
    return any(length(chunk) > case["chunk_size"] for chunk in case["theirs"])


def _punctuation_kept(case: dict[str, Any]) -> bool:
    if case.get("keep_separator", True) is not True:
        return False
    text, regex = case["text"], case.get("is_separator_regex", False)
    for separator in case["separators"]:
        if not separator:
            continue
        for match in re.finditer(separator if regex else re.escape(separator), text):
            stripped = match.group().strip()
            if stripped and all(char in SENTENCE_PUNCTUATION for char in stripped):
                return True
    return False


def _separator_runs(case: dict[str, Any]) -> bool:
    """LangChain drops the empty pieces between adjacent separators, so it joins their neighbours with one
    separator; ours keeps the text between merged pieces verbatim."""
    text = case["text"]
    return any(separator and (separator * 2 in text or text.startswith(separator) or text.endswith(separator))
               for separator in case["separators"])


def _exact_size_piece(case: dict[str, Any]) -> bool:
    """LangChain re-splits a piece of exactly chunk_size (it requires <); ours keeps it."""
    text, size = case["text"], case["chunk_size"]
    if size in (len(text), len(text.strip())):  # no separator matched: the text is the piece
        return True
    for separator in case["separators"]:
        if separator and separator in text:
            parts = text.split(separator)
            lengths = {len(p) for p in parts} | {len(p) + len(separator) for p in parts}
            lengths |= {len(p.strip()) for p in parts} | {len((separator + p).strip()) for p in parts}
            if size in lengths:
                return True
    return False


def _cjk_defaults(case: dict[str, Any]) -> bool:
    return case.get("default_separators", False) and any(mark in case["text"] for mark in "。！？")


OVERSIZE = Difference(
    "oversize_piece_cut", "a piece over chunk_size is cut (at the last whitespace within the cap, else at a "
    "character); LangChain emits it whole, over the limit", _oversize)
PUNCTUATION = Difference(
    "sentence_punctuation_ends_its_chunk", "keep_separator=True attaches . ! ? 。 ！ ？ ; … to the chunk it closes; "
    "LangChain starts the next chunk with it", _punctuation_kept)
RUNS = Difference(
    "separators_verbatim", "the text between merged pieces is the original separator run, verbatim; LangChain "
    "drops empty pieces and re-joins with one separator", _separator_runs)
EXACT = Difference(
    "exact_size_piece_kept", "a piece of exactly chunk_size is kept (<=); LangChain re-splits it (<)",
    _exact_size_piece)
CJK = Difference(
    "cjk_sentence_ends_in_defaults", "the default separators add 。 ！ ？ between '\\n' and ' '", _cjk_defaults)

BLANK = Difference(
    "no_blank_chunks", "whitespace-only chunks are never emitted, also with strip_whitespace=False; LangChain emits "
    "them when it does not strip", lambda case: any(not chunk.strip() for chunk in case["theirs"]))

CHARACTER = [OVERSIZE, PUNCTUATION, RUNS, BLANK]
RECURSIVE = [OVERSIZE, PUNCTUATION, RUNS, EXACT, CJK, BLANK]


def _is_langchain_header(line: str, prefixes: tuple[str, ...]) -> bool:
    return any(line.startswith(p) and (len(line) == len(p) or line[len(p)] == " ") for p in prefixes)


def normalize_like_langchain(content: str, prefixes: tuple[str, ...] = ("#", "##", "###")) -> str:
    """A verbatim Markdown section as LangChain renders it: lines stripped of spaces and non-printable characters;
    runs of lines (a blank line or a configured header line, one of *prefixes* then a space, starts a new run) joined by newlines, the runs by two spaces and a
    newline."""
    runs: list[list[str]] = []
    start_new = True
    for raw in content.split("\n"):
        line = "".join(filter(str.isprintable, raw.strip()))
        if not line:
            start_new = True
            continue
        if start_new or _is_langchain_header(line, prefixes):
            runs.append([])
        runs[-1].append(line)
        start_new = False
    return "  \n".join("\n".join(run) for run in runs)


_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*\r?$", re.M)
_INDENTED_HASH = re.compile(r"^(?: {4,}|\t)[ \t]*#", re.M)
_CLOSING_HASHES = re.compile(r"^ *#{1,6}[ \t].*[ \t]#+[ \t]*\r?$", re.M)
_HASHTAG = re.compile(r"^[ \t]*#+[^# \t\r\n]", re.M)
_FENCE = re.compile(r"^[ \t]*(?:`{3,}|~{3,})", re.M)
_LEADING_SPACE_HEADING = re.compile(r"^[ \t]+#", re.M)


def _markdown_structure(case: dict[str, Any]) -> bool:
    """CommonMark headings: setext headings are headers, a 4-space-indented ``#`` line is code, closing ``#``s are
    removed, ``#tag`` is not a header, fences close by CommonMark's rules; LangChain strips each line first and
    closes a fence on any line starting with three backticks or tildes."""
    text = case["text"]
    return any(p.search(text) for p in (_SETEXT, _INDENTED_HASH, _CLOSING_HASHES, _HASHTAG, _FENCE,
                                         _LEADING_SPACE_HEADING))


def _verbatim_sections(case: dict[str, Any]) -> bool:
    ours = [(normalize_like_langchain(content), metadata) for content, metadata in case["ours"]]
    return ours == [(content, metadata) for content, metadata in case["theirs"]]


def _equal_paths_not_merged(case: dict[str, Any]) -> bool:
    """Our sections before any joining, rendered and then aggregated as LangChain aggregates its lines (equal
    metadata joined; a heading-only chunk joined to a deeper one when headers are kept), are LangChain's output."""
    from chunking.splitters import MarkdownHeaderTextSplitter
    from chunking.splitters.markdown.fences import scan_lines
    from chunking.splitters.markdown.header import _header_levels, header_sections

    if case.get("each_line"):
        return False
    text, strip = case["text"], case.get("strip", True)
    atx, custom = _header_levels(case.get("headers", [("#", "H1"), ("##", "H2"), ("###", "H3")]), None)
    sections = header_sections(text, scan_lines(text), atx, custom, strip)
    lines = [{"content": normalize_like_langchain(text[s.start : s.end]), "metadata": s.headers} for s in sections]
    aggregated = MarkdownHeaderTextSplitter([], strip_headers=strip).aggregate_lines_to_chunks(lines)
    return [(d.page_content, d.metadata) for d in aggregated] == [(c, m) for c, m in case["theirs"]]


def _each_line(case: dict[str, Any]) -> bool:
    """Ours and LangChain's give the same lines with the same metadata once LangChain's runs are cut into lines."""
    if not case.get("each_line"):
        return False

    def lines(documents: list[tuple[str, dict[str, str]]]) -> list[tuple[str, dict[str, str]]]:
        return [(line, metadata) for content, metadata in documents
                for line in normalize_like_langchain(content).replace("  \n", "\n").split("\n") if line]

    return lines(case["ours"]) == lines(case["theirs"])


MARKDOWN_EACH_LINE = Difference(
    "return_each_line_is_per_line", "return_each_line gives one Document per line (or fenced block); LangChain "
    "gives one per run of lines between blank lines and headers", _each_line)
MARKDOWN_VERBATIM = Difference(
    "markdown_sections_verbatim", "sections are the original lines (indentation, blank lines kept); LangChain "
    "strips every line and joins them with '  \\n'", _verbatim_sections)
MARKDOWN_STRUCTURE = Difference("commonmark_headings_and_fences", _markdown_structure.__doc__ or "",
                                _markdown_structure)
MARKDOWN_EQUAL_PATHS = Difference(
    "equal_header_paths_not_merged", "two sections under equal header paths stay two Documents; LangChain merges "
    "consecutive lines with equal metadata", _equal_paths_not_merged)

MARKDOWN_HEADER = [MARKDOWN_VERBATIM, MARKDOWN_STRUCTURE, MARKDOWN_EQUAL_PATHS, MARKDOWN_EACH_LINE]
