"""The ledger's data and its state transitions: a document's entry (``LedgerEntry``, ``Status``), the batch
records stage 2 writes (``BatchRecord``), the interface of the stores (``LedgerStore``: ``sqlite_store`` and
``table_store`` implement it), and ``Ledger``, whose every change is a read-modify-write loop over a store's
conditional write, so concurrent stage-1 and stage-2 invocations, reconcile and the CLI never lose an update.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import logging
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Literal, Protocol, get_args

from chunking import telemetry
from chunking.redact import redact

log = logging.getLogger("chunking.ledger")

__all__ = ["DELETED", "EVENT_STATUSES", "FAILED", "INDEXED", "IN_FLIGHT", "MAX_TRANSIENT_FAILURES", "PERMANENT",
           "QUEUED", "RETRY_BASE_S", "RETRY_CAP_S", "SENDING", "STATUSES", "THROTTLED", "TRANSIENT", "BatchRecord",
           "Clock", "Ledger", "LedgerEntry", "LedgerStore", "Status", "clock", "count_statuses", "status_counts"]

# The statuses of an entry (see ``LedgerEntry.status``), named once: everything outside this package asks an
# entry's predicates (``is_indexed``, ``in_flight`` …) or uses these names, never a string of its own.
Status = Literal["sending", "queued", "throttled", "indexed", "failed", "deleted"]
STATUSES: tuple[Status, ...] = get_args(Status)
SENDING, QUEUED, THROTTLED, INDEXED, FAILED, DELETED = STATUSES
# A version whose batches are on their way to stage 2 (being sent, on the queue, or deferred by throttling).
IN_FLIGHT: tuple[Status, ...] = (SENDING, QUEUED, THROTTLED)
_MAX_ERROR_CHARS = 2000
# The kinds of a failure (``LedgerEntry.failure``; ``chunking.errors`` decides which an exception is).
TRANSIENT, PERMANENT = "transient", "permanent"
# The repair retries a version failed by a transient cause after RETRY_BASE_S · 2^(failures - 1), at most
# RETRY_CAP_S: with the repair timer every 5 minutes (REPAIR_SCHEDULE) a failure whose cause has ended is
# retried within RETRY_CAP_S + 5 minutes = 13 minutes, however long the outage lasted
# (docs/operations.md#healing-time). After MAX_TRANSIENT_FAILURES failures of one version, about a day of
# failing retries at the cap, it gives up (the failure becomes permanent).
RETRY_BASE_S = 60
RETRY_CAP_S = 8 * 60
MAX_TRANSIENT_FAILURES = 180


class Clock:
    """The time (UTC) the ledger writes into its entries and the repair compares them with: the system clock,
    moved by ``offset_s`` seconds (0 in a deployment; tests move it to simulate minutes and hours passing)."""

    offset_s: float = 0.0

    def now(self) -> dt.datetime:
        return dt.datetime.now(dt.timezone.utc) + dt.timedelta(seconds=self.offset_s)


#: The one clock of the ledger and of the repair (``chunking.pipeline.reconcile``).
clock = Clock()


def _now() -> str:
    return clock.now().isoformat(timespec="seconds")


@dataclass(frozen=True)
class LedgerEntry:
    """One document's state.

    Attributes:
        doc_id, source, container: the document id, its path, and the container (namespace) holding it.
        version: the current version (the newest one stage 1 accepted or rejected).
        status: ``sending`` (``version`` is split, its batches are being sent to the queue), ``queued`` (they were
            sent and are on their way), ``throttled`` (a batch was deferred by a 429/503; ``retry_at`` says
            when it is tried again), ``indexed`` (``version`` fully in the index),
            ``failed`` (``version`` could not be parsed or indexed; ``error`` says why), ``deleted``.
        indexed_version: the version fully in the index (may differ from ``version`` while a new one is queued
            or after it failed: the previous good version stays searchable).
        chunk_count, batch_count: of ``version``.
        error: reason of the last failure ('' if none); attempts: failed attempts on ``version``.
        created_at, updated_at: ISO 8601 UTC timestamps.
        note: what is worth knowing about ``version`` although it did not fail, e.g. ``"fallback: <reason>"``
            when a model-based strategy fell back to its deterministic splitter ('' if nothing).
        failure: the kind of the last error, ``transient`` or ``permanent`` ('' if none); failures: how many
            times ``version`` was marked ``failed``; retry_at: when reconcile retries a transient failure
            (ISO 8601 UTC, '' if it does not).
        fields_hash: ``DocumentFields.source_hash`` of the fields the index holds for ``version`` (its storage URL,
            metadata and access lists), so a change of those alone is applied without a new version ('' if
            unknown).
        indexed_embedder: the embedder (``Embedder.name``: model and dimensions) whose vectors
            ``indexed_version`` holds ('' if unknown: indexed before this was recorded).
        made_with, indexed_made_with: the stage-1 settings that made ``version`` and ``indexed_version``
            (``chunking.pipeline.backfill.stage_one_settings``: splitter fingerprint and namespace; '' if not recorded).
        requeued_at: when reconcile (or a command like it) last put the document back to stage 1
            ('' if never since its version began), so a backlog is not enqueued twice.
        event: the completion event not yet published ('' if none): JSON of ``{"id", "status", "version",
            "reason", "at"}``, written by the same conditional write as the transition to ``indexed``, ``failed``
            or ``deleted`` that makes it (``Ledger``, docs/events.md), cleared once published.
    """

    doc_id: str
    source: str
    container: str = ""
    version: str = ""
    status: Status = QUEUED
    indexed_version: str = ""
    chunk_count: int = 0
    batch_count: int = 0
    error: str = ""
    attempts: int = 0
    created_at: str = ""
    updated_at: str = ""
    note: str = ""
    failure: str = ""
    failures: int = 0
    retry_at: str = ""
    fields_hash: str = ""
    indexed_embedder: str = ""
    made_with: str = ""
    indexed_made_with: str = ""
    requeued_at: str = ""
    event: str = ""

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    # Predicates on the status: the only way code outside the ledger asks what state a document is in.

    @property
    def is_sending(self) -> bool:
        """``version``'s batches are being sent to the queue (stage 1 has not confirmed them yet)."""
        return self.status == SENDING

    @property
    def is_queued(self) -> bool:
        """``version``'s batches were sent and are on their way to stage 2."""
        return self.status == QUEUED

    @property
    def is_throttled(self) -> bool:
        """A batch of ``version`` was deferred by throttling until ``retry_at``."""
        return self.status == THROTTLED

    @property
    def in_flight(self) -> bool:
        """``version`` is on its way to stage 2: ``sending``, ``queued`` or ``throttled``."""
        return self.status in IN_FLIGHT

    @property
    def is_indexed(self) -> bool:
        """``version`` is fully in the index (then ``indexed_version == version``)."""
        return self.status == INDEXED

    @property
    def is_failed(self) -> bool:
        """``version`` failed (``error`` says why, ``failure`` whether reconcile retries it)."""
        return self.status == FAILED

    @property
    def is_deleted(self) -> bool:
        """The source is gone and its chunks were removed."""
        return self.status == DELETED

    @property
    def awaits_retry(self) -> bool:
        """``version`` failed by a transient cause and reconcile retries it at ``retry_at``."""
        return self.is_failed and self.failure == TRANSIENT and bool(self.retry_at)

    def is_current(self, version: str) -> bool:
        """*version* is the current version of a document that is not deleted."""
        return self.version == version and not self.is_deleted

    def has_indexed(self, version: str) -> bool:
        """*version* is the indexed version of a document that is not deleted (its chunks stay searchable)."""
        return self.indexed_version == version and not self.is_deleted

    def is_abandoned(self, version: str) -> bool:
        """Stage 1 gave up on *version* (current, ``failed``) before recording its batch count, after sending some
        of its batches: it can never complete."""
        return self.version == version and self.is_failed and self.batch_count == 0

    def wants(self, version: str) -> bool:
        """May chunks of *version* stay in the index? Yes for the current version (unless abandoned by stage 1)
        and for the indexed one, of a document that is not deleted; every other version's chunks are removed."""
        return (not self.is_deleted and version in (self.version, self.indexed_version)
                and not self.is_abandoned(version))


