"""The ``chunking`` argument parser and :func:`main`, the console entry point (``chunking.cli:main``)."""

from __future__ import annotations

import argparse
import logging
from typing import Sequence

from chunking import __version__
from chunking.cli import ingest, reconcile, search, split, status

__all__ = ["COMMANDS", "build_parser", "main"]

#: The command modules in --help order; each has ``add_parser(sub)`` and ``run(args, settings)``.
COMMANDS = (ingest, status, reconcile, search, split)

_EPILOG = """\
Settings come from the environment (see local.settings.sample.json and the README): with none, everything is
local: the offline lexical embedder (not semantic) and a single-file index in ./.chunking/ (CHUNKING_STATE_DIR).
Set AZURE_SEARCH_ENDPOINT and AZURE_OPENAI_ENDPOINT (+ deployment settings) to use Azure instead.

Page numbers: fields (page_start, page_end, --format jsonl) are 0-based; sourcepage (#page=N) and the tables
printed for people are 1-based.
Exit status: 0 success; 1 some document failed (ingest) ; 2 bad usage or unreachable service.
"""


def main(argv: Sequence[str] | None = None) -> int:
    """Parse *argv* (default ``sys.argv[1:]``), read the settings from the environment and run the command.

    Returns the exit status (see the epilog of ``--help``); argparse exits with 2 on bad usage.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING if not args.verbose else logging.INFO, format="%(levelname)s %(message)s")
    from chunking.settings import Settings, SettingsError

    try:
        settings = Settings.from_env()
    except SettingsError as exc:
        parser.error(str(exc))
    return args.func(args, settings)


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with one subparser per module of :data:`COMMANDS`."""
    parser = argparse.ArgumentParser(
        prog="python -m chunking",
        description="Chunk documents for retrieval-augmented generation and index them for search.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                        help="log each stage's work")
    parser.add_argument("-v", "--verbose", action="store_true", help="log each stage's work")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    real_add = sub.add_parser
    sub.add_parser = lambda *a, **k: real_add(*a, parents=[common], **k)  # -v after the command too
    for command in COMMANDS:
        command.add_parser(sub)
    return parser
