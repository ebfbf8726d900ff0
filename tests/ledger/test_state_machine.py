"""The ledger's state machine as exact tables, on both stores (SQLite, and a table of Azurite): for every status
(and no entry) and every operation of ``Ledger``, the resulting status or the refusal; then the completion rule
(``chunking.ledger.completion``): the fate of a batch, which versions are wanted, and when a version completes.
"""

import dataclasses

import pytest

from chunking.ledger import (
    DELETED,
    FAILED,
    INDEXED,
    QUEUED,
    SENDING,
    STATUSES,
    THROTTLED,
    BatchFate,
    Completion,
    Ledger,
    LedgerEntry,
    all_batches_in,
    batch_fate,
    complete_if_done,
    count_statuses,
    is_wanted,
    status_counts,
)

SRC = "a.txt"
NONE = "none"  # no entry yet
STARTS = (NONE, SENDING, QUEUED, THROTTLED, INDEXED, FAILED, DELETED)
X = "refused"  # nothing written: the entry (or its absence) is unchanged


def _start(ledger, doc_id: str, start: str) -> None:
    """Bring *doc_id* to *start*, its current version ``v1`` with 2 batches."""
    if start == NONE:
        return
    ledger.begin_version(doc_id, SRC, "v1", 4, 2, status=SENDING if start == SENDING else QUEUED)
    if start == THROTTLED:
        ledger.mark_throttled(doc_id, SRC, "v1", 30)
    elif start == INDEXED:
        ledger.mark_indexed(doc_id, SRC, "v1")
    elif start == FAILED:
        ledger.mark_failed(doc_id, SRC, "v1", "boom")
    elif start == DELETED:
        ledger.mark_deleted(doc_id, SRC)
    assert ledger.get(doc_id).status == start


OPERATIONS = {
    "begin_version v1": lambda l, d: l.begin_version(d, SRC, "v1", 4, 2),
    "begin_version v1 sending": lambda l, d: l.begin_version(d, SRC, "v1", 4, 2, status=SENDING),
    "begin_version v2": lambda l, d: l.begin_version(d, SRC, "v2", 1, 1),
    "mark_sent v1": lambda l, d: l.mark_sent(d, SRC, "v1"),
    "mark_sent v1 with totals": lambda l, d: l.mark_sent(d, SRC, "v1", 9, 3),
    "mark_sent v2": lambda l, d: l.mark_sent(d, SRC, "v2", 9, 3),
    "mark_throttled v1": lambda l, d: l.mark_throttled(d, SRC, "v1", 30),
    "mark_throttled v2": lambda l, d: l.mark_throttled(d, SRC, "v2", 30),
    "mark_indexed v1": lambda l, d: l.mark_indexed(d, SRC, "v1"),
    "mark_indexed v2": lambda l, d: l.mark_indexed(d, SRC, "v2"),
    "mark_failed v1": lambda l, d: l.mark_failed(d, SRC, "v1", "bad"),
    "mark_failed v2": lambda l, d: l.mark_failed(d, SRC, "v2", "bad"),
    "mark_failed v1 if current": lambda l, d: l.mark_failed(d, SRC, "v1", "poison", only_if_current=True),
    "mark_failed v2 if current": lambda l, d: l.mark_failed(d, SRC, "v2", "poison", only_if_current=True),
    "record_error v1": lambda l, d: l.record_error(d, SRC, "v1", "503"),
    "record_error v2": lambda l, d: l.record_error(d, SRC, "v2", "503"),
    "record_error None": lambda l, d: l.record_error(d, SRC, None, "crashed"),
    "record_fields v1": lambda l, d: l.record_fields(d, SRC, "v1", "h"),
    "record_fields v2": lambda l, d: l.record_fields(d, SRC, "v2", "h"),
    "mark_requeued": lambda l, d: l.mark_requeued(d, SRC),
    "touch": lambda l, d: l.touch(d, SRC),
    "mark_deleted": lambda l, d: l.mark_deleted(d, SRC),
}

