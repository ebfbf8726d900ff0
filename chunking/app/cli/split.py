"""``chunking split FILE``: parse and split one file and print the records ``ingest`` would store for it;
nothing is indexed and nothing is written."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from chunking.app.cli.arguments import count_at_least
from chunking.app.cli.output import clip, fail, plural, table
from chunking.documents.fields import configured_fields, file_properties
from chunking.documents.splitter import splitter_for
from chunking.formats import ENRICH_SUFFIX, FAMILY_NAMES, STRATEGY_NAMES, extension_of, format_of, splitter_name
from chunking.ids import doc_id
from chunking.parsers import ParseError, ReadContext, parse_document
from chunking.parsers.limits import Deadline, Limits
from chunking.parsers.members import iter_members
from chunking.pipeline.ingest import LOCAL_CONTAINER, source_name
from chunking.pipeline.namespaces import deployment_namespace
from chunking.pipeline.stage_two import document_records, source_version
from chunking.services import document_readers
from chunking.settings import MAX_SPLIT_TOKENS

__all__ = ["add_parser", "run"]


def add_parser(sub, summary: str) -> None:
    """Add the ``split`` subparser to *sub* (``argparse`` subparsers); *summary* is its line in ``--help``."""
    split = sub.add_parser(
        "split", help=summary,
        description="Parse and split one file and print its chunks exactly as `ingest` would store them (same "
        "ids, citations, heading paths and kinds). The table's chars are the chunk's own span in the document's "
        "text, tokens and len (characters) measure the stored text, look-ahead overlap included, and level (only "
        "with parent chunks: hierarchical, small_to_big, sentence_window, propositions) is 0 for the top. Exits 1 "
        "when the file cannot be read or split, 2 on bad usage.")
    split.add_argument("file", type=Path, metavar="FILE",
                       help="the document to split (any format ingest reads: PDF, DOCX, HTML, Markdown, ...)")
    split.add_argument("--format", choices=("table", "jsonl"), default="table",
                       help="table (default), or jsonl: one index record per line, without the embedding")
    split.add_argument("--splitter", default="auto", metavar="NAME",
                       help=f"auto (the format's default); {', '.join(FAMILY_NAMES)}, code:<language> "
                       f"(e.g. code:python); or a strategy: {', '.join(STRATEGY_NAMES)}, and any of these with "
                       f"{ENRICH_SUFFIX} (auto{ENRICH_SUFFIX}: the format's default, enriched)")
    split.add_argument("--max-tokens", type=count_at_least(1, MAX_SPLIT_TOKENS, "the embedding input limit, for every "
                                                          "format"), default=None, metavar="N",
                       help="token cap of a chunk (default 500: SPLIT_MAX_TOKENS). In PDF, DOCX, HTML and text a "
                       "table over it is split by rows, its header repeated in each part (SPLIT_MAX_TABLE_TOKENS "
                       "sets another limit); an image figure stays whole up to SPLIT_MAX_FIGURE_TOKENS (8191) and "
                       "fenced code in Markdown up to 8191")
    split.add_argument("--max-chars", type=count_at_least(1), default=None, metavar="N",
                       help="soft character length per chunk (default 1000)")
    split.set_defaults(func=run)


def run(args: argparse.Namespace, settings) -> int:
    """Print the records of ``args.file``; 1 when it cannot be parsed or split, 2 on a bad path or splitter."""
    path: Path = args.file
    if path.is_dir():
        return fail(args, "is a folder; split takes one file (ingest takes folders)", path=path)
    if not path.is_file():
        return fail(args, "no such file or folder", path=path)
    overrides = {k: v for k, v in (("max_tokens", args.max_tokens), ("max_chars", args.max_chars)) if v is not None}
    name, ext = args.splitter.strip(), extension_of(path.name)
    if not name:  # as SPLITTERS refuses '.md=': an empty name is a mistake, not the default
        return fail(args, "--splitter: empty name; auto is the format's default")
    if name == f"auto{ENRICH_SUFFIX}":  # the format's own splitter (SPLITTERS as set), enriched
        name = f"{splitter_name(path.name, settings.splitters)}{ENRICH_SUFFIX}" if format_of(path.name) else "auto"
    if name != "auto":
        overrides["splitters"] = {**settings.splitters, ext: name}
    settings = settings.replace(**overrides)
    source = source_name(path)  # the name ingest gives it, so the ids and citations are the same
    try:
        splitter = splitter_for(source, settings)
    except ValueError as exc:
        return fail(args, str(exc))
    try:
        data = path.read_bytes()
    except OSError as exc:
        return fail(args, f"cannot be read: {exc.strerror or exc}", path=path, status=1)
    try:
        pages = parse_document(data, source=source, max_bytes=settings.max_document_bytes,
                               readers=document_readers(settings))
        chunks = list(splitter.split(pages))
    except ParseError as exc:
        return fail(args, exc.reason, path=path, status=1)
    except ValueError as exc:
        return fail(args, str(exc), path=path, status=1)
    fields = configured_fields(settings, data, source, pages, file_properties(path))  # as `ingest` stores them
    namespace = deployment_namespace(settings, LOCAL_CONTAINER)
    records = document_records(pages, chunks, doc_id=doc_id(LOCAL_CONTAINER, source),
                               version=source_version(data, splitter, namespace), source=source,
                               namespace=namespace, fields=fields)
    members = _members_line(data, source, settings)
    if args.format == "jsonl":
        for record in records:
            row = record.to_dict()
            del row["embedding"]
            print(json.dumps(row, ensure_ascii=False))
        if members:
            print(members, file=sys.stderr)  # stdout stays one record a line
        return 0
    # A strategy with parents and children (hierarchical, small_to_big, sentence_window, propositions) stores a
    # parent and its first child over the same span: the level column tells them apart (0 = top).
    levels = any(r.level for r in records)
    rows = [(r.ordinal, f"{r.page_start + 1}" if r.page_start == r.page_end else f"{r.page_start + 1}-{r.page_end + 1}",
             f"{r.char_start}-{r.char_end}", r.token_count, len(r.content), r.kind, *((r.level,) if levels else ()),
             clip(" > ".join(r.headings), 40), clip(" ".join(r.content.split()), 60)) for r in records]
    table(("#", "page", "chars", "tokens", "len", "kind", *(("level",) if levels else ()), "headings", "text"), rows)
    print(f"\n{plural(len(records), 'chunk')} from {plural(len(pages), 'page')} of {source}")
    if members:
        print(members)
    return 0


def _members_line(data: bytes, source: str, settings) -> str:
    """For a container (a mail, an archive: docs/architecture.md#containers), the line saying which of its
    members are documents of their own that ``ingest`` stores too and ``split`` does not show (at most 5 named,
    a refused one with its reason); "" for any other file."""
    fmt = format_of(source)
    if fmt is None or not fmt.members:
        return ""
    limits = Limits.from_settings(settings)
    context = ReadContext(limits=limits, deadline=Deadline(settings.stage1_max_seconds))
    try:
        members = [f"{source}/{m.name}" + (f" (refused: {m.reason})" if m.reason else "")
                   for m in iter_members(data, source=source, context=context)]
    except ParseError:
        return ""
    if not members:
        return ""
    more = f", … ({len(members) - 5} more)" if len(members) > 5 else ""
    notes = "".join(f"; {note}" for note in context.notes)  # members past MAX_ARCHIVE_MEMBERS, not read
    return (f"{plural(len(members), 'member')} of {source} {'is a document' if len(members) == 1 else 'are documents'}"
            f" of {'its' if len(members) == 1 else 'their'} own, which ingest stores too and split does not show: "
            f"{', '.join(members[:5])}{more}{notes}")
