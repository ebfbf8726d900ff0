"""``chunking reprocess`` against Azurite and the lagging Search fake: after a settings change it puts the stale
documents (or those under a prefix, or all) on the stage-1 job queue, parses nothing itself, and once the
queue-triggered stage 1 has run them the index is exactly current under the new settings."""

from __future__ import annotations

import hashlib
import json

import pytest

from chunking.app.cli import main
from chunking.ids import doc_id
from tests.azurite_harness import Harness, _paragraphs

pytestmark = pytest.mark.integration


@pytest.fixture
def h(azurite, tmp_path, monkeypatch, request):
    name = "rp" + hashlib.sha256(request.node.name.encode()).hexdigest()[:12]
    harness = Harness(azurite, name, tmp_path / "state", monkeypatch)
    monkeypatch.chdir(tmp_path)  # no local.settings.json here: the harness's environment is the settings
    yield harness
    harness.handlers.services.cache_clear()


def chunking(capsys, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        status = main(["reprocess", *args])
    except SystemExit as exc:  # argparse: --help, bad usage
        status = exc.code
    out = capsys.readouterr()
    return status, out.out, out.err


def test_reprocess_after_a_settings_change(h, capsys, monkeypatch):
    sources = [f"a/{i}.txt" for i in range(5)] + [f"b/{i}.txt" for i in range(3)]
    for i, source in enumerate(sources):
        h.upload(source, _paragraphs(6 + i, f"reprocess{i}"))
    h.drain()
    status, out, _ = chunking(capsys, "--dry-run", "--json")
    assert status == 0 and json.loads(out) == {"checked": 8, "selected": [], "enqueued": [], "failed": [],
                                               "dry_run": True}

    monkeypatch.setenv("SPLIT_MAX_TOKENS", "40")  # every document's chunks change
    h.handlers.services.cache_clear()
    status, out, _ = chunking(capsys, "--dry-run")
    assert status == 0
    assert out.splitlines() == ["checked 8 blobs: would enqueue 8 documents",
                                *(f"  {s}: splitter settings" for s in sorted(sources))]
    assert h._jobs_left() == 0  # a dry run enqueues nothing

    status, out, _ = chunking(capsys, "--prefix", "a/", "--json")
    report = json.loads(out)
    assert status == 0 and report["enqueued"] == sources[:5] and h._jobs_left() == 5
    assert all(h.s.ledger.get(doc_id(h.cname, s)).requeued_at for s in sources[:5])
    assert {h.s.ledger.get(doc_id(h.cname, s)).status for s in sources} == {"indexed"}  # nothing parsed yet
    h.drain()
    status, out, _ = chunking(capsys)  # the stale ones: only b/ is left
    assert (status, out.splitlines()[0]) == (0, "checked 8 blobs: enqueued 3 documents")
    h.drain()
    h.assert_index_is_exactly_current()
    assert chunking(capsys, "--dry-run")[1].splitlines() == ["checked 8 blobs: would enqueue 0 documents"]

    status, out, _ = chunking(capsys, "--all", "--json")
    assert status == 0 and json.loads(out)["enqueued"] == sorted(sources)
    h.drain()
    h.assert_index_is_exactly_current()


def test_usage(h, capsys):
    status, out, _ = chunking(capsys, "--help")
    assert status == 0 and "--all" in out and "--prefix P" in out and "--dry-run" in out and "--json" in out
    assert "BACKFILL_MAX_PER_RUN" in out
    status, _, err = chunking(capsys, "--all", "--prefix", "a/")
    assert status == 2 and "not allowed with argument" in err
    # Reconcile says what it does: it enqueues stage-1 work, it does not parse.
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["reconcile", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "on the stage-1 job queue" in help_text and "Nothing is parsed here." in help_text
