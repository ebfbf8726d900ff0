"""``chunking search QUERY``: hybrid (keyword + vector) search of the index, or small-to-big retrieval."""

from __future__ import annotations

import argparse
import json

from chunking.cli.arguments import count_at_least
from chunking.cli.output import fail

__all__ = ["add_parser", "run"]


def add_parser(sub) -> None:
    """Add the ``search`` subparser to *sub* (``argparse`` subparsers)."""
    search = sub.add_parser("search", help="hybrid (keyword + vector) search of the index",
                            description="Search the index; prints hits with source page and score.")
    search.add_argument("query", help="words or a phrase to look for (any language)")
    search.add_argument("-k", type=count_at_least(1), default=5, metavar="N", help="number of hits (default 5)")
    search.add_argument("--json", action="store_true",
                        help="print hits as a JSON list of {source, sourcepage, content, score, …}")
    search.add_argument("--parents", action="store_true",
                        help="small-to-big: search the small chunks, print their parent chunks (hierarchical, "
                        "small_to_big and propositions strategies), each with its matching children")
    search.add_argument("--window", type=count_at_least(0), default=0, metavar="K",
                        help="sentence window: print each hit with K sentences on each side (sentence_window)")
    search.set_defaults(func=run)


def run(args: argparse.Namespace, settings) -> int:
    """Print the hits of ``args.query``; 2 on an empty query. A local index that does not exist yet has no
    hits and is not created."""
    from chunking.embeddings import make_embedder
    from chunking.index import make_index

    if not args.query.strip():
        return fail(args, "the query is empty")
    if settings.index_backend == "local" and not settings.local_index_path.exists():
        print("[]" if args.json else f"no hits (the index is empty: run `{_ingest_hint(args)}` first)")
        return 0
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
        print("no hits" + ("" if index.count() else f" (the index is empty: run `{_ingest_hint(args)}` first)"))
        return 0
    for rank, hit in enumerate(hits, 1):
        heading = " > ".join(hit.record.headings)
        print(f"{rank}. {hit.record.sourcepage}  score {hit.score:.4f}" + (f"  [{heading}]" if heading else ""))
        snippet = " ".join(hit.record.content.split())
        print(f"   {snippet[:300]}{'…' if len(snippet) > 300 else ''}\n")
    return 0


def _ingest_hint(args: argparse.Namespace) -> str:
    return args.prog.rsplit(" ", 1)[0] + " ingest PATH"


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
        print("no hits" + ("" if index.count() else f" (the index is empty: run `{_ingest_hint(args)}` first)"))
        return 0
    for rank, r in enumerate(results, 1):
        heading = " > ".join(r.record.headings)
        spans = ", ".join(f"{c.char_start}-{c.char_end}" for c in r.children)
        print(f"{rank}. {r.record.sourcepage}  score {r.score:.4f}  level {r.record.level}  "
              f"{len(r.children)} matching (chars {spans})" + (f"  [{heading}]" if heading else ""))
        snippet = " ".join(r.text.split())
        print(f"   {snippet[:500]}{'…' if len(snippet) > 500 else ''}\n")
    return 0
