"""Command line: ``python -m chunking {ingest,search,split} …``.

``ingest`` runs both pipeline stages in-process on the configured backends (by default the offline lexical
embedder and the local index under ``.chunking/``), exactly the code the Azure Functions run.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

__all__ = ["main"]

_EPILOG = """\
Settings come from the environment (see local.settings.sample.json and the README): with none, everything is
local: the offline lexical embedder (not semantic) and a single-file index in ./.chunking/ (CHUNKING_STATE_DIR).
Set AZURE_SEARCH_ENDPOINT and AZURE_OPENAI_ENDPOINT (+ deployment settings) to use Azure instead.
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
    parser.add_argument("-v", "--verbose", action="store_true", help="log each stage's work")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    ingest = sub.add_parser(
        "ingest",
        help="parse, split, embed and index files or folders",
        description="Parse, split, embed and index files (folders are searched recursively). "
        "Runs stage 1 (parse + split) and stage 2 (embed + upsert) in-process.",
    )
    ingest.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="a file or a folder")
    ingest.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    ingest.set_defaults(func=_ingest)

    search = sub.add_parser("search", help="hybrid (keyword + vector) search of the index",
                            description="Search the index; prints hits with source page and score.")
    search.add_argument("query")
    search.add_argument("-k", type=int, default=5, metavar="N", help="number of hits (default 5)")
    search.add_argument("--json", action="store_true",
                        help="print hits as a JSON list of {source, sourcepage, content, score, …}")
    search.set_defaults(func=_search)

    split = sub.add_parser("split", help="print the chunks of one file (nothing is indexed)",
                           description="Parse and split one file and print its chunks.")
    split.add_argument("file", type=Path)
    split.add_argument("--format", choices=("table", "jsonl"), default="table", help="output format (default table)")
    split.add_argument("--splitter", choices=("sentence",), default="sentence", help="splitter (default sentence)")
    split.add_argument("--max-tokens", type=int, default=None, metavar="N", help="hard token cap per chunk (default 500)")
    split.add_argument("--max-chars", type=int, default=None, metavar="N",
                       help="soft character length per chunk (default 1000)")
    split.set_defaults(func=_split)
    return parser


# ----------------------------------------------------------------------------------------------- ingest


@dataclass
class _Row:
    source: str
    pages: int = 0
    chunks: int = 0
    max_tokens: int = 0
    tokens: int = 0
    embedding_tokens: int = 0
    stage1_s: float = 0.0
    stage2_s: float = 0.0
    error: str | None = None


@dataclass
class _Summary:
    rows: list[_Row] = field(default_factory=list)
    seconds: float = 0.0
    embedding_requests: int = 0

    def to_dict(self) -> dict:
        ok = [r for r in self.rows if not r.error]
        return {
            "documents": len(ok),
            "pages": sum(r.pages for r in ok),
            "chunks": sum(r.chunks for r in ok),
            "tokens": sum(r.tokens for r in ok),
            "embedding_tokens": sum(r.embedding_tokens for r in ok),
            "embedding_requests": self.embedding_requests,
            "seconds": round(self.seconds, 3),
            "failures": [{"source": r.source, "error": r.error} for r in self.rows if r.error],
            "per_document": [
                {"source": r.source, "pages": r.pages, "chunks": r.chunks, "max_chunk_tokens": r.max_tokens,
                 "tokens": r.tokens, "embedding_tokens": r.embedding_tokens,
                 "stage1_seconds": round(r.stage1_s, 3), "stage2_seconds": round(r.stage2_s, 3),
                 "error": r.error}
                for r in self.rows
            ],
        }


def _collect(paths: Sequence[Path]) -> list[tuple[Path, str]]:
    """(file, source name) pairs; a folder's files are named ``folder/relative/path``."""
    found: list[tuple[Path, str]] = []
    for path in paths:
        if path.is_dir():
            for file in sorted(p for p in path.rglob("*") if p.is_file()):
                rel = file.relative_to(path)
                if not any(part.startswith(".") for part in rel.parts):
                    found.append((file, f"{path.resolve().name}/{rel.as_posix()}"))
        elif path.is_file():
            found.append((path, path.name))
        else:
            raise SystemExit(f"python -m chunking ingest: {path}: no such file or folder")
    return found


