"""``chunking ingest PATH…``: parse, split, embed and index files or folders, then print the summary."""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

from chunking.app.cli.arguments import metadata_item, metadata_refusal
from chunking.app.cli.output import fail, plural, table
from chunking.documents.splitter import check_splitters
from chunking.pipeline.ingest import collect_files, ingest_files, missing_reason
from chunking.services import index_location, ledger_table, make_embedder, make_index, make_ledger
from chunking.storage import ensure_reachable

__all__ = ["add_parser", "run"]


def add_parser(sub, summary: str) -> None:
    """Add the ``ingest`` subparser to *sub* (``argparse`` subparsers); *summary* is its line in ``--help``."""
    ingest = sub.add_parser(
        "ingest",
        help=summary,
        description="Parse, split, embed and index files (folders are searched recursively, hidden files and "
        "files of unsupported types passed over). Runs stage 1 (parse + split) and stage 2 (embed + upsert) "
        "in-process. Exits 1 when a document failed or no supported file was found, 2 on bad usage.",
    )
    ingest.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="a file or a folder")
    ingest.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    ingest.add_argument(
        "--cleanup", choices=("none", "incremental", "full", "scoped_full"), default="incremental",
        help="what else to delete: none = nothing, not even old versions of changed files; incremental (default) "
        "= old versions of changed files; full = also every previously ingested file not in this run; "
        "scoped_full = also files under the given folders that are no longer there. full and scoped_full also "
        "remove any old version still indexed for the files they keep")
    ingest.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                        help="pass over files of the folders whose path (relative to the folder) or name matches "
                        "GLOB, e.g. --exclude SOURCES.md --exclude 'drafts/*' (repeatable)")
    ingest.add_argument("--allow-empty-full", action="store_true",
                        help="let --cleanup full delete everything when the run has no files")
    ingest.add_argument("--metadata", action="append", default=[], metavar="NAME=VALUE", type=metadata_item,
                        help="metadata of every file of this run, as blob metadata would be: the names of "
                        "METADATA_FIELDS become index fields, acl_users / acl_groups (comma-separated ids) the "
                        "access lists; any other name, a name given twice, an empty value or one that is not "
                        "printable ASCII (blob metadata travels as HTTP headers) is refused (exit status 2), e.g. "
                        "--metadata category=policy --metadata acl_groups=hr,finance. It applies to this run "
                        "only: a later ingest of the same files without it clears those fields and access lists "
                        "(as uploading a blob again without its metadata would); repeat it to keep them")
    ingest.set_defaults(func=run)


def run(args: argparse.Namespace, settings) -> int:
    """Ingest ``args.paths``; 0 when every document went in, 1 when one failed or there was none to ingest, 2 on
    bad paths or options."""
    missing = next((p for p in args.paths if not p.exists()), None)
    if missing is not None:
        return fail(args, missing_reason(missing), path=missing)
    refused = metadata_refusal(args.metadata, settings.metadata)  # the same check as upload's
    if refused:
        return fail(args, refused)
    try:
        check_splitters(settings)  # else every file of that extension would fail, as "crashed: ValueError: …"
    except ValueError as exc:
        return fail(args, f"SPLITTERS: {exc}")
    files, scopes, ignored = collect_files(args.paths, exclude=args.exclude)
    deleting = args.cleanup == "scoped_full" or (args.cleanup == "full" and args.allow_empty_full)
    if not files and args.cleanup == "full" and not args.allow_empty_full:
        return fail(args, "--cleanup full over a run with no documents would delete every document; pass "
                    "--allow-empty-full if that is what you want")
    if not files and not deleting:  # nothing to do: say why, and leave the state folder untouched
        where = ", ".join(str(p) for p in args.paths)
        passed = f" ({plural(len(ignored), 'file')} of unsupported types passed over)" if ignored else ""
        return fail(args, f"no supported file{passed}", path=where, status=1)
    # A ledger table (e.g. from local.settings.json): fail fast if Azurite is not running; a local ledger: no call.
    ensure_reachable(settings, table=ledger_table(settings))
    index = make_index(settings)
    index.ensure()
    stage_logs = [logging.getLogger(f"chunking.pipeline.{stage}") for stage in ("stage_one", "stage_two")]
    members_log = logging.getLogger("chunking.pipeline.members")  # its warnings (members not read) stay
    levels = [stage_log.level for stage_log in stage_logs]
    if not args.verbose:  # failures, members' too, are reported below, once, in the CLI's own style
        for stage_log in stage_logs:
            stage_log.setLevel(logging.CRITICAL)
        members_log.addFilter(_below_error)
    bar = _Progress()
    try:
        summary = ingest_files(
            files, settings=settings, embedder=make_embedder(settings), index=index, ledger=make_ledger(settings),
            cleanup=args.cleanup, scopes=scopes, allow_empty_full=args.allow_empty_full,
            progress=bar.wrap, metadata=dict(args.metadata), on_member=bar.member,
        )
    except ValueError as exc:
        return fail(args, str(exc))
    finally:
        for stage_log, level in zip(stage_logs, levels):
            stage_log.setLevel(level)
        members_log.removeFilter(_below_error)
    summary.ignored = ignored
    totals = summary.to_dict()
    if args.json:
        print(json.dumps(totals, ensure_ascii=False, indent=2))
    else:
        _print_summary(summary, totals, settings)
    for row in summary.rows:
        if row.outcome == "failed":
            fail(args, row.error or "failed", path=row.source)
    if summary.stopped:  # a service is unreachable or refuses the credentials: the run stopped there
        return fail(args, f"stopped: {summary.stopped}")
    return 1 if totals["failed"] else 0