@dataclass(frozen=True)
class BatchRecord:
    """One batch of a version that stage 2 wrote to the index: the keys it wrote (so that the version's chunks
    can be deleted by key, without asking the index which keys it holds), and for reusing their vectors by key
    lookups: ``hashes[i]``, the hash of the text ``keys[i]``'s vector was computed from ('' for a record stored
    without one), and ``embedder``, the ``Embedder.name`` that computed them ('' if not recorded)."""

    doc_id: str
    version: str
    batch_no: int
    keys: tuple[str, ...] = ()
    hashes: tuple[str, ...] = ()
    embedder: str = ""


class LedgerStore(Protocol):
    """Entries with optimistic concurrency: ``write`` succeeds only if the entry's tag is still *tag*
    (``None`` = the entry must not exist yet). Batch records are written once (``add_batch`` is an insert that
    a duplicate loses) and removed per version."""

    def read(self, doc_id: str) -> tuple[LedgerEntry | None, object]: ...

    def write(self, entry: LedgerEntry, tag: object) -> bool: ...

    def entries(self) -> Iterator[LedgerEntry]: ...

    def add_batch(self, record: BatchRecord) -> bool: ...

    def batches(self, doc_id: str, version: str | None = None) -> list[BatchRecord]: ...

    def remove_batches(self, doc_id: str, version: str) -> None: ...


