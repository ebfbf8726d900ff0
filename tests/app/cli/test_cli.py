"""``python -m chunking`` as a user runs it: a subprocess in a temporary working directory."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def run(args, cwd, env_extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AZURE_", "OPENAI_", "AzureWebJobs"))}
    env["PYTHONPATH"] = str(ROOT)
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "chunking", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, corpus):
    work = tmp_path_factory.mktemp("cli")
    docs = work / "docs"
    docs.mkdir()
    for name in ("pyenv-README.md", "debian-releases.csv", "aptitude-ch02s05s05.ja.html"):
        (docs / name).write_bytes((corpus / name).read_bytes())
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4 nonsense")
    return work


def test_ingest_then_skip_then_search(workdir):
    (workdir / "docs" / "LICENSE").write_text("not a document type we read")
    first = run(["ingest", "docs", "--json"], workdir)
    assert first.returncode == 1, first.stderr  # one document failed
    assert "python -m chunking ingest: docs/broken.pdf: not a valid PDF" in first.stderr
    summary = json.loads(first.stdout)
    assert (summary["added"], summary["updated"], summary["skipped"], summary["failed"]) == (3, 0, 0, 1)
    assert summary["failures"] == [{"source": "docs/broken.pdf", "error": summary["failures"][0]["error"]}]
    assert "not a valid PDF" in summary["failures"][0]["error"]
    assert summary["chunks"] > 10 and summary["embedding_tokens"] == summary["tokens"]
    assert (workdir / ".chunking" / "index.sqlite3").exists()

    again = json.loads(run(["ingest", "docs", "--json"], workdir).stdout)
    assert (again["skipped"], again["embedding_tokens"], again["embedding_requests"]) == (3, 0, 0)
    assert again["ignored_sources"] == ["docs/LICENSE"]
    # The same file named directly is the same document.
    direct = json.loads(run(["ingest", "docs/pyenv-README.md", "--json"], workdir).stdout)
    assert direct["per_document"][0]["source"] == "docs/pyenv-README.md" and direct["skipped"] == 1

    hits = json.loads(run(["search", "pyenv install", "-k", "3", "--json"], workdir).stdout)
    assert len(hits) == 3
    assert {"source", "sourcepage", "content", "score"} <= set(hits[0])
    assert hits[0]["source"] == "docs/pyenv-README.md"

    text = run(["search", "pyenv install", "-k", "1"], workdir).stdout
    assert text.startswith("1. docs/pyenv-README.md  relevance ")

    status = json.loads(run(["status", "--json"], workdir).stdout)
    assert status["counts"] == {"indexed": 3, "queued": 0, "sending": 0, "failed": 1, "deleted": 0}
    assert status["failed"][0]["source"] == "docs/broken.pdf"


def test_scoped_full_cleanup_removes_vanished_files(workdir):
    (workdir / "docs" / "debian-releases.csv").unlink()
    out = json.loads(run(["ingest", "docs", "--cleanup", "scoped_full", "--json"], workdir).stdout)
    assert out["deleted_sources"] == ["docs/debian-releases.csv"]
    status = json.loads(run(["status", "--json"], workdir).stdout)
    assert status["counts"]["deleted"] == 1


def test_split_jsonl_and_errors(workdir, corpus):
    out = run(["split", str(corpus / "pyenv-README.md"), "--format", "jsonl", "--max-tokens", "200"], workdir)
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(rows) > 20 and all({"id", "content", "char_start", "char_end", "page_start", "token_count", "headings",
                                   "kind"} <= set(r) for r in rows)
    missing = run(["ingest", "nowhere"], workdir)
    assert missing.returncode == 2 and "nowhere: no such file or folder" in missing.stderr
    (workdir / "empty").mkdir()
    empty = run(["ingest", "--cleanup", "full", "empty"], workdir)
    assert empty.returncode == 2 and "would delete every document" in empty.stderr


def test_same_name_in_two_folders_are_two_documents(tmp_path):
    for folder, words in (("x", "apples and pears"), ("y", "rivers and lakes")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "a.txt").write_text(f"A note about {words}.")
    out = json.loads(run(["ingest", "x/a.txt", str(tmp_path / "y" / "a.txt"), "--json"], tmp_path).stdout)
    assert [r["source"] for r in out["per_document"]] == ["x/a.txt", "y/a.txt"]
    assert out["added"] == 2
