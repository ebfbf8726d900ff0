"""Backfill after a settings change: which documents are stale, and reconcile's per-run limit over a backlog
(stage 1 is simulated here)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import math

import pytest

from chunking.ids import doc_id
from chunking.index.local import LocalIndex
from chunking.ledger import Ledger, LedgerEntry, LocalLedgerStore
from chunking.model import ChunkRecord
from chunking.pipeline.backfill import expected_settings, stage_one_settings, why_stale
from chunking.pipeline.reconcile import reconcile
from chunking.settings import Settings

OLD, NEW = stage_one_settings("aaaa", "docs-1"), stage_one_settings("bbbb", "docs-1")


def entry(**changes) -> LedgerEntry:
    base = LedgerEntry(doc_id="d", source="a.txt", version="v", status="indexed", indexed_version="v",
                       made_with=OLD, indexed_made_with=OLD, indexed_embedder="emb/4")
    return dataclasses.replace(base, **changes)


def indexed(index: LocalIndex, ledger: Ledger, path: str, version: str = "v1", made_with: str = OLD) -> None:
    """*path* of container ``c`` indexed with the OLD settings (or *made_with*): in the ledger and one record in
    the index."""
    did = doc_id("c", path)
    ledger.begin_version(did, path, version, 1, 1, container="c", made_with=made_with)
    ledger.mark_indexed(did, path, version, "emb/4")
    index.upsert([ChunkRecord(id=f"{did}-{version}-000000", doc_id=did, version=version, source=path, sourcepage=path,
                              ordinal=0, page_start=0, page_end=0, char_start=0, char_end=4, content="text",
                              content_hash="h", token_count=1, embedding=(1.0, 0.0, 0.0, 0.0))])


def test_why_stale():
    assert why_stale(entry(), OLD, "emb/4") == ""
    assert why_stale(entry(), NEW, "emb/4") == "splitter settings"
    assert why_stale(entry(), stage_one_settings("aaaa", "docs-2"), "emb/4") == "namespace docs-1 → docs-2"
    assert why_stale(entry(), OLD, "emb/8") == "embedder emb/4 → emb/8"
    # Indexed under the key scheme before the namespace was part of every chunk key: stale once.
    assert OLD == "splitter=aaaa;namespace=docs-1;keys=2"
    assert why_stale(entry(indexed_made_with="splitter=aaaa;namespace=docs-1"), OLD, "emb/4") == "chunk keys 1 → 2"
    # Unknown (indexed before settings were recorded): not stale.
    assert why_stale(entry(indexed_made_with="", indexed_embedder=""), NEW, "emb/8") == ""
    # Queued work is not stale (it is being made now); a permanent failure under other settings is.
    assert why_stale(entry(status="queued"), NEW, "emb/8") == ""
    failed = entry(status="failed", failure="permanent", version="w")
    assert why_stale(failed, NEW, "emb/4") == "failed under other settings (splitter settings)"
    assert why_stale(dataclasses.replace(failed, failure="transient"), NEW, "emb/4") == ""


def test_expected_settings_follow_the_splitter_of_each_extension(tmp_path):
    base = Settings(state_dir=tmp_path)
    now = expected_settings(base, "docs")
    assert now("a.md") == now("b/c.md") != now("a.html")
    assert now("a.md") != expected_settings(base.replace(max_tokens=300), "docs")("a.md")
    assert now("a.md") != expected_settings(base.replace(splitters={".md": "sentence"}), "docs")("a.md")
    assert now("a.txt") == expected_settings(base.replace(splitters={".md": "sentence"}), "docs")("a.txt")
    assert expected_settings(base.replace(splitters={".md": "nonsense"}), "docs")("a.md") == ""


@pytest.mark.parametrize("processed", [True, False])
def test_a_backlog_of_any_size_finishes_at_the_per_run_limit(tmp_path, processed):
    """30 documents indexed with old settings, 7 per run: every run enqueues new ones (whether or not the
    queue got to the previous ones), and the backlog is done in ceil(30 / 7) runs."""
    ledger = Ledger(LocalLedgerStore(tmp_path / "ledger.sqlite3"))
    index = LocalIndex(tmp_path / "index.sqlite3", 4)
    paths = [f"docs/{i:02d}.txt" for i in range(30)]
    for path in paths:
        indexed(index, ledger, path)
    now = dt.datetime.now(dt.timezone.utc)
    runs, enqueued = [], []

    def enqueue(path: str) -> None:
        enqueued.append(path)

    for run in range(10):
        start = len(enqueued)
        report = reconcile(container="c", blob_paths=paths, index=index, ledger=ledger, enqueue=enqueue,
                           stuck_after_seconds=3600, made_with=lambda p: NEW, embedder="emb/4", backfill_limit=7,
                           now=now + dt.timedelta(minutes=run))
        assert (report.missing, report.stuck, report.orphaned) == ([], [], [])
        runs.append((len(report.backfilled), report.backfill_left))
        if processed:  # the queue-triggered stage 1 and stage 2 ran on what was enqueued
            for path in enqueued[start:]:
                indexed(index, ledger, path, "v2", NEW)
        if not report.backfilled:
            break
    assert sorted(enqueued) == paths and len(set(enqueued)) == 30  # each once
    assert [n for n, _ in runs] == [7, 7, 7, 7, 2, 0]
    assert [left for _, left in runs][:5] == [23, 16, 9, 2, 0]
    assert len(runs) - 1 == math.ceil(30 / 7)


def test_a_lost_job_is_enqueued_again_after_the_stuck_timeout(tmp_path):
    ledger = Ledger(LocalLedgerStore(tmp_path / "ledger.sqlite3"))
    index = LocalIndex(tmp_path / "index.sqlite3", 4)
    indexed(index, ledger, "a.txt")
    now = dt.datetime.now(dt.timezone.utc)
    calls = []
    for minutes in (0, 30, 61):
        reconcile(container="c", blob_paths=["a.txt"], index=index, ledger=ledger, enqueue=calls.append,
                  stuck_after_seconds=3600, made_with=lambda p: NEW, embedder="emb/4", backfill_limit=5,
                  now=now + dt.timedelta(minutes=minutes))
    assert calls == ["a.txt", "a.txt"]  # at 0 and after the hour; not at 30 minutes
