"""Bad usage and bad input: the command's own usage, one error style (``PROG COMMAND: PATH: REASON``), the
documented exit statuses (0 ok, 1 a document failed or nothing to ingest, 2 bad usage), and nothing created."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from chunking.app.cli.app import build_parser
from tests.app.cli.conftest import run_process


def test_unknown_option_prints_the_commands_usage_not_the_top_level_one(cli):
    (cli.cwd / "notes").mkdir()
    run = cli("ingest", "notes", "--bogus")
    assert run.status == 2
    assert run.err.startswith("usage: chunking ingest [-h]")
    assert run.err.endswith("chunking ingest: error: unrecognized arguments: --bogus\n")
    assert "COMMAND" not in run.err


def test_missing_file_is_named_in_the_same_words_by_split_and_ingest(cli):
    assert cli("split", "missing.md") == (2, "", "chunking split: missing.md: no such file or folder\n")
    assert cli("ingest", "missing.md") == (2, "", "chunking ingest: missing.md: no such file or folder\n")


def test_split_of_a_folder_says_so(cli):
    (cli.cwd / "notes").mkdir()
    assert cli("split", "notes") == (2, "", "chunking split: notes: is a folder; split takes one file (ingest takes "
                                           "folders)\n")


def test_numbers_below_their_minimum_are_refused_by_the_parser(cli):
    (cli.cwd / "a.md").write_text("# A\nsome text\n")
    for args, message in ((("split", "a.md", "--max-tokens", "0"), "argument --max-tokens: must be at least 1, got 0"),
                          (("split", "a.md", "--max-chars", "-3"), "argument --max-chars: must be at least 1, got -3"),
                          (("split", "a.md", "--max-tokens", "ten"), "argument --max-tokens: must be a whole number, "
                                                                     "got 'ten'"),
                          (("search", "x", "-k", "0"), "argument -k: must be at least 1, got 0")):
        run = cli(*args)
        assert run.status == 2 and run.err.endswith(f"chunking {args[0]}: error: {message}\n"), (args, run.err)
        assert "chunk_size" not in run.err


def test_json_splitter_on_markdown_names_the_file_and_what_it_needs(cli):
    (cli.cwd / "a.md").write_text("# A\nsome text\n")
    assert cli("split", "a.md", "--splitter", "json") == (
        1, "", "chunking split: a.md: the json splitter needs a JSON document: line 1 column 1: Expecting value\n")
    run = cli("split", "a.md", "--splitter", "jsn")
    assert run.status == 2 and run.err.startswith("chunking split: unknown splitter 'jsn' for .md; known: sentence,")


def test_unreadable_document_is_a_failed_document(cli):
    (cli.cwd / "bad.pdf").write_bytes(b"%PDF-1.4 nonsense")
    run = cli("split", "bad.pdf")
    assert run.status == 1 and run.out == ""
    assert run.err.startswith("chunking split: bad.pdf: not a valid PDF")


def test_folder_with_no_supported_file_says_so_exits_1_and_creates_nothing(cli):
    (cli.cwd / "emptydir").mkdir()
    assert cli("ingest", "emptydir") == (1, "", "chunking ingest: emptydir: no supported file\n")
    (cli.cwd / "emptydir" / "LICENSE").write_text("not a document type we read")
    (cli.cwd / "emptydir" / "archive.7z").write_bytes(b"7z\xbc\xaf\x27\x1c" + bytes(26))
    assert cli("ingest", "emptydir") == (
        1, "", "chunking ingest: emptydir: no supported file (2 files of unsupported types passed over)\n")
    assert sorted(p.name for p in cli.cwd.iterdir()) == ["emptydir"]  # no .chunking/


def test_read_only_commands_create_nothing_in_an_empty_folder(cli):
    assert cli("status") == (0, "0 indexed, 0 queued, 0 sending, 0 failed, 0 deleted\n"
                                "index: local .chunking/index.sqlite3 not created yet (schema 2 on first ingest)\n", "")
    assert cli("status", "--json").out.startswith('{\n  "counts": {\n    "indexed": 0,')
    assert cli("search", "anything") == (
        0, "no hits: no index yet (.chunking/index.sqlite3): run `chunking ingest PATH` first\n", "")
    assert cli("search", "anything", "--json") == (0, "[]\n", "")
    assert cli("search", "anything", "--parents") == (
        0, "no hits: no index yet (.chunking/index.sqlite3): run `chunking ingest PATH` first\n", "")
    assert list(cli.cwd.iterdir()) == []


def test_plurals_in_summaries(cli):
    notes = cli.cwd / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\nOne short note.\n")
    (notes / "LICENSE").write_text("not a document type we read")
    run = cli("ingest", "notes")
    assert run.status == 0, run.err
    assert " embedding tokens in 1 request (offline) -> " in run.out
    assert "\n1 file of unsupported types passed over: notes/LICENSE\n" in run.out
    assert cli("split", "notes/a.md").out.endswith("\n1 chunk from 1 page of notes/a.md\n")
    again = cli("ingest", "notes")
    assert "0 embedding tokens in 0 requests" in again.out


def test_exit_statuses_are_documented_in_help(cli):
    run = cli("--help")
    assert run.status == 0
    assert ("Exit status: 0 success; 1 a document failed (ingest, split, reconcile, reprocess) or the ledger holds "
            "a\nfailed one (status), a file could not be read (ingest, upload), a check failed (smoke) or a folder "
            "held no\nsupported file (ingest, upload); 2 bad usage (unknown option, bad value, missing file) or a "
            "service that cannot\nbe reached or refuses; 130 interrupted;") in run.out
    # the epilog is wrapped by hand at the width of its longest settings line (one line ran to 140 characters)
    epilog = run.out[run.out.index("Settings come from"):]
    assert max(map(len, epilog.splitlines())) <= 111


def test_prog_follows_how_the_program_was_started(tmp_path, monkeypatch):
    as_module = run_process(["split", "missing.md"], tmp_path)
    assert (as_module.returncode, as_module.stderr) == (2, "python -m chunking split: missing.md: no such file or "
                                                           "folder\n")
    script = Path(sys.executable).parent / ("chunking.exe" if os.name == "nt" else "chunking")
    assert script.exists(), "the console script is installed by `pip install -e .` (make test does it)"
    as_script = run_process(["split", "missing.md"], tmp_path, executable=[str(script)])
    assert (as_script.returncode, as_script.stderr) == (2, "chunking split: missing.md: no such file or folder\n")
    assert run_process(["--help"], tmp_path, executable=[str(script)]).stdout.startswith("usage: chunking [-h]")
    assert build_parser("python -m chunking").format_usage().startswith("usage: python -m chunking [-h]")


def test_closed_pipe_stops_quietly(tmp_path):
    # Enough output to overflow the pipe's buffer (64 KiB on Linux) after `head` has gone.
    (tmp_path / "long.md").write_text("".join(f"# Part {i}\n" + "Words of a long paragraph. " * 60 + "\n\n"
                                              for i in range(200)))
    piped = run_process(["split", "long.md", "--format", "jsonl"], tmp_path, shell_tail="| head -1")
    assert piped.stderr == ""
    assert piped.returncode == 141  # pipefail: the CLI's own status, as for other Unix tools
    assert piped.stdout.startswith('{"id": ')


def test_an_index_file_that_is_not_sqlite_is_one_line_and_exit_2(cli):
    (cli.cwd / ".chunking").mkdir()
    (cli.cwd / ".chunking" / "index.sqlite3").write_text("not a database")
    (cli.cwd / "a.md").write_text("# A\nsome text\n")
    for args in (("ingest", "a.md"), ("search", "text")):
        run = cli(*args)
        assert run.status == 2 and run.out == ""
        assert run.err == (f"chunking {args[0]}: .chunking/index.sqlite3 is not a usable local index: file is not a "
                           "database\n")


def test_an_unreachable_search_service_is_one_line_and_exit_2(cli, monkeypatch):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("AZURE_SEARCH_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("AZURE_SEARCH_API_KEY", "test-key")
    monkeypatch.setenv("AZURE_SEARCH_RETRY_TOTAL", "0")
    run = cli("search", "text")
    assert run.status == 2 and run.out == ""
    assert run.err.startswith(f"chunking search: Azure AI Search at 127.0.0.1:{port}: not reachable (") and \
        run.err.endswith("): check AZURE_SEARCH_ENDPOINT and the network\n") and len(run.err.splitlines()) == 1, run.err


def test_a_storage_error_is_its_first_line_and_exit_2_and_a_wrapped_one_its_description(cli, monkeypatch):
    from chunking.app.cli import status
    from chunking.errors import StorageError

    def unreachable(args, settings):
        raise StorageError("storage not reachable: queue 'q' at http://127.0.0.1:1: refused\nmore detail")

    monkeypatch.setattr(status, "run", unreachable)
    assert cli("status") == (2, "", "chunking status: storage not reachable: queue 'q' at http://127.0.0.1:1: "
                                    "refused\n")

    def wrapped(args, settings):
        raise RuntimeError("status failed") from StorageError("queue 'q' does not exist in storage account a")

    monkeypatch.setattr(status, "run", wrapped)
    assert cli("status") == (2, "", "chunking status: queue 'q' does not exist in storage account a\n")


def test_a_document_the_configured_splitter_cannot_take_fails_alone(cli, monkeypatch):
    monkeypatch.setenv("SPLITTERS", ".md=json")
    (cli.cwd / "notes").mkdir()
    (cli.cwd / "notes" / "a.md").write_text("# A\nsome text\n")
    (cli.cwd / "notes" / "b.json").write_text('{"b": [1, 2]}')
    run = cli("ingest", "notes")
    assert run.status == 1
    assert run.err == ("chunking ingest: notes/a.md: the json splitter needs a JSON document: line 1 column 1: "
                       "Expecting value\n")
    assert "1 added, 0 updated, 0 unchanged (skipped), 0 deleted, 1 failed;" in run.out


def test_each_command_loads_its_own_module_and_help_loads_none():
    from chunking.app.cli import app

    assert [app._command(name).__name__ for name in app.COMMANDS] == [
        f"chunking.app.cli.{name}" for name in ("ingest", "upload", "status", "reconcile", "reprocess", "search",
                                                "eval", "split", "smoke", "schema")]
    with pytest.raises(ValueError, match="no command 'nope'"):
        app._command("nope")
    code = ("import sys; from chunking.app.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('chunking.app.cli.') and m != 'chunking.app.cli.app'))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "[]"


def test_a_failed_document_is_one_line_on_stderr_not_also_a_log_line(tmp_path):
    # stage 1 logs its rejection (docs/operations.md#logs); ingest says it once, in its own words, unless -v
    (tmp_path / "bad.pdf").write_bytes(b"%PDF-1.4 nonsense")
    quiet = run_process(["ingest", "bad.pdf"], tmp_path)
    verbose = run_process(["-v", "ingest", "bad.pdf"], tmp_path)

    assert quiet.returncode == 1
    assert quiet.stderr == "python -m chunking ingest: bad.pdf: not a valid PDF: not a PDF, or damaged beyond repair\n"
    assert "ERROR rejected bad.pdf: not a valid PDF" in verbose.stderr


def test_seconds_that_time_sleep_would_refuse_are_usage_errors(cli):
    # smoke --interval -1 used to upload its blob and then fail in time.sleep; status --watch --interval nan
    # passed the "above 0" check (nan compares false) and would fail the same way at its first poll.
    for args, message in ((("smoke", "--interval", "-1"), "argument --interval: must be a number of seconds above 0, "
                                                          "got '-1'"),
                          (("status", "--watch", "--interval", "nan"), "argument --interval: must be a number of "
                                                                       "seconds above 0, got 'nan'"),
                          (("status", "--watch", "--interval", "0"), "argument --interval: must be a number of "
                                                                     "seconds above 0, got '0'"),
                          (("status", "--watch", "--timeout", "-5"), "argument --timeout: must be a number of "
                                                                     "seconds of at least 0, got '-5'")):
        run = cli(*args)
        assert (run.status, run.out) == (2, ""), args
        assert run.err.endswith(f"chunking {args[0]}: error: {message}\n"), (args, run.err)