# A cell is the resulting status, followed by the version when it is not v1 ("-": none), or X. Cells worth
# knowing: a poisoned batch of a deleted document's version marks it failed ("mark_failed v1 if current" on
# deleted), and a stage-1 crash before the version was known creates an entry without one ("record_error None").
q, s, t, i, f, d = QUEUED, SENDING, THROTTLED, INDEXED, FAILED, DELETED
TABLE = {
    # operation                     none       sending    queued     throttled  indexed    failed     deleted
    "begin_version v1":            (q,         q,         q,         q,         q,         q,         q),
    "begin_version v1 sending":    (s,         s,         s,         s,         s,         s,         s),
    "begin_version v2":            (q + " v2", q + " v2", q + " v2", q + " v2", q + " v2", q + " v2", q + " v2"),
    "mark_sent v1":                (X,         q,         X,         X,         X,         X,         X),
    "mark_sent v1 with totals":    (X,         q,         q,         t,         i,         X,         X),
    "mark_sent v2":                (X,         X,         X,         X,         X,         X,         X),
    "mark_throttled v1":           (X,         t,         t,         t,         X,         X,         X),
    "mark_throttled v2":           (X,         X,         X,         X,         X,         X,         X),
    "mark_indexed v1":             (X,         i,         i,         i,         i,         i,         X),
    "mark_indexed v2":             (X,         X,         X,         X,         X,         X,         X),
    "mark_failed v1":              (f,         f,         f,         f,         f,         f,         f),
    "mark_failed v2":              (f + " v2", f + " v2", f + " v2", f + " v2", f + " v2", f + " v2", f + " v2"),
    "mark_failed v1 if current":   (X,         f,         f,         f,         f,         X,         f),
    "mark_failed v2 if current":   (X,         X,         X,         X,         X,         X,         X),
    "record_error v1":             (X,         s,         q,         t,         i,         f,         d),
    "record_error v2":             (X,         X,         X,         X,         X,         X,         X),
    "record_error None":           (q + " -",  s,         q,         t,         i,         f,         d),
    "record_fields v1":            (X,         s,         q,         t,         i,         f,         X),
    "record_fields v2":            (X,         X,         X,         X,         X,         X,         X),
    "mark_requeued":               (q + " -",  s,         q,         t,         i,         f,         d),
    "touch":                       (X,         s,         q,         t,         i,         f,         d),
    "mark_deleted":                (d + " -",  d,         d,         d,         d,         d,         d),
}


def test_the_table_covers_every_status_and_every_operation():
    assert set(STARTS) == {NONE, *STATUSES}
    assert TABLE.keys() == OPERATIONS.keys()
    assert all(len(row) == len(STARTS) for row in TABLE.values())
    methods = {name for name, value in vars(Ledger).items() if callable(value) and not name.startswith("_")}
    reads = {"get", "entries", "batches_done", "batch_records", "ranges_done", "member_lists"}
    batch_records = {"record_batch", "record_range", "forget_batches", "record_members"}  # they change no entry
    events = {"publish_pending"}  # publishes pending completion events (tests/ledger/test_events.py)
    assert methods - reads - batch_records - events == {op.split()[0] for op in OPERATIONS}


def _cell(written: bool, after) -> str:
    if not written:
        return X
    version = "" if after.version == "v1" else f" {after.version or '-'}"
    return after.status + version


@pytest.mark.parametrize("operation", list(OPERATIONS))
def test_transition_table(ledger, operation):
    got = []
    for n, start in enumerate(STARTS):
        doc_id = f"d{n}"
        _start(ledger, doc_id, start)
        before, tag = ledger.store.read(doc_id)
        returned = OPERATIONS[operation](ledger, doc_id)
        after, tag_after = ledger.store.read(doc_id)
        written = tag_after != tag
        assert written or after == before
        got.append(_cell(written, after))
        if isinstance(returned, bool):  # mark_indexed, record_fields: True when they changed the entry
            assert returned is (got[-1] != X)
    assert dict(zip(STARTS, got)) == dict(zip(STARTS, TABLE[operation]))


def test_what_transitions_keep_and_clear(ledger):
    _start(ledger, "d", INDEXED)
    ledger.begin_version("d", SRC, "v2", 1, 1)
    ledger.mark_failed("d", SRC, "v2", "bad")
    e = ledger.get("d")
    assert (e.status, e.version, e.indexed_version, e.error, e.failures) == (FAILED, "v2", "v1", "bad", 1)
    ledger.mark_failed("d", SRC, "v2", "poison", only_if_current=True)  # the first reason stays
    assert (ledger.get("d").error, ledger.get("d").failures) == ("bad", 1)
    ledger.begin_version("d", SRC, "v2", 1, 1)  # the same version again: its failure count stays
    e = ledger.get("d")
    assert (e.status, e.error, e.failure, e.failures, e.retry_at) == (QUEUED, "", "", 1, "")
    assert ledger.mark_indexed("d", SRC, "v2", "model-3")
    e = ledger.get("d")
    assert (e.indexed_version, e.indexed_embedder, e.failures) == ("v2", "model-3", 0)
    ledger.mark_deleted("d", SRC)
    assert (ledger.get("d").indexed_version, ledger.get("d").version) == ("", "v2")


