"""Stage 1 on long documents, with the local ledger and index: page ranges in one call and as a chain of jobs give
the same chunks; batches sent before the totals are known still complete, whatever the order and duplication of
deliveries; a duplicated range job sends nothing; a page past a limit after batches went out leaves nothing."""

from __future__ import annotations

import hashlib
import json
import logging
import random

import pytest

from chunking.messages.batches import decode_message, load_records
from chunking.pipeline.stage_two import run_stage_one, run_stage_two
from chunking.services import make_embedder, make_index, make_ledger
from chunking.settings import Settings
from chunking.storage import BlobFile
from chunking.storage.claim_check import MemoryPayloadStore
from tests.long_documents import long_pdf
from tests.parsers.helpers import count_page_loads


def _settings(tmp_path, **env) -> Settings:
    # One namespace for every world of a test: they stand for one deployment, so their chunk keys are the same.
    return Settings.from_env({"CHUNKING_STATE_DIR": str(tmp_path), "NAMESPACE": "tests", "SPLIT_MAX_TOKENS": "60",
                              "SPLIT_MAX_CHARS": "300", "BATCH_MAX_CHUNKS": "4", "STAGE1_PAGES_PER_JOB": "7", **env})


class _World:
    """Ledger, index, embedder and payloads of one test; the queues are lists."""

    def __init__(self, tmp_path, **env) -> None:
        self.settings = _settings(tmp_path, **env)
        self.ledger, self.payloads = make_ledger(self.settings), MemoryPayloadStore()
        self.index = make_index(self.settings)
        self.index.ensure()
        self.embedder = make_embedder(self.settings)
        self.batches: list[str] = []
        self.jobs: list[tuple[str, object]] = []

    def stage_one(self, data: bytes, *, chain: bool = True, **kwargs):
        return run_stage_one(data, source="long.pdf", container="c", settings=self.settings, payloads=self.payloads,
                             ledger=self.ledger, send=self.batches.extend,
                             enqueue_next=(lambda v, s: self.jobs.append((v, s))) if chain else None, **kwargs)

    def run_chain(self, data: bytes) -> list:
        results = [self.stage_one(data)]
        while self.jobs:
            version, state = self.jobs.pop(0)
            results.append(self.stage_one(data, resume=state, resume_version=version))
        return results

    def stage_two(self, body: str):
        return run_stage_two(body, settings=self.settings, embedder=self.embedder, index=self.index,
                             payloads=self.payloads, ledger=self.ledger)


def _records(messages, payloads) -> list[tuple]:
    out = []
    for m in messages:
        message = decode_message(m)
        if not message.check:
            out += [(r.id, r.ordinal, r.content, r.char_start, r.char_end, r.page_start, r.page_end)
                    for r in load_records(message, payloads)]
    return out


