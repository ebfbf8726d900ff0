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

from chunking.formats import member_root
from chunking.ids import doc_id as make_doc_id
from chunking.index.protocol import IndexWriter
from chunking.ledger import UNSENT_AFTER_S, Due, Ledger, clock, due_for_repair, repair_candidates, unwanted_batches
from chunking.pipeline.backfill import why_stale
from chunking.storage.claim_check import PayloadStore
from chunking.storage.figures import FigureStore

__all__ = ["FIGURES_GRACE_S", "REPAIR_LOOKBACK_S", "BlobEvent", "ReconcileReport", "delete_document",
           "parse_blob_events", "reconcile", "repair_due", "sweep_figures"]

log = logging.getLogger("chunking.pipeline.reconcile")

#: The frequent repair sweeps by key the entries changed in the last hour (several runs, so one failed run
#: misses nothing); older drift is the daily reconcile's.
REPAIR_LOOKBACK_S = 3600
#: Figure images of a version the ledger does not want are swept by reconcile only once the newest is this many
#: seconds old: stage 1 stores a version's images before it records the version (at most ``STAGE1_MAX_SECONDS``,
#: 300 s by default, earlier), so a version in flight is never swept.
FIGURES_GRACE_S = 600


def delete_document(doc_id: str, source: str, *, index: IndexWriter, ledger: Ledger,
                    payloads: PayloadStore | None = None, namespace: str | None = None,
                    figures: FigureStore | None = None) -> int:
    """Mark *doc_id* ``deleted`` in the ledger, then remove every chunk of it from the index (all versions), its
    claim-check payloads and its figure images (in *figures*). Returns the number of keys deleted. Idempotent.

    Marked first: a stage-2 writer that records a batch after the listing below sees the document is deleted
    and removes its own keys. The keys come from the ledger's batch records (exact, whatever the index has made
    visible yet), plus whatever an index query still finds (chunks written before batch records existed): with
    *namespace*, only chunks of that namespace or of none (another deployment's chunks stay)."""
    entry = ledger.mark_deleted(doc_id, source)
    member_lists = ledger.member_lists(doc_id)  # a container's members go with it (architecture.md#containers)
    keys = {k for b in ledger.batch_records(doc_id) for k in b.keys}
    versions = {b.version for b in ledger.batch_records(doc_id)} | set(member_lists)
    keys.update(index.keys_of(doc_id, namespace))
    if keys:
        index.delete(sorted(keys))
    for version in versions:
        ledger.forget_batches(doc_id, version)
    if payloads is not None:
        payloads.delete_prefix(f"{doc_id}/")
    if figures is not None:
        figures.delete_prefix(f"{doc_id}/")
    log.info("deleted %s: %d chunks removed", source, len(keys))
    container = entry.container if entry is not None else ""
    for member in sorted(set().union(*member_lists.values())):
        delete_document(make_doc_id(container, member), member, index=index, ledger=ledger, payloads=payloads,
                        namespace=namespace, figures=figures)
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
    URLs carry the account as the first path segment), URL-decoded; the path keeps empty segments and a leading
    ``/`` exactly as the blob's name has them.

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
        # Only the account (Azurite) and the container are segments; the rest is the blob name exactly, empty
        # segments included ("dir//x.txt" and "/abs/x.txt" are names of their own).
        rest = parsed.path[1:] if parsed.path.startswith("/") else parsed.path
        if parsed.hostname in ("127.0.0.1", "localhost") and rest.startswith("devstoreaccount1/"):
            rest = rest[len("devstoreaccount1/"):]
        container_name, _, name = rest.partition("/")
        if not container_name or not name:
            raise ValueError(f"blob event url names no blob: {url}")
        events.append(BlobEvent(event_type, unquote(container_name), unquote(name)))
    return events


