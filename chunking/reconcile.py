"""Deletes and repair: remove a deleted source's chunks, and reconcile container, ledger and index.

The blob trigger never fires on delete (docs/architecture.md#platform-facts-and-their-sources), so deletes arrive as
Event Grid ``Microsoft.Storage.BlobDeleted`` events on a storage queue; a periodic reconcile is the safety net for
events that were lost, and for any other drift between what is in the container and what is searchable.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from dataclasses import dataclass, field
from typing import Callable, Iterable
from urllib.parse import unquote, urlparse

from chunking.ids import doc_id as make_doc_id
from chunking.index.protocol import SearchIndex
from chunking.ledger import Ledger

__all__ = ["BlobEvent", "ReconcileReport", "delete_document", "parse_blob_events", "reconcile"]

log = logging.getLogger("chunking.reconcile")


def delete_document(doc_id: str, source: str, *, index: SearchIndex, ledger: Ledger) -> int:
    """Remove every chunk of *doc_id* from the index (all versions), then mark it ``deleted`` in the ledger.
    Returns the number of chunks removed. Idempotent."""
    keys = list(index.keys_of(doc_id))
    if keys:
        index.delete(keys)
    ledger.mark_deleted(doc_id, source)
    log.info("deleted %s: %d chunks removed", source, len(keys))
    return len(keys)


@dataclass(frozen=True)
class BlobEvent:
    """One storage event: its type (e.g. ``Microsoft.Storage.BlobDeleted``), container and blob path."""

    event_type: str
    container: str
    path: str


def parse_blob_events(body: str | bytes) -> list[BlobEvent]:
    """Storage events from one queue message: an Event Grid event, a CloudEvent, or a JSON list of either.

    The blob is named by ``data.url`` (``https://<account>.blob.core.windows.net/<container>/<path>``; Azurite
    URLs carry the account as the first path segment), URL-decoded.

    Raises:
        ValueError: the body is not JSON or holds no recognisable event.
    """
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"blob event is not JSON: {exc}") from None
    items = data if isinstance(data, list) else [data]
    events = []
    for item in items:
        if not isinstance(item, dict):
            raise ValueError("blob event is not a JSON object")
        event_type = item.get("eventType") or item.get("type") or ""
        url = (item.get("data") or {}).get("url") or ""
        if not event_type or not url:
            raise ValueError("blob event lacks eventType/type or data.url")
        parsed = urlparse(url)
        parts = [unquote(p) for p in parsed.path.split("/") if p != ""]
        if parsed.hostname in ("127.0.0.1", "localhost") and parts and parts[0] == "devstoreaccount1":
            parts = parts[1:]
        if len(parts) < 2:
            raise ValueError(f"blob event url names no blob: {url}")
        events.append(BlobEvent(event_type, parts[0], "/".join(parts[1:])))
    return events


@dataclass
class ReconcileReport:
    """What reconcile found and did (sources by category)."""

    missing: list[str] = field(default_factory=list)  # in the container, not indexed → enqueued
    stuck: list[str] = field(default_factory=list)  # queued too long, or never sent → enqueued again
    orphaned: list[str] = field(default_factory=list)  # indexed, no longer in the container → deleted
    failed: list[str] = field(default_factory=list)  # "path: reason" of those that could not be enqueued
    checked: int = 0

    def to_dict(self) -> dict:
        return {"checked": self.checked, "missing": self.missing, "stuck": self.stuck, "orphaned": self.orphaned,
                "failed": self.failed}


def reconcile(
    *,
    container: str,
    blob_paths: Iterable[str],
    index: SearchIndex,
    ledger: Ledger,
    enqueue: Callable[[str], None],
    stuck_after_seconds: int,
    unsent_after_seconds: int = 300,
    now: dt.datetime | None = None,
) -> ReconcileReport:
    """Compare the container listing, the ledger and the index, and repair every drift:

    - a blob with no ledger entry, a ``deleted`` one, or an ``indexed`` one whose chunks are not in the index →
      ``enqueue(path)`` (stage 1 again, forced);
    - a ``queued`` entry not updated for *stuck_after_seconds* → ``enqueue(path)``;
    - a ``sending`` entry not updated for *unsent_after_seconds* (its sender failed or died before every batch
      was on the queue) → ``enqueue(path)``;
    - a ledger entry of this container, or a document in the index, with no blob → its chunks are deleted.

    ``failed`` entries are left alone: they wait for a new upload (their reason is in the ledger). An
    ``enqueue`` that raises is logged and listed in ``failed`` (its entry keeps its status, so the next reconcile
    tries again); the other documents go on.
    """
    now = now or dt.datetime.now(dt.timezone.utc)
    report = ReconcileReport()
    paths = {make_doc_id(container, p): p for p in blob_paths}
    entries = {e.doc_id: e for e in ledger.entries()}
    indexed = index.doc_ids()
    for did, path in sorted(paths.items(), key=lambda kv: kv[1]):
        report.checked += 1
        entry = entries.get(did)
        if entry is None or entry.status == "deleted" or (entry.status == "indexed" and did not in indexed):
            kind = report.missing
        elif entry.status in ("queued", "sending"):
            age = (now - dt.datetime.fromisoformat(entry.updated_at)).total_seconds()
            limit = stuck_after_seconds if entry.status == "queued" else unsent_after_seconds
            if age <= limit:
                continue
            kind = report.stuck
        else:
            continue
        try:
            enqueue(path)
        except Exception as exc:  # one document's failure must not stop the repair of the others
            log.error("reconcile could not enqueue %s: %s", path, exc)
            report.failed.append(f"{path}: {exc}")
            continue
        kind.append(path)
    orphans = {did: e.source for did, e in entries.items()
               if did not in paths and e.container == container and e.status != "deleted"}
    # Index documents unknown to the ledger have no container recorded; with the ledger as the record of every
    # document this pipeline wrote, such a document is an orphan of this container only if the ledger lost it.
    orphans.update({did: did for did in indexed if did not in paths and did not in entries})
    for did, source in sorted(orphans.items(), key=lambda kv: kv[1]):
        delete_document(did, source, index=index, ledger=ledger)
        report.orphaned.append(source)
    return report
