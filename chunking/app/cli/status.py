"""``chunking status``: documents by status, and the failed ones with their reasons."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from chunking.app.cli.arguments import seconds
from chunking.app.cli.output import fail, plural, table
from chunking.app.cli.watch import WAITING, follow, ledger_states, states
from chunking.ids import doc_id
from chunking.ledger import document_view, local_ledger_path, summary
from chunking.parsers.pictures import pixel_counts
from chunking.pipeline.ingest import LOCAL_CONTAINER, source_name
from chunking.pipeline.figures import vision_counts
from chunking.services import (
    index_known_empty,
    index_location,
    ledger_exists,
    ledger_table,
    make_index,
    make_ledger,
)
from chunking.storage import blob_service, create_container, ensure_reachable, storage_error

__all__ = ["add_parser", "exit_status", "run"]


def add_parser(sub, summary: str) -> None:
    """Add the ``status`` subparser to *sub* (``argparse`` subparsers); *summary* is its line in ``--help``."""
    status = sub.add_parser("status", help=summary,
                            description="Print the ledger: counts by status, every failed document with its "
                            "reason, every document waiting for a retry with its last error, and any document with "
                            "a note, then, on the last line, the index's schema "
                            "version (and what the next ingest adds to it). Exits 1 when the ledger holds a failed "
                            "document, with or without --watch (then once nothing is in progress).")
    status.add_argument("--json", action="store_true", help="print as one JSON object")
    status.add_argument("--document", metavar="PATH", help="print one document as JSON (status, versions, "
                        "counts, reason, timings: what GET /api/status/document answers): PATH as `chunking ingest` "
                        "was given it (relative, ./ or absolute) for a local file, or as the blob is named in the "
                        "documents container; exits 1 when it is failed or not in the ledger")
    status.add_argument("--watch", action="store_true",
                        help="follow the documents in progress (uploaded and not yet seen by the blob trigger, "
                        "sending, queued) and print each change until all are indexed or failed, then the counts "
                        "(without storage: of the local ledger, as status counts them); exit as status would then "
                        "(1 if the ledger holds a failed document), or 1 once --timeout passed")
    status.add_argument("--interval", type=seconds(), default=2.0, metavar="S", help="--watch: seconds between polls "
                        "(default 2)")
    status.add_argument("--timeout", type=seconds(zero=True), default=900.0, metavar="S",
                        help="--watch: give up after S seconds (default 900)")
    status.set_defaults(func=run)


def run(args: argparse.Namespace, settings) -> int:
    """Print the ledger's counts, failures and notes; with ``--watch`` follow the documents in progress first.
    Returns ``exit_status`` of the ledger as it is printed (with ``--watch``: once nothing is in progress; 1 when
    ``--timeout`` came first); ``--document`` returns 1 when that document is failed or the ledger does not hold
    the path, else 0. A local ledger that does not exist yet reads as empty and is not created."""
    ensure_reachable(settings, table=ledger_table(settings))  # a ledger table only: a local ledger needs no call
    present = ledger_exists(settings)
    if args.watch:
        return _watch(args, settings, make_ledger(settings))
    if args.document:
        places = _document_places(settings, args.document)
        ledger = make_ledger(settings) if present else None
        entry = next((e for e in (ledger.get(doc_id(c, p)) for c, p in places) if e is not None), None) \
            if ledger is not None else None
        if entry is None:
            looked = " nor ".join(f"{c}/{p}" for c, p in places)
            return fail(args, f"no document {looked} in the ledger {_ledger_name(settings)}", status=1)
        print(json.dumps(document_view(entry), ensure_ascii=False, indent=2))
        return 1 if entry.is_failed else 0  # as exit_status says of the whole ledger
    entries = make_ledger(settings).entries() if present else []
    # The same answer as the status API's summary (chunking.ledger.views): throttled entries are in none of these
    # counts (nor in --watch's closing counts).
    report = summary(entries)
    counts, failed, retrying, noted = report["counts"], report["failed"], report["retrying"], report["notes"]
    schema = _schema(settings)
    if args.json:
        print(json.dumps({"counts": counts, "waiting": _waiting(settings, entries), "index": schema.to_dict(),
                          "failed": failed, "retrying": retrying, "notes": noted,
                          "local_ocr": pixel_counts("; ".join(e.note for e in entries if e.note and not e.is_deleted)),
                          "vision": vision_counts("; ".join(e.note for e in entries if e.note and not e.is_deleted))},
                         ensure_ascii=False, indent=2))
        return exit_status(report)
    waiting = _waiting(settings, entries)
    print(", ".join(f"{n} {s}" for s, n in counts.items())
          + (f"; {len(waiting)} uploaded, waiting for the blob trigger" if waiting else ""))
    pixels = pixel_counts("; ".join(e.note for e in entries if e.note and not e.is_deleted))
    if pixels["ocr_pages"] or pixels["figures_read"] or pixels["figures_skipped"]:
        skipped = ", ".join(f"{n} {reason}" for reason, n in pixels["figures_skipped"].items())
        print(f"local OCR: {plural(pixels['ocr_pages'], 'page')} and {plural(pixels['figures_read'], 'picture')} "
              f"read in the current versions" + (f"; pictures skipped: {skipped}" if skipped else ""))
    described = vision_counts("; ".join(e.note for e in entries if e.note and not e.is_deleted))
    if described["figures_described"] or described["figures_not_described"]:
        left = ", ".join(f"{n} {reason}" for reason, n in described["figures_not_described"].items())
        print(f"vision: {plural(described['figures_described'], 'figure')} described in the current versions"
              + (f"; not described: {left}" if left else ""))
    lacking = _not_in_index(settings, entries)
    if lacking:
        print(f"{lacking} indexed in the ledger but missing from the index {index_location(settings)}: "
              "`chunking ingest` writes local files again, `chunking reconcile` the container's blobs")
    if failed:
        print()
        table(("failed source", "reason", "since"), [(e["source"], e["error"], e["updated_at"]) for e in failed])
    if retrying:
        print()
        table(("retrying source", "status", "last error", "attempts"),
              [(e["source"], e["status"], e["error"], e["attempts"]) for e in retrying])
    if noted:
        print()
        table(("source", "status", "note"), [(e["source"], e["status"], e["note"]) for e in noted])
    if failed or retrying or noted:
        print()
    print(schema.describe())  # last, as the help says: the line scripts and people look for at the end
    return exit_status(report)


def exit_status(report: dict) -> int:
    """The exit status of ``status`` for the ledger *report* (``chunking.ledger.summary``), and of ``status
    --watch`` once nothing is in progress: 1 when a document is ``failed`` (its current version could not be
    indexed: docs/operations.md#document-states), else 0. A document waiting for a retry is not failed."""
    return 1 if report["failed"] else 0


def _document_places(settings, path: str) -> list[tuple[str, str]]:
    """``(container, path)`` pairs where ``status --document PATH`` looks, first match wins: the documents
    container with PATH as storage names a blob, and the local files' container (``LOCAL_CONTAINER``) with PATH
    named as ``chunking ingest`` names it (``source_name``: ``./a.md``, ``a.md`` and its absolute path are one
    document). Without a ledger table (the CLI alone) the local files come first: the documents container is
    then never written."""
    blob = (settings.documents_container, path)
    local = (LOCAL_CONTAINER, source_name(Path(path)))
    return [blob, local] if ledger_table(settings) is not None else [local, blob]


def _ledger_name(settings) -> str:
    """The ledger ``status`` read, as a user knows it: the storage table, or the local ledger's file."""
    table = ledger_table(settings)
    return f"table '{table}'" if table is not None else str(local_ledger_path(settings))


def _not_in_index(settings, entries) -> int:
    """How many ``indexed`` entries the local index holds no chunk of (its file was removed or replaced): the
    ledger and the index must describe the same documents (docs/operations.md#one-state-per-place). 0 for a
    remote index, whose queries are not asked here."""
    indexed = {e.doc_id for e in entries if e.is_indexed}
    if not indexed or settings.index_backend != "local":
        return 0
    if index_known_empty(settings):
        return len(indexed)
    index = make_index(settings)
    try:
        return len(indexed - index.doc_ids())
    finally:
        index.close()


def _schema(settings):
    """The index's ``SchemaInfo``, read without creating or migrating anything."""
    return make_index(settings).schema_info()


def _waiting(settings, entries) -> list[str]:
    """Blobs of the documents container the blob trigger has not handled yet (only with the ledger in storage,
    shared with the Functions)."""
    list_blobs = _blob_lister(settings)
    if list_blobs is None:
        return []
    return sorted(d.source for d in states(list_blobs(), entries, settings.documents_container).values()
                  if d.state == WAITING)


def _watch(args: argparse.Namespace, settings, ledger) -> int:
    list_blobs = _blob_lister(settings)
    if list_blobs is None:
        print("(no storage configured: following the local ledger only; set AzureWebJobsStorage or use "
              "local.settings.json to follow the documents container)")

    def poll():
        if list_blobs is None:  # every ledger entry, so the closing counts agree with `chunking status`
            return ledger_states(ledger.entries())
        return states(list_blobs(), ledger.entries(), settings.documents_container)

    settled = follow(poll, interval=args.interval, timeout=args.timeout, out=lambda line: print(line, flush=True))
    # Once nothing is in progress: what `status` would exit with now, whether the failed documents were followed
    # in progress or had failed before the first poll (a fast failure the first poll saw already).
    return exit_status(summary(ledger.entries())) if settled == 0 else 1


def _blob_lister(settings):
    """``() -> [(path, last_modified)]`` of the documents container, or None when the ledger is not in storage
    (the CLI alone, with nothing shared with the Functions)."""
    if ledger_table(settings) is None:
        return None
    from azure.core.exceptions import AzureError

    container = blob_service(settings).get_container_client(settings.documents_container)
    create_container(container)

    def list_blobs():
        try:
            return [(b.name, b.last_modified) for b in container.list_blobs()]
        except AzureError as exc:
            raise storage_error(exc, container, f"container '{settings.documents_container}'") from None

    return list_blobs
