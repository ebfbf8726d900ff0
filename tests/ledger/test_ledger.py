def test_lifecycle(ledger):
    assert ledger.get("d1") is None
    e = ledger.begin_version("d1", "a.pdf", "v1", chunk_count=10, batch_count=2)
    assert (e.version, e.status, e.chunk_count, e.batch_count, e.indexed_version) == ("v1", "queued", 10, 2, "")
    ledger.record_error("d1", "a.pdf", "v1", "embedding endpoint said 503")
    assert (ledger.get("d1").attempts, ledger.get("d1").error) == (1, "embedding endpoint said 503")
    assert ledger.mark_indexed("d1", "a.pdf", "v1") is True
    e = ledger.get("d1")
    assert (e.status, e.indexed_version, e.error) == ("indexed", "v1", "")

    # A new upload that cannot be parsed: failed with the reason, the indexed version stays.
    ledger.mark_failed("d1", "a.pdf", "v2", "not a valid PDF: no header")
    e = ledger.get("d1")
    assert (e.version, e.status, e.indexed_version, e.error) == ("v2", "failed", "v1", "not a valid PDF: no header")

    # A good v3 arrives; a late poisoned batch of v2 changes nothing; a late completion of v2 neither.
    ledger.begin_version("d1", "a.pdf", "v3", chunk_count=4, batch_count=1)
    assert ledger.mark_failed("d1", "a.pdf", "v2", "poison", only_if_current=True).version == "v3"
    assert ledger.mark_indexed("d1", "a.pdf", "v2") is False
    assert ledger.get("d1").status == "queued"
    assert ledger.mark_indexed("d1", "a.pdf", "v3") is True

    ledger.mark_deleted("d1", "a.pdf")
    e = ledger.get("d1")
    assert (e.status, e.indexed_version) == ("deleted", "")
    assert [x.doc_id for x in ledger.entries()] == ["d1"]


def test_conditional_write_detects_a_concurrent_change(ledger):
    ledger.begin_version("d2", "b.txt", "v1", 1, 1)
    entry, tag = ledger.store.read("d2")
    ledger.record_error("d2", "b.txt", "v1", "boom")  # someone else writes in between
    assert ledger.store.write(entry, tag) is False
    assert ledger.store.write(entry, ledger.store.read("d2")[1]) is True


def test_sending_becomes_queued_only_for_the_current_unfinished_version(ledger):
    ledger.begin_version("d3", "c.txt", "v1", 6, 2, status="sending")
    assert ledger.get("d3").status == "sending"
    ledger.mark_sent("d3", "c.txt", "v1")
    assert ledger.get("d3").status == "queued"
    # Stage 2 finished before the sender confirmed: indexed stays indexed.
    ledger.begin_version("d3", "c.txt", "v2", 1, 1, status="sending")
    assert ledger.mark_indexed("d3", "c.txt", "v2") is True
    ledger.mark_sent("d3", "c.txt", "v2")
    assert (ledger.get("d3").status, ledger.get("d3").indexed_version) == ("indexed", "v2")
    # A slow sender of v3 confirming after v4 became current changes nothing.
    ledger.begin_version("d3", "c.txt", "v3", 1, 1, status="sending")
    ledger.begin_version("d3", "c.txt", "v4", 1, 1, status="sending")
    ledger.mark_sent("d3", "c.txt", "v3")
    assert (ledger.get("d3").version, ledger.get("d3").status) == ("v4", "sending")


def test_batch_records_per_version_written_once(ledger):
    ledger.begin_version("d4", "e.txt", "v1", chunk_count=5, batch_count=3)
    ledger.record_batch("d4", "v1", 1, ["d4-v1-000002", "d4-v1-000003"])
    ledger.record_batch("d4", "v1", 1, ["ignored"])  # a duplicate delivery records nothing new
    ledger.record_batch("d4", "v1", 0, ["d4-v1-000000", "d4-v1-000001"])
    ledger.record_batch("d4", "v2", 0, ["d4-v2-000000"])
    ledger.record_batch("d40", "v1", 0, ["other document"])
    assert ledger.batches_done("d4", "v1") == {0, 1}
    assert [(b.version, b.batch_no, b.keys) for b in ledger.batch_records("d4")] == [
        ("v1", 0, ("d4-v1-000000", "d4-v1-000001")), ("v1", 1, ("d4-v1-000002", "d4-v1-000003")),
        ("v2", 0, ("d4-v2-000000",))]
    ledger.forget_batches("d4", "v1")
    assert ledger.batches_done("d4", "v1") == set()
    assert [b.version for b in ledger.batch_records("d4")] == ["v2"]
    assert [e.doc_id for e in ledger.entries()] == ["d4"]  # batch records are not entries


