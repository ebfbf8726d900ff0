"""What a newcomer trying the CLI met next: ``upload --metadata`` checked as ``ingest --metadata`` is, a dangling
symbolic link in a folder named as a failed file, ``status --watch`` ending with the exit status ``status`` gives."""

from __future__ import annotations

import json

import pytest

#: (--metadata item, the reason after "chunking COMMAND: "), with METADATA_FIELDS=category and the access lists
#: read from metadata.
REFUSED = [
    ("dept-name=HR", "--metadata dept-name=HR: a metadata name is ASCII letters, digits and underscores, not "
                     "starting with a digit"),
    ("category=", "--metadata category=: no value"),
    ("acl_users=, ;", "--metadata acl_users=, ;: an access list needs at least one id"),
    ("category=Café", "--metadata category=Café: a metadata value is printable ASCII (blob metadata travels as HTTP "
                      "headers), without accents or control characters"),
    ("category=a\tb", "--metadata category=a\\tb: a metadata value is printable ASCII (blob metadata travels as "
                      "HTTP headers), without accents or control characters"),
]


@pytest.mark.parametrize(("item", "reason"), REFUSED)
@pytest.mark.parametrize("command", ["ingest", "upload"])
def test_ingest_and_upload_refuse_the_same_metadata_items_before_anything_is_done(cli, monkeypatch, command, item,
                                                                                  reason):
    monkeypatch.setenv("METADATA_FIELDS", "category")
    monkeypatch.delenv("ACL_SOURCE", raising=False)
    (cli.cwd / "pay.md").write_text("# Pay\n\nSalaries are paid on the 25th.\n")
    # Without storage settings an upload would say the storage is not reachable: the item is refused before.
    assert cli(command, "pay.md", "--metadata", "acl_groups=hr", "--metadata", item) == (
        2, "", f"chunking {command}: {reason}\n")
    assert sorted(p.name for p in cli.cwd.iterdir()) == ["pay.md"]  # nothing read, nothing written


def test_a_name_no_field_is_read_from_is_refused_by_ingest_and_warned_of_by_upload(cli, monkeypatch):
    # ingest indexes with these settings; the Functions app that indexes an uploaded blob reads its own.
    monkeypatch.setenv("METADATA_FIELDS", "category")
    monkeypatch.delenv("ACL_SOURCE", raising=False)
    (cli.cwd / "pay.md").write_text("# Pay\n\nSalaries are paid on the 25th.\n")
    assert cli("ingest", "pay.md", "--metadata", "acl_user=alice") == (
        2, "", "chunking ingest: --metadata acl_user=alice: no index field or access list is read from this name "
               "(names read: category, acl_users, acl_groups); add it to METADATA_FIELDS to make it an index field\n")
    upload = cli("upload", "pay.md", "--metadata", "acl_user=alice")
    assert upload.err.splitlines()[0] == (
        "chunking upload: warning: --metadata acl_user=alice: no index field or access list is read from this name "
        "under these settings (names read: category, acl_users, acl_groups); it is indexed only where "
        "METADATA_FIELDS names it")
    assert "storage not reachable" in upload.err.splitlines()[1]  # it went on to upload (no storage here)


@pytest.mark.parametrize("command", ["ingest", "upload"])
def test_a_metadata_name_given_twice_is_refused_whatever_its_case(cli, monkeypatch, command):
    monkeypatch.delenv("ACL_SOURCE", raising=False)
    (cli.cwd / "pay.md").write_text("# Pay\n")
    assert cli(command, "pay.md", "--metadata", "acl_users=alice", "--metadata", "ACL_Users=bob") == (
        2, "", f"chunking {command}: --metadata ACL_Users=bob: ACL_Users is given twice (metadata names are "
               "compared without regard to case)\n")


def _folder_with_a_dangling_link(cwd):
    notes = cwd / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n\nKiwis are birds.\n")
    (notes / "b.md").symlink_to(cwd / "gone.md")  # its target was moved away
    (notes / "old").symlink_to(cwd / "nowhere")  # no extension: passed over as any file of an unsupported type
    return notes