@dataclass
class ReconcileReport:
    """What reconcile found and did (sources by category)."""

    missing: list[str] = field(default_factory=list)  # in the container, not indexed → enqueued
    stuck: list[str] = field(default_factory=list)  # queued too long, or never sent → enqueued again
    retried: list[str] = field(default_factory=list)  # failed by a transient cause, back-off over → enqueued
    orphaned: list[str] = field(default_factory=list)  # indexed (or still in the index), no blob → deleted
    swept: list[str] = field(default_factory=list)  # "path: n" chunks of versions neither current nor indexed
    backfilled: list[str] = field(default_factory=list)  # "path: why" indexed with other settings → enqueued
    backfill_left: int = 0  # stale documents beyond this run's limit (the next runs take them)
    failed: list[str] = field(default_factory=list)  # "path: reason" of those that could not be enqueued
    checked: int = 0
    figures_swept: list[str] = field(default_factory=list)  # "doc_id/version: n" figure images of unwanted versions

    def to_dict(self) -> dict:
        return {"checked": self.checked, "missing": self.missing, "stuck": self.stuck, "retried": self.retried,
                "orphaned": self.orphaned, "swept": self.swept, "backfilled": self.backfilled,
                "backfill_left": self.backfill_left, "failed": self.failed, "figures_swept": self.figures_swept}


