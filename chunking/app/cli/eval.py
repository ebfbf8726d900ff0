"""``chunking eval PATH… --questions FILE``: which chunking strategy retrieves best on your own documents."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from chunking.app.cli.arguments import count_at_least
from chunking.app.cli.output import fail, plural, table
from chunking.evaluation.generate import draft_question_file
from chunking.evaluation.questions import QuestionSetError, load_questions
from chunking.evaluation.runner import evaluate, parse_strategy
from chunking.pipeline.ingest import collect_files
from chunking.redact import redact
from chunking.retrieval import RANKINGS

__all__ = ["add_parser", "run"]

_DESCRIPTION = """\
Ingest the documents once per strategy into a separate local index, ask every
question of the question set, and report hit@1/3/5, MRR and nDCG@10 per
strategy and ranking, with the embedding tokens each strategy spent. Exits 2
on bad usage or a question whose answer is not in the documents.

emb tokens: cl100k_base tokens sent to the embedder, the chunks' vectors plus
what a strategy embeds while splitting (semantic's sentence windows, about
three times the text); --json gives both parts.

hit@k: the share of questions with a relevant chunk among the first k hits;
MRR: the mean of 1/rank of the first relevant hit (0 when none is in the first
10); nDCG@10: the first 10 hits scored against the best order of the relevant
chunks, 1 when they lead (docs/evaluation.md#metrics).
"""

_EPILOG = """\
Question file: JSON lines, one object a line:
  {"question": "...", "source": "manual.pdf", "page": 12}
or with "passage": "text copied from the document" (the answer's place),
optional "lang"; see docs/evaluation.md.

A strategy: a splitter or strategy name for every file (sentence, semantic,
hierarchical, sentence_window, markdown+enrich ...), "default" (each format's
default), or a SPLITTERS value (.pdf=semantic,.md=markdown), then optional
settings: --strategy "sentence SPLIT_MAX_TOKENS=250".

Rankings: hybrid (keywords + vectors, as `chunking search` ranks), bm25
(keywords only), vector (vectors only), each scored on every strategy's index.
Each strategy's index is built from scratch in a temporary folder (or under
--keep), never in your index.
"""


def add_parser(sub, summary: str) -> None:
    """Add the ``eval`` subparser to *sub* (``argparse`` subparsers); *summary* is its line in ``--help``."""
    ev = sub.add_parser(
        "eval", help=summary,
        description=_DESCRIPTION, epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    ev.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="a document or a folder of documents")
    ev.add_argument("--questions", type=Path, required=True, metavar="FILE",
                    help="the question set (JSON lines); with --generate, where the drafted questions are written")
    ev.add_argument("--strategy", action="append", default=[], metavar="SPEC",
                    help='a strategy to compare (repeatable; default: "default")')
    ev.add_argument("--ranking", default="hybrid,bm25", metavar="LIST",
                    help="rankings to score, comma-separated from hybrid, bm25, vector (default hybrid,bm25)")
    ev.add_argument("--generate", type=count_at_least(1), metavar="N",
                    help="draft N questions from the chunks of the first strategy (with CHAT_MODEL when set, "
                    "otherwise rule-based from sentences) into --questions, which must not exist; review them")
    ev.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                    help="pass over files of the folders matching GLOB (as ingest --exclude; repeatable)")
    ev.add_argument("--keep", type=Path, metavar="DIR",
                    help="build the strategies' indexes under DIR (one folder per strategy, numbered) and keep them; "
                    "a later run with the same DIR skips unchanged documents, so their embedding tokens read 0")
    ev.add_argument("--json", action="store_true", help="print the results as one JSON object")
    ev.set_defaults(func=run)


def run(args: argparse.Namespace, settings) -> int:
    """Evaluate; 0 when it ran, 2 on bad usage, a bad question set or a strategy that cannot be built."""
    rankings = [r.strip() for r in args.ranking.split(",") if r.strip()]
    unknown = [r for r in rankings if r not in RANKINGS]
    if unknown or not rankings:
        return fail(args, f"--ranking: choose from {', '.join(RANKINGS)}, got {args.ranking!r}")
    missing = next((p for p in args.paths if not p.exists()), None)
    if missing is not None:
        return fail(args, "no such file or folder", path=missing)
    try:
        strategies = [parse_strategy(s) for s in (args.strategy or ["default"])]
    except ValueError as exc:
        return fail(args, str(exc))
    if not args.generate and not args.questions.is_file():  # before any document is read or indexed
        what = "is a folder, not a question set" if args.questions.is_dir() else "no such question set"
        return fail(args, f"{what} (JSON lines; --generate N drafts one)", path=args.questions)
    if args.generate and not args.questions.parent.is_dir():
        return fail(args, "no such folder to write the drafted question set in", path=args.questions)
    if args.keep is not None and args.keep.exists() and not args.keep.is_dir():
        return fail(args, "is a file; --keep names a folder to build the indexes under", path=args.keep)
    question_file = args.questions.resolve()
    files, _, _ = collect_files(args.paths, exclude=args.exclude)
    files = [(p, s) for p, s in files if p.resolve() != question_file]  # the question set is not a document
    if not files:
        return fail(args, "no supported document", path=", ".join(map(str, args.paths)))
    with tempfile.TemporaryDirectory(prefix="chunking-eval-") as scratch:
        workdir = args.keep or Path(scratch)
        try:
            if args.generate:
                if args.questions.exists():
                    return fail(args, "exists; --generate writes a new question set", path=args.questions)
                drafted = draft_question_file(files, args.generate, strategies[0], settings=settings,
                                              workdir=workdir / "drafts", out=args.questions)
                print(f"{drafted} drafted questions written to {args.questions}: review them by hand",
                      file=sys.stderr)
            questions = load_questions(args.questions)
            results = evaluate(files, questions, strategies, settings=settings, workdir=workdir,
                               rankings=rankings, progress=lambda m: print(redact(m), file=sys.stderr))
        except (QuestionSetError, ValueError, OSError) as exc:
            return fail(args, str(exc))
    if args.json:
        print(redact(json.dumps({"questions": len(questions), "documents": len(files),
                                 "results": [r.to_dict() for r in results]}, ensure_ascii=False, indent=2)))
        return 0
    _print_table(results, len(questions), len(files))
    return 0


def _print_table(results, questions: int, documents: int) -> None:
    """The results as a table, then each failed document; a strategy's label (its settings as written, a key
    among them perhaps) with every secret masked."""
    rows = []
    for r in results:
        for name, s in r.summaries.items():
            rows.append((redact(r.strategy.label), name, f"{s.hit1:.2f}", f"{s.hit3:.2f}", f"{s.hit5:.2f}",
                         f"{s.mrr:.3f}", f"{s.ndcg10:.3f}", r.chunks, r.embedding_tokens))
    print(f"{plural(questions, 'question')} over {plural(documents, 'document')} "
          f"({results[0].embedder if results else '-'})\n")
    table(("strategy", "ranking", "hit@1", "hit@3", "hit@5", "MRR", "nDCG@10", "chunks", "emb tokens"), rows)
    for r in results:
        for failure in r.failed:
            print(redact(f"{r.strategy.label}: FAILED {failure}"))