#: Batch numbers from this one down hold the member lists of a container's versions (``Ledger.record_members``);
#: page ranges use -1, -2, … (``Ledger.record_range``), far above.
MEMBERS_BATCH_NO = -1_000_000
_MEMBERS_PER_RECORD = 200


class Ledger:
    """Document state transitions over a ``LedgerStore``. Every method is safe under concurrent callers.

    Completion events (docs/events.md): a write that moves a document's (version, status) to ``indexed``,
    ``failed`` or ``deleted`` records the event in the entry itself (``LedgerEntry.event``), in the same
    conditional write, so exactly one writer makes each transition and its event, however often a trigger
    delivers. That writer then hands the entry to *publish* (``chunking.messages.events``) and clears the event;
    if publishing fails the event stays and ``publish_pending`` (reconcile) sends it again: at least once, under
    one id per transition.
    """

    def __init__(self, store: LedgerStore, publish: Callable[[LedgerEntry], None] | None = None) -> None:
        self.store = store
        self.publish = publish

    def get(self, doc_id: str) -> LedgerEntry | None:
        return self.store.read(doc_id)[0]

    def entries(self) -> list[LedgerEntry]:
        return list(self.store.entries())

    def _change(self, doc_id: str, source: str, fn: Callable[[LedgerEntry], LedgerEntry | None]) -> LedgerEntry | None:
        """Apply *fn* to the current entry (a fresh one if none) until the conditional write wins; *fn* returns
        ``None`` to leave the entry unchanged."""
        for _ in range(50):
            entry, tag = self.store.read(doc_id)
            base = entry or LedgerEntry(doc_id=doc_id, source=source, created_at=_now())
            new = fn(base)
            if new is None:
                return entry
            new = _with_event(entry, dataclasses.replace(new, updated_at=_now()))
            if self.store.write(new, tag):
                if new.event and new.event != base.event:  # this write made the transition
                    telemetry.record("chunking.documents", 1, outcome=new.status)
                    new = self._publish(new)
                return new
        raise RuntimeError(f"ledger entry {doc_id} ({source}) kept changing under concurrent writers")

    def _publish(self, entry: LedgerEntry) -> LedgerEntry:
        """Publish *entry*'s pending event and clear it; on failure (logged, redacted) it stays pending. Without a
        publisher nothing happens. Returns the entry as it is now."""
        if self.publish is None or not entry.event:
            return entry
        try:
            self.publish(entry)
        except Exception as exc:  # the transition stands; reconcile publishes the event again
            log.warning("completion event of %s not published yet: %s", entry.source,
                        redact(f"{type(exc).__name__}: {exc}")[:300])
            return entry
        sent = entry.event
        cleared = self._change(entry.doc_id, entry.source,
                               lambda e: dataclasses.replace(e, event="") if e.event == sent else None)
        return cleared or entry

    def publish_pending(self) -> int:
        """Publish every event still pending (one whose publishing failed, or made without a publisher);
        returns how many were published."""
        done = 0
        for entry in self.store.entries():
            if entry.event and self.publish is not None and not self._publish(entry).event:
                done += 1
        return done

    def begin_version(self, doc_id: str, source: str, version: str, chunk_count: int, batch_count: int,
                      container: str = "", note: str = "", status: Status = QUEUED,
                      fields_hash: str = "", made_with: str = "") -> LedgerEntry:
        """Stage 1 accepted *version*, made with the stage-1 settings *made_with* (``fields_hash``: of the document
        fields the index will hold for it): it becomes current with
        *status* ``queued`` (its batches are on their way) or ``sending`` (they are about to be sent:
        ``mark_sent`` follows); *note* (e.g. a strategy's fallback) replaces the previous version's. Stage 2
        accepts the batches of a current version in either status, so a batch that arrives before ``mark_sent``
        is not lost.

        Beginning the version that is already indexed (a forced re-run: reconcile after the index lost it, a
        backfill after an embedding change) forgets its batch records first, so that it completes only when every
        batch was done again."""
        current = self.get(doc_id)
        if current is not None and current.version == version and current.is_indexed:
            self.store.remove_batches(doc_id, version)

        def fn(e: LedgerEntry) -> LedgerEntry:
            same = e.version == version
            return dataclasses.replace(e, source=source, container=container or e.container, version=version,
                                       status=status, chunk_count=chunk_count, batch_count=batch_count, error="",
                                       attempts=e.attempts if same else 0, note=redact(note)[:_MAX_ERROR_CHARS],
                                       failure="", failures=e.failures if same else 0, retry_at="",
                                       fields_hash=fields_hash, made_with=made_with, requeued_at="")

        return self._change(doc_id, source, fn)  # type: ignore[return-value]

    def record_fields(self, doc_id: str, source: str, version: str, fields_hash: str) -> bool:
        """The index holds the document fields hashed *fields_hash* for *version*. False (nothing changes) if
        *version* is no longer current."""
        done = False

        def fn(e: LedgerEntry) -> LedgerEntry | None:
            nonlocal done
            if not e.is_current(version):
                return None
            done = True
            return dataclasses.replace(e, fields_hash=fields_hash)

        self._change(doc_id, source, fn)
        return done

    def mark_sent(self, doc_id: str, source: str, version: str, chunk_count: int | None = None,
                  batch_count: int | None = None) -> None:
        """Every batch of *version* is on the queue: ``sending`` becomes ``queued``, and the totals, when stage 1
        learnt them only by sending (a long document: docs/architecture.md#long-documents), are recorded. Nothing
        changes if another version became current meanwhile; a version stage 2 already finished or throttled
        keeps its status."""

        def fn(e: LedgerEntry) -> LedgerEntry | None:
            if e.version != version or e.is_deleted or e.is_failed:
                return None
            totals = {} if batch_count is None else {"chunk_count": chunk_count or 0, "batch_count": batch_count}
            if not e.is_sending and not totals:
                return None
            return dataclasses.replace(e, status=QUEUED if e.is_sending else e.status, **totals)

        self._change(doc_id, source, fn)

    def mark_failed(self, doc_id: str, source: str, version: str, error: str, *, only_if_current: bool = False,
                    container: str = "", kind: str = "permanent", now: dt.datetime | None = None,
                    made_with: str = "") -> LedgerEntry | None:
        """*version* failed: status ``failed`` with the reason. The indexed version, if any, is untouched and stays
        searchable. Stage 1 rejecting a new upload makes *version* current; a poisoned batch
        (``only_if_current=True``) changes nothing once another version has become current, nor once *version*
        is already ``failed`` (the first reason stays: no reason is nested in another).

        *kind* ``transient``: reconcile retries the version at ``retry_at`` (exponential back-off over its
        failures, ``RETRY_BASE_S`` … ``RETRY_CAP_S``); after ``MAX_TRANSIENT_FAILURES`` it becomes permanent.
        *made_with*: the stage-1 settings the version was tried with (stage 1 rejecting it), for backfill."""
        now = now or clock.now()

        def fn(e: LedgerEntry) -> LedgerEntry | None:
            if only_if_current and (e.version != version or e.is_failed):
                return None
            failures = (e.failures if e.version == version else 0) + 1
            reason, failure, retry_at = error, kind, ""
            if kind == TRANSIENT:
                if failures >= MAX_TRANSIENT_FAILURES:
                    failure, reason = PERMANENT, f"{error} (gave up after {failures} failures)"
                else:
                    delay = min(RETRY_CAP_S, RETRY_BASE_S * 2 ** (failures - 1))
                    retry_at = (now + dt.timedelta(seconds=delay)).isoformat(timespec="seconds")
            return dataclasses.replace(e, source=source, container=container or e.container, version=version,
                                       status=FAILED, error=redact(reason)[:_MAX_ERROR_CHARS], attempts=e.attempts + 1,
                                       failure=failure, failures=failures, retry_at=retry_at, requeued_at="",
                                       made_with=made_with or (e.made_with if e.version == version else ""))

        return self._change(doc_id, source, fn)

    def record_error(self, doc_id: str, source: str, version: str | None, error: str, container: str = "",
                     kind: str = "transient") -> None:
        """A failed attempt on *version* (the trigger retries it): remember the reason, its *kind* (``transient``
        or ``permanent``: what the poison handler records if every attempt fails) and count the attempt.
        ``version=None``: a failure before the version was known (stage 1 crashed), recorded whatever is current."""

        def fn(e: LedgerEntry) -> LedgerEntry | None:
            if version is not None and e.version != version:
                return None
            if container and not e.container:
                e = dataclasses.replace(e, container=container)
            return dataclasses.replace(e, error=redact(error)[:_MAX_ERROR_CHARS], attempts=e.attempts + 1,
                                       failure=kind)

        self._change(doc_id, source, fn)

    def mark_indexed(self, doc_id: str, source: str, version: str, embedder: str = "") -> bool:
        """*version* is fully in the index, with vectors of *embedder* (``Embedder.name``). Returns False (and
        changes nothing) if it is no longer current."""
        done = False

        def fn(e: LedgerEntry) -> LedgerEntry | None:
            nonlocal done
            if not e.is_current(version):
                return None
            done = True
            return dataclasses.replace(e, status=INDEXED, indexed_version=version, error="", failure="",
                                       failures=0, retry_at="", indexed_embedder=embedder,
                                       indexed_made_with=e.made_with)

        self._change(doc_id, source, fn)
        return done

    def mark_requeued(self, doc_id: str, source: str, now: dt.datetime | None = None, container: str = "") -> None:
        """The document was put on the stage-1 job queue (reconcile, ``chunking reprocess``): ``requeued_at``
        says when. An unknown document gets an entry ``queued`` without a version (its job is on the queue), so
        that a later run does not enqueue it again while the job waits, and ``chunking status`` counts it."""
        at = (now or clock.now()).isoformat(timespec="seconds")
        self._change(doc_id, source, lambda e: dataclasses.replace(
            e, requeued_at=at, container=e.container or container,
            **({} if e.updated_at else {"status": QUEUED, "version": ""})))

    def touch(self, doc_id: str, source: str) -> None:
        """The source was seen again unchanged: only ``updated_at`` moves (so a watcher knows the upload was
        handled). Nothing happens for an unknown document."""
        self._change(doc_id, source, lambda e: e if e.updated_at else None)

    def mark_throttled(self, doc_id: str, source: str, version: str, wait_s: float,
                       now: dt.datetime | None = None) -> None:
        """A batch of *version* was deferred for *wait_s* seconds by throttling: ``throttled`` with ``retry_at``.
        Nothing changes unless *version* is current and on its way (``sending``, ``queued``, ``throttled``)."""
        at = ((now or clock.now()) + dt.timedelta(seconds=wait_s)).isoformat(timespec="seconds")

        def fn(e: LedgerEntry) -> LedgerEntry | None:
            if e.version != version or not e.in_flight:
                return None
            return dataclasses.replace(e, status=THROTTLED, retry_at=at)

        self._change(doc_id, source, fn)

    def record_batch(self, doc_id: str, version: str, batch_no: int, keys: Iterable[str],
                     hashes: Iterable[str] = (), embedder: str = "") -> None:
        """Batch *batch_no* of *version* is in the index with *keys* (and the vector hashes of those keys, made by
        *embedder*: see ``BatchRecord``). Idempotent (a duplicate delivery records nothing new)."""
        self.store.add_batch(BatchRecord(doc_id, version, batch_no, tuple(keys), tuple(hashes), embedder))

    def batches_done(self, doc_id: str, version: str) -> set[int]:
        """The batch numbers of *version* recorded so far (a strongly consistent read of the ledger)."""
        return {b.batch_no for b in self.store.batches(doc_id, version) if b.batch_no >= 0}

    def batch_records(self, doc_id: str, version: str | None = None) -> list[BatchRecord]:
        """Batch records of *doc_id* (of every version, or of *version*), by version then batch number."""
        return sorted((b for b in self.store.batches(doc_id, version) if b.batch_no >= 0),
                      key=lambda b: (b.version, b.batch_no))

    def record_range(self, doc_id: str, version: str, range_no: int) -> bool:
        """Page range *range_no* (0-based) of *version* was split and its batches sent, and the next range's job (if
        any) enqueued. Returns False if it was recorded before (a duplicated job). Stored beside the batch records
        (as batch number ``-1 - range_no``, without keys), so it goes with them when the version is retired."""
        return self.store.add_batch(BatchRecord(doc_id, version, -1 - range_no, ()))

    def ranges_done(self, doc_id: str, version: str) -> set[int]:
        """The page ranges of *version* recorded by ``record_range``."""
        return {-1 - b.batch_no for b in self.store.batches(doc_id, version) if MEMBERS_BATCH_NO < b.batch_no < 0}

    def record_members(self, doc_id: str, version: str, sources: Iterable[str]) -> None:
        """*version* of the container *doc_id* has these members (their sources, ``"mail.eml/attachments/a.pdf"``;
        docs/architecture.md#containers). Stored beside the batch records, as batch numbers from
        ``MEMBERS_BATCH_NO`` down, ``_MEMBERS_PER_RECORD`` names each and no keys, so they go with the version when
        it is retired. Written once per version (the same bytes have the same members)."""
        names = sorted(set(sources))
        for part, start in enumerate(range(0, len(names), _MEMBERS_PER_RECORD)):
            self.store.add_batch(BatchRecord(doc_id, version, MEMBERS_BATCH_NO - part,
                                             tuple(names[start:start + _MEMBERS_PER_RECORD])))
        if not names:  # an empty list is recorded too: "no members" replaces an earlier list
            self.store.add_batch(BatchRecord(doc_id, version, MEMBERS_BATCH_NO, ()))

    def member_lists(self, doc_id: str) -> dict[str, set[str]]:
        """The members ``record_members`` recorded for each version of *doc_id* still in the ledger."""
        lists: dict[str, set[str]] = {}
        for record in self.store.batches(doc_id):
            if record.batch_no <= MEMBERS_BATCH_NO:
                lists.setdefault(record.version, set()).update(record.keys)
        return lists

    def forget_batches(self, doc_id: str, version: str) -> None:
        """Remove the batch records of *version* (its chunks were deleted)."""
        self.store.remove_batches(doc_id, version)

    def mark_deleted(self, doc_id: str, source: str) -> LedgerEntry:
        """The source is gone and its chunks were removed."""
        return self._change(doc_id, source, lambda e: dataclasses.replace(  # type: ignore[return-value]
            e, status=DELETED, indexed_version="", error=""))


