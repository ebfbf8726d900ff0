"""One state per place (docs/operations.md#one-state-per-place): the README's sections followed in order, in a
temporary copy — `make demo` (the CLI's own ledger), then docs/deploy.md's "Running the Functions locally"
(local.settings.json: Azurite's ledger, the same state folder), then `chunking ingest` — never end in a
duplicated index, and a state folder removed on its own (what an older `make clean` did) is repaired, not left
saying "indexed" beside an empty index."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from azure.storage.queue import QueueClient

from tests.app.cli.test_cli import run
from tests.integration.test_local_functions_azurite import SAMPLE, _run_functions

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
FILES = ("pyenv-README.md", "debian-releases.csv")


def _records(path: Path) -> list[tuple[str, str]]:
    """(doc_id, content) of every record of the local index file *path*."""
    with sqlite3.connect(path) as db:
        return db.execute("SELECT doc_id, content FROM records").fetchall()


def _ok(result) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


def _jobs(values) -> int:
    queue = QueueClient.from_connection_string(values["AzureWebJobsStorage"], values["STAGE1_JOB_QUEUE"])
    return queue.get_queue_properties().approximate_message_count


def test_the_readme_in_order_never_doubles_the_index(azurite, tmp_path, monkeypatch):
    cwd = tmp_path / "clone"
    (cwd / "samples").mkdir(parents=True)
    for name in FILES:
        shutil.copy(ROOT / "samples" / name, cwd / "samples" / name)

    # make demo: the CLI alone, its ledger and index in .chunking/
    _ok(run(["ingest", "samples/"], cwd))
    demo = _records(cwd / ".chunking" / "index.sqlite3")
    assert demo and len(demo) == len(set(demo))

    # docs/deploy.md, Running the Functions locally: local.settings.json (Azurite), upload, status
    tag = "".join(c for c in tmp_path.name[-10:].lower() if c.isalnum())
    values = {**SAMPLE["Values"], "AzureWebJobsStorage": azurite.connection_string,
              "DOCUMENTS_CONTAINER": f"docs{tag}", "CHUNK_BATCH_QUEUE": f"batches{tag}",
              "STAGE1_JOB_QUEUE": f"jobs{tag}", "LEDGER_TABLE": f"ledger{tag}"}
    (cwd / "local.settings.json").write_text(json.dumps({"IsEncrypted": False, "Values": values}))
    _ok(run(["upload", "samples/"], cwd))
    # No Functions host yet: reconcile enqueues each blob once, however often it runs (not 2, 4, 6 jobs).
    for _ in range(3):
        _ok(run(["reconcile"], cwd))
        assert _jobs(values) == len(FILES)
    status = _ok(run(["status"], cwd))
    assert status.splitlines()[0] == f"0 indexed, {len(FILES)} queued, 0 sending, 0 failed, 0 deleted"

    # func start: the functions index the blobs into the Functions' own index, beside the Functions' ledger
    values["CHUNKING_STATE_DIR"] = str(cwd / ".chunking")
    _run_functions(values, monkeypatch)
    functions_index = cwd / ".chunking" / f"index-{values['LEDGER_TABLE']}.sqlite3"
    assert functions_index.exists()
    assert _records(cwd / ".chunking" / "index.sqlite3") == demo  # the demo's index is untouched
    after_functions = _records(functions_index)
    assert after_functions and len(after_functions) == len(set(after_functions))
    status = _ok(run(["status"], cwd)).splitlines()
    assert status[0] == f"{len(FILES)} indexed, 0 queued, 0 sending, 0 failed, 0 deleted"
    assert f".chunking/index-{values['LEDGER_TABLE']}.sqlite3, schema 2" in status[-1]

    # then `chunking ingest` of the same folder: the uploaded files are not written a second time
    out = _ok(run(["ingest", "samples/"], cwd))
    assert f"{len(FILES)} files also uploaded to the documents container" in out
    assert _records(functions_index) == after_functions
    hits = json.loads(_ok(run(["search", "pyenv install", "-k", "10", "--json"], cwd)))
    texts = [h["content"] for h in (hits["hits"] if isinstance(hits, dict) else hits)]
    assert texts and len(texts) == len(set(texts))  # no hit twice

    # without local.settings.json the demo's state is what it was
    (cwd / "local.settings.json").rename(cwd / "local.settings.off")
    again = _ok(run(["ingest", "samples/", "--json"], cwd))
    assert json.loads(again)["skipped"] == len(FILES)
    assert _records(cwd / ".chunking" / "index.sqlite3") == demo


def test_a_state_folder_removed_alone_is_repaired_by_the_next_ingest(tmp_path):
    cwd = tmp_path / "clone"
    (cwd / "samples").mkdir(parents=True)
    for name in FILES:
        shutil.copy(ROOT / "samples" / name, cwd / "samples" / name)
    _ok(run(["ingest", "samples/"], cwd))
    records = sorted(_records(cwd / ".chunking" / "index.sqlite3"))
    (cwd / ".chunking" / "index.sqlite3").unlink()  # the index gone, the ledger kept
    status = _ok(run(["status"], cwd)).splitlines()
    assert status[1] == (f"{len(FILES)} indexed in the ledger but missing from the index .chunking/index.sqlite3: "
                         "`chunking ingest` writes local files again, `chunking reconcile` the container's blobs")
    summary = json.loads(_ok(run(["ingest", "samples/", "--json"], cwd)))
    assert (summary["added"] + summary["updated"], summary["skipped"]) == (len(FILES), 0)
    assert sorted(_records(cwd / ".chunking" / "index.sqlite3")) == records
    assert len(_ok(run(["status"], cwd)).splitlines()) == 2  # counts and the index line: nothing missing
