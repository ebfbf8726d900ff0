"""What a newcomer trying the CLI on mixed files met: a failed member of an archive or a mail is a failed row of
``ingest`` (counted, named on stderr, exit status 1) rather than a line of the ledger only."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from tests.app.cli.conftest import ROOT, run_process
from tests.parsers.made import zip_package


def test_ingest_names_each_failed_member_once_and_exits_1(cli):
    (cli.cwd / "box.zip").write_bytes(zip_package({"ok.md": b"# Kiwi\n\nKiwis are birds.", "empty.txt": b"",
                                                   "tool.exe": b"MZ"}))
    run = cli("ingest", "box.zip")
    assert run.status == 1
    assert run.out.splitlines()[-1].startswith("2 added, 0 updated, 0 unchanged (skipped), 0 deleted, 2 failed;")
    assert run.err.splitlines() == ["chunking ingest: box.zip/empty.txt: file is empty",
                                    "chunking ingest: box.zip/tool.exe: unsupported file type .exe"]
    again = cli("ingest", "box.zip", "--json")
    assert again.status == 1
    assert json.loads(again.out)["failures"] == [
        {"source": "box.zip/empty.txt", "error": "file is empty"},
        {"source": "box.zip/tool.exe", "error": "unsupported file type .exe"}]


def test_a_refused_member_is_one_line_of_stderr_in_a_real_process(tmp_path):
    (tmp_path / "box.zip").write_bytes(zip_package({"ok.md": b"# Kiwi\n\nKiwis are birds.", "tool.exe": b"MZ"}))
    done = run_process(["ingest", "box.zip"], tmp_path)
    assert done.returncode == 1
    assert done.stderr.splitlines() == ["python -m chunking ingest: box.zip/tool.exe: unsupported file type .exe"]


def test_ingest_refuses_a_metadata_name_that_nothing_reads(cli, monkeypatch):
    (cli.cwd / "pay.md").write_text("# Pay\n\nSalaries are paid on the 25th.\n")
    monkeypatch.delenv("METADATA_FIELDS", raising=False)
    monkeypatch.delenv("ACL_SOURCE", raising=False)
    # A typo of acl_users would have left the document visible to everyone, without a word.
    assert cli("ingest", "pay.md", "--metadata", "acl_groups=hr", "--metadata", "acl_user=alice") == (
        2, "", "chunking ingest: --metadata acl_user=alice: no index field or access list is read from this name "
               "(names read: acl_users, acl_groups); add it to METADATA_FIELDS to make it an index field\n")
    assert not (cli.cwd / ".chunking").exists()  # refused before anything was read or written
    monkeypatch.setenv("ACL_SOURCE", "none")
    assert cli("ingest", "pay.md", "--metadata", "ACL_Groups=hr") == (
        2, "", "chunking ingest: --metadata ACL_Groups=hr: the access lists are not read from metadata "
               "(ACL_SOURCE=none)\n")
    monkeypatch.setenv("METADATA_FIELDS", "category,department:dept")
    run = cli("ingest", "pay.md", "--metadata", "Category=policy", "--metadata", "department=HR")
    assert run.status == 0, run.err


def test_no_hits_under_a_filter_or_trimming_says_so(cli, monkeypatch):
    monkeypatch.delenv("ACL_DEFAULT", raising=False)
    (cli.cwd / "pay.md").write_text("# Pay\n\nSalaries are paid on the 25th.\n")
    assert cli("ingest", "pay.md", "--metadata", "acl_users=alice").status == 0
    assert cli("search", "salaries", "--filter", "language eq 'fr'") == (
        0, "no hits: no chunk matching --filter contains a word of the query\n", "")
    assert cli("search", "salaries", "--user", "bob") == (
        0, "no hits: no chunk that --user/--groups may see contains a word of the query\n", "")
    assert cli("search", "salaries", "--filter", "language eq 'en'", "--groups", "staff") == (
        0, "no hits: no chunk matching --filter and that --user/--groups may see contains a word of the query\n", "")
    assert cli("search", "elephants") == (0, "no hits: no chunk contains a word of the query\n", "")
    assert cli("search", "*") == (
        0, "no hits: the query has no word, only punctuation or symbols; search takes words, not patterns\n", "")
    assert cli("search", "salaries", "--user", "alice", "-k", "1").out.startswith("1. pay.md  relevance")


def test_split_with_an_unknown_code_language_is_bad_usage(cli):
    (cli.cwd / "a.py").write_text("x = 1\n")
    run = cli("split", "a.py", "--splitter", "code:pyton")
    assert (run.status, run.out) == (2, "")
    assert run.err == ("chunking split: unknown language 'pyton' in splitter 'code:pyton' for .py; known: cpp, go, "
                       "java, kotlin, js, ts, php, proto, python, r, rst, ruby, rust, scala, swift, markdown, latex, "
                       "html, sol, csharp, cobol, c, lua, perl, haskell, elixir, powershell, visualbasic6\n")
    assert cli("split", "a.py", "--splitter", "code:python").out.splitlines()[-1] == "1 chunk from 1 page of a.py"


def test_split_of_an_archive_names_the_members_ingest_stores_too(cli):
    (cli.cwd / "box.zip").write_bytes(zip_package({"ok.md": b"# Kiwi\n\nKiwis are birds.", "../evil.txt": b"Evil."}))
    run = cli("split", "box.zip")
    assert run.status == 0, run.err
    assert run.out.splitlines()[-2:] == [
        "1 chunk from 1 page of box.zip",
        "2 members of box.zip are documents of their own, which ingest stores too and split does not show: "
        "box.zip/ok.md, box.zip/evil.txt (refused: unsafe member name '../evil.txt' (absolute, or a .. segment))"]
    jsonl = cli("split", "box.zip", "--format", "jsonl")
    assert [json.loads(line)["source"] for line in jsonl.out.splitlines()] == ["box.zip"]
    assert jsonl.err.startswith("2 members of box.zip are documents of their own")
    (cli.cwd / "a.md").write_text("# A\n\nPlain.\n")
    assert cli("split", "a.md").out.splitlines()[-1] == "1 chunk from 1 page of a.md"


def _queued_members(ledger: Path) -> int:
    try:
        with sqlite3.connect(f"file:{ledger}?mode=ro", uri=True, timeout=1) as db:
            return db.execute("select count(*) from ledger").fetchone()[0]
    except sqlite3.Error:  # not created yet, or being written
        return 0


def test_ctrl_c_during_ingest_is_one_line_without_a_traceback(tmp_path):
    # Ctrl-C at a terminal signals the whole foreground process group: the CLI and, before, its parse server too,
    # which printed a KeyboardInterrupt traceback of its own below the CLI's "interrupted".
    (tmp_path / "many.zip").write_bytes(zip_package({f"f{i}.txt": f"Member {i} of the aardvark file.".encode()
                                                     for i in range(1000)}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AZURE_", "OPENAI_", "AzureWebJobs", "CHUNKING_"))}
    env["PYTHONPATH"] = str(ROOT)
    process = subprocess.Popen([sys.executable, "-m", "chunking", "ingest", "many.zip"], cwd=tmp_path, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        # Members are parsed by the parse server one by one: once a few are in the ledger, it is up and serving.
        for _ in range(1200):
            if _queued_members(tmp_path / ".chunking" / "ledger.sqlite3") >= 5 or process.poll() is not None:
                break
            time.sleep(0.05)
        assert process.poll() is None, "the run ended before it could be interrupted"
        os.killpg(process.pid, signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert (process.returncode, out, err) == (130, "", "python -m chunking ingest: interrupted\n")


def test_a_splitter_name_no_splitter_has_stops_ingest_and_eval_before_any_document(cli, monkeypatch):
    (cli.cwd / "a.md").write_text("# Llamas\n\nLlamas hum.\n")
    (cli.cwd / "q.jsonl").write_text('{"question": "do llamas hum", "source": "a.md", "passage": "Llamas hum."}\n')
    known = ("known: sentence, markdown, html, json, csv, code:<language>, semantic, hierarchical, small_to_big, "
             "sentence_window, propositions, llm, router, <name>+enrich\n")
    monkeypatch.setenv("SPLITTERS", ".md=markdwon")
    assert cli("ingest", "a.md") == (2, "", f"chunking ingest: SPLITTERS: unknown splitter 'markdwon' for .md; {known}")
    assert not (cli.cwd / ".chunking").exists()
    monkeypatch.delenv("SPLITTERS")
    assert cli("eval", "a.md", "--questions", "q.jsonl", "--strategy", "semantik") == (
        2, "", f"chunking eval: strategy 'semantik': unknown splitter 'semantik' for .md; {known}")
    monkeypatch.setenv("SPLITTERS", ".md=semantic+enrich")
    assert cli("ingest", "a.md").status == 0


def test_ingest_of_the_working_directory_sees_and_deletes_what_was_removed(cli):
    (cli.cwd / "a.md").write_text("# A\n\nAardvarks dig.\n")
    (cli.cwd / "sub").mkdir()
    (cli.cwd / "sub" / "b.md").write_text("# B\n\nBadgers dig.\n")
    assert cli("ingest", ".").status == 0
    (cli.cwd / "sub" / "b.md").unlink()
    kept = cli("ingest", ".")
    assert kept.out.splitlines()[-1] == ("1 indexed file no longer found under sub/ (sub/b.md) is still searchable; "
                                         "run again with --cleanup scoped_full to delete it")
    (cli.cwd / "a.md").rename(cli.cwd / "c.md")
    kept = cli("ingest", "./")
    assert kept.out.splitlines()[-1] == ("2 indexed files no longer found under ./, sub/ (a.md, sub/b.md) are still "
                                         "searchable; run again with --cleanup scoped_full to delete them")
    gone = cli("ingest", ".", "--cleanup", "scoped_full", "--json")
    assert json.loads(gone.out)["deleted_sources"] == ["a.md", "sub/b.md"]
    assert cli("status").out.splitlines()[0] == "1 indexed, 0 queued, 0 sending, 0 failed, 2 deleted"


def test_a_folder_holding_the_working_directory_covers_its_relative_sources(tmp_path):
    from chunking.pipeline.ingest import collect_files, in_scope

    (tmp_path / "sub").mkdir()
    (tmp_path / "top.md").write_text("Top.")
    (tmp_path / "sub" / "low.md").write_text("Low.")
    files, scopes, _ = collect_files([tmp_path], cwd=tmp_path / "sub")
    top = (tmp_path / "top.md").resolve().as_posix()
    assert [source for _, source in files] == ["low.md", top]
    assert scopes == [f"{tmp_path.resolve().as_posix()}/", ""]
    assert [in_scope(source, scope) for source in ("low.md", top) for scope in scopes] == [False, True, True, False]
    assert collect_files([tmp_path / "sub"], cwd=tmp_path / "sub")[1] == [""]
    assert collect_files([tmp_path / "sub"], cwd=tmp_path)[1] == ["sub/"]


def test_a_file_name_that_is_not_utf8_is_ingested_under_an_escaped_name(cli):
    # One Latin-1 name stopped the whole run: "'utf-8' codec can't encode character '\udce9' …", exit 2.
    (cli.cwd / "notes").mkdir()
    (cli.cwd / "notes" / "ok.md").write_text("# Ok\n\nOkapis.\n")
    latin = os.fsencode(cli.cwd / "notes") + b"/caf\xe9.md"
    with open(latin, "wb") as handle:
        handle.write(b"# Cafe\n\nEspresso beans.\n")
    with open(os.fsencode(cli.cwd / "notes") + b"/r\xe9sum\xe9.xyz", "wb") as handle:
        handle.write(b"unsupported")
    run = cli("ingest", "notes")
    assert run.status == 0, run.err
    assert [line.split()[0] for line in run.out.splitlines()[2:4]] == ["notes/caf\\xe9.md", "notes/ok.md"]
    assert run.out.splitlines()[-1] == "1 file of unsupported types passed over: notes/r\\xe9sum\\xe9.xyz"
    assert cli("search", "espresso", "-k", "1").out.startswith("1. notes/caf\\xe9.md  relevance")
    assert cli("split", os.fsdecode(latin)).out.splitlines()[-1] == "1 chunk from 1 page of notes/caf\\xe9.md"


def test_a_control_character_in_a_file_name_keeps_each_row_and_error_on_one_line(cli):
    (cli.cwd / "notes").mkdir()
    (cli.cwd / "notes" / "new\nline.md").write_text("# Line\n\nA line.\n")
    (cli.cwd / "notes" / "tab\tbed.txt").write_bytes(b"")
    run = cli("ingest", "notes")
    assert run.status == 1
    assert [line.split("  ")[0] for line in run.out.splitlines()[2:4]] == ["notes/new\\nline.md",
                                                                        "notes/tab\\tbed.txt"]
    assert run.err == "chunking ingest: notes/tab\\tbed.txt: file is empty\n"
