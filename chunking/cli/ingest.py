"""``chunking ingest PATH…``: parse, split, embed and index files or folders, then print the summary."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from chunking.cli.output import table

__all__ = ["add_parser", "run"]


def add_parser(sub) -> None:
    """Add the ``ingest`` subparser to *sub* (``argparse`` subparsers)."""
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
    ingest.set_defaults(func=run)


def run(args: argparse.Namespace, settings) -> int:
    """Ingest ``args.paths``; 0 when every document went in, 1 when one failed, 2 on bad paths or options."""
    from tqdm import tqdm

    from chunking.embeddings import make_embedder
    from chunking.index import make_index
    from chunking.ingest import collect_files, ingest_files
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
        table(("source", "pages", "chunks", "max tok", "tokens", "emb tok", "stage1 s", "stage2 s", "result"), rows)
        where = settings.local_index_path if settings.index_backend == "local" else settings.search_endpoint
        print(f"\n{totals['added']} added, {totals['updated']} updated, {totals['skipped']} unchanged (skipped), "
              f"{totals['deleted']} deleted, {totals['failed']} failed; {totals['embedding_tokens']} embedding "
              f"tokens in {totals['embedding_requests']} requests ({settings.embedding_backend}) -> {where}; "
              f"{summary.seconds:.1f} s")
        if ignored:
            print(f"{len(ignored)} files of unsupported types passed over: {', '.join(ignored[:5])}"
                  f"{' …' if len(ignored) > 5 else ''}")
    return 1 if totals["failed"] else 0