# The completion rule. Entries: current version v1 (2 batches), indexed version v0 (v1 itself once indexed).
ENTRIES = {
    NONE: None,
    SENDING: LedgerEntry("d", SRC, version="v1", status=SENDING, indexed_version="v0", batch_count=2),
    QUEUED: LedgerEntry("d", SRC, version="v1", status=QUEUED, indexed_version="v0", batch_count=2),
    THROTTLED: LedgerEntry("d", SRC, version="v1", status=THROTTLED, indexed_version="v0", batch_count=2),
    INDEXED: LedgerEntry("d", SRC, version="v1", status=INDEXED, indexed_version="v1", batch_count=2),
    FAILED: LedgerEntry("d", SRC, version="v1", status=FAILED, indexed_version="v0", batch_count=2),
    "abandoned": LedgerEntry("d", SRC, version="v1", status=FAILED, indexed_version="v0", batch_count=0),
    DELETED: LedgerEntry("d", SRC, version="v1", status=DELETED, indexed_version="", batch_count=2),
}
W, SUP, SUPI, AB, C = (BatchFate.WRITE, BatchFate.SUPERSEDED, BatchFate.SUPERSEDED_INDEXED, BatchFate.ABANDONED,
                       BatchFate.COMPLETE)
#            a batch of:  v1 (current)  v0 (indexed before)  v9 (neither)
FATES = {
    NONE:                (SUP,          SUP,                 SUP),
    SENDING:             (W,            SUPI,                SUP),
    QUEUED:              (W,            SUPI,                SUP),
    THROTTLED:           (W,            SUPI,                SUP),
    INDEXED:             (C,            SUP,                 SUP),
    FAILED:              (W,            SUPI,                SUP),
    "abandoned":         (AB,           SUPI,                SUP),
    DELETED:             (SUP,          SUP,                 SUP),
}
WANTED = {
    NONE:                (False,        False,               False),
    SENDING:             (True,         True,                False),
    QUEUED:              (True,         True,                False),
    THROTTLED:           (True,         True,                False),
    INDEXED:             (True,         False,               False),
    FAILED:              (True,         True,                False),
    "abandoned":         (False,        True,                False),
    DELETED:             (False,        False,               False),
}
VERSIONS = ("v1", "v0", "v9")


def test_fate_of_a_batch_and_which_versions_are_wanted():
    assert FATES.keys() == WANTED.keys() == ENTRIES.keys()
    fates = {name: tuple(batch_fate(e, v) for v in VERSIONS) for name, e in ENTRIES.items()}
    wanted = {name: tuple(e is not None and e.wants(v) for v in VERSIONS) for name, e in ENTRIES.items()}
    assert (fates, wanted) == (FATES, WANTED)


def test_is_wanted_reads_the_ledger(ledger):
    assert is_wanted(ledger, "d", "v1") is False  # unknown document
    ledger.begin_version("d", SRC, "v1", 2, 1)
    ledger.mark_indexed("d", SRC, "v1")
    ledger.begin_version("d", SRC, "v2", 2, 1)
    assert [is_wanted(ledger, "d", v) for v in ("v1", "v2", "v3")] == [True, True, False]
    ledger.begin_version("d", SRC, "v3", 0, 0, status=SENDING)  # a long document, its count not known yet
    ledger.mark_failed("d", SRC, "v3", "page past a limit")  # stage 1 gave up on it after sending some batches
    assert [is_wanted(ledger, "d", v) for v in ("v1", "v2", "v3")] == [True, False, False]
    ledger.mark_deleted("d", SRC)
    assert [is_wanted(ledger, "d", v) for v in ("v1", "v2", "v3")] == [False, False, False]


def test_a_version_completes_when_every_batch_is_recorded(ledger):
    ledger.begin_version("d", SRC, "v1", 4, 2)
    assert complete_if_done(ledger, "d", SRC, "v1", 2) is Completion.PENDING
    ledger.record_batch("d", "v1", 1, ["k2", "k3"], embedder="model-3")
    assert complete_if_done(ledger, "d", SRC, "v1", 2) is Completion.PENDING
    assert ledger.get("d").status == QUEUED
    ledger.record_batch("d", "v1", 0, ["k0", "k1"], embedder="model-3")
    assert complete_if_done(ledger, "d", SRC, "v1", 2) is Completion.COMPLETED
    e = ledger.get("d")
    assert (e.status, e.indexed_version, e.indexed_embedder) == (INDEXED, "v1", "model-3")  # from the records
    # A duplicate completing again: the ledger still takes it (the version is current).
    assert complete_if_done(ledger, "d", SRC, "v1", 2, embedder="model-4") is Completion.COMPLETED
    assert ledger.get("d").indexed_embedder == "model-4"


