"""``chunking status``: documents by status, and the failed ones with their reasons."""

from __future__ import annotations

import argparse
import json

from chunking.cli.output import table

__all__ = ["add_parser", "run"]


def add_parser(sub) -> None:
    """Add the ``status`` subparser to *sub* (``argparse`` subparsers)."""
    status = sub.add_parser("status", help="documents by status, and the failed ones with reasons",
                            description="Print the ledger: counts by status and every failed document with its reason.")
    status.add_argument("--json", action="store_true", help="print as one JSON object")
    status.set_defaults(func=run)


def run(args: argparse.Namespace, settings) -> int:
    """Print the ledger's counts, failures and notes; always 0. A local ledger that does not exist yet reads as
    empty and is not created."""
    from chunking.ledger import local_ledger_path, make_ledger

    present = settings.ledger_backend == "table" or local_ledger_path(settings).exists()
    entries = make_ledger(settings).entries() if present else []
    counts = {s: sum(1 for e in entries if e.status == s) for s in ("indexed", "queued", "sending", "failed", "deleted")}
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
        table(("failed source", "reason", "since"), [(e.source, e.error, e.updated_at) for e in failed])
    if noted:
        print()
        table(("source", "status", "note"), [(e.source, e.status, e.note) for e in noted])
    return 0