def test_ranges_in_one_call_and_as_a_chain_of_jobs_make_the_same_chunks(tmp_path):
    data = long_pdf(30)
    whole = _World(tmp_path / "a")
    one = run_stage_one(data, source="long.pdf", container="c", settings=whole.settings, payloads=whole.payloads,
                        ledger=whole.ledger)
    expected = _records(one.messages, whole.payloads)
    assert one.ranges == 5 and one.pages == 30 and len(expected) == one.chunks
    # Ordinals and offsets run on across the ranges; a range boundary is a chunk boundary.
    assert [r[1] for r in expected] == list(range(len(expected)))
    assert all(a[4] <= b[3] for a, b in zip(expected, expected[1:]))
    assert {r[5] for r in expected} == set(range(30)) and all(r[5] // 7 == r[6] // 7 for r in expected)
    # Every page's running header and footer are recognised inside every range, even the 2-page last one.
    assert not any("Handbook of tests" in r[2] or "Page " in r[2] for r in expected)

    chain = _World(tmp_path / "b")
    results = chain.run_chain(data)
    assert [r.outcome for r in results] == ["added"] * 5
    assert [r.continues.page_start if r.continues else None for r in results] == [7, 14, 21, 28, None]
    assert _records(chain.batches, chain.payloads) == expected
    numbers = [decode_message(m).batch_no for m in chain.batches]
    assert numbers == list(range(len(numbers) - 1)) + [-1]  # every batch once, in order, then the check
    assert all(decode_message(m).batch_count == 0 for m in chain.batches)
    entry = chain.ledger.get(results[0].doc_id)
    assert (entry.status, entry.chunk_count, entry.batch_count) == ("queued", len(expected), len(numbers) - 1)
    assert chain.ledger.ranges_done(entry.doc_id, entry.version) == {0, 1, 2, 3, 4}


def test_a_short_document_is_sent_whole_with_its_totals(tmp_path):
    w = _World(tmp_path)
    result = w.stage_one(long_pdf(5))
    messages = [decode_message(m) for m in w.batches]
    assert result.ranges == 1 and not w.jobs and messages
    assert [(m.batch_no, m.batch_count, m.check) for m in messages] == [(i, len(messages), False)
                                                                       for i in range(len(messages))]


def test_a_long_range_streams_its_batches_and_the_ledger_gets_the_totals(tmp_path):
    w = _World(tmp_path, STAGE1_PAGES_PER_JOB="500", BATCH_MAX_CHUNKS="1")
    result = w.stage_one(long_pdf(12))
    messages = [decode_message(m) for m in w.batches]
    assert result.ranges == 1 and not w.jobs and len(messages) > 17  # more than HOLD_BATCHES: streamed
    assert [m.batch_count for m in messages] == [0] * len(messages) and messages[-1].check
    entry = w.ledger.get(result.doc_id)
    assert (entry.status, entry.batch_count, entry.chunk_count) == ("queued", len(messages) - 1, result.chunks)


def test_a_duplicated_range_job_sends_nothing(tmp_path):
    w = _World(tmp_path)
    data = long_pdf(16)
    w.stage_one(data)
    version, state = w.jobs[0]
    first = w.stage_one(data, resume=state, resume_version=version)
    sent, jobs = len(w.batches), len(w.jobs)
    again = w.stage_one(data, resume=state, resume_version=version)
    assert (first.outcome, again.outcome) == ("added", "skipped")
    assert (len(w.batches), len(w.jobs)) == (sent, jobs)


@pytest.mark.parametrize("seed", range(6))
def test_completion_whatever_the_order_and_duplication_of_deliveries(tmp_path, seed):
    w = _World(tmp_path)
    data = long_pdf(23, seed=seed)
    w.run_chain(data)
    expected = {r[0]: r[2] for r in _records(w.batches, w.payloads)}
    rng = random.Random(seed)
    deliveries = w.batches + rng.sample(w.batches, k=max(1, len(w.batches) // 4))  # 25 % delivered twice
    rng.shuffle(deliveries)
    completed = [w.stage_two(body).completed for body in deliveries]
    entry = w.ledger.get(decode_message(w.batches[0]).doc_id)
    assert (entry.status, entry.indexed_version) == ("indexed", entry.version)
    assert sum(completed) >= 1
    assert {r.id: r.content for r in w.index.records_of(entry.doc_id)} == expected


def test_the_check_first_then_every_batch(tmp_path):
    w = _World(tmp_path)
    w.run_chain(long_pdf(10))
    check, batches = w.batches[-1], w.batches[:-1]
    assert decode_message(check).check and not w.stage_two(check).completed  # batches missing: not complete
    assert [w.stage_two(b).completed for b in batches][-1] is True


def test_batches_indexed_before_the_totals_are_known_complete_at_the_check(tmp_path):
    w = _World(tmp_path)
    held: list[str] = []

    def send(messages):  # stage 2 takes every batch the moment it is sent, before the totals are recorded
        for body in messages:
            if decode_message(body).check:
                held.append(body)
            else:
                assert not w.stage_two(body).completed

    w.batches = _Sending(send)
    w.run_chain(long_pdf(16))
    entry = w.ledger.get(decode_message(held[0]).doc_id)
    assert entry.status == "queued" and entry.batch_count > 0
    assert w.stage_two(held[0]).completed and w.ledger.get(entry.doc_id).status == "indexed"


class _Sending(list):
    def __init__(self, send) -> None:
        super().__init__()
        self.send = send

    def extend(self, messages) -> None:
        self.send(list(messages))


def test_a_page_past_a_limit_after_batches_went_out_leaves_the_previous_version_alone(tmp_path):
    w = _World(tmp_path, MAX_PAGE_CHARS="20000")
    w.run_chain(long_pdf(9, seed=1))
    for body in w.batches:
        w.stage_two(body)
    did = decode_message(w.batches[0]).doc_id
    before = {r.id: r.content for r in w.index.records_of(did)}
    w.batches.clear()
    bad = long_pdf(30, seed=2, huge_page=24)  # page 25 is far over MAX_PAGE_CHARS, in the 4th range
    results = w.run_chain(bad)
    assert results[-1].outcome == "failed" and "page 25 has more than 20000 characters" in results[-1].error
    entry = w.ledger.get(did)
    assert (entry.status, entry.batch_count) == ("failed", 0) and w.batches  # three ranges were sent
    assert {w.stage_two(body).dropped for body in w.batches} == {"stage 1 failed"}
    assert {r.id: r.content for r in w.index.records_of(did)} == before
    assert w.ledger.get(did).indexed_version != entry.version


def test_a_blob_file_is_read_from_disk_with_the_same_chunks(tmp_path):
    data = long_pdf(12)
    path = tmp_path / "blob"
    path.write_bytes(data)
    a, b = _World(tmp_path / "a"), _World(tmp_path / "b")
    from_bytes = a.stage_one(data, chain=False)
    from_file = b.stage_one(BlobFile(path, len(data), hashlib.sha256(data).hexdigest(), '"etag"'), chain=False)
    assert from_file.version == from_bytes.version
    assert _records(b.batches, b.payloads) == _records(a.batches, a.payloads)


def test_stage_one_jobs_round_trip_and_reject_what_they_cannot_be():
    from chunking.messages.envelope import MessageError
    from chunking.messages.jobs import RangeState, StageOneJob, decode_job, encode_job, enqueue_stage_one

    job = StageOneJob("docs", "a/b.pdf", version="v1", etag='"0x1"', range=RangeState(2, 10, 15, 40, 99, 7, 3, 98, True))
    assert decode_job(encode_job(job)) == job
    deferred = StageOneJob("docs", "a.pptx", reason="figure descriptions throttled", deferrals=2)
    assert json.loads(encode_job(deferred))["deferrals"] == 2 and decode_job(encode_job(deferred)) == deferred
    assert "deferrals" not in json.loads(encode_job(StageOneJob("docs", "a.pptx")))  # as before: absent when 0
    sent: list[str] = []
    assert enqueue_stage_one(sent.extend, "docs", ["x.pdf", "y.txt"], force=True, reason="reprocess") == 2
    assert [json.loads(m) for m in sent] == [
        {"type": "stage-one", "schema": 1, "container": "docs", "path": p, "force": True, "keep_old_versions": False,
         "reason": "reprocess"} for p in ("x.pdf", "y.txt")]
    for body in ("{", '{"type": "chunk-batch"}', '{"type": "stage-one", "schema": 1, "container": "d"}',
                 '{"type": "stage-one", "schema": 1, "container": "d", "path": "p", "range": {"range_no": 1}}'):
        with pytest.raises(MessageError):
            decode_job(body)


def test_the_streamed_sentence_splitter_keeps_the_table_setting(tmp_path):
    from chunking.documents.splitter import splitter_for
    from chunking.model import Page

    table = ("<figure><figcaption>Prices</figcaption><table><tr><th>Item</th><th>Price</th></tr>"
             "<tr><td>Tea</td><td>3.50</td></tr><tr><td>Coffee</td><td>4.10</td></tr>"
             "<tr><td>Cake</td><td>5.25</td></tr><tr><td>Juice</td><td>2.80</td></tr></table></figure>")
    pages = [Page(0, 0, "Prices of the week.\n\n" + table + "\n")]
    splitter = splitter_for("prices.pdf", _settings(tmp_path, SPLIT_MAX_TOKENS="70", SPLIT_MAX_TABLE_TOKENS="8191"))

    streamed = list(splitter.stream(iter(pages)))

    assert streamed == splitter.split(pages)
    assert [c.kind for c in streamed] == ["text", "figure"] and streamed[1].text == table  # whole, over the cap


def test_a_longer_pdf_loads_each_page_of_its_first_range_once_with_the_same_chunks(tmp_path, monkeypatch):
    """A PDF longer than its head: the range's read takes what loading the head's pages gave (in-line here, so
    that the loads are counted in this process) and loads every page once, with the records of a read that
    loaded the head's pages twice."""
    import chunking.parsers.pdf as pdf
    import chunking.pipeline.stage_one as stage_one

    data = long_pdf(6)
    monkeypatch.setattr(stage_one, "HEAD_PAGES", 2)
    twice = _World(tmp_path / "a", PARSE_ISOLATION="inline")
    real_take = pdf._read_page
    monkeypatch.setattr(pdf, "_read_page", lambda document, index, source, context, page_loads=None,
                        record_loads=None: real_take(document, index, source, context, None, None))
    loads_twice = twice.stage_one(data)
    monkeypatch.setattr(pdf, "_read_page", real_take)
    loaded = count_page_loads(monkeypatch)
    once = _World(tmp_path / "b", PARSE_ISOLATION="inline")
    result = once.stage_one(data)

    assert (result.pages, loads_twice.pages) == (6, 6)
    assert sorted(loaded) == [0, 1, 2, 3, 4, 5]  # the head's two pages, then the range's other four
    assert _records(once.batches, once.payloads) == _records(twice.batches, twice.payloads)


def test_a_pdf_of_at_most_the_head_pages_is_read_once_with_the_same_chunks(tmp_path, monkeypatch):
    """The head read (page count, title, first HEAD_PAGES pages) of a PDF no longer than the head is its whole
    read: stage 1 splits those pages and reads no page again; with a head too short to reuse, it reads the
    pages a second time and makes the same records."""
    import chunking.pipeline.stage_one as stage_one

    data = long_pdf(6)
    reads: list[str] = []
    real = stage_one.read_pages_bounded

    def counting(*args, **kwargs):
        reads.append(kwargs["source"])
        return real(*args, **kwargs)

    monkeypatch.setattr(stage_one, "read_pages_bounded", counting)
    once = _World(tmp_path / "a")
    result = once.stage_one(data)
    assert (result.pages, result.ranges, reads) == (6, 1, [])
    monkeypatch.setattr(stage_one, "HEAD_PAGES", 2)  # the head is no longer the whole document
    twice = _World(tmp_path / "b", PARSE_ISOLATION="inline")
    again = twice.stage_one(data)
    assert (again.pages, reads) == (6, ["long.pdf"])
    assert _records(twice.batches, twice.payloads) == _records(once.batches, once.payloads)


def test_one_child_reads_the_head_and_the_first_range_with_the_records_of_an_in_line_read(tmp_path, monkeypatch):
    """Under PARSE_ISOLATION=process the child that reads a PDF's page count and head goes on to read its
    first page range (taking the head's page loads), so each range is one child; a later range is a child of
    its own. The records are those of an in-line read, and the furniture keys the first range learnt reach the
    second (its pages lose the same running header)."""
    import chunking.pipeline.stage_one as stage_one

    data = long_pdf(8)  # ranges of 7 pages (STAGE1_PAGES_PER_JOB): two ranges, the second of one page
    monkeypatch.setattr(stage_one, "HEAD_PAGES", 2)
    inline = _World(tmp_path / "a", PARSE_ISOLATION="inline")
    in_line = inline.run_chain(data)
    children = _child_targets(monkeypatch)
    isolated = _World(tmp_path / "b")
    in_children = isolated.run_chain(data)

    assert [(r.pages, r.ranges) for r in in_children] == [(r.pages, r.ranges) for r in in_line] == [(7, 2), (1, 2)]
    assert children == ["read_first_range", "read_head", "read_pages"]  # the second range: its head, its pages
    assert _records(isolated.batches, isolated.payloads) == _records(inline.batches, inline.payloads)


def test_a_page_past_a_limit_in_the_first_range_read_by_the_head_child_fails_the_document(tmp_path, monkeypatch):
    """The child that read the head goes on with the range, and a page past ``MAX_PAGE_CHARS`` there (after the
    head) fails the document with the page's reason, as an in-line read does, and nothing is sent."""
    import chunking.pipeline.stage_one as stage_one

    monkeypatch.setattr(stage_one, "HEAD_PAGES", 2)
    bad = long_pdf(6, seed=3, huge_page=4)  # page 5: after the head, in the first range
    for mode in ("process", "inline"):
        w = _World(tmp_path / mode, MAX_PAGE_CHARS="20000", PARSE_ISOLATION=mode)
        result = w.stage_one(bad)
        assert (result.outcome, result.error) == ("failed", "page 5 has more than 20000 characters (MAX_PAGE_CHARS)")
        assert w.batches == [] and w.ledger.get(result.doc_id).status == "failed"


def test_stage_one_logs_under_its_own_logger(tmp_path, caplog):
    # docs/operations.md#logs names the loggers: stage 1's lines are not stage 2's
    w = _World(tmp_path)
    with caplog.at_level(logging.INFO, logger="chunking"):
        w.stage_one(long_pdf(2))
        run_stage_one(b"%PDF-1.4 nonsense", source="bad.pdf", container="c", settings=w.settings,
                      payloads=w.payloads, ledger=w.ledger, send=w.batches.extend)
    lines = [(r.name, r.levelname, r.getMessage().split(":")[0]) for r in caplog.records
             if r.getMessage().startswith(("split ", "rejected "))]

    assert lines == [("chunking.pipeline.stage_one", "INFO", "split long.pdf"),
                     ("chunking.pipeline.stage_one", "ERROR", "rejected bad.pdf")]


@pytest.mark.parametrize(("source", "data", "expected"), [
    ("notes.txt", b"Plain notes without any declared title. Two sentences here.\n", ["read_pages"]),
    ("notes.csv", b"name,size\nkiwi,3\n", ["read_pages"]),
    ("notes.md", b"---\ntitle: Declared\n---\n# Heading\n\nText of the notes.\n", ["read_pages", "read_head"]),
])
def test_a_document_read_whole_starts_a_second_child_only_for_a_title_its_format_declares(tmp_path, monkeypatch,
                                                                                        source, data, expected):
    """A text, CSV, JSON or code file has no title property (format table: ``title_source`` none), so its read
    in a child is the only child: no second one is started to find no title. The records are those of an
    in-line read (the title then comes from the first heading or the file name either way)."""
    children = _child_targets(monkeypatch)
    worlds = {mode: _World(tmp_path / mode, PARSE_ISOLATION=mode) for mode in ("process", "inline")}
    for world in worlds.values():
        result = run_stage_one(data, source=source, container="c", settings=world.settings, payloads=world.payloads,
                               ledger=world.ledger, send=world.batches.extend)
        assert result.outcome == "added"
    assert children == expected
    process, inline = (_records_with_titles(worlds[m].batches, worlds[m].payloads) for m in ("process", "inline"))
    assert process == inline and process[0][-1] == {"notes.txt": "notes", "notes.csv": "notes",
                                                    "notes.md": "Declared"}[source]


def _records_with_titles(messages, payloads) -> list[tuple]:
    return [(r.id, r.content, r.title) for m in messages if not (message := decode_message(m)).check
            for r in load_records(message, payloads)]


def _child_targets(monkeypatch) -> list[str]:
    """The names of the functions parse children run from now on (``chunking.parsers.sandbox``), in order."""
    import chunking.parsers.sandbox as sandbox

    children: list[str] = []
    real = sandbox._exchange

    def counting(target, *args, **kwargs):
        children.append(target.__name__)
        return real(target, *args, **kwargs)

    monkeypatch.setattr(sandbox, "_exchange", counting)
    return children
