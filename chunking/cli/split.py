"""``chunking split FILE``: parse and split one file and print its chunks; nothing is indexed."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from chunking.cli.output import table

__all__ = ["add_parser", "run"]


def add_parser(sub) -> None:
    """Add the ``split`` subparser to *sub* (``argparse`` subparsers)."""
    split = sub.add_parser("split", help="print the chunks of one file (nothing is indexed)",
                           description="Parse and split one file and print its chunks.")
    split.add_argument("file", type=Path)
    split.add_argument("--format", choices=("table", "jsonl"), default="table", help="output format (default table)")
    split.add_argument("--splitter", default="auto", metavar="NAME",
                       help="auto (the format's default); sentence, markdown, html, json, csv, code:<language> "
                       "(e.g. code:python); or a strategy: semantic, hierarchical, small_to_big, sentence_window, "
                       "propositions, llm, router, and any of these with +enrich")
    split.add_argument("--max-tokens", type=int, default=None, metavar="N", help="token cap of text chunks (default 500); tables and figures stay whole up to 8191")
    split.add_argument("--max-chars", type=int, default=None, metavar="N",
                       help="soft character length per chunk (default 1000)")
    split.set_defaults(func=run)


def run(args: argparse.Namespace, settings) -> int:
    """Print the chunks of ``args.file``; 2 when it cannot be read or split."""
    from chunking.formats import extension_of, splitter_for
    from chunking.parsers import ParseError, parse_document

    overrides = {k: v for k, v in (("max_tokens", args.max_tokens), ("max_chars", args.max_chars)) if v is not None}
    if args.splitter != "auto":
        overrides["splitters"] = {**settings.splitters, extension_of(args.file.name): args.splitter}
    settings = settings.replace(**overrides)
    try:
        pages = parse_document(args.file.read_bytes(), source=args.file.name, max_bytes=settings.max_document_bytes)
    except (OSError, ParseError) as exc:
        print(f"python -m chunking split: {exc}", file=sys.stderr)
        return 2
    try:
        chunks = list(splitter_for(args.file.name, settings).split(pages))
    except ValueError as exc:
        print(f"python -m chunking split: {exc}", file=sys.stderr)
        return 2
    if args.format == "jsonl":
        for chunk in chunks:
            print(json.dumps(chunk.to_dict(), ensure_ascii=False))
        return 0
    rows = [(n, f"{c.page_start + 1}" if c.page_start == c.page_end else f"{c.page_start + 1}-{c.page_end + 1}",
             f"{c.char_start}-{c.char_end}", c.token_count, len(c.text), c.kind, " ".join(c.text.split())[:70])
            for n, c in enumerate(chunks)]
    table(("#", "page", "chars", "tokens", "len", "kind", "text"), rows)
    print(f"\n{len(chunks)} chunk{'s' * (len(chunks) != 1)} from {len(pages)} page{'s' * (len(pages) != 1)} "
          f"of {args.file}")
    return 0
