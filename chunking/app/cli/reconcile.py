"""``chunking reconcile``: the reconcile timer's code, run once from the command line."""

from __future__ import annotations

import argparse
import json

from chunking.app import functions as handlers
from chunking.app.cli.output import plural
from chunking.app.cli.storage_command import on_storage

__all__ = ["add_parser", "run"]


def add_parser(sub, summary: str) -> None:
    """Add the ``reconcile`` subparser to *sub* (``argparse`` subparsers); *summary* is its line in ``--help``."""
    rec = sub.add_parser(
        "reconcile", help=summary,
        description="The reconcile timer's code: put blobs that are missing from the index, stuck, failed by a "
        "transient cause, or indexed with other settings than the current ones (at most BACKFILL_MAX_PER_RUN of "
        "these per run) on the stage-1 job queue, and delete chunks of blobs that no longer exist (only this "
        "deployment's: NAMESPACE). Nothing is parsed here. Needs the storage connection (AzureWebJobsStorage). "
        "Exits 1 when some document could not be enqueued, 2 when the storage cannot be reached.")
    rec.add_argument("--json", action="store_true", help="print the report as one JSON object")
    rec.add_argument("--due", action="store_true",
                     help="run the frequent repair timer's code instead (REPAIR_SCHEDULE): only the ledger's rows "
                     "due now, and the recorded chunks of superseded versions; no container listing")
    rec.set_defaults(func=run)


def run(args: argparse.Namespace, settings) -> int:
    """Reconcile once and print the report; 1 when some document could not be enqueued, 2 when the storage
    cannot be reached or refuses."""
    report, status = on_storage(args, settings, handlers.handle_repair if args.due else handlers.handle_reconcile)
    if report is None:
        return status
    data = report.to_dict()
    if args.json:
        print(json.dumps(data, ensure_ascii=False, indent=2))
    else:
        checked = plural(data['checked'], 'ledger row' if args.due else 'blob')
        print(f"checked {checked}: {len(data['missing'])} missing (enqueued), "
              f"{len(data['stuck'])} stuck (enqueued), {len(data['retried'])} failed by a transient cause (retried), "
              f"{len(data['orphaned'])} orphaned (deleted), {len(data['swept'])} with stray chunks (swept), "
              f"{len(data['backfilled'])} indexed with other settings (enqueued)"
              + (f", {data['backfill_left']} more left for the next runs" if data["backfill_left"] else "")
              + (f", {len(data['failed'])} could not be enqueued" if data["failed"] else "")
              + (f", figure images of {plural(len(data['figures_swept']), 'unwanted version')} deleted"
                 if data["figures_swept"] else ""))
        for kind in ("missing", "stuck", "retried", "orphaned", "swept", "backfilled", "failed", "figures_swept"):
            for source in data[kind]:
                print(f"  {kind}: {source}")
    return 1 if data["failed"] else 0