def test_a_dangling_link_in_a_folder_is_a_failed_file_named_on_stderr(cli):
    # Before, rglob's is_file() was False for it: passed over without a word, and the run exited 0.
    _folder_with_a_dangling_link(cli.cwd)
    reason = f"dangling symbolic link: its target {cli.cwd / 'gone.md'} does not exist"
    run = cli("ingest", "notes")
    assert run.status == 1
    assert run.err == f"chunking ingest: notes/b.md: {reason}\n"
    lines = run.out.splitlines()
    assert [line.split()[0] for line in lines[2:5]] == ["notes/a.md", "notes/b.md", "TOTAL"]
    assert lines[3].endswith(f"FAILED: {reason}")
    assert lines[-2].startswith("1 added, 0 updated, 0 unchanged (skipped), 0 deleted, 1 failed;")
    assert lines[-1] == "1 file of unsupported types passed over: notes/old"
    again = cli("ingest", "notes", "--json")
    assert again.status == 1 and json.loads(again.out)["failures"] == [{"source": "notes/b.md", "error": reason}]
    status = cli("status")
    assert f"\nnotes/b.md     {reason}  " in status.out
    # Named directly, it is a missing file (bad usage), and the line says why.
    assert cli("ingest", "notes/b.md") == (2, "", f"chunking ingest: notes/b.md: {reason}\n")


def test_a_link_loop_is_a_failed_file_too(cli):
    (cli.cwd / "one.md").symlink_to("two.md")
    (cli.cwd / "two.md").symlink_to("one.md")
    (cli.cwd / "c.md").write_text("# C\n\nText.\n")
    run = cli("ingest", ".", "--json")
    assert run.status == 1
    assert json.loads(run.out)["failures"] == [{"source": "one.md", "error": "symbolic link loop"},
                                               {"source": "two.md", "error": "symbolic link loop"}]


def test_read_local_file_says_why_a_file_cannot_be_read(tmp_path, monkeypatch):
    from pathlib import Path

    from chunking.errors import UnreadableFileError
    from chunking.pipeline.ingest import read_local_file

    (tmp_path / "ok.txt").write_bytes(b"ok")
    assert read_local_file(tmp_path / "ok.txt") == b"ok"
    with pytest.raises(UnreadableFileError, match="^no such file \\(removed during the run\\)$"):
        read_local_file(tmp_path / "gone.txt")

    def denied(self):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", denied)  # the tests run as root, for whom no mode bit denies
    with pytest.raises(UnreadableFileError, match="^cannot be read: permission denied$"):
        read_local_file(tmp_path / "ok.txt")


@pytest.mark.integration
def test_upload_names_a_dangling_link_uploads_the_others_and_exits_1(cli, azurite, monkeypatch):
    from azure.storage.blob import BlobServiceClient

    monkeypatch.setenv("AzureWebJobsStorage", azurite.connection_string)
    monkeypatch.setenv("DOCUMENTS_CONTAINER", "danglingup")
    _folder_with_a_dangling_link(cli.cwd)
    run = cli("upload", "notes")
    assert run.status == 1
    assert run.err == f"chunking upload: notes/b.md: dangling symbolic link: its target {cli.cwd / 'gone.md'} " \
                      "does not exist\n"
    assert run.out.splitlines()[0] == "uploaded notes/a.md -> danglingup/notes/a.md (22 bytes)"
    assert run.out.splitlines()[1].startswith("1 file (22 bytes) uploaded to ")
    assert run.out.splitlines()[1].endswith("/danglingup; 1 file could not be read")
    container = BlobServiceClient.from_connection_string(azurite.connection_string).get_container_client("danglingup")
    assert [b.name for b in container.list_blobs()] == ["notes/a.md"]


def test_status_watch_exits_as_status_does_for_the_final_state(cli, monkeypatch):
    import chunking.app.cli.status as status_command

    (cli.cwd / "a.md").write_text("# A\n\nKiwis are birds.\n")
    assert cli("ingest", "a.md").status == 0
    assert [cli(*args).status for args in (("status",), ("status", "--json"), ("status", "--watch"))] == [0, 0, 0]
    (cli.cwd / "b.pdf").write_bytes(b"not a pdf")
    assert cli("ingest", "b.pdf").status == 1
    # b.pdf failed before the watch began (before, --watch exited 0: it had not followed b.pdf in progress).
    assert [cli(*args).status for args in (("status",), ("status", "--json"), ("status", "--watch"))] == [1, 1, 1]
    run = cli("status", "--watch")
    assert run.out.splitlines()[-1] == "nothing in progress: 1 indexed, 1 failed"
    # A timeout is 1 whatever the ledger holds.
    monkeypatch.setattr(status_command, "follow", lambda *a, **k: 1)
    (cli.cwd / "b.pdf").unlink()
    assert cli("ingest", ".", "--cleanup", "scoped_full").status == 0  # b.pdf deleted: no failed document left
    assert cli("status").status == 0
    assert cli("status", "--watch").status == 1
