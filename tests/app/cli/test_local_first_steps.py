"""A newcomer's first local runs (no Azure settings: local ledger and index under .chunking/, offline embedder):
``status --document`` finds what ``ingest`` wrote, under any spelling of its path; an index left empty by a run
with another embedder does not block the next run; a query of stop words only gets no keyword hits."""

from __future__ import annotations

import json

from chunking.index.local import LocalIndex


def _guide(cli):
    (cli.cwd / "mydocs").mkdir()
    (cli.cwd / "mydocs" / "guide.md").write_text("# Guide\n\nThe install guide explains python versions.\n")
    run = cli("ingest", "mydocs")
    assert run.status == 0, run.err


def test_status_finds_a_local_document_under_any_spelling_of_its_path(cli):
    _guide(cli)
    for spelling in ("mydocs/guide.md", "./mydocs/guide.md", str(cli.cwd / "mydocs" / "guide.md"),
                     "mydocs//guide.md"):
        run = cli("status", "--document", spelling)
        assert (run.status, run.err) == (0, ""), spelling
        view = json.loads(run.out)
        assert (view["path"], view["container"], view["status"], view["chunk_count"]) == (
            "mydocs/guide.md", "local", "indexed", 1)


def test_status_of_a_failed_document_prints_its_reason_and_exits_1(cli):
    (cli.cwd / "empty.md").write_text("")
    assert cli("ingest", "empty.md").status == 1
    run = cli("status", "--document", "empty.md")
    view = json.loads(run.out)
    assert (run.status, run.err, view["path"], view["status"], view["reason"], view["failure"]) == (
        1, "", "empty.md", "failed", "file is empty", "permanent")


def test_status_names_where_it_looked_for_a_missing_document(cli):
    _guide(cli)
    run = cli("status", "--document", "./mydocs/other.md")
    assert (run.status, run.out) == (1, "")
    assert run.err == ("chunking status: no document local/mydocs/other.md nor documents/./mydocs/other.md in the "
                       "ledger .chunking/ledger.sqlite3\n")


def test_an_empty_index_of_another_dimension_takes_the_new_one(cli):
    # What a run with an unreachable Azure OpenAI leaves: an index file of 1536 dimensions and no record.
    LocalIndex(cli.cwd / ".chunking" / "index.sqlite3", 1536).ensure()
    (cli.cwd / "a.txt").write_text("Pyenv lets you switch Python versions.\n")
    run = cli("ingest", "a.txt")
    assert run.status == 0, run.err
    assert run.out.splitlines()[-1].startswith("1 added, 0 updated, 0 unchanged (skipped), 0 deleted, 0 failed")
    assert cli("status").out.splitlines()[-1] == "index: local .chunking/index.sqlite3, schema 2 (current), 1 records"


def test_an_index_with_records_of_another_dimension_says_what_to_do(cli, monkeypatch):
    (cli.cwd / "a.txt").write_text("Pyenv lets you switch Python versions.\n")
    monkeypatch.setenv("EMBEDDING_DIMENSIONS", "8")
    assert cli("ingest", "a.txt").status == 0
    monkeypatch.delenv("EMBEDDING_DIMENSIONS")
    run = cli("ingest", "a.txt")
    assert (run.status, run.out) == (2, "")
    assert run.err == (
        "chunking ingest: .chunking/index.sqlite3 holds 1 record with 8-dimensional vectors, but the embedder makes "
        "256: go back to the embedder settings that made them, or delete .chunking/index.sqlite3 and ingest again "
        "(the documents are then written anew), or use another index file (another CHUNKING_STATE_DIR)\n")
    # What the message says works: the ledger still says indexed, and the file is written again.
    (cli.cwd / ".chunking" / "index.sqlite3").unlink()
    run = cli("ingest", "a.txt")
    assert run.status == 0, run.err
    assert run.out.splitlines()[-1].startswith("0 added, 1 updated, 0 unchanged (skipped), 0 deleted, 0 failed")


def test_a_query_of_stop_words_only_gets_no_hits(cli):
    _guide(cli)
    assert cli("search", "The and OF") == (0, "no hits: the query has only stop words (the, and, of …), which every "
                                              "chunk holds; add a word that says what you look for\n", "")
    assert cli("search", "the and of", "--json") == (0, "[]\n", "")
    run = cli("search", "the guide")
    assert run.out.startswith("1. mydocs/guide.md  relevance ")


def test_a_document_waiting_for_a_retry_shows_its_last_error(cli):
    # What an ingest whose embedder could not be reached leaves (chunking.pipeline.ingest): the version stays
    # queued for the next run, with the reason; status lists it with that reason, not as a bare "1 queued".
    from chunking.ids import doc_id
    from chunking.services import make_ledger
    from chunking.settings import Settings

    ledger = make_ledger(Settings.from_env({}))
    did = doc_id("local", "a.txt")
    ledger.begin_version(did, "a.txt", "v1", 1, 1, "local", status="queued")
    reason = ("Azure OpenAI at contoso-xyz.openai.azure.com: not reachable (Connection error.): check "
              "AZURE_OPENAI_ENDPOINT and the network; next attempt: the next ingest run")
    ledger.record_error(did, "a.txt", "v1", reason)
    run = cli("status")
    assert run.status == 0, run.err
    lines = run.out.splitlines()
    assert lines[0] == "0 indexed, 1 queued, 0 sending, 0 failed, 0 deleted"
    assert lines[2].split() == ["retrying", "source", "status", "last", "error", "attempts"]
    assert lines[4].startswith("a.txt") and reason in lines[4] and lines[4].rstrip().endswith("1")
    assert json.loads(cli("status", "--json").out)["retrying"] == [
        {"source": "a.txt", "doc_id": did, "status": "queued", "error": reason, "attempts": 1,
         "updated_at": ledger.get(did).updated_at}]
