"""`chunking status --watch`: which documents are in progress, and when following stops."""

import datetime as dt

from chunking.app.cli.watch import WAITING, DocState, follow, states
from chunking.ids import doc_id
from chunking.ledger import LedgerEntry

T = dt.datetime(2026, 12, 1, 11, 0, 0, tzinfo=dt.timezone.utc)


def _entry(path, status, at, **kw):
    return LedgerEntry(doc_id=doc_id("documents", path), source=path, container="documents", status=status,
                       updated_at=at.isoformat(timespec="seconds"), **kw)


def test_states_compare_each_blob_with_its_entry():
    blobs = [("new.pdf", T), ("seen.pdf", T.replace(microsecond=700_000)), ("again.pdf", T),
             ("sent.txt", T)]
    entries = [_entry("seen.pdf", "indexed", T, chunk_count=3),  # written in the upload's second: seen
               _entry("again.pdf", "indexed", T - dt.timedelta(seconds=1)),  # uploaded after its last write
               _entry("sent.txt", "queued", T, batch_count=1, chunk_count=2, error="429"),
               _entry("gone.txt", "sending", T, batch_count=2, chunk_count=9),  # blob deleted meanwhile
               _entry("old.txt", "deleted", T),
               _entry("job.txt", "queued", T, requeued_at=T.isoformat())]  # enqueued by reconcile, unknown before
    got = {d.source: d.line() for d in states(blobs, entries, "documents").values()}
    assert got == {"new.pdf": f"new.pdf: {WAITING}", "seen.pdf": "seen.pdf: indexed (3 chunks)",
                   "again.pdf": f"again.pdf: {WAITING}",
                   "sent.txt": "sent.txt: queued (1 batch, 2 chunks; last error: 429)",
                   "gone.txt": "gone.txt: sending (2 batches, 9 chunks)",
                   "job.txt": "job.txt: queued (a stage-1 job waits for it)"}


def _run(polls, timeout=60.0):
    lines, now = [], [0.0]
    seq = iter(polls)
    code = follow(lambda: next(seq), interval=1.0, timeout=timeout, out=lambda l: lines.append(l.split("  ", 1)[-1]),
                  clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s))
    return code, lines


def test_follow_prints_changes_until_nothing_is_in_progress():
    a_wait, a_done = DocState("a.md", WAITING), DocState("a.md", "indexed", "4 chunks")
    b_fail, old = DocState("b.pdf", "failed", "not a valid PDF"), DocState("old.md", "indexed", "1 chunk")
    code, lines = _run([{"a": a_wait, "o": old}, {"a": a_wait, "o": old}, {"a": a_done, "o": old, "b": b_fail}])
    assert code == 0  # nothing in progress: the caller (status) decides what b's failure makes of it
    assert lines == [f"a.md: {WAITING}", "a.md: indexed (4 chunks)", "b.pdf: failed (not a valid PDF)",
                     "nothing in progress: 2 indexed, 1 failed (1 followed, 0 of them failed)"]
    code, lines = _run([{"b": DocState("b.pdf", "queued")}, {"b": b_fail}])
    assert code == 0 and lines[-1] == "nothing in progress: 0 indexed, 1 failed (1 followed, 1 of them failed)"


def test_follow_gives_up_after_the_timeout():
    code, lines = _run([{"a": DocState("a.md", WAITING)}] * 10, timeout=3)
    assert code == 1
    assert lines[-1] == f"still in progress after 3 s: 1 {WAITING} (is `func start` running?)"
    assert len(lines) == 2
