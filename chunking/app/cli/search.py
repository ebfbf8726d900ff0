"""``chunking search QUERY``: hybrid (keyword + vector) search of the index, or small-to-big retrieval."""

from __future__ import annotations

import argparse
import json
import sys

from chunking.app.cli.arguments import count_at_least
from chunking.app.cli.hits import print_hit
from chunking.app.cli.output import fail
from chunking.app.cli.search_filters import add_filter_arguments, search_filter, user_token
from chunking.index.odata import FilterError
from chunking.model import DOCUMENT_FIELDS, ChunkRecord
from chunking.retrieval import keyword_text, search
from chunking.retrieval.small_to_big import ParentDocumentRetriever
from chunking.services import index_known_empty, make_embedder, make_index, vector_floor

__all__ = ["add_parser", "run"]


def add_parser(sub, summary: str) -> None:
    """Add the ``search`` subparser to *sub* (``argparse`` subparsers); *summary* is its line in ``--help``."""
    search = sub.add_parser("search", help=summary,
                            description="Search the index; prints each hit with its cited page, a relevance from 0 to 1 "
                            "(with its keyword and vector parts, local index) and the passage that matches, the "
                            "query's words marked. On the local index a query sharing no word with the documents gets no hits, "
                            "and says so.")
    search.add_argument("query", help="words or a phrase to look for (any language)")
    search.add_argument("-k", type=count_at_least(1), default=5, metavar="N", help="number of hits (default 5)")
    search.add_argument("--json", action="store_true",
                        help="print hits as a JSON list of {source, sourcepage, content, score, …}")
    search.add_argument("--parents", action="store_true",
                        help="small-to-big: search the small chunks, print their parent chunks (hierarchical, "
                        "small_to_big and propositions strategies), each with its matching children; on other "
                        "indexes a notice, then plain hits")
    search.add_argument("--window", type=count_at_least(0), default=0, metavar="K",
                        help="sentence window: print each hit with K sentences on each side (sentence_window "
                        "strategy); on other indexes a notice, then plain hits")
    add_filter_arguments(search)
    search.set_defaults(func=run)


def run(args: argparse.Namespace, settings) -> int:
    """Print the hits of ``args.query``; 2 on an empty query. A local index that does not exist yet has no
    hits and is not created."""
    if not args.query.strip():
        return fail(args, "the query is empty")
    try:
        where = search_filter(args, settings)
    except FilterError as exc:  # what is wrong with --filter, --user or --groups
        return fail(args, str(exc))
    if args.token is not None and index_known_empty(settings):  # a local index: it has no permission filters
        return fail(args, _LOCAL_TOKEN)
    if index_known_empty(settings):  # no index file: say that, not "empty" (an index that exists may be empty)
        print("[]" if args.json else f"no hits: no index yet ({settings.local_index_path}): run "
              f"`{_ingest_hint(args)}` first")
        return 0
    index = make_index(settings)
    token = user_token(args)
    if args.token is not None:
        if not hasattr(index, "authorize_queries"):
            return fail(args, _LOCAL_TOKEN)
        if token is None:
            return fail(args, "--token: the token is empty")
        if not settings.index_design.permission_filters:
            print("note: SEARCH_PERMISSION_FILTERS is off: the index does not trim by the token; use --user and "
                  "--groups", file=sys.stderr)
        index.authorize_queries(token)
    index.ensure()
    embedder = make_embedder(settings)
    small_to_big = args.parents or args.window
    try:
        hits = search(args.query, index=index, embedder=embedder, k=max(20, 4 * args.k) if small_to_big else args.k,
                      filter=where)
    except FilterError as exc:  # a field this index does not have
        return fail(args, str(exc))
    if small_to_big:
        if any(h.record.parent_id for h in hits):
            return _print_contexts(args, index, embedder, settings, hits)
        if hits:
            print(_not_applied(args), file=sys.stderr)
        hits = hits[: args.k]
    if args.json:
        print(json.dumps([
            {"source": h.record.source, "title": h.record.title, "sourcepage": h.record.sourcepage,
             "content": h.record.content, "score": h.score, "lexical": h.lexical, "vector": h.vector,
             **record_fields(h.record)}
            for h in hits
        ], ensure_ascii=False, indent=2))
        return 0
    if not hits:
        return _no_hits(args, index, settings, embedder, filtered=where is not None)
    for rank, hit in enumerate(hits, 1):
        print_hit(rank, hit.record.sourcepage, hit.record.headings, hit.record.content, args.query,
                  score=hit.score, lexical=hit.lexical, vector=hit.vector, title=hit.record.title,
                  images=hit.record.image_urls)
    return 0


_LOCAL_TOKEN = ("--token is for Azure AI Search with SEARCH_PERMISSION_FILTERS (the local index trims with --user "
                "and --groups)")


