"""The chunk-quality metrics of ``benchmarks/chunk_quality.py``, one function each, applied the same way to every
splitter.

Every metric looks at one document as ``Doc`` (the document text, where its furniture lies, its figure blocks)
and the chunks of one splitter as ``Spans``: ``(start, end, text)`` per chunk, ``text[start:end]``-style offsets
in the document text (the chunk's own span) and the chunk's text as the splitter returned it (look-ahead and
repeated table headers included). Nothing here knows which splitter made the spans.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from chunking.splitters.sentence.boundaries import Boundaries, figure_blocks, is_heading_like, is_spaceless

Spans = list[tuple[int, int, str]]

_FIGURE_TAG = re.compile(r"<(/?)(figure|table)(?=[\s>/])", re.IGNORECASE)


@dataclass
class Doc:
    """One document as the metrics see it.

    Attributes:
        text: the document text (every page's ``header + text + footer``, in order).
        furniture: ``bytearray`` of ``len(text)``, 1 where the character is page furniture (running header or
            footer, page number, table-of-contents page) as our parser recognised it.
        body: ``(start, end)`` of each page's body text (``Page.text``) in ``text``.
        cuts: positions just after each sentence end of ``text`` (our sentence-end predicate,
            docs/splitters.md#sentence-end).
        figures: ``(start, end)`` of each outermost ``<figure>…</figure>`` block of ``text``.
    """

    text: str
    furniture: bytearray
    body: list[tuple[int, int]]
    cuts: set[int]
    figures: list[tuple[int, int]]


def make_doc(pages: list, bounds: Boundaries) -> Doc:
    """``Doc`` of parsed ``pages`` (``Page`` objects with ``header``/``text``/``footer``)."""
    text = "".join(p.header + p.text + p.footer for p in pages)
    furniture = bytearray(len(text))
    body = []
    pos = 0
    for p in pages:
        furniture[pos:pos + len(p.header)] = b"\x01" * len(p.header)
        pos += len(p.header)
        body.append((pos, pos + len(p.text)))
        pos += len(p.text)
        furniture[pos:pos + len(p.footer)] = b"\x01" * len(p.footer)
        pos += len(p.footer)
    return Doc(text, furniture, body, set(bounds.sentence_cuts(text)), figure_blocks(text))


def starts_mid_sentence(doc: Doc, start: int) -> bool:
    """A chunk starts mid-sentence unless its first character is at the start of the text, after a blank line,
    after a sentence end (walking back from it over whitespace and page furniture, which belongs to no sentence,
    the first other character ends a sentence: its position + 1 is in ``doc.cuts``), or at the start of a line
    that is a heading or a list item (our heading-like predicate, docs/splitters.md#heading-like-line: ``#``,
    a bullet, ``1.`` / ``IV)``, or a short Title Case or UPPER CASE line)."""
    text, furniture = doc.text, doc.furniture
    line_start = text.rfind("\n", 0, start) + 1
    if not text[line_start:start].strip() and is_heading_like(text[start:text.find("\n", start) % (len(text) + 1)]):
        return False
    i, newlines = start, 0
    while i > 0 and (furniture[i - 1] or text[i - 1].isspace()):
        if not furniture[i - 1] and text[i - 1] == "\n":
            newlines += 1
        i -= 1
    return i > 0 and i not in doc.cuts and newlines < 2


def starts_mid_line(doc: Doc, start: int) -> bool:
    """A chunk starts mid-line when something other than whitespace lies between the start of its line and its
    first character."""
    line = doc.text.rfind("\n", 0, start) + 1
    return bool(doc.text[line:start].strip())


def mid_word_cuts(doc: Doc, spans: Spans) -> int:
    """Chunk boundaries (each distinct start and end of an own span, inside the text) with a letter or digit on
    both sides, neither of them in a script written without spaces (where no word boundary can be told)."""
    text = doc.text
    n = 0
    for p in {s for s, _, _ in spans} | {e for _, e, _ in spans}:
        if 0 < p < len(text):
            a, b = text[p - 1], text[p]
            n += a.isalnum() and b.isalnum() and not is_spaceless(a) and not is_spaceless(b)
    return n


def _balanced(text: str) -> bool:
    """Every ``<figure>`` and ``<table>`` tag of ``text`` has its partner inside ``text``, properly nested."""
    stack: list[str] = []
    for m in _FIGURE_TAG.finditer(text):
        name = m.group(2).lower()
        if not m.group(1):
            stack.append(name)
        elif not stack or stack.pop() != name:
            return False
    return not stack


def torn_figures(doc: Doc, spans: Spans) -> int:
    """Figure blocks (tables, images) of the document that some chunk cuts without repairing: a chunk whose own
    span starts or ends strictly inside the block and whose text is not a balanced figure (every ``<figure>``
    and ``<table>`` closed inside it, as in a table part with its header repeated). A splitter that cuts a
    table between rows and re-wraps each part tears nothing; one that cuts inside and leaves tags open does."""
    torn = 0
    for lo, hi in doc.figures:
        for s, e, text in spans:
            if (lo < s < hi or lo < e < hi) and not _balanced(text):
                torn += 1
                break
    return torn


def _non_space(text: str) -> int:
    return len(text) - sum(text.count(ch) for ch in " \t\n\r\f\v\u00a0\u3000")


def duplication_ratio(doc: Doc, spans: Spans, input_text: str) -> tuple[int, int]:
    """``(characters out, characters in)``: non-whitespace characters of all chunk texts, and of the text the
    splitter was given (``input_text``). The ratio out/in is 1.0 when every character appears once; look-ahead,
    overlap and repeated table headers raise it."""
    return sum(_non_space(t) for _, _, t in spans), _non_space(input_text)


def lost_characters(doc: Doc, spans: Spans) -> int:
    """Non-whitespace characters of the pages' body text (furniture excluded) that lie in no chunk's own span."""
    covered = bytearray(len(doc.text))
    for s, e, _ in spans:
        covered[max(s, 0):min(e, len(doc.text))] = b"\x01" * (min(e, len(doc.text)) - max(s, 0))
    lost = 0
    text = doc.text
    for lo, hi in doc.body:
        for i in range(lo, hi):
            if not covered[i] and not text[i].isspace():
                lost += 1
    return lost


def sentence_kept(spans: Spans, lo: int, hi: int) -> bool:
    """A labelled cross-page sentence ``[lo, hi)`` is kept when one chunk's own span holds all of it."""
    return any(s <= lo and hi <= e for s, e, _ in spans)
