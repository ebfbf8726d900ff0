"""Outlook messages as containers (docs/architecture.md#containers): a .msg's attachments and attached messages are
documents of their own under its source, replaced and removed exactly with it; an attached message is a container
one level deeper, counted against ``MAX_ARCHIVE_DEPTH``."""

from __future__ import annotations

import datetime

from tests.parsers.made import msg_tree, outlook_message
from tests.pipeline.test_members import env, indexed, run  # noqa: F401 (env is a fixture)

WHEN = datetime.datetime(2024, 5, 3, 9, 0, tzinfo=datetime.timezone.utc)


def memo(body: str, attachments: list[dict]) -> bytes:
    return outlook_message(subject="Depot move", sender=("Alex", "alex@example.com"),
                           recipients=[(1, "Ops", "ops@example.com")], date=WHEN, body=body, attachments=attachments)


def forwarded(*attachments: dict) -> dict:
    return {"name": "Fwd: crates", "message": msg_tree(subject="Crates", sender=("Kim", "kim@example.com"),
                                                       body="Count the crates.", attachments=list(attachments),
                                                       embedded=True)}


def test_a_message_is_its_headers_and_body_and_its_attachments_and_attached_messages_are_documents(env):  # noqa: F811
    tmp_path, docs, services = env
    (docs / "move.msg").write_bytes(memo("Hello,\r\n\r\nthe move is on.\r\n\r\n> Is it?\r\n", [
        {"filename": "list.txt", "data": b"Crates of quartz."},
        forwarded({"filename": "deep.txt", "data": b"Pallets of pumice."})]))
    run(tmp_path, services)
    assert indexed(services) == {
        "docs/move.msg": "# Depot move\n\nFrom: Alex <alex@example.com>\nTo: Ops <ops@example.com>\n"
                         "Date: Fri, 03 May 2024 09:00:00 +0000\nAttachments: list.txt, Fwd: crates.msg\n\nHello,\n\n"
                         "the move is on.\n\n> Is it?",
        "docs/move.msg/attachments/list.txt": "Crates of quartz.",
        "docs/move.msg/attachments/Fwd: crates.msg": "# Crates\n\nFrom: Kim <kim@example.com>\n"
                                                     "Attachments: deep.txt\n\nCount the crates.",
        "docs/move.msg/attachments/Fwd: crates.msg/attachments/deep.txt": "Pallets of pumice.",
    }
    index = services["index"]
    types = {r.source: r.content_type for did in index.doc_ids() for r in index.records_of(did)[:1]}
    assert types["docs/move.msg"] == types["docs/move.msg/attachments/Fwd: crates.msg"] == "application/vnd.ms-outlook"
    assert types["docs/move.msg/attachments/list.txt"] == "text/plain"
    # The message again without the attached message: it and its attachment go, the rest stays.
    (docs / "move.msg").write_bytes(memo("Hello,\r\n\r\nthe move is on.\r\n", [
        {"filename": "list.txt", "data": b"Crates of quartz."}]))
    run(tmp_path, services)
    assert set(indexed(services)) == {"docs/move.msg", "docs/move.msg/attachments/list.txt"}
    statuses = {e.source: e.status for e in services["ledger"].entries()}
    assert statuses["docs/move.msg/attachments/Fwd: crates.msg/attachments/deep.txt"] == "deleted"


def test_an_attached_message_past_the_depth_and_a_damaged_message_are_refused_with_their_reasons(env):  # noqa: F811
    tmp_path, docs, services = env
    services["settings"] = services["settings"].replace(max_archive_depth=1)
    (docs / "move.msg").write_bytes(memo("Body.", [{"filename": "ok.txt", "data": b"Okapi."},
                                                   forwarded({"filename": "deep.txt", "data": b"Deep."})]))
    (docs / "broken.msg").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600)
    run(tmp_path, services)
    failed = {e.source: e.error for e in services["ledger"].entries() if e.status == "failed"}
    assert failed == {
        "docs/move.msg/attachments/Fwd: crates.msg":
            "lies in more than 1 nested archives or mails (MAX_ARCHIVE_DEPTH)",
        "docs/broken.msg": "not a valid MSG: damaged compound file: incorrect DllVersion in OLE header",
    }
    assert set(indexed(services)) == {"docs/move.msg", "docs/move.msg/attachments/ok.txt"}