def test_a_long_document_completes_once_stage_one_recorded_its_count(ledger):
    ledger.begin_version("d", SRC, "v1", 0, 0, status=SENDING)  # batches go out before the count is known
    ledger.record_batch("d", "v1", 0, ["k0"])
    ledger.record_batch("d", "v1", 1, ["k1"])
    assert all_batches_in(ledger, "d", "v1") is False
    assert complete_if_done(ledger, "d", SRC, "v1") is Completion.PENDING
    stale = dataclasses.replace(ledger.get("d"), batch_count=2)  # an entry read by the caller is used as given
    assert all_batches_in(ledger, "d", "v1", entry=stale) is True
    assert all_batches_in(ledger, "d", "v1", batch_count=3, entry=stale) is False  # the message's count first
    ledger.mark_sent("d", SRC, "v1", chunk_count=2, batch_count=2)
    assert all_batches_in(ledger, "d", "v1") is True
    assert all_batches_in(ledger, "d", "v2") is False  # another version's count is never the entry's
    assert complete_if_done(ledger, "d", SRC, "v1") is Completion.COMPLETED


def test_a_version_no_longer_current_is_kept_or_unwanted(ledger):
    ledger.begin_version("d", SRC, "v1", 1, 1)
    ledger.record_batch("d", "v1", 0, ["k0"])
    assert complete_if_done(ledger, "d", SRC, "v1", 1) is Completion.COMPLETED
    ledger.begin_version("d", SRC, "v2", 1, 1)
    ledger.record_batch("d", "v2", 0, ["k0"])
    # A late duplicate of the indexed v1 while v2 is current: refused, and v1 stays searchable.
    assert complete_if_done(ledger, "d", SRC, "v1", 1) is Completion.KEPT
    ledger.begin_version("d", SRC, "v3", 1, 1)
    # v2 was never indexed and is superseded: refused, and unwanted.
    assert complete_if_done(ledger, "d", SRC, "v2", 1) is Completion.UNWANTED
    assert (ledger.get("d").status, ledger.get("d").indexed_version) == (QUEUED, "v1")
    ledger.record_batch("d", "v3", 0, ["k0"])
    ledger.mark_deleted("d", SRC)
    assert complete_if_done(ledger, "d", SRC, "v3", 1) is Completion.UNWANTED
    assert ledger.get("d").status == DELETED


def test_a_forced_rerun_of_the_indexed_version_completes_only_on_new_records(ledger):
    ledger.begin_version("d", SRC, "v1", 1, 1)
    ledger.record_batch("d", "v1", 0, ["k0"])
    assert complete_if_done(ledger, "d", SRC, "v1", 1) is Completion.COMPLETED
    ledger.begin_version("d", SRC, "v1", 1, 1)  # reconcile or backfill re-runs the indexed version
    assert ledger.batches_done("d", "v1") == set()
    assert complete_if_done(ledger, "d", SRC, "v1", 1) is Completion.PENDING
    ledger.record_batch("d", "v1", 0, ["k0"])
    assert complete_if_done(ledger, "d", SRC, "v1", 1) is Completion.COMPLETED


def test_status_counts():
    entries = [LedgerEntry(f"d{n}", SRC, status=status) for n, status in
               enumerate((INDEXED, INDEXED, FAILED, THROTTLED, QUEUED))]
    assert status_counts(entries) == {SENDING: 0, QUEUED: 1, THROTTLED: 1, INDEXED: 2, FAILED: 1, DELETED: 0}
    assert list(status_counts(entries, (INDEXED, FAILED)).items()) == [(INDEXED, 2), (FAILED, 1)]
    assert count_statuses(["waiting", FAILED, FAILED], (FAILED,)) == {FAILED: 2}


def test_entry_predicates_name_each_status():
    predicates = ("is_sending", "is_queued", "is_throttled", "is_indexed", "is_failed", "is_deleted")
    for status in STATUSES:
        e = LedgerEntry("d", SRC, status=status)
        assert [p for p in predicates if getattr(e, p)] == [f"is_{status}"]
        assert e.in_flight is (status in (SENDING, QUEUED, THROTTLED))
    assert LedgerEntry("d", SRC, status=FAILED, failure="transient", retry_at="2026-01-01T00:00:00+00:00").awaits_retry
    assert not LedgerEntry("d", SRC, status=FAILED, failure="permanent").awaits_retry
    assert not LedgerEntry("d", SRC, status=QUEUED, failure="transient", retry_at="x").awaits_retry
