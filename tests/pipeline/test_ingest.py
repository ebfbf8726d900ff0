"""Batch runs and their cleanup modes (docs/architecture.md#batch-runs-and-cleanup-modes, one file = one document)."""

from pathlib import Path

import pytest

from chunking.ledger import Ledger, LocalLedgerStore
from chunking.pipeline.ingest import collect_files, ingest_files
from tests.local_services import local_services


@pytest.fixture
def env(tmp_path):
    services = local_services(tmp_path / "state")
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in (("a.txt", "Alpha apples are red."), ("b.txt", "Beta bananas are yellow."),
                       ("c.txt", "Gamma grapes are green.")):
        (docs / name).write_text(text)
    return tmp_path, docs, services


def run(tmp_path: Path, paths, services, **kw):
    files, scopes, _ = collect_files(paths, cwd=tmp_path)
    return ingest_files(files, scopes=scopes, **services, **kw)


def versions(services) -> dict[str, set[str]]:
    index = services["index"]
    return {r.source: {x.version for x in index.records_of(r.doc_id)}
            for did in index.doc_ids() for r in index.records_of(did)}


def test_unchanged_documents_are_skipped_for_any_mode(env):
    tmp_path, docs, services = env
    first = run(tmp_path, [docs], services)
    assert (first.count("added"), first.count("skipped")) == (3, 0)
    for mode in ("none", "incremental", "full", "scoped_full"):
        again = run(tmp_path, [docs], services, cleanup=mode)
        assert (again.count("skipped"), again.deleted, again.to_dict()["embedding_tokens"]) == (3, [], 0)


def test_none_keeps_the_old_version_incremental_replaces_it(env):
    tmp_path, docs, services = env
    run(tmp_path, [docs], services)
    (docs / "a.txt").write_text("Alpha apples are now green.")
    assert run(tmp_path, [docs], services, cleanup="none").count("updated") == 1
    assert len(versions(services)["docs/a.txt"]) == 2  # old and new side by side
    (docs / "a.txt").write_text("Alpha apples are now golden.")
    run(tmp_path, [docs], services, cleanup="incremental")
    assert len(versions(services)["docs/a.txt"]) == 1


def test_full_deletes_everything_not_seen_scoped_full_only_in_scope(env):
    tmp_path, docs, services = env
    other = tmp_path / "other"
    other.mkdir()
    (other / "d.txt").write_text("Delta dates are brown.")
    run(tmp_path, [docs, other], services)
    (docs / "b.txt").unlink()
    scoped = run(tmp_path, [docs], services, cleanup="scoped_full")
    assert scoped.deleted == ["docs/b.txt"]  # other/d.txt is out of scope: kept
    assert set(versions(services)) == {"docs/a.txt", "docs/c.txt", "other/d.txt"}
    full = run(tmp_path, [docs], services, cleanup="full")
    assert full.deleted == ["other/d.txt"]
    assert set(versions(services)) == {"docs/a.txt", "docs/c.txt"}
    with pytest.raises(ValueError, match="would delete every document"):
        run(tmp_path, [], services, cleanup="full")
    assert run(tmp_path, [], services, cleanup="full", allow_empty_full=True).deleted == ["docs/a.txt", "docs/c.txt"]
    assert versions(services) == {}


def test_a_full_run_drops_what_the_index_holds_without_a_ledger_row(env, tmp_path):
    """The ledger lost (its file removed) while the index was kept, and a file removed meanwhile: the next full
    run writes the kept files again under the same keys and drops the removed file's chunks, which no ledger
    row describes any more (docs/operations.md#one-state-per-place)."""
    tmp, docs, services = env
    run(tmp, [docs], services)
    before = versions(services)
    assert set(before) == {"docs/a.txt", "docs/b.txt", "docs/c.txt"}
    (tmp_path / "state" / "ledger.sqlite3").unlink()
    services["ledger"] = Ledger(LocalLedgerStore(tmp_path / "state" / "ledger2.sqlite3"))
    (docs / "c.txt").unlink()
    summary = run(tmp, [docs], services, cleanup="full")
    assert (summary.count("added"), summary.deleted) == (2, ["docs/c.txt"])
    assert versions(services) == {k: v for k, v in before.items() if k != "docs/c.txt"}
