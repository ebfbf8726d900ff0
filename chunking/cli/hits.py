"""How ``chunking search`` prints hits for people: rank, cited page, relevance with its keyword and vector parts,
heading path, and the passage that matches the query with the query's words marked."""

from __future__ import annotations

import sys
from typing import Sequence

from chunking.highlight import highlight

__all__ = ["print_hit", "relevance_line"]

_BOLD, _PLAIN = "\x1b[1m", "\x1b[0m"


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
              width_chars: int = 300, title: str = "") -> None:
    """Print one hit: a title line, then its best-matching passage (query words bold on a terminal, between
    ``**`` otherwise), then a blank line."""
    heading = " > ".join(headings)
    print(f"{rank}. {sourcepage}  {relevance_line(score, lexical, vector)}{extra}"
          + (f"  [{heading}]" if heading else "") + (f"  “{title}”" if title else ""))
    marks = (_BOLD, _PLAIN) if sys.stdout.isatty() else ("**", "**")
    print(f"   {highlight(text, query, width_chars).render(*marks)}\n")