def test_batch_record_with_many_long_keys(ledger):
    keys = [f"d5-{'v' * 40}-{i:06d}" for i in range(1500)]  # > 64 KiB of JSON: several table properties
    ledger.record_batch("d5", "v1", 0, keys)
    (record,) = ledger.batch_records("d5", "v1")
    assert record.keys == tuple(keys)


def test_member_lists_are_kept_per_version_beside_the_batch_records(ledger):
    # A container's members (docs/architecture.md#containers): one list per version, in parts of 200 names,
    # written once, gone with the version's batch records, never taken for batches or page ranges.
    names = [f"box.zip/f{i:03d}.txt" for i in range(450)]
    ledger.record_members("d1", "v1", names)
    ledger.record_members("d1", "v1", ["box.zip/other.txt"])  # a duplicate delivery writes nothing
    ledger.record_members("d1", "v2", [])
    ledger.record_batch("d1", "v1", 0, ["k1"])
    ledger.record_range("d1", "v1", 0)
    assert ledger.member_lists("d1") == {"v1": set(names), "v2": set()}
    assert ledger.batches_done("d1", "v1") == {0}
    assert ledger.ranges_done("d1", "v1") == {0}
    assert [b.keys for b in ledger.batch_records("d1")] == [("k1",)]
    ledger.forget_batches("d1", "v1")
    assert ledger.member_lists("d1") == {"v2": set()}


def test_the_summary_lists_documents_waiting_for_a_retry_with_their_last_error(tmp_path):
    from chunking.ledger import Ledger, LocalLedgerStore, summary

    ledger = Ledger(LocalLedgerStore(tmp_path / "ledger.sqlite3"))
    ledger.begin_version("q", "q.txt", "v1", 1, 1, "local")
    ledger.record_error("q", "q.txt", "v1", "Azure OpenAI at x: not reachable; next attempt: the next ingest run")
    ledger.begin_version("s", "s.txt", "v1", 1, 1, "local", status="sending")
    ledger.record_error("s", "s.txt", "v1", "queue: HTTP 503")
    ledger.begin_version("i", "i.txt", "v1", 1, 1, "local")
    ledger.record_error("i", "i.txt", "v1", "HTTP 429")
    ledger.mark_indexed("i", "i.txt", "v1")  # done after all: the error is gone
    ledger.mark_failed("f", "f.txt", "v1", "not a valid PDF", container="local")
    ledger.begin_version("ok", "ok.txt", "v1", 1, 1, "local")  # on its way, no error
    report = summary(ledger.entries())
    assert report["counts"] == {"indexed": 1, "queued": 2, "sending": 1, "failed": 1, "deleted": 0}
    assert [(e["source"], e["status"], e["error"], e["attempts"]) for e in report["retrying"]] == [
        ("q.txt", "queued", "Azure OpenAI at x: not reachable; next attempt: the next ingest run", 1),
        ("s.txt", "sending", "queue: HTTP 503", 1)]
    assert [e["source"] for e in report["failed"]] == ["f.txt"]


def test_the_sqlite_ledger_commits_in_wal_mode_without_waiting_for_the_disk(tmp_path):
    """docs/architecture.md#the-ledger: WAL with synchronous=NORMAL (1), as the local index; FULL (2), the
    default, flushed the disk at every commit of a batch run, several per document."""
    from chunking.ledger.sqlite_store import LocalLedgerStore

    store = LocalLedgerStore(tmp_path / "ledger.sqlite3")
    assert store._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store._db.execute("PRAGMA synchronous").fetchone()[0] == 1
