"""``chunking reconcile``: the reconcile timer's code, run once from the command line."""

from __future__ import annotations

import argparse
import json

from chunking.cli.output import fail, plural

__all__ = ["add_parser", "run"]


def add_parser(sub) -> None:
    """Add the ``reconcile`` subparser to *sub* (``argparse`` subparsers)."""
    rec = sub.add_parser(
        "reconcile", help="repair drift between the documents container, the ledger and the index",
        description="The reconcile timer's code: enqueue blobs that are missing from the index or stuck, delete "
        "chunks of blobs that no longer exist. Needs the storage connection (AzureWebJobsStorage).")
    rec.add_argument("--json", action="store_true", help="print the report as one JSON object")
    rec.set_defaults(func=run)


def run(args: argparse.Namespace, settings) -> int:
    """Reconcile once and print the report; 1 when some document could not be enqueued, 2 when the storage
    cannot be reached or refuses."""
    from azure.core.exceptions import AzureError

    from chunking import handlers
    from chunking.storage import StorageError, ensure_reachable

    try:
        ensure_reachable(settings, container=settings.documents_container,
                         table=settings.ledger_table if settings.ledger_backend == "table" else None)
        report = handlers.handle_reconcile()
    except (StorageError, ValueError) as exc:
        return fail(args, str(exc))
    except AzureError as exc:
        return fail(args, f"{type(exc).__name__}: {str(exc).splitlines()[0]}")
    data = report.to_dict()
    if args.json:
        print(json.dumps(data, ensure_ascii=False, indent=2))
    else:
        print(f"checked {plural(data['checked'], 'blob')}: {len(data['missing'])} missing (enqueued), "
              f"{len(data['stuck'])} stuck (enqueued), {len(data['retried'])} failed by a transient cause (retried), "
              f"{len(data['orphaned'])} orphaned (deleted), {len(data['swept'])} with stray chunks (swept)"
              + (f", {len(data['failed'])} could not be enqueued" if data["failed"] else ""))
        for kind in ("missing", "stuck", "retried", "orphaned", "swept", "failed"):
            for source in data[kind]:
                print(f"  {kind}: {source}")
    return 1 if data["failed"] else 0