def _ingest(args: argparse.Namespace, settings) -> int:
    from tqdm import tqdm

    from chunking.embeddings import make_embedder
    from chunking.index import make_index
    from chunking.payloads import MemoryPayloadStore
    from chunking.pipeline import run_stage_one, run_stage_two

    files = _collect(args.paths)
    started = time.perf_counter()
    embedder = make_embedder(settings)
    index = make_index(settings)
    index.ensure()
    payloads = MemoryPayloadStore()
    summary = _Summary()
    for file, source in tqdm(files, desc="ingest", unit="file", disable=None, file=sys.stderr):
        row = _Row(source)
        summary.rows.append(row)
        one = run_stage_one(file.read_bytes(), source=source, container="local", settings=settings, payloads=payloads)
        row.stage1_s, row.error = one.seconds, one.error
        row.pages, row.chunks, row.tokens, row.max_tokens = one.pages, one.chunks, one.tokens, one.max_chunk_tokens
        for message in one.messages:
            two = run_stage_two(message, settings=settings, embedder=embedder, index=index, payloads=payloads)
            row.stage2_s += two.seconds
            row.embedding_tokens += two.embedding_tokens
            summary.embedding_requests += two.embedding_requests
    summary.seconds = time.perf_counter() - started
    if args.json:
        print(json.dumps(summary.to_dict(), ensure_ascii=False, indent=2))
    else:
        _print_summary(summary, settings)
    return 1 if any(r.error for r in summary.rows) and not any(not r.error for r in summary.rows) else 0


def _print_summary(summary: _Summary, settings) -> None:
    headers = ("source", "pages", "chunks", "max tok", "tokens", "emb tok", "stage1 s", "stage2 s", "status")
    rows = [
        (r.source, r.pages, r.chunks, r.max_tokens, r.tokens, r.embedding_tokens,
         f"{r.stage1_s:.2f}", f"{r.stage2_s:.2f}", "ok" if not r.error else f"FAILED: {r.error}")
        for r in summary.rows
    ]
    totals = summary.to_dict()
    rows.append(("TOTAL", totals["pages"], totals["chunks"], "", totals["tokens"], totals["embedding_tokens"],
                 f"{sum(r.stage1_s for r in summary.rows):.2f}", f"{sum(r.stage2_s for r in summary.rows):.2f}",
                 f"{totals['documents']} ok, {len(totals['failures'])} failed"))
    _table(headers, rows)
    where = settings.local_index_path if settings.index_backend == "local" else settings.search_endpoint
    print(f"\n{totals['documents']} documents indexed into {where} with {settings.embedding_backend} embeddings "
          f"({totals['embedding_requests']} embedding requests) in {summary.seconds:.1f} s")


def _table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    cells = [[str(c) for c in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    for n, row in enumerate(cells):
        print("  ".join(c.ljust(w) if i == 0 or i == len(row) - 1 else c.rjust(w)
                        for i, (c, w) in enumerate(zip(row, widths))).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))


# ----------------------------------------------------------------------------------------------- search


def _search(args: argparse.Namespace, settings) -> int:
    from chunking.embeddings import make_embedder
    from chunking.index import make_index

    index = make_index(settings)
    index.ensure()
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


# ----------------------------------------------------------------------------------------------- split


def _split(args: argparse.Namespace, settings) -> int:
    from chunking.formats import splitter_for
    from chunking.parsers import ParseError, parse_document

    overrides = {k: v for k, v in (("max_tokens", args.max_tokens), ("max_chars", args.max_chars)) if v is not None}
    settings = settings.replace(**overrides)
    try:
        pages = parse_document(args.file.read_bytes(), source=args.file.name, max_bytes=settings.max_document_bytes)
    except (OSError, ParseError) as exc:
        print(f"python -m chunking split: {exc}", file=sys.stderr)
        return 2
    chunks = list(splitter_for(args.file.name, settings).split(pages))
    if args.format == "jsonl":
        for chunk in chunks:
            print(json.dumps(chunk.to_dict(), ensure_ascii=False))
        return 0
    rows = [(n, f"{c.page_start}-{c.page_end}", f"{c.char_start}-{c.char_end}", c.token_count, len(c.text), c.kind,
             " ".join(c.text.split())[:70]) for n, c in enumerate(chunks)]
    _table(("#", "pages", "chars", "tokens", "len", "kind", "text"), rows)
    print(f"\n{len(chunks)} chunks from {len(pages)} pages of {args.file}")
    return 0
