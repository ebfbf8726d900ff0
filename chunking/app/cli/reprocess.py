"""``chunking reprocess [--all | --prefix P]``: put documents on the stage-1 job queue on demand."""

from __future__ import annotations

import argparse
import json
import sys

from chunking.app import functions as handlers
from chunking.app.cli.output import plural
from chunking.app.cli.storage_command import on_storage

__all__ = ["add_parser", "run"]


def add_parser(sub, summary: str) -> None:
    """Add the ``reprocess`` subparser to *sub* (``argparse`` subparsers); *summary* is its line in ``--help``."""
    rep = sub.add_parser(
        "reprocess", help=summary,
        description="Put documents of the documents container on the stage-1 job queue, forced, so the "
        "queue-triggered stage 1 parses, splits and indexes them again with the current settings. By default the "
        "documents whose indexed version was made with other settings than the current ones (splitter settings, "
        "namespace, embedding model or dimensions): what reconcile's backfill takes BACKFILL_MAX_PER_RUN at a time, "
        "here all at once. Nothing is parsed by this command; follow the work with `chunking status --watch`. "
        "Needs the storage connection (AzureWebJobsStorage). Exits 1 when some document could not be enqueued, "
        "2 when the storage cannot be reached.")
    which = rep.add_mutually_exclusive_group()
    which.add_argument("--all", action="store_true", dest="every",
                       help="every blob of the container, whatever its settings (e.g. once after upgrading, so "
                       "that documents indexed before settings were recorded get them)")
    which.add_argument("--prefix", metavar="P", default=None,
                       help="every blob whose name starts with P (a virtual folder: manuals/)")
    rep.add_argument("--dry-run", action="store_true", help="list what would be enqueued; enqueue nothing")
    rep.add_argument("--json", action="store_true", help="print the report as one JSON object")
    rep.set_defaults(func=run)


def run(args: argparse.Namespace, settings) -> int:
    """Select, enqueue and report; 1 when some document could not be enqueued, 2 when the storage cannot be
    reached or refuses."""
    bar = _Progress()

    def work():
        return handlers.handle_reprocess(every=args.every, prefix=args.prefix, dry_run=args.dry_run,
                                         progress=bar.update, total=bar.reset)

    report, status = on_storage(args, settings, work)
    bar.close()
    if report is None:
        return status
    data = report.to_dict()
    if args.json:
        print(json.dumps(data, ensure_ascii=False, indent=2))
    else:
        verb = "would enqueue" if args.dry_run else "enqueued"
        count = len(data["selected"]) if args.dry_run else len(data["enqueued"])
        print(f"checked {plural(data['checked'], 'blob')}: {verb} {plural(count, 'document')}"
              + (f", {len(data['failed'])} could not be enqueued" if data["failed"] else ""))
        for line in data["selected"]:
            print(f"  {line}")
        for line in data["failed"]:
            print(f"  failed: {line}")
    return 1 if data["failed"] else 0


class _Progress:
    """A tqdm bar on stderr (silent when stderr is not a terminal) that learns its total late."""

    def __init__(self) -> None:
        from tqdm import tqdm

        self._bar = tqdm(total=0, desc="reprocess", unit="doc", disable=None, file=sys.stderr)

    def reset(self, total: int) -> None:
        self._bar.reset(total=total)

    def update(self, n: int) -> None:
        self._bar.update(n)

    def close(self) -> None:
        self._bar.close()