def reconcile(
    *,
    container: str,
    blob_paths: Iterable[str],
    index: IndexWriter,
    ledger: Ledger,
    enqueue: Callable[[str], None],
    stuck_after_seconds: int,
    unsent_after_seconds: int = UNSENT_AFTER_S,
    now: dt.datetime | None = None,
    payloads: PayloadStore | None = None,
    sweep_limit: int = 200,
    namespace: str | None = None,
    made_with: Callable[[str], str] | None = None,
    embedder: str = "",
    backfill_limit: int = 0,
    queues_idle: bool = False,
    figures: FigureStore | None = None,
    figures_grace_seconds: int = FIGURES_GRACE_S,
) -> ReconcileReport:
    """Compare the container listing, the ledger and the index, and repair every drift:

    - a blob with no ledger entry, a ``deleted`` one, or an ``indexed`` one whose chunks are not in the index →
      ``enqueue(path)`` (stage 1 again, forced);
    - an entry due for stage 1 again by ``chunking.ledger.due_for_repair`` (a ``sending`` one not updated for
      *unsent_after_seconds*; a ``queued`` or ``throttled`` one not updated for *stuck_after_seconds*, or for a
      short grace when *queues_idle* says no message is left on the queues; a ``failed`` one of a transient
      cause whose ``retry_at`` has passed) → ``enqueue(path)`` (permanent failures wait for a new upload; their
      reason is in the ledger);
    - a ledger entry of this container with no blob, or a document in the index with no blob (``deleted``
      entries included: a writer may have raced the delete) → its chunks are deleted; with *namespace* (the
      deployment's, ``chunking.pipeline.namespaces``) only the index's documents of that namespace are considered, and
      only their chunks of that namespace (or of none) are deleted: another deployment sharing the index keeps
      its documents;
    - stale chunks (``sweep``): of up to *sweep_limit* documents the index holds, in any state, the chunks of a
      version that is neither the current nor the indexed one are deleted, by the keys the ledger's batch
      records hold and by those an index query finds.

    - figure images (in *figures*) of a version the ledger does not want (``LedgerEntry.wants``: superseded,
      failed before it was ever indexed, or of a document deleted or unknown) whose newest image is older than
      *figures_grace_seconds* → deleted (``sweep_figures``; ``figures_swept``); an orphan's go with its chunks.

    - backfill: up to *backfill_limit* documents whose indexed version was made with other settings than
      the current ones (``chunking.pipeline.backfill.why_stale``: *made_with(path)* is what stage 1 would record now,
      *embedder* the current ``Embedder.name``) → ``enqueue(path)``, in path order, so every run takes new ones
      and a backlog of any size finishes; ``backfill_left`` counts the stale documents left for later runs.

    A document enqueued less than *stuck_after_seconds* ago (``requeued_at``) whose stage 1 has not begun yet is
    not enqueued again, whatever its category; an unknown document enqueued gets an entry (``queued``, without
    a version), so a second run while its job waits enqueues nothing.

    ``enqueue`` puts stage-1 work on a queue (reconcile never parses); every document enqueued is marked
    ``requeued_at`` in the ledger. An ``enqueue`` that raises is logged and listed in ``failed`` (its entry keeps
    its status, so the next reconcile tries again); the other documents go on.
    """
    now = now or clock.now()
    report = ReconcileReport()
    paths = {make_doc_id(container, p): p for p in blob_paths}
    entries = {e.doc_id: e for e in ledger.entries()}
    # A container's members (architecture.md#containers) are present while their container's blob is, and are
    # repaired by enqueueing the container.
    blobs = set(paths.values())
    roots = {did: root for did, e in entries.items()
             if did not in paths and e.container == container and not e.is_deleted
             and (root := member_root(e.source)) is not None and root in blobs}
    paths.update({did: entries[did].source for did in roots})
    enqueue = _once(enqueue, roots, paths)
    indexed = index.doc_ids(namespace)
    stale: list[tuple[str, str, str]] = []  # (did, path, why) of documents indexed with other settings
    for did, path in sorted(paths.items(), key=lambda kv: kv[1]):
        report.checked += 1
        entry = entries.get(did)
        due = Due.NOTHING if entry is None else due_for_repair(
            entry, now, stuck_after_s=stuck_after_seconds, unsent_after_s=unsent_after_seconds,
            queues_idle=queues_idle)
        if due is Due.WAITING:
            continue  # enqueued by an earlier run, and its stage 1 has not begun yet
        if entry is None or entry.is_deleted or (entry.is_indexed and did not in indexed):
            kind = report.missing
        elif due is Due.STUCK:
            kind = report.stuck
        elif due is Due.RETRY:
            kind = report.retried
        else:
            why = why_stale(entry, made_with(path), embedder) if not entry.in_flight and made_with is not None else ""
            if why:
                stale.append((did, path, why))
            continue
        if _enqueue(enqueue, ledger, did, path, now, report, container):
            kind.append(path)
    for did, path, why in stale[:backfill_limit]:
        if _enqueue(enqueue, ledger, did, path, now, report, container):
            report.backfilled.append(f"{path}: {why}")
    report.backfill_left = max(0, len(stale) - backfill_limit)
    orphans = {did: e.source for did, e in entries.items()
               if did not in paths and e.container == container and (not e.is_deleted or did in indexed)}
    # Index documents unknown to the ledger have no container recorded; with the ledger as the record of every
    # document this pipeline wrote, such a document is an orphan of this container only if the ledger lost it.
    orphans.update({did: did for did in indexed if did not in paths and did not in entries})
    for did, source in sorted(orphans.items(), key=lambda kv: kv[1]):
        delete_document(did, source, index=index, ledger=ledger, payloads=payloads, namespace=namespace,
                        figures=figures)
        report.orphaned.append(source)
    candidates = sorted(did for did in entries if did in paths and did in indexed)
    if len(candidates) > sweep_limit:  # which ones rotates with the hour: every document is swept over enough runs
        start = (int(now.timestamp()) // 3600 * sweep_limit) % len(candidates)
        candidates = (candidates[start:] + candidates[:start])[:sweep_limit]
    for did in candidates:
        _sweep(report, ledger, index, did, entries[did].source, namespace, payloads, ask_index=True)
    if figures is not None:
        report.figures_swept = sweep_figures(figures, ledger, now=now, grace_seconds=figures_grace_seconds)
    return report


def sweep_figures(figures: FigureStore, ledger: Ledger, *, now: dt.datetime | None = None,
                  grace_seconds: int = FIGURES_GRACE_S) -> list[str]:
    """Delete the figure images of every version *ledger* does not want (``LedgerEntry.wants``; a document the
    ledger does not know wants none) whose newest image was written more than *grace_seconds* before *now*;
    returns ``"<doc_id>/<version>: N"`` for each version swept. The store is listed first and each entry read
    after, so a version that became current meanwhile is spared; the grace spares one whose stage 1 stored its
    images and has not recorded it yet."""
    now = now or clock.now()
    found = figures.versions()
    swept = []
    for (did, version), written in sorted(found.items()):
        if (now - written).total_seconds() <= grace_seconds:
            continue
        entry = ledger.get(did)
        if entry is not None and entry.wants(version):
            continue
        count = figures.delete_prefix(f"{did}/{version}/")
        if count:
            swept.append(f"{did}/{version}: {count}")
            log.info("reconcile swept %d figure images of %s version %s", count, did, version[:8])
    return swept


def repair_due(
    *,
    container: str,
    index: IndexWriter,
    ledger: Ledger,
    enqueue: Callable[[str], None],
    blob_exists: Callable[[str], bool],
    stuck_after_seconds: int,
    unsent_after_seconds: int = UNSENT_AFTER_S,
    queues_idle: bool = False,
    lookback_seconds: int = REPAIR_LOOKBACK_S,
    now: dt.datetime | None = None,
    payloads: PayloadStore | None = None,
    namespace: str | None = None,
    figures: FigureStore | None = None,
) -> ReconcileReport:
    """The frequent repair (timer ``REPAIR_SCHEDULE``, every 5 minutes by default): the ledger's rows that need
    something now, and nothing else; no container listing and no index query.

    Of the entries of *container* that ``chunking.ledger.repair_candidates`` returns (on their way, failed by a
    transient cause, or changed in the last *lookback_seconds*):

    - one due for stage 1 again (``chunking.ledger.due_for_repair``, as in ``reconcile``) whose blob exists
      (``blob_exists(path)``: one request per due document) → ``enqueue(path)``, listed in ``stuck`` or
      ``retried``; whose blob is gone → its chunks are deleted (``orphaned``);
    - one not on its way: the keys its batch records hold for versions that are neither current nor indexed
      are deleted from the index, by key (``swept``): a half-written version left behind by a rejected upload,
      a poisoned batch, or a completion cut short.

    Chunks the ledger holds no keys for (a writer that died between its upsert and its batch record) are left
    to the daily ``reconcile``, which asks the index."""
    now = now or clock.now()
    report = ReconcileReport()
    for entry in repair_candidates(ledger, now, lookback_seconds):
        if entry.container and entry.container != container:
            continue
        report.checked += 1
        due = due_for_repair(entry, now, stuck_after_s=stuck_after_seconds, unsent_after_s=unsent_after_seconds,
                             queues_idle=queues_idle)
        if due in (Due.STUCK, Due.RETRY):
            if not blob_exists(entry.source):
                delete_document(entry.doc_id, entry.source, index=index, ledger=ledger, payloads=payloads,
                                namespace=namespace, figures=figures)
                report.orphaned.append(entry.source)
            elif _enqueue(enqueue, ledger, entry.doc_id, entry.source, now, report, container):
                (report.stuck if due is Due.STUCK else report.retried).append(entry.source)
        elif not entry.in_flight:
            _sweep(report, ledger, index, entry.doc_id, entry.source, namespace, payloads, ask_index=False,
                   figures=figures)
    return report


def _once(enqueue: Callable[[str], None], roots: dict[str, str], paths: dict[str, str]) -> Callable[[str], None]:
    """*enqueue* taking a member's path to its container's (``roots``: member doc id → container path), and
    enqueueing each container once per run however many of its members need it."""
    root_of = {paths[did]: root for did, root in roots.items()}
    done: set[str] = set()

    def once(path: str) -> None:
        target = root_of.get(path, path)
        if target not in done:
            enqueue(target)
            done.add(target)

    return once


def _enqueue(enqueue: Callable[[str], None], ledger: Ledger, did: str, path: str, now: dt.datetime,
             report: ReconcileReport, container: str = "") -> bool:
    """``enqueue(path)`` and mark the entry requeued; False (listed in ``failed``) if it raised."""
    try:
        enqueue(path)
    except Exception as exc:  # one document's failure must not stop the repair of the others
        log.error("reconcile could not enqueue %s: %s", path, exc)
        report.failed.append(f"{path}: {exc}")
        return False
    ledger.mark_requeued(did, path, now, container=container)
    return True


def _sweep(report: ReconcileReport, ledger: Ledger, index: IndexWriter, did: str, source: str,
           namespace: str | None, payloads: PayloadStore | None, *, ask_index: bool,
           figures: FigureStore | None = None) -> None:
    """Delete the chunks of *did* whose version the ledger does not want (``LedgerEntry.wants``): the keys of
    its unwanted batch records, and with *ask_index* the keys an index query lists (chunks written without a
    batch record). Everything is listed first and the entry read after, so a version that became current
    meanwhile (it began before it wrote anything) is read as current and spared."""
    records = unwanted_batches(ledger, did)
    listed = index.keys_of(did, namespace) if ask_index else {}
    entry = ledger.get(did)
    keys = {k for b in records for k in b.keys}
    keys.update(k for k, version in listed.items() if entry is None or not entry.wants(version))
    if keys:
        index.delete(sorted(keys))
        report.swept.append(f"{source}: {len(keys)}")
        log.info("reconcile swept %d stale chunks of %s", len(keys), source)
    for version in sorted({b.version for b in records}):
        ledger.forget_batches(did, version)
        if payloads is not None:
            payloads.delete_prefix(f"{did}/{version}/")
        if figures is not None:
            figures.delete_prefix(f"{did}/{version}/")
