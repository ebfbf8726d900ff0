"""Long PDFs written by the tests: every page distinct text (seeded words), a running header and a page number,
so page ranges, furniture and chunk boundaries all have something to do."""

from __future__ import annotations

import random

from tests.scenarios.hostile.generate import text_pdf

_WORDS = ("river stone lantern maple quiet orbit copper meadow signal harbor violet engine thunder pocket "
          "canyon ribbon garden silver window marble falcon prairie anchor cotton delta summit velvet "
          "beacon cobalt island jigsaw kernel lemon mosaic nectar oyster pepper quartz saddle tundra").split()


def page_lines(page: int, lines: int, seed: int = 0) -> list[str]:
    """The body lines of page *page*: sentences of seeded words, distinct on every page."""
    rng = random.Random(seed * 1_000_003 + page)
    out = []
    for line in range(lines):
        words = [rng.choice(_WORDS) for _ in range(rng.randint(8, 13))]
        out.append(f"{words[0].capitalize()} {' '.join(words[1:])} number {page}-{line}.")
    return out


def long_pdf(pages: int, *, lines: int = 12, seed: int = 0, huge_page: int | None = None) -> bytes:
    """A PDF of *pages* pages of *lines* lines each, under the running header ``Handbook of tests`` and above the
    footer ``Page N``; page *huge_page* (0-based), if given, holds 4,000 lines instead."""
    contents = []
    for page in range(pages):
        body = page_lines(page, 4000 if page == huge_page else lines, seed)
        rows = ["Handbook of tests", *body, f"Page {page + 1}"]
        ops = [b"BT /F1 9 Tf 11 TL 40 760 Td"]
        ops += [b"(" + row.encode("ascii") + b") Tj T*" for row in rows]
        ops.append(b"ET")
        contents.append(b"\n".join(ops))
    return text_pdf(contents)
