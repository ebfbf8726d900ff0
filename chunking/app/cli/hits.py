"""How ``chunking search`` prints hits for people: rank, cited page, relevance with its keyword and vector parts,
heading path, and the passage that matches the query with the query's words marked."""

from __future__ import annotations

import re
import sys
from typing import Sequence

from chunking.formats import format_of
from chunking.retrieval.highlight import highlight

__all__ = ["plain_emphasis", "print_hit", "relevance_line"]

_BOLD, _PLAIN = "\x1b[1m", "\x1b[0m"

# Markdown emphasis around words, strong before em (so ``***both***`` loses all six). A code span is matched
# first and kept as it is. ``_`` only opens and closes at a word boundary, as CommonMark has it, so snake_case
# names are left alone.
_CODE = r"(?P<code>(?P<ticks>`+).+?(?P=ticks))"
_EMPHASIS = tuple(re.compile(rf"{_CODE}|{pattern}") for pattern in (
    r"\*\*(?=\S)(?P<inner>.+?)(?<=\S)\*\*",
    r"(?<!\w)__(?=\S)(?P<inner>.+?)(?<=\S)__(?!\w)",
    r"(?<![\w*])\*(?=[^\s*])(?P<inner>.+?)(?<=[^\s*])\*(?![\w*])",
    r"(?<!\w)_(?=[^\s_])(?P<inner>.+?)(?<=[^\s_])_(?!\w)",
))


def plain_emphasis(text: str) -> str:
    """*text* without the Markdown emphasis delimiters (``**``, ``__``, ``*``, ``_``) around words, code spans
    kept as they are: ``"a **b** _c_ `d_e_`"`` → ``"a b c `d_e_`"``. The printed passage marks the query's words
    with ``**`` off a terminal, so a word bold in the text would read ``****word****``, and ``_word_`` would not
    match the query word ``word`` (``_`` is a word character)."""
    for pattern in _EMPHASIS:
        text = pattern.sub(lambda m: m.group("code") or m.group("inner"), text)
    return text


def relevance_line(score: float, lexical: float | None, vector: float | None) -> str:
    """``"relevance 0.72 (keywords 0.85, vector 0.41)"``; a part the index did not report is left out, and a
    part the record was not ranked by reads ``-``."""
    if lexical is None and vector is None:
        return f"score {score:.4f}"
    parts = [f"keywords {lexical:.2f}" if lexical is not None else "keywords -",
             f"vector {vector:.2f}" if vector is not None else "vector -"]
    return f"relevance {score:.2f} ({', '.join(parts)})"


def print_hit(rank: int, sourcepage: str, headings: Sequence[str], text: str, query: str, *, score: float,
              lexical: float | None = None, vector: float | None = None, extra: str = "",
              width_chars: int = 300, title: str = "", images: Sequence[str] = ()) -> None:
    """Print one hit: a title line, then its best-matching passage (Markdown emphasis left out unless the source
    is program code, query words bold on a terminal, between ``**`` otherwise), then the URLs of the figure
    images the chunk holds (*images*, one ``image:`` line each, none without), then a blank line."""
    heading = " > ".join(headings)
    print(f"{rank}. {sourcepage}  {relevance_line(score, lexical, vector)}{extra}"
          + (f"  [{heading}]" if heading else "") + (f"  “{title}”" if title else ""))
    marks = (_BOLD, _PLAIN) if sys.stdout.isatty() else ("**", "**")
    flat = " ".join(text.split())
    passage = highlight(flat if _is_code(sourcepage) else plain_emphasis(flat), query, width_chars)
    print(f"   {passage.render(*marks)}")
    for url in images:
        print(f"   image: {url}")
    print()


def _is_code(sourcepage: str) -> bool:
    """Program code, whose ``*`` and ``_`` are not emphasis (reStructuredText's are, as in Markdown)."""
    fmt = format_of(sourcepage.split("#", 1)[0])
    return fmt is not None and fmt.program_code
