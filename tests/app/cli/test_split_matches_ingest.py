"""``chunking split`` prints exactly the records ``chunking ingest`` stores for the same file: ids, citations,
heading paths, kinds, offsets and text."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from chunking.ids import doc_id
from chunking.index.local import LocalIndex
from chunking.pipeline.ingest import LOCAL_CONTAINER
from chunking.settings import Settings

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ("pyenv-README.md", "aptitude-ch02s05s05.ja.html", "debian-releases.csv", "iso_3166-1.json",
           "debian-reference-ch01.es.docx")


def stored(cwd: Path, source: str) -> list[dict]:
    index = LocalIndex(cwd / ".chunking" / "index.sqlite3", Settings().embedding_dimensions)
    try:
        records = sorted(index.records_of(doc_id(LOCAL_CONTAINER, source)), key=lambda r: r.ordinal)
    finally:
        index.close()
    rows = [r.to_dict() for r in records]
    for row in rows:
        del row["embedding"]
    return rows


def test_split_jsonl_is_what_ingest_stores(cli):
    notes = cli.cwd / "notes"
    notes.mkdir()
    for name in SAMPLES:
        shutil.copy(ROOT / "samples" / name, notes / name)
    assert cli("ingest", "notes").status == 0
    for name in SAMPLES:
        run = cli("split", f"notes/{name}", "--format", "jsonl")
        assert run.status == 0, run.err
        printed = [json.loads(line) for line in run.out.splitlines()]
        assert printed == stored(cli.cwd, f"notes/{name}"), name
        assert len(printed) > 1


def test_split_table_shows_the_stored_headings_and_kinds(cli):
    (cli.cwd / "guide.html").write_text(
        "<h1>Guide</h1><p>Intro text here.</p><h2>Install</h2><p>Run the installer.</p>"
        "<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>", encoding="utf-8")
    assert cli("ingest", "guide.html").status == 0
    rows = stored(cli.cwd, "guide.html")
    lines = cli("split", "guide.html").out.splitlines()
    assert lines[0].split() == ["#", "page", "chars", "tokens", "len", "kind", "headings", "text"]
    body = lines[2:2 + len(rows)]
    for line, row in zip(body, rows):
        assert f"  {row['kind']}  " in line and " > ".join(row["headings"]) in line
    assert [row["kind"] for row in rows] == ["text"] * len(rows)  # a table is stored as text
    assert [row["headings"] for row in rows] == [["Guide"], ["Guide", "Install"]]
