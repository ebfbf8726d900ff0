"""Containers (docs/architecture.md#containers): a mail's attachments and a ZIP's members are documents of their own
under the container's source, replaced and removed exactly with it; hostile members are refused one by one."""

from __future__ import annotations

import io
import zipfile
from email.message import EmailMessage
from pathlib import Path

import pytest

from chunking.pipeline.ingest import collect_files, ingest_files
from tests.local_services import local_services
from tests.parsers.made import flag_encrypted


@pytest.fixture
def env(tmp_path):
    services = local_services(tmp_path / "state")
    docs = tmp_path / "docs"
    docs.mkdir()
    return tmp_path, docs, services


def run(tmp_path: Path, services, **kw):
    files, scopes, _ = collect_files([tmp_path / "docs"], cwd=tmp_path)
    return ingest_files(files, scopes=scopes, **services, **kw)


def indexed(services) -> dict[str, str]:
    """source → its chunks' text, of every document in the index."""
    index = services["index"]
    return {r.source: " ".join(x.content for x in index.records_of(did))
            for did in index.doc_ids() for r in index.records_of(did)[:1]}


def archive(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as package:
        for name, data in members.items():
            package.writestr(name, data)
    return buffer.getvalue()


def mail(body: str, attachments: dict[str, bytes]) -> bytes:
    message = EmailMessage()
    message["Subject"], message["From"], message["To"] = "Depot move", "Alex <alex@example.com>", "ops@example.com"
    message["Date"] = "Fri, 03 May 2024 09:00:00 +0000"
    message.set_content(body)
    for name, data in attachments.items():
        message.add_attachment(data, maintype="application", subtype="octet-stream", filename=name)
    return message.as_bytes()


def test_an_archive_re_uploaded_keeps_exactly_its_current_members(env):
    tmp_path, docs, services = env
    (docs / "project.zip").write_bytes(archive({"papers/a.txt": b"Aardvark notes.",
                                               "papers/b.md": b"# Badger\n\nBurrows.",
                                               "c.txt": b"Caracal facts."}))
    first = run(tmp_path, services)
    assert [(r.source, r.outcome) for r in first.rows] == [  # each member a row of its own, after its container's
        ("docs/project.zip", "added"), ("docs/project.zip/papers/a.txt", "added"),
        ("docs/project.zip/papers/b.md", "added"), ("docs/project.zip/c.txt", "added")]
    assert indexed(services) == {
        "docs/project.zip": "Files in the archive:\n\n- papers/a.txt\n- papers/b.md\n- c.txt",
        "docs/project.zip/papers/a.txt": "Aardvark notes.",
        "docs/project.zip/papers/b.md": "# Badger\n\nBurrows.",
        "docs/project.zip/c.txt": "Caracal facts.",
    }
    # a.txt changed, b.md removed, d.txt added, c.txt unchanged (skipped: not embedded again).
    (docs / "project.zip").write_bytes(archive({"papers/a.txt": b"Aardvark news.", "c.txt": b"Caracal facts.",
                                               "d.txt": b"Dingo dens."}))
    second = run(tmp_path, services)
    assert [(r.source, r.outcome) for r in second.rows] == [
        ("docs/project.zip", "updated"), ("docs/project.zip/papers/a.txt", "updated"),
        ("docs/project.zip/c.txt", "skipped"), ("docs/project.zip/d.txt", "added")]
    assert second.deleted == ["docs/project.zip/papers/b.md"]  # gone with the archive's old version, and said so
    assert indexed(services) == {
        "docs/project.zip": "Files in the archive:\n\n- papers/a.txt\n- c.txt\n- d.txt",
        "docs/project.zip/papers/a.txt": "Aardvark news.",
        "docs/project.zip/c.txt": "Caracal facts.",
        "docs/project.zip/d.txt": "Dingo dens.",
    }
    ledger = services["ledger"]
    assert {e.source: e.status for e in ledger.entries()}["docs/project.zip/papers/b.md"] == "deleted"
    # The archive deleted (a full run without it): every member goes with it.
    (docs / "project.zip").unlink()
    (docs / "other.txt").write_text("Other.")
    run(tmp_path, services, cleanup="full")
    assert indexed(services) == {"docs/other.txt": "Other."}


def test_hostile_members_are_refused_one_by_one_with_their_reason(env):
    tmp_path, docs, services = env
    services["settings"] = services["settings"].replace(max_decompressed_bytes=1 << 20, max_archive_depth=1)
    good = archive({"ok.txt": b"Okapi.", "../../etc/evil.txt": b"Evil.", "bomb.txt": b"0" * (3 << 20),
                    "locked.txt": b"Locked.", "inner.zip": archive({"x.txt": b"Xerus."}), "tool.exe": b"MZ"})
    (docs / "box.zip").write_bytes(flag_encrypted(good, "locked.txt"))
    run(tmp_path, services)
    failed = {e.source: e.error for e in services["ledger"].entries() if e.status == "failed"}
    assert failed == {
        "docs/box.zip/etc/evil.txt": "unsafe member name '../../etc/evil.txt' (absolute, or a .. segment)",
        "docs/box.zip/bomb.txt": "expands past 1 MB when decompressed (MAX_DECOMPRESSED_BYTES)",
        "docs/box.zip/locked.txt": "encrypted member (password-protected)",
        "docs/box.zip/inner.zip": "lies in more than 1 nested archives or mails (MAX_ARCHIVE_DEPTH)",
        "docs/box.zip/tool.exe": "unsupported file type .exe",
    }
    assert set(indexed(services)) == {"docs/box.zip", "docs/box.zip/ok.txt"}


def test_a_mail_is_its_headers_and_body_and_its_attachments_are_documents(env):
    tmp_path, docs, services = env
    inner = archive({"plan.txt": b"Pallets of pumice."})
    (docs / "move.eml").write_bytes(mail("Hello,\n\nthe move is on.\n\n> Is it?\n",
                                         {"list.txt": b"Crates of quartz.", "bundle.zip": inner}))
    run(tmp_path, services)
    assert indexed(services) == {
        "docs/move.eml": "# Depot move\n\nFrom: Alex <alex@example.com>\nTo: ops@example.com\n"
                         "Date: Fri, 03 May 2024 09:00:00 +0000\nAttachments: list.txt, bundle.zip\n\nHello,\n\n"
                         "the move is on.\n\n> Is it?",
        "docs/move.eml/attachments/list.txt": "Crates of quartz.",
        "docs/move.eml/attachments/bundle.zip": "Files in the archive:\n\n- plan.txt",
        "docs/move.eml/attachments/bundle.zip/plan.txt": "Pallets of pumice.",
    }
    # The mail again without the zip: the zip and its member go, the rest stays.
    (docs / "move.eml").write_bytes(mail("Hello,\n\nthe move is on.\n", {"list.txt": b"Crates of quartz."}))
    assert run(tmp_path, services).deleted == ["docs/move.eml/attachments/bundle.zip",
                                               "docs/move.eml/attachments/bundle.zip/plan.txt"]
    assert set(indexed(services)) == {"docs/move.eml", "docs/move.eml/attachments/list.txt"}


@pytest.mark.parametrize("cleanup", ["full", "scoped_full"])
def test_the_cleanup_modes_leave_the_members_of_a_container_the_run_saw(env, cleanup):
    tmp_path, docs, services = env
    (docs / "box.zip").write_bytes(archive({"a.txt": b"Aardvark.", "b.txt": b"Badger."}))
    (docs / "loose.txt").write_text("Loose.")
    run(tmp_path, services, cleanup=cleanup)
    again = run(tmp_path, services, cleanup=cleanup)
    assert again.deleted == []
    assert set(indexed(services)) == {"docs/box.zip", "docs/box.zip/a.txt", "docs/box.zip/b.txt", "docs/loose.txt"}
    (docs / "box.zip").unlink()
    assert sorted(run(tmp_path, services, cleanup=cleanup).deleted) == [
        "docs/box.zip", "docs/box.zip/a.txt", "docs/box.zip/b.txt"]
    assert set(indexed(services)) == {"docs/loose.txt"}


def test_each_member_is_a_row_and_a_failed_one_is_reported_again_while_its_container_is_unchanged(env):
    tmp_path, docs, services = env
    inner = archive({"deep.json": b"{nope"})
    (docs / "box.zip").write_bytes(archive({"ok.txt": b"Okapi.", "bad.json": b"{nope", "empty.txt": b"",
                                            "inner.zip": inner}))
    json_reason = "invalid JSON: line 1 column 2: Expecting property name enclosed in double quotes"
    failed = [("docs/box.zip/bad.json", "failed", json_reason),
              ("docs/box.zip/empty.txt", "failed", "file is empty"),
              ("docs/box.zip/inner.zip/deep.json", "failed", json_reason)]
    first = run(tmp_path, services)
    assert [(r.source, r.outcome, r.error) for r in first.rows] == [
        ("docs/box.zip", "added", None), ("docs/box.zip/ok.txt", "added", None), *failed[:2],
        ("docs/box.zip/inner.zip", "added", None), failed[2]]
    assert [(r.pages, r.chunks, r.tokens, r.embedding_tokens) for r in first.rows if r.source.endswith(".txt")] == [
        (1, 1, 3, 3), (0, 0, 0, 0)]  # ok.txt: "Okapi." is 3 tokens, embedded on its own row; empty.txt: nothing
    totals = first.to_dict()
    assert (totals["documents"], totals["added"], totals["failed"], totals["chunks"]) == (3, 3, 3, 3)
    assert [f["source"] for f in totals["failures"]] == [source for source, _, _ in failed]
    # Unchanged: the archive is skipped, and its members' failures, read from the ledger, are reported again.
    again = run(tmp_path, services)
    assert [(r.source, r.outcome, r.error) for r in again.rows] == [("docs/box.zip", "skipped", None), *failed]
    assert again.to_dict()["failed"] == 3


def test_each_member_is_announced_as_it_is_read_for_the_progress_display(env):
    tmp_path, docs, services = env
    (docs / "move.eml").write_bytes(mail("Hello.\n", {"list.txt": b"Crates.", "bundle.zip": archive(
        {"plan.txt": b"Pallets.", "../evil.txt": b"Evil."})}))
    seen: list[str] = []
    run(tmp_path, services, on_member=seen.append)
    assert seen == ["docs/move.eml/attachments/list.txt", "docs/move.eml/attachments/bundle.zip",
                    "docs/move.eml/attachments/bundle.zip/plan.txt", "docs/move.eml/attachments/bundle.zip/evil.txt"]
    seen.clear()
    run(tmp_path, services, on_member=seen.append)  # unchanged: no member is read again
    assert seen == []


def test_hidden_members_and_macos_resource_forks_are_passed_over_as_hidden_files_are(env):
    tmp_path, docs, services = env
    (docs / "mac.zip").write_bytes(archive({"report/notes.md": b"# Notes\n\nQuokkas smile.",
                                            "__MACOSX/report/._notes.md": b"\x00\x05\x16\x07Mac OS X" + bytes(64),
                                            "report/.DS_Store": b"\x00\x00\x00\x01Bud1" + bytes(64),
                                            ".git/config": b"[core]"}))
    summary = run(tmp_path, services)
    assert [(r.source, r.outcome) for r in summary.rows] == [("docs/mac.zip", "added"),
                                                             ("docs/mac.zip/report/notes.md", "added")]
    assert sorted(e.source for e in services["ledger"].entries()) == ["docs/mac.zip", "docs/mac.zip/report/notes.md"]


@pytest.mark.parametrize(("subtype", "name"), [("pkcs7-signature", "smime.p7s"), ("pgp-signature", "signature.asc")])
def test_a_signed_mail_has_the_attachments_of_its_signed_content_and_no_signature(env, subtype, name):
    # Before, its signed content (multipart/mixed) was one member 'attachment-1.bin' that failed as an
    # unsupported type, so plan.txt was never read; and the signature failed as a second one.
    from tests.parsers.made import signed_mime_entity

    tmp_path, docs, services = env
    headers = b"Subject: Signed plan\nFrom: Alex <alex@example.com>\n"
    (docs / "signed.eml").write_bytes(headers + signed_mime_entity(subtype=subtype, signature_name=name))
    summary = run(tmp_path, services)
    assert [(r.source, r.outcome) for r in summary.rows] == [("docs/signed.eml", "added"),
                                                             ("docs/signed.eml/attachments/plan.txt", "added")]
    assert "Attachments: plan.txt\n" in indexed(services)["docs/signed.eml"]
    assert indexed(services)["docs/signed.eml/attachments/plan.txt"] == "Pallets of pumice."
    assert [e.source for e in services["ledger"].entries() if e.is_failed] == []


def test_a_clear_signed_outlook_message_has_the_attachments_of_its_signed_content(env):
    # Before, its one attachment smime.p7m was the only member and failed (unsupported file type .p7m): plan.txt,
    # inside the signed content, was never indexed, and the mail's page had no body.
    from tests.parsers.made import outlook_message, signed_mime_entity

    tmp_path, docs, services = env
    (docs / "signed.msg").write_bytes(outlook_message(
        subject="Signed plan", sender=("Alex", "alex@example.com"), message_class="IPM.Note.SMIME.MultipartSigned",
        attachments=[{"filename": "smime.p7m", "mime": "multipart/signed", "data": signed_mime_entity()}]))
    summary = run(tmp_path, services)
    assert [(r.source, r.outcome) for r in summary.rows] == [("docs/signed.msg", "added"),
                                                             ("docs/signed.msg/attachments/plan.txt", "added")]
    assert indexed(services)["docs/signed.msg"].endswith("Attachments: plan.txt\n\nThe plan is attached.")
    assert indexed(services)["docs/signed.msg/attachments/plan.txt"] == "Pallets of pumice."
    assert [e.source for e in services["ledger"].entries() if e.is_failed] == []
