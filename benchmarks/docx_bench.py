"""DOCX parse speed: a bare lxml parse of the main document part, python-docx's naive text, and our DOCX parser.

A plain script, run by hand (never collected by pytest)::

    .venv/bin/python benchmarks/docx_bench.py [--corpus DIR_OR_FILE ...] [--rounds 7]

Files: every ``.docx`` file of ``samples/``, ``tests/data/`` and ``../shared/corpus`` (each content once), and
every ``.docx`` file given with ``--corpus`` (a file, or the files under a folder).

Rows (contenders), each run on every file in every round, round-robin in one process (load on a shared machine
drifts; every contender sees the same drift):

  (a) ``lxml``: the main document part (``word/document.xml``) read from the ZIP and parsed into one lxml tree
      (``etree.fromstring``, entities not resolved): the floor, every ratio is to it; it reads no other part and
      writes no text;
  (b) ``python-docx``: ``docx.Document`` opening the package, then the text of every body paragraph and of every
      cell of every top-level table (``Paragraph.text``, ``_Cell.text``): the text most loaders built on
      python-docx return, without document order between paragraphs and tables, headings, lists or notes;
  (c) ``ours``: ``chunking.parsers.docx.parse`` from the bytes (the package checks, python-docx opening the
      small parts, the body streamed block by block, headings, lists, code, tables, text boxes and notes).

A file that one contender cannot read is named on stderr and left out. Per file: milliseconds of the median
round, the minimum, and the ratio to (a): the median over rounds of (contender's seconds / lxml's seconds in the
same round); then the same over all files ([parsers: DOCX speed](../docs/parsers.md#docx-speed)).
"""

from __future__ import annotations

import argparse
import io
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_pages import files_with_suffixes  # noqa: E402
from ratio_table import print_ratio_table, round_robin  # noqa: E402
from bench_args import at_least, existing  # noqa: E402


FLOOR = "lxml"
_MAIN_PART = "word/document.xml"
Runner = Callable[[bytes], object]  # one file's bytes in, anything out


def corpus(extra: list[Path]) -> list[Path]:
    """The .docx files of the corpus folders and of *extra* (files or folders), each content once."""
    return files_with_suffixes((".docx",), extra)


def bare_lxml(data: bytes) -> object:
    from lxml import etree

    with zipfile.ZipFile(io.BytesIO(data)) as package:
        xml = package.read(_MAIN_PART)
    return etree.fromstring(xml, etree.XMLParser(resolve_entities=False, no_network=True))


def python_docx_text(data: bytes) -> object:
    import docx

    document = docx.Document(io.BytesIO(data))
    texts = [paragraph.text for paragraph in document.paragraphs]
    texts += [cell.text for table in document.tables for row in table.rows for cell in row.cells]
    return "\n\n".join(texts)


def ours(data: bytes) -> object:
    from chunking.parsers import docx

    return list(docx.parse(data, source="document.docx"))


CONTENDERS: dict[str, Runner] = {FLOOR: bare_lxml, "python-docx": python_docx_text, "ours": ours}


def readable(files: list[Path]) -> list[Path]:
    """The files every contender reads (each run once: imports and first-use caches warm up too); a file that
    one of them fails on is named on stderr and left out (python-docx's ``row.cells`` raises on some merges)."""
    kept = []
    for path in files:
        data = path.read_bytes()
        try:
            for run in CONTENDERS.values():
                run(data)
        except Exception as error:  # any contender's failure: this file is not comparable
            print(f"# left out {path.name}: {type(error).__name__}: {error}", file=sys.stderr)
            continue
        kept.append(path)
    return kept


def measure(files: list[Path], rounds: int) -> dict[str, dict[Path, list[float]]]:
    """Seconds per contender, file and round, contenders run round-robin on each file."""
    return round_robin(CONTENDERS, {path: (path.read_bytes(),) for path in files}, rounds)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=existing, action="append", default=[], help="a .docx file or a folder")
    parser.add_argument("--rounds", type=at_least(1), default=7, help="timed rounds (default 7)")
    args = parser.parse_args(argv)
    files = readable(corpus(args.corpus))
    if not files:
        sys.exit("no .docx files")
    print_ratio_table(files, measure(files, args.rounds), FLOOR)


if __name__ == "__main__":
    main()
