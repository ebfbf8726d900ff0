"""Backfill on Azurite with the lagging Search fake: after the embedding model changes, reconcile re-enqueues the
documents indexed with the old one, BACKFILL_MAX_PER_RUN per run, until the backlog is done; every vector in the
index is then the new model's (none of the old one reused) and the index is exactly current."""

from __future__ import annotations

import hashlib

import pytest

from chunking.embeddings import OfflineLexicalEmbedder
from chunking.ids import doc_id
from tests.azurite_harness import Harness, _paragraphs

pytestmark = pytest.mark.integration


class NewModel(OfflineLexicalEmbedder):
    """Another model of the same dimensions: other vectors, another name."""

    def __init__(self, dimensions: int) -> None:
        super().__init__(dimensions)
        self.name = f"other-model/{dimensions}"

    def embed(self, texts):
        return [[-x for x in vector] for vector in super().embed(texts)]


@pytest.fixture
def h(azurite, tmp_path, monkeypatch, request):
    monkeypatch.setenv("BACKFILL_MAX_PER_RUN", "7")
    name = "bf" + hashlib.sha256(request.node.name.encode()).hexdigest()[:12]
    harness = Harness(azurite, name, tmp_path, monkeypatch)
    yield harness
    harness.handlers.services.cache_clear()


def test_an_embedding_model_change_is_backfilled_seven_per_run(h, monkeypatch):
    for i in range(30):
        h.upload(f"docs/{i:02d}.txt", _paragraphs(3 + i % 4, f"backfill{i}"))
    h.drain()
    old = h.s.embedder.name
    assert {e.indexed_embedder for e in h.s.ledger.entries()} == {old}
    h.settle()
    assert h.handlers.handle_reconcile().backfilled == []  # nothing changed: nothing to do

    monkeypatch.setattr("chunking.services.make_embedder", lambda settings: NewModel(settings.embedding_dimensions))
    h.handlers.services.cache_clear()
    per_run, left = [], []
    for _ in range(10):
        h.settle()
        report = h.handlers.handle_reconcile()
        assert (report.missing, report.stuck, report.orphaned, report.failed) == ([], [], [], [])
        per_run.append(len(report.backfilled))
        left.append(report.backfill_left)
        h.drain()
        if not report.backfilled:
            break
    print("backfill: re-enqueued per run", per_run, "left after each run", left)
    assert per_run == [7, 7, 7, 7, 2, 0] and left[:5] == [23, 16, 9, 2, 0]
    assert all("embedder " in line for line in report.backfilled) or report.backfilled == []
    entries = h.s.ledger.entries()
    assert {(e.status, e.indexed_embedder) for e in entries} == {("indexed", "other-model/256")}
    # Every stored vector is the new model's: none of the old model's was reused.
    new = NewModel(h.s.settings.embedding_dimensions)
    index = h.s.index
    for did in index.doc_ids():
        records = index.records_of(did)
        stored = index.vectors_by_key([r.id for r in records])
        for r in records:
            assert stored[r.id] == pytest.approx(tuple(new.embed([r.text_to_embed])[0])), r.id
    h.assert_index_is_exactly_current()


def test_a_splitters_change_is_backfilled_through_the_stage_one_queue(h, monkeypatch):
    """Reconcile parses nothing: it puts forced jobs on the stage-1 queue, which the queue-triggered stage 1
    runs; after SPLITTERS changes, a backlog of 20 unchanged blobs at 7 per run is done in three runs, every
    one of them re-made with the new splitter, and the index is exactly current."""
    import chunking.pipeline.stage_one as stage_one

    paths = [f"split/{i:02d}.txt" for i in range(20)]
    for i, path in enumerate(paths):
        h.upload(path, _paragraphs(4 + i % 3, f"split{i}"))
    h.drain()
    before = {p: h.s.ledger.get(doc_id(h.cname, p)) for p in paths}
    monkeypatch.setenv("SPLITTERS", ".txt=markdown")
    h.handlers.services.cache_clear()
    parsed: list[str] = []  # every page count and page read of stage 1, with the source it was for

    def probe(real):
        def recording(data, *, source, **kwargs):
            parsed.append(source)
            return real(data, source=source, **kwargs)
        return recording

    monkeypatch.setattr(stage_one, "read_pages_bounded", probe(stage_one.read_pages_bounded))
    monkeypatch.setattr(stage_one, "read_first_range_bounded", probe(stage_one.read_first_range_bounded))
    per_run = []
    for _ in range(6):
        h.settle()
        report = h.handlers.handle_reconcile()
        assert parsed == [] and h._jobs_left() == len(report.backfilled)  # enqueued, not parsed
        assert all(line.endswith(": splitter settings") for line in report.backfilled)
        per_run.append(len(report.backfilled))
        h.drain()
        assert sorted(set(parsed)) == sorted(line.split(":")[0] for line in report.backfilled)  # the jobs parse
        parsed.clear()
        if not report.backfilled:
            break
    print("backfill (SPLITTERS): re-enqueued per run", per_run)
    assert per_run == [7, 7, 6, 0]
    after = {p: h.s.ledger.get(doc_id(h.cname, p)) for p in paths}
    assert all(after[p].status == "indexed" and after[p].indexed_version != before[p].indexed_version
               and after[p].indexed_made_with != before[p].indexed_made_with for p in paths)
    h.assert_index_is_exactly_current()
