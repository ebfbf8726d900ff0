"""What a newcomer trying the CLI on mixed files met: a failed member of an archive or a mail is a failed row of
``ingest`` (counted, named on stderr, exit status 1) rather than a line of the ledger only."""

from __future__ import annotations

import io
import json
import zipfile

from tests.app.cli.conftest import run_process


def _archive(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as package:
        for name, data in members.items():
            package.writestr(name, data)
    return buffer.getvalue()


def test_ingest_names_each_failed_member_once_and_exits_1(cli):
    (cli.cwd / "box.zip").write_bytes(_archive({"ok.md": b"# Kiwi\n\nKiwis are birds.", "empty.txt": b"",
                                                "tool.exe": b"MZ"}))
    run = cli("ingest", "box.zip")
    assert run.status == 1
    assert run.out.splitlines()[-1].startswith("1 added, 0 updated, 0 unchanged (skipped), 0 deleted, 2 failed;")
    assert run.err.splitlines() == ["chunking ingest: box.zip/empty.txt: file is empty",
                                    "chunking ingest: box.zip/tool.exe: unsupported file type .exe"]
    again = cli("ingest", "box.zip", "--json")
    assert again.status == 1
    assert json.loads(again.out)["failures"] == [
        {"source": "box.zip/empty.txt", "error": "file is empty"},
        {"source": "box.zip/tool.exe", "error": "unsupported file type .exe"}]


def test_a_refused_member_is_one_line_of_stderr_in_a_real_process(tmp_path):
    (tmp_path / "box.zip").write_bytes(_archive({"ok.md": b"# Kiwi\n\nKiwis are birds.", "tool.exe": b"MZ"}))
    done = run_process(["ingest", "box.zip"], tmp_path)
    assert done.returncode == 1
    assert done.stderr.splitlines() == ["python -m chunking ingest: box.zip/tool.exe: unsupported file type .exe"]
