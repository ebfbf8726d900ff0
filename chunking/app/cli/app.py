"""The ``chunking`` argument parser and :func:`main`, the console entry point (``chunking.app.cli:main``)."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import Sequence

from chunking import __version__
from chunking.errors import EmbeddingError, IndexError_, StorageError, describe_failure
from chunking.redact import install_log_redaction, redact, register_settings
from chunking.settings import Settings, SettingsError, read_local_settings

__all__ = ["COMMANDS", "LOCAL_SETTINGS", "build_parser", "main"]

#: The commands in --help order, each with the line --help gives it. Each is a module of ``chunking.app.cli`` with
#: ``add_parser(sub, summary)`` and ``run(args, settings)``, imported only when its command runs (``_command``).
COMMANDS: dict[str, str] = {
    "ingest": "parse, split, embed and index files or folders",
    "upload": "upload files or folders to the documents container (the Functions index them)",
    "status": "documents by status, and the failed ones with reasons",
    "reconcile": "repair drift between the documents container, the ledger and the index",
    "reprocess": "re-process documents after a settings change (on the stage-1 job queue)",
    "search": "hybrid (keyword + vector) search of the index",
    "eval": "measure retrieval (hit@k, MRR, nDCG@10) per chunking strategy on a question set",
    "split": "print the chunks of one file as ingest would store them (nothing is indexed)",
    "smoke": "check a deployment end to end: one document uploaded, indexed, found, deleted",
    "schema": "print the Azure AI Search index definition the settings create (nothing is contacted)",
}

#: The Functions local settings file, read from the working directory as ``func start`` reads it.
LOCAL_SETTINGS = "local.settings.json"

_EPILOG = """\
Settings come from the environment and, like `func start`, from the "Values" of ./local.settings.json when
that file exists (the environment wins), so the CLI sees the storage, ledger and index the local Functions use.
With none, everything is local: the offline lexical embedder (not semantic) and a single-file index in
./.chunking/ (CHUNKING_STATE_DIR). Set AZURE_SEARCH_ENDPOINT and AZURE_OPENAI_ENDPOINT (+ deployment settings)
to use Azure instead; every setting is in docs/settings.md.

