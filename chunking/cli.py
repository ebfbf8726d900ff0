"""Command line: ``python -m chunking {ingest,search,split,status,reconcile} …``.

``ingest`` runs both pipeline stages in-process on the configured backends (by default the offline lexical
embedder and the local index under ``.chunking/``), exactly the code the Azure Functions run.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Sequence

__all__ = ["main"]

_EPILOG = """\
Settings come from the environment (see local.settings.sample.json and the README): with none, everything is
local: the offline lexical embedder (not semantic) and a single-file index in ./.chunking/ (CHUNKING_STATE_DIR).
Set AZURE_SEARCH_ENDPOINT and AZURE_OPENAI_ENDPOINT (+ deployment settings) to use Azure instead.

Page numbers: fields (page_start, page_end, --format jsonl) are 0-based; sourcepage (#page=N) and the tables
printed for people are 1-based.
Exit status: 0 success; 1 some document failed (ingest) ; 2 bad usage or unreachable service.
"""


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING if not args.verbose else logging.INFO, format="%(levelname)s %(message)s")
    from chunking.settings import Settings, SettingsError

    try:
        settings = Settings.from_env()
    except SettingsError as exc:
        parser.error(str(exc))
    return args.func(args, settings)


def _parser() -> argparse.ArgumentParser:
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
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    real_add = sub.add_parser
    sub.add_parser = lambda *a, **k: real_add(*a, parents=[common], **k)  # -v after the command too

    ingest = sub.add_parser(
        "ingest",
        help="parse, split, embed and index files or folders",
        description="Parse, split, embed and index files (folders are searched recursively). "
        "Runs stage 1 (parse + split) and stage 2 (embed + upsert) in-process.",
    )
    ingest.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="a file or a folder")
    ingest.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    ingest.add_argument(
        "--cleanup", choices=("none", "incremental", "full", "scoped_full"), default="incremental",
        help="what else to delete: none = nothing, not even old versions of changed files; incremental (default) "
        "= old versions of changed files; full = also every previously ingested file not in this run; "
        "scoped_full = also files under the given folders that are no longer there")
    ingest.add_argument("--allow-empty-full", action="store_true",
                        help="let --cleanup full delete everything when the run has no files")
    ingest.set_defaults(func=_ingest)

    status = sub.add_parser("status", help="documents by status, and the failed ones with reasons",
                            description="Print the ledger: counts by status and every failed document with its reason.")
    status.add_argument("--json", action="store_true", help="print as one JSON object")
    status.set_defaults(func=_status)

    rec = sub.add_parser(
        "reconcile", help="repair drift between the documents container, the ledger and the index",
        description="The reconcile timer's code: enqueue blobs that are missing from the index or stuck, delete "
        "chunks of blobs that no longer exist. Needs the storage connection (AzureWebJobsStorage).")
    rec.add_argument("--json", action="store_true", help="print the report as one JSON object")
    rec.set_defaults(func=_reconcile)

    search = sub.add_parser("search", help="hybrid (keyword + vector) search of the index",
                            description="Search the index; prints hits with source page and score.")
    search.add_argument("query", help="words or a phrase to look for (any language)")
    search.add_argument("-k", type=int, default=5, metavar="N", help="number of hits (default 5)")
    search.add_argument("--json", action="store_true",
                        help="print hits as a JSON list of {source, sourcepage, content, score, …}")
    search.add_argument("--parents", action="store_true",
                        help="small-to-big: search the small chunks, print their parent chunks (hierarchical, "
                        "small_to_big and propositions strategies), each with its matching children")
    search.add_argument("--window", type=int, default=0, metavar="K",
                        help="sentence window: print each hit with K sentences on each side (sentence_window)")
    search.set_defaults(func=_search)

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
    split.set_defaults(func=_split)
    return parser


# ----------------------------------------------------------------------------------------------- ingest


def _ingest(args: argparse.Namespace, settings) -> int:
    from tqdm import tqdm

    from chunking.batch import collect_files, ingest_files
    from chunking.embeddings import make_embedder
    from chunking.index import make_index
    from chunking.ledger import make_ledger

    try:
        files, scopes, ignored = collect_files(args.paths)
    except FileNotFoundError as exc:
        print(f"python -m chunking ingest: {exc}", file=sys.stderr)
        return 2
    index = make_index(settings)
    index.ensure()
    try:
        summary = ingest_files(
            files, settings=settings, embedder=make_embedder(settings), index=index, ledger=make_ledger(settings),
            cleanup=args.cleanup, scopes=scopes, allow_empty_full=args.allow_empty_full,
            progress=lambda it: tqdm(it, desc="ingest", unit="file", disable=None, file=sys.stderr),
        )
    except ValueError as exc:
        print(f"python -m chunking ingest: {exc}", file=sys.stderr)
        return 2
    summary.ignored = ignored
    totals = summary.to_dict()
    if args.json:
        print(json.dumps(totals, ensure_ascii=False, indent=2))
    else:
        rows = [(r.source, r.pages, r.chunks, r.max_tokens, r.tokens, r.embedding_tokens, f"{r.stage1_seconds:.2f}",
                 f"{r.stage2_seconds:.2f}", r.outcome if r.outcome != "failed" else f"FAILED: {r.error}")
                for r in summary.rows]
        rows.append(("TOTAL", totals["pages"], totals["chunks"], "", totals["tokens"], totals["embedding_tokens"],
                     f"{sum(r.stage1_seconds for r in summary.rows):.2f}",
                     f"{sum(r.stage2_seconds for r in summary.rows):.2f}", ""))
        _table(("source", "pages", "chunks", "max tok", "tokens", "emb tok", "stage1 s", "stage2 s", "result"), rows)
        where = settings.local_index_path if settings.index_backend == "local" else settings.search_endpoint
        print(f"\n{totals['added']} added, {totals['updated']} updated, {totals['skipped']} unchanged (skipped), "
              f"{totals['deleted']} deleted, {totals['failed']} failed; {totals['embedding_tokens']} embedding "
              f"tokens in {totals['embedding_requests']} requests ({settings.embedding_backend}) -> {where}; "
              f"{summary.seconds:.1f} s")
        if ignored:
            print(f"{len(ignored)} files of unsupported types passed over: {', '.join(ignored[:5])}"
                  f"{' …' if len(ignored) > 5 else ''}")
    return 1 if totals["failed"] else 0


# ----------------------------------------------------------------------------------------------- status


def _status(args: argparse.Namespace, settings) -> int:
    from chunking.ledger import make_ledger

    entries = make_ledger(settings).entries()
    counts = {s: sum(1 for e in entries if e.status == s) for s in ("indexed", "queued", "failed", "deleted")}
    failed = [e for e in entries if e.status == "failed"]
    noted = [e for e in entries if e.note and e.status != "failed"]
    if args.json:
        print(json.dumps({"counts": counts, "failed": [
            {"source": e.source, "doc_id": e.doc_id, "version": e.version, "error": e.error, "attempts": e.attempts,
             "updated_at": e.updated_at} for e in failed],
            "notes": [{"source": e.source, "status": e.status, "note": e.note} for e in noted]},
            ensure_ascii=False, indent=2))
        return 0
    print(", ".join(f"{n} {s}" for s, n in counts.items()))
    if failed:
        print()
        _table(("failed source", "reason", "since"), [(e.source, e.error, e.updated_at) for e in failed])
    if noted:
        print()
        _table(("source", "status", "note"), [(e.source, e.status, e.note) for e in noted])
    return 0


# ----------------------------------------------------------------------------------------------- reconcile


def _reconcile(args: argparse.Namespace, settings) -> int:
    from azure.core.exceptions import AzureError

    from chunking import handlers
    from chunking.storage import blob_service, describe

    try:  # one quick probe, so a storage that is not running fails in seconds, not after the SDK's retries
        blob_service(settings, retry_total=0, connection_timeout=5).get_service_properties()
        report = handlers.handle_reconcile()
    except (AzureError, ValueError) as exc:
        hint = " (for local storage start Azurite: npx azurite)" if "devstoreaccount1" in str(exc) or \
            settings.storage_connection.startswith("UseDevelopmentStorage") else ""
        print(f"python -m chunking reconcile: storage not reachable ({describe(settings)})"
              f"{hint}: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    data = report.to_dict()
    if args.json:
        print(json.dumps(data, ensure_ascii=False, indent=2))
    else:
        print(f"checked {data['checked']} blobs: {len(data['missing'])} missing (enqueued), {len(data['stuck'])} "
              f"stuck (enqueued), {len(data['orphaned'])} orphaned (deleted)")
        for kind in ("missing", "stuck", "orphaned"):
            for source in data[kind]:
                print(f"  {kind}: {source}")
    return 0


def _table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    cells = [[str(c) for c in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    numeric = [all(isinstance(row[i], (int, float)) or str(row[i]).replace(".", "").replace("-", "").isdigit()
                   or row[i] == "" for row in rows) and rows != [] for i in range(len(headers))]
    for n, row in enumerate(cells):
        print("  ".join(c.rjust(w) if numeric[i] else c.ljust(w)
                        for i, (c, w) in enumerate(zip(row, widths))).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))


# ----------------------------------------------------------------------------------------------- search


def _search(args: argparse.Namespace, settings) -> int:
    from chunking.embeddings import make_embedder
    from chunking.index import make_index

    if not args.query.strip():
        print("python -m chunking search: the query is empty", file=sys.stderr)
        return 2
    if args.k < 1:
        print(f"python -m chunking search: -k must be at least 1, got {args.k}", file=sys.stderr)
        return 2
    index = make_index(settings)
    index.ensure()
    if args.parents or args.window:
        return _search_parents(args, index, make_embedder(settings))
    vector = make_embedder(settings).embed([args.query])[0]
    hits = index.search(args.query, vector, k=args.k)
    if args.json:
        print(json.dumps([
            {"source": h.record.source, "sourcepage": h.record.sourcepage, "content": h.record.content,
             "score": h.score, "id": h.record.id, "page_start": h.record.page_start, "page_end": h.record.page_end,
             "headings": list(h.record.headings)}
            for h in hits
        ], ensure_ascii=False, indent=2))
        return 0
    if not hits:
        print("no hits" + ("" if index.count() else " (the index is empty: run `python -m chunking ingest PATH` first)"))
        return 0
    for rank, hit in enumerate(hits, 1):
        heading = " > ".join(hit.record.headings)
        print(f"{rank}. {hit.record.sourcepage}  score {hit.score:.4f}" + (f"  [{heading}]" if heading else ""))
        snippet = " ".join(hit.record.content.split())
        print(f"   {snippet[:300]}{'…' if len(snippet) > 300 else ''}\n")
    return 0


def _search_parents(args: argparse.Namespace, index, embedder) -> int:
    from chunking.strategies.small_to_big import ParentDocumentRetriever

    retriever = ParentDocumentRetriever(index, embedder, child_k=max(20, 4 * args.k), max_parents=args.k,
                                        window=max(0, args.window))
    results = retriever.retrieve(args.query)
    if args.json:
        print(json.dumps([
            {"source": r.record.source, "sourcepage": r.record.sourcepage, "content": r.text, "score": r.score,
             "id": r.record.id, "level": r.record.level, "headings": list(r.record.headings),
             "char_start": r.record.char_start, "char_end": r.record.char_end,
             "children": [{"id": c.id, "score": c.score, "char_start": c.char_start, "char_end": c.char_end}
                          for c in r.children]}
            for r in results
        ], ensure_ascii=False, indent=2))
        return 0
    if not results:
        print("no hits" + ("" if index.count() else
                           " (the index is empty: run `python -m chunking ingest PATH` first)"))  # fmt: skip
        return 0
    for rank, r in enumerate(results, 1):
        heading = " > ".join(r.record.headings)
        spans = ", ".join(f"{c.char_start}-{c.char_end}" for c in r.children)
        print(f"{rank}. {r.record.sourcepage}  score {r.score:.4f}  level {r.record.level}  "
              f"{len(r.children)} matching (chars {spans})" + (f"  [{heading}]" if heading else ""))
        snippet = " ".join(r.text.split())
        print(f"   {snippet[:500]}{'…' if len(snippet) > 500 else ''}\n")
    return 0


# ----------------------------------------------------------------------------------------------- split


def _split(args: argparse.Namespace, settings) -> int:
    from chunking.formats import splitter_for
    from chunking.parsers import ParseError, parse_document

    from chunking.formats import extension_of

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
    rows = [(n, f"{c.page_start + 1}" if c.page_start == c.page_end else f"{c.page_start + 1}-{c.page_end + 1}", f"{c.char_start}-{c.char_end}", c.token_count, len(c.text), c.kind,
             " ".join(c.text.split())[:70]) for n, c in enumerate(chunks)]
    _table(("#", "page", "chars", "tokens", "len", "kind", "text"), rows)
    print(f"\n{len(chunks)} chunk{'s' * (len(chunks) != 1)} from {len(pages)} page{'s' * (len(pages) != 1)} "
          f"of {args.file}")
    return 0