class _Progress:
    """The progress bar on a terminal (none otherwise): files done, and within a mail or an archive the members
    read so far and the last one's name, redrawn at most every 0.2 s."""

    def __init__(self) -> None:
        self.bar = None
        self.members = 0
        self.drawn = 0.0

    def wrap(self, files):
        from tqdm import tqdm

        self.bar = tqdm(files, desc="ingest", unit="file", disable=None, file=sys.stderr)
        return self.bar

    def member(self, source: str) -> None:
        self.members += 1
        now = time.monotonic()
        if self.bar is not None and not self.bar.disable and now - self.drawn >= 0.2:
            self.drawn = now
            self.bar.set_postfix_str(f"{self.members} members read: {source[-60:]}")


def _below_error(record: logging.LogRecord) -> bool:
    """A logging filter: a member's refusal (an error record) is left to the summary's failure lines."""
    return record.levelno < logging.ERROR


def _counts(row) -> tuple:
    """A row's pages, chunks, largest chunk and tokens as the table shows them, the way TOTAL counts them: a
    skipped document was not parsed this run (its chunks are its indexed version's; its pages, largest chunk and
    tokens were not counted: "-"), and a failed one counts in no total ("-")."""
    if row.outcome == "failed":
        return "-", "-", "-", "-"
    if row.outcome == "skipped":
        return "-", row.chunks, "-", "-"
    return row.pages, row.chunks, row.max_tokens, row.tokens


def _print_summary(summary, totals: dict, settings) -> None:
    rows = [(r.source, *_counts(r), r.embedding_tokens, f"{r.stage1_seconds:.2f}", f"{r.stage2_seconds:.2f}",
             f"FAILED: {r.error}" if r.outcome == "failed"
             else "skipped, fields updated" if r.fields_updated else r.outcome)
            for r in summary.rows]
    rows.append(("TOTAL", totals["pages"], totals["chunks"], "", totals["tokens"], totals["embedding_tokens"],
                 f"{sum(r.stage1_seconds for r in summary.rows):.2f}",
                 f"{sum(r.stage2_seconds for r in summary.rows):.2f}", ""))
    table(("source", "pages", "chunks", "max tok", "tokens", "emb tok", "stage1 s", "stage2 s", "result"), rows)
    where = index_location(settings)
    print(f"\n{totals['added']} added, {totals['updated']} updated, {totals['skipped']} unchanged (skipped), "
          f"{totals['deleted']} deleted, {totals['failed']} failed; "
          f"{plural(totals['embedding_tokens'], 'embedding token')} in "
          f"{plural(totals['embedding_requests'], 'request')} ({settings.embedding_backend}) -> {where}; "
          f"{summary.seconds:.1f} s")
    if totals["ocr_pages"] or totals["figures_read"] or totals["figures_skipped"]:
        skipped = ", ".join(f"{n} {reason}" for reason, n in totals["figures_skipped"].items())
        print(f"local OCR: {plural(totals['ocr_pages'], 'page')} read, "
              f"{plural(totals['figures_read'], 'picture')} read in documents"
              + (f", pictures skipped: {skipped}" if skipped else ""))
    if totals["figures_described"] or totals["figures_not_described"]:
        left = ", ".join(f"{n} {reason}" for reason, n in totals["figures_not_described"].items())
        print(f"vision: {plural(totals['figures_described'], 'figure')} described"
              + (f", not described: {left}" if left else ""))
    if totals["fields_updated"]:
        print(f"new metadata or access lists: the fields of "
              f"{plural(sum(r.fields_updated for r in summary.rows), 'chunk')} of "
              f"{plural(totals['fields_updated'], 'unchanged document')} updated in place, nothing embedded")
    if summary.pruned:
        print(f"{plural(sum(summary.pruned.values()), 'chunk')} of old versions deleted from "
              f"{plural(len(summary.pruned), 'document')}")
    if summary.ignored:
        print(f"{plural(len(summary.ignored), 'file')} of unsupported types passed over: "
              f"{', '.join(summary.ignored[:5])}{' …' if len(summary.ignored) > 5 else ''}")
    if summary.uploaded:
        print(f"{plural(len(summary.uploaded), 'file')} also uploaded to the documents container "
              f"'{settings.documents_container}' (the Functions index {'it' if len(summary.uploaded) == 1 else 'them'}"
              f"), not ingested a second time: {', '.join(summary.uploaded[:3])}"
              f"{' …' if len(summary.uploaded) > 3 else ''}")
    if summary.vanished:
        print(f"{plural(len(summary.vanished), 'indexed file')} no longer found under "
              f"{', '.join(sorted({s.rsplit('/', 1)[0] + '/' if '/' in s else './' for s in summary.vanished}))} "
              f"({', '.join(summary.vanished[:3])}{' …' if len(summary.vanished) > 3 else ''}) "
              f"{'is' if len(summary.vanished) == 1 else 'are'} still searchable; "
              f"run again with --cleanup scoped_full to delete {'it' if len(summary.vanished) == 1 else 'them'}")