def record_fields(record: ChunkRecord) -> dict[str, object]:
    """What a ``--json`` hit says of its chunk besides its text and scores: its key, document, version, place
    (ordinal, pages 0-based, characters), heading path, kind and level, and every document field the index stores
    (``title``, ``storage_url``, ``content_type``, ``last_modified``, ``size_bytes``, ``language``, the access
    lists ``acl_users``/``acl_groups``, and ``metadata``: the ``METADATA_FIELDS`` values by index field), and
    ``image_urls``: the figure images the chunk holds (docs/parsers.md#figure-images)."""
    fields = {name: list(value) if isinstance(value, tuple) else value
              for name, value in ((n, getattr(record, n)) for n in DOCUMENT_FIELDS)}
    return {"id": record.id, "doc_id": record.doc_id, "version": record.version, "ordinal": record.ordinal,
            "page_start": record.page_start, "page_end": record.page_end, "char_start": record.char_start,
            "char_end": record.char_end, "headings": list(record.headings), "kind": record.kind,
            "level": record.level, "parent_id": record.parent_id, **fields, "metadata": dict(record.metadata),
            "image_urls": list(record.image_urls)}


def _not_applied(args: argparse.Namespace) -> str:
    """The one-line notice when no chunk found has a parent, so --parents / --window cannot change anything."""
    flags = [f for f, on in (("--parents", args.parents), (f"--window {args.window}", args.window)) if on]
    uses = [u for u, on in (("hierarchical, small_to_big or propositions", args.parents),
                            ("sentence_window", args.window)) if on]
    return (f"note: {' and '.join(flags)} not applied: the chunks found have no parent chunk (the index was not "
            f"built with {' or '.join(uses)}); plain hits follow")


def _no_hits(args: argparse.Namespace, index, settings, embedder, *, filtered: bool = False) -> int:
    """Say why there is no hit (docs/search.md#no-hits). *filtered*: ``--filter``, ``--user`` or ``--groups``
    narrowed the search, so the reason is said of the chunks they let through only (whether others match is not
    said: a trimmed search tells nothing of what the user may not see)."""
    floor = vector_floor(settings)
    chunks = f"chunk {_narrowed_by(args)}" if filtered else "chunk"
    if not index.count():
        print(f"no hits (the index is empty: run `{_ingest_hint(args)}` first)")
    elif floor is None:  # the index ranks by its own rules: nothing more to say
        print(f"no hits among the chunks {_narrowed_by(args)}" if filtered else "no hits")
    elif not any(c.isalnum() for c in args.query):  # "*", "?": no word at all
        print("no hits: the query has no word, only punctuation or symbols; search takes words, not patterns")
    elif not keyword_text(args.query):  # every word is a stop word: no keyword ranking (docs/search.md#no-hits)
        print("no hits: the query has only stop words (the, and, of …), which every chunk holds; "
              "add a word that says what you look for")
    elif hasattr(embedder, "shares_word"):  # the offline embedder: a vector hit needs a query word too
        print(f"no hits: no {chunks} contains a word of the query")
    else:
        print(f"no hits: no {chunks} contains a word of the query, and none has a vector similar enough "
              f"(cosine below {floor:g}, SEARCH_MIN_VECTOR_SCORE)")
    return 0


def _narrowed_by(args: argparse.Namespace) -> str:
    """``"matching --filter"``, ``"that --user/--groups may see"``, or both joined, for the no-hits line."""
    parts = (["matching --filter"] if args.filter is not None else []) + (
        ["that --user/--groups may see"] if args.user is not None or args.groups is not None else [])
    return " and ".join(parts)


def _ingest_hint(args: argparse.Namespace) -> str:
    return args.prog.rsplit(" ", 1)[0] + " ingest PATH"


def _print_contexts(args: argparse.Namespace, index, embedder, settings, hits) -> int:
    """Print the parents (or sentence windows) of the child *hits*, ``args.k`` at most."""
    retriever = ParentDocumentRetriever(index, embedder, child_k=max(20, 4 * args.k), max_parents=args.k,
                                        window=max(0, args.window))
    results = retriever.from_hits(hits)
    if args.json:
        print(json.dumps([
            {"source": r.record.source, "title": r.record.title, "sourcepage": r.record.sourcepage,
             "content": r.text, "score": r.score, **record_fields(r.record),
             "children": [{"id": c.id, "score": c.score, "char_start": c.char_start, "char_end": c.char_end}
                          for c in r.children]}
            for r in results
        ], ensure_ascii=False, indent=2))
        return 0
    if not results:
        return _no_hits(args, index, settings, embedder)
    for rank, r in enumerate(results, 1):
        spans = ", ".join(f"{c.char_start}-{c.char_end}" for c in r.children)
        print_hit(rank, r.record.sourcepage, r.record.headings, r.text, args.query, score=r.score,
                  extra=f"  level {r.record.level}  {len(r.children)} matching (chars {spans})", width_chars=500,
                  title=r.record.title)
    return 0