#: The statuses a completion event is published for (docs/events.md).
EVENT_STATUSES: tuple[Status, ...] = (INDEXED, FAILED, DELETED)


def _with_event(old: LedgerEntry | None, new: LedgerEntry) -> LedgerEntry:
    """*new* with a pending completion event when it moves the document to another (version, status) among
    ``EVENT_STATUSES``; otherwise *new* as it is (a pending event of *old* stays pending)."""
    if new.status not in EVENT_STATUSES:
        return new
    if old is not None and (old.version, old.status) == (new.version, new.status):
        return new
    at = new.updated_at
    ident = hashlib.sha256(f"{new.doc_id}|{new.version}|{new.status}|{at}".encode()).hexdigest()[:32]
    event = {"id": ident, "status": new.status, "version": new.version,
             "reason": new.error if new.status == FAILED else "", "at": at}
    return dataclasses.replace(new, event=json.dumps(event, separators=(",", ":")))


def count_statuses(statuses: Iterable[str], among: Iterable[str] = STATUSES) -> dict[str, int]:
    """How many of *statuses* (status names, e.g. of ``chunking status --watch``'s documents) are each of *among*,
    in the order of *among*: ``{"indexed": 3, "failed": 1}``. A name not in *among* is not counted."""
    counts = dict.fromkeys(among, 0)
    for status in statuses:
        if status in counts:
            counts[status] += 1
    return counts


def status_counts(entries: Iterable[LedgerEntry], among: Iterable[str] = STATUSES) -> dict[str, int]:
    """How many *entries* are in each status of *among*, in the order of *among* (``count_statuses``)."""
    return count_statuses((e.status for e in entries), among)