Page numbers: fields (page_start, page_end, --format jsonl) are 0-based; sourcepage (#page=N) and the tables
printed for people are 1-based.
Exit status: 0 success; 1 a document failed (ingest, split, reconcile, reprocess) or the ledger holds a
failed one (status), a file could not be read (ingest, upload), a check failed (smoke) or a folder held no
supported file (ingest, upload); 2 bad usage (unknown option, bad value, missing file) or a service that cannot
be reached or refuses; 130 interrupted; 141 the output was closed early (piped into head), as for other Unix
tools.
"""


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """Parse *argv* (default ``sys.argv[1:]``), read the settings from the environment and run the command.

    *prog* names the program in usage and error lines; by default the name it was started by (``chunking``
    for the console script; ``python -m chunking`` passes its own). Returns the exit status (see the epilog of
    ``--help``); argparse exits with 2 on bad usage, from the parser of the command at fault.
    """
    if prog is None:
        prog = _started_as() if argv is None else "chunking"
    parser = build_parser(prog, commands=_named_command(sys.argv[1:] if argv is None else argv))
    args, extra = parser.parse_known_args(argv)
    if extra:  # argparse would blame the top-level parser; the command's own usage is the helpful one
        parser.subcommand(args.command).error(f"unrecognized arguments: {' '.join(extra)}")
    logging.basicConfig(level=logging.WARNING if not args.verbose else logging.INFO, format="%(levelname)s %(message)s")
    install_log_redaction()
    try:
        _apply_local_settings(Path(LOCAL_SETTINGS))
        settings = Settings.from_env()
    except SettingsError as exc:
        print(f"{prog}: {redact(str(exc))}", file=sys.stderr)
        return 2
    register_settings(settings)
    try:
        status = args.func(args, settings)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's last flush
    except BrokenPipeError:
        # Piped into `head` and the like: stop quietly, as Unix tools do; stdout goes to /dev/null so the
        # interpreter's final flush has nowhere to fail.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        print(f"{args.prog}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a service error is one line, and nothing printed carries a secret
        failure = describe_failure(exc, settings)
        if failure is not None and _is_service_error(exc) and failure.service.startswith("storage"):
            failure = None  # storage errors of ours already name the account and the resource
        if failure is not None:
            print(f"{args.prog}: {failure.line}", file=sys.stderr)
            return 2
        if not _is_service_error(exc):
            import traceback

            print(redact(traceback.format_exc()).rstrip(), file=sys.stderr)
            return 1
        first_line = (str(exc).strip().splitlines() or [""])[0]
        ours = type(exc).__module__.startswith("chunking.")  # our messages name the resource already
        print(redact(f"{args.prog}: {'' if ours else type(exc).__name__ + ': '}{first_line}"), file=sys.stderr)
        return 2
    return status


def _apply_local_settings(path: Path) -> None:
    """Put the values of the local settings file *path* into ``os.environ``, except those the environment
    already sets (as ``func start`` does)."""
    values = read_local_settings(path)
    kept = [key for key in values if key in os.environ]
    for key, value in values.items():
        os.environ.setdefault(key, value)
    if values:
        logging.getLogger("chunking.app.cli").info(
            "settings: %d values from %s%s", len(values) - len(kept), path,
            f" ({len(kept)} already set in the environment: {', '.join(sorted(kept))})" if kept else "")


def _is_service_error(exc: Exception) -> bool:
    """An index, embedding or storage service that failed or could not be reached: not a bug, so one line and
    exit status 2 instead of a traceback. Matched by origin so that no SDK is imported to check."""
    module = type(exc).__module__
    return (isinstance(exc, (IndexError_, EmbeddingError, StorageError)) or module == "chunking.storage"
            or module.split(".", 1)[0] in ("azure", "openai", "httpx", "httpx2"))


def _started_as() -> str:
    """How the program was started: the console script's name (``chunking``), or ``python -m chunking``."""
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if name in ("", "__main__.py", "-c", "-m"):
        return "python -m chunking"
    return name[:-4] if name.lower().endswith(".exe") else name


class _Parser(argparse.ArgumentParser):
    """The top-level parser, which knows its command parsers by name."""

    def subcommand(self, name: str) -> argparse.ArgumentParser:
        return self._commands.choices[name]


def _named_command(argv: Sequence[str]) -> tuple[str, ...]:
    """The command *argv* names (its first word after the global ``-v``), as a 1-tuple; ``()`` when it names none
    of :data:`COMMANDS` (``--help``, ``--version``, a typo), whose answers need no command's module."""
    words = [word for word in argv if word not in ("-v", "--verbose")]
    return (words[0],) if words and words[0] in COMMANDS else ()


def _command(name: str):
    """The module of command *name*. Imported here, on use, so that ``chunking --help`` and each command load
    only their own code (the pipeline, the services and the evaluation take most of a second to import)."""
    if name == "ingest":
        from chunking.app.cli import ingest as module
    elif name == "upload":
        from chunking.app.cli import upload as module
    elif name == "status":
        from chunking.app.cli import status as module
    elif name == "reconcile":
        from chunking.app.cli import reconcile as module
    elif name == "reprocess":
        from chunking.app.cli import reprocess as module
    elif name == "search":
        from chunking.app.cli import search as module
    elif name == "eval":
        from chunking.app.cli import eval as module
    elif name == "split":
        from chunking.app.cli import split as module
    elif name == "smoke":
        from chunking.app.cli import smoke as module
    elif name == "schema":
        from chunking.app.cli import schema as module
    else:
        raise ValueError(f"no command {name!r} (COMMANDS: {', '.join(COMMANDS)})")
    return module


def build_parser(prog: str = "chunking", commands: Sequence[str] | None = None) -> _Parser:
    """The top-level parser with one subparser per entry of :data:`COMMANDS`; each command's parser sets
    ``prog`` (``"chunking ingest"``) in the namespace, for its error lines.

    *commands* (default: all) get their full parser from their module; the others only their name and summary
    line, enough for ``--help`` and for an unknown command's error."""
    parser = _Parser(
        prog=prog,
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
    for name, summary in COMMANDS.items():
        if commands is None or name in commands:
            _command(name).add_parser(sub, summary)
        else:
            sub.add_parser(name, help=summary, add_help=False)
    for command_parser in sub.choices.values():
        command_parser.set_defaults(prog=command_parser.prog)
    parser._commands = sub
    return parser
