"""HTML parse speed: a bare lxml parse, a BeautifulSoup tree over lxml, and our HTML parser, on the same files.

A plain script, run by hand (never collected by pytest)::

    .venv/bin/python benchmarks/html_bench.py [--corpus DIR_OR_FILE ...] [--rounds 7]

Files: every HTML page of ``samples/``, ``tests/data/`` and ``../shared/corpus`` (each content once), and every
``.html`` file given with ``--corpus`` (a file, or the files under a folder; for instance the Rust book's
single-page ``print.html`` that rustup installs under ``share/doc/rust/html/book/``).

Rows (contenders), each run on every file in every round, round-robin in one process (load on a shared machine
drifts; every contender sees the same drift):

  (a) ``lxml``: lxml's HTML parser building its tree from the decoded text (``etree.HTMLParser``, ``feed``,
      ``close``): the floor, every ratio is to it;
  (b) ``bs4 tree``: ``BeautifulSoup(text, "lxml")``, the same parse building BeautifulSoup's tree from lxml's
      events, which our parser walked before it walked lxml's own tree (docs/parsers.md#html-speed);
  (c) ``ours``: ``chunking.parsers.html.parse`` from the bytes (decoding, parse, depth check, the walk that
      writes headings, lists, code and tables).

Per file: milliseconds of the median round, the minimum, and the ratio to (a): the median over rounds of
(contender's seconds / lxml's seconds in the same round); then the same over all files.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_pages import files_with_suffixes  # noqa: E402
from ratio_table import print_ratio_table, round_robin  # noqa: E402
from bench_args import at_least, existing  # noqa: E402


FLOOR = "lxml"
_XML_DECLARATION = re.compile(r"\A\s*<\?xml[^>]*\?>")
Runner = Callable[[bytes, str], object]  # one file's bytes and decoded text in, anything out


def corpus(extra: list[Path]) -> list[Path]:
    """The HTML pages of the corpus folders and of *extra* (files or folders), each content once."""
    return files_with_suffixes((".html", ".htm"), extra)


def bare_lxml(data: bytes, text: str) -> object:
    from lxml import etree

    parser = etree.HTMLParser(recover=True)
    parser.feed(text)
    return parser.close()


def bs4_tree(data: bytes, text: str) -> object:
    from bs4 import BeautifulSoup

    return BeautifulSoup(text, "lxml")  # *text* without its XML declaration: XHTML read as HTML, as ours reads it


def ours(data: bytes, text: str) -> object:
    from chunking.parsers import html

    return list(html.parse(data, source="page.html"))


CONTENDERS: dict[str, Runner] = {FLOOR: bare_lxml, "bs4 tree": bs4_tree, "ours": ours}


def measure(files: list[Path], rounds: int) -> dict[str, dict[Path, list[float]]]:
    """Seconds per contender, file and round, contenders run round-robin on each file."""
    from chunking.parsers._common import ReadContext, decode_bounded

    inputs = {}
    for path in files:
        data = path.read_bytes()
        text = _XML_DECLARATION.sub("", decode_bounded(data, source=path.name, context=ReadContext()))
        inputs[path] = (data, text)
    return round_robin(CONTENDERS, inputs, rounds)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=existing, action="append", default=[], help="an HTML file or a folder")
    parser.add_argument("--rounds", type=at_least(1), default=7, help="timed rounds (default 7)")
    args = parser.parse_args(argv)
    files = corpus(args.corpus)
    if not files:
        sys.exit("no HTML files")
    print_ratio_table(files, measure(files, args.rounds), FLOOR)


if __name__ == "__main__":
    main()
