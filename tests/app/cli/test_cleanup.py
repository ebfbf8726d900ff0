"""``ingest --cleanup``: ``full``/``scoped_full`` remove every version that is not the current one; the summary
hints at ``scoped_full`` when indexed files disappeared; ``--exclude`` keeps files out of a folder run (``make
demo`` keeps ``samples/SOURCES.md`` out that way)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from chunking.app.cli.app import build_parser
from chunking.ids import doc_id
from chunking.index.local import LocalIndex
from chunking.pipeline.ingest import LOCAL_CONTAINER, collect_files
from chunking.settings import Settings

ROOT = Path(__file__).resolve().parents[3]


def versions(cwd: Path, source: str) -> list[str]:
    """The distinct versions of *source* in the local index under *cwd*, sorted."""
    index = LocalIndex(cwd / ".chunking" / "index.sqlite3", Settings().embedding_dimensions)
    try:
        return sorted(set(index.keys_of(doc_id(LOCAL_CONTAINER, source)).values()))
    finally:
        index.close()


def test_full_and_scoped_full_remove_a_version_left_by_cleanup_none(cli):
    notes = cli.cwd / "notes"
    notes.mkdir()
    for mode in ("full", "scoped_full"):
        (notes / "a.md").write_text("# A\nThe first text.\n")
        (notes / "b.md").write_text(f"# B\nAnother file, for {mode}.\n")
        assert cli("ingest", "notes").status == 0
        (notes / "a.md").write_text("# A\nThe second text.\n")
        assert cli("ingest", "notes", "--cleanup", "none").status == 0
        assert len(versions(cli.cwd, "notes/a.md")) == 2  # none keeps the old version
        assert json.loads(cli("ingest", "notes", "--json").out)["stale_chunks_deleted"] == {}  # incremental: kept
        assert len(versions(cli.cwd, "notes/a.md")) == 2

        run = cli("ingest", "notes", "--cleanup", mode)
        assert run.status == 0, run.err
        assert "\n1 chunk of old versions deleted from 1 document\n" in run.out
        assert len(versions(cli.cwd, "notes/a.md")) == 1 and len(versions(cli.cwd, "notes/b.md")) == 1
        hits = json.loads(cli("search", "first text", "-k", "5", "--json").out)
        assert [h["content"] for h in hits if h["source"] == "notes/a.md"] == ["# A\nThe second text."]
        again = json.loads(cli("ingest", "notes", "--cleanup", mode, "--json").out)
        assert again["stale_chunks_deleted"] == {} and again["skipped"] == 2


def test_summary_hints_at_scoped_full_when_indexed_files_disappeared(cli):
    notes = cli.cwd / "notes"
    notes.mkdir()
    for name in ("a.md", "b.md", "c.md"):
        (notes / name).write_text(f"# {name}\nText of {name}.\n")
    assert cli("ingest", "notes").status == 0
    (notes / "b.md").unlink()
    run = cli("ingest", "notes")
    assert run.status == 0
    assert run.out.endswith("\n1 indexed file no longer found under notes/ (notes/b.md) is still searchable; run "
                            "again with --cleanup scoped_full to delete it\n")
    (notes / "c.md").unlink()
    assert json.loads(cli("ingest", "notes", "--json").out)["vanished_sources"] == ["notes/b.md", "notes/c.md"]
    assert "2 indexed files no longer found under notes/ (notes/b.md, notes/c.md) are still searchable; run " \
           "again with --cleanup scoped_full to delete them\n" in cli("ingest", "notes").out

    run = cli("ingest", "notes", "--cleanup", "scoped_full")
    assert ", 2 deleted, " in run.out and "--cleanup" not in run.out
    assert "no longer found" not in cli("ingest", "notes").out


def test_exclude_keeps_matching_files_of_a_folder_out(tmp_path):
    (tmp_path / "d" / "drafts").mkdir(parents=True)
    for name in ("a.md", "SOURCES.md", "drafts/x.md", "drafts/y.txt"):
        (tmp_path / "d" / name).write_text("text")
    found = lambda *exclude: [s for _, s in collect_files([tmp_path / "d"], cwd=tmp_path, exclude=exclude)[0]]
    assert found() == ["d/SOURCES.md", "d/a.md", "d/drafts/x.md", "d/drafts/y.txt"]
    assert found("SOURCES.md", "drafts/*.md") == ["d/a.md", "d/drafts/y.txt"]
    # A file named directly is always taken.
    assert [s for _, s in collect_files([tmp_path / "d" / "SOURCES.md"], cwd=tmp_path, exclude=["*.md"])[0]] == [
        "d/SOURCES.md"]


def test_make_demo_indexes_the_sample_documents_but_not_their_licence_list():
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile.split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    line = next(line for line in recipe.splitlines() if " -m chunking ingest " in line)
    args = build_parser().parse_args(shlex.split(line.split(" -m chunking ", 1)[1]))
    files = collect_files([ROOT / p for p in args.paths], cwd=ROOT, exclude=args.exclude)[0]
    sources = [s for _, s in files]
    assert "samples/SOURCES.md" not in sources
    assert sources == sorted(f"samples/{p.name}" for p in (ROOT / "samples").iterdir()
                             if p.is_file() and p.name != "SOURCES.md")


def test_the_summary_table_shows_what_a_skipped_document_was_not_counted_for(cli):
    notes = cli.cwd / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\nThe first text.\n")
    (notes / "b.md").write_text("# B\nAnother file.\n")
    assert cli("ingest", "notes").status == 0
    (notes / "a.md").write_text("# A\nThe second text.\n")

    run = cli("ingest", "notes")

    assert run.status == 0, run.err
    rows = {line.split()[0]: line.split()[1:] for line in run.out.splitlines() if line.startswith(("notes/", "TOTAL"))}
    # source: pages, chunks, max tok, tokens, emb tok, stage1 s, stage2 s, result
    assert rows["notes/b.md"][:5] == ["-", "1", "-", "-", "0"] and rows["notes/b.md"][-1] == "skipped"
    assert rows["notes/a.md"][:5] == ["1", "1", "7", "7", "7"] and rows["notes/a.md"][-1] == "updated"
    assert rows["TOTAL"][:4] == ["1", "2", "7", "7"]
