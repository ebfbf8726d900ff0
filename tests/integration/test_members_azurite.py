"""Containers through the Functions handlers on Azurite (docs/architecture.md#containers): a ZIP's members and a
mail's attachments are documents of their own; a re-upload leaves exactly the current members in the index, a
delete event removes them with their container, and reconcile keeps them while their container's blob is there."""

from __future__ import annotations

import io
import json
import zipfile
from email.message import EmailMessage

import pytest

from chunking.ids import doc_id
from tests.azurite_harness import Harness
from tests.functions_host import queue_message

pytestmark = pytest.mark.integration


@pytest.fixture
def h(azurite, tmp_path, monkeypatch, request):
    harness = Harness(azurite, "mb" + request.node.name.replace("_", "")[4:18].lower(), tmp_path, monkeypatch)
    yield harness
    harness.handlers.services.cache_clear()


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as package:
        for name, data in members.items():
            package.writestr(name, data)
    return buffer.getvalue()


def _mail(attachments: dict[str, bytes]) -> bytes:
    message = EmailMessage()
    message["Subject"], message["From"], message["To"] = "Quarterly figures", "kim@example.com", "ops@example.com"
    message.set_content("The figures are attached.\n")
    for name, data in attachments.items():
        message.add_attachment(data, maintype="application", subtype="octet-stream", filename=name)
    return message.as_bytes()


def _statuses(h) -> dict[str, str]:
    return {e.source: e.status for e in h.s.ledger.entries()}


def test_archive_members_are_replaced_and_removed_exactly_with_the_archive(h):
    h.upload("project.zip", _zip({"docs/a.txt": b"Aardvark notes.", "docs/b.txt": b"Badger notes.",
                                  "c.txt": b"Caracal notes."}))
    h.drain()
    h.assert_index_is_exactly_current()
    assert _statuses(h) == {"project.zip": "indexed", "project.zip/docs/a.txt": "indexed",
                            "project.zip/docs/b.txt": "indexed", "project.zip/c.txt": "indexed"}

    h.upload("project.zip", _zip({"docs/a.txt": b"Aardvark news.", "c.txt": b"Caracal notes.",
                                  "d.txt": b"Dingo notes."}))
    h.drain()
    h.assert_index_is_exactly_current()  # b.txt's chunks are gone, a.txt's old version too
    assert _statuses(h) == {"project.zip": "indexed", "project.zip/docs/a.txt": "indexed",
                            "project.zip/docs/b.txt": "deleted", "project.zip/c.txt": "indexed",
                            "project.zip/d.txt": "indexed"}

    h.settle()
    report = h.handlers.handle_reconcile()  # members are not blobs, yet not orphans
    assert (report.missing, report.orphaned, report.stuck) == ([], [], [])

    blob = h.container.get_blob_client("project.zip")
    url = blob.url
    blob.delete_blob()
    event = {"eventType": "Microsoft.Storage.BlobDeleted", "subject": "x", "data": {"url": url}}
    h.app.remove_deleted_blob(queue_message(json.dumps([event])))
    h.assert_index_is_exactly_current()  # nothing: every member went with the archive
    assert set(_statuses(h).values()) == {"deleted"}


def test_mail_attachments_follow_the_mail_and_reconcile_repairs_a_member_through_its_mail(h):
    h.upload("inbox/q3.eml", _mail({"figures.txt": b"Revenue rose.", "old.txt": b"Obsolete."}))
    h.drain()
    h.assert_index_is_exactly_current()
    h.upload("inbox/q3.eml", _mail({"figures.txt": b"Revenue rose."}))
    h.drain()
    h.assert_index_is_exactly_current()
    assert _statuses(h)["inbox/q3.eml/attachments/old.txt"] == "deleted"

    # The index lost an attachment's chunks: reconcile puts the mail (a blob), not the attachment, on the queue.
    member = doc_id(h.cname, "inbox/q3.eml/attachments/figures.txt")
    h.settle()
    h.s.index.delete(list(h.s.index.keys_of(member)))
    h.settle()
    report = h.handlers.handle_reconcile()
    assert report.missing == ["inbox/q3.eml/attachments/figures.txt"]
    h.drain()
    h.assert_index_is_exactly_current()
    assert _statuses(h)["inbox/q3.eml/attachments/figures.txt"] == "indexed"


def test_new_access_lists_on_the_same_archive_reach_every_member(h):
    data = _zip({"a.txt": b"Aardvark notes.", "b.txt": b"Badger notes."})
    h.container.upload_blob("team.zip", data, overwrite=True, metadata={"acl_groups": "red"})
    h.app.ingest_document(h.container.get_blob_client("team.zip"))
    h.drain()
    calls = h.embedding_calls()
    h.container.get_blob_client("team.zip").set_blob_metadata({"acl_groups": "blue"})
    h.app.ingest_document(h.container.get_blob_client("team.zip"))  # same bytes: field updates only
    h.drain()
    h.settle()
    groups = {r.source: r.acl_groups for did in h.s.index.doc_ids() for r in h.s.index.records_of(did)}
    assert groups == {"team.zip": ("blue",), "team.zip/a.txt": ("blue",), "team.zip/b.txt": ("blue",)}
    assert h.embedding_calls() == calls  # nothing embedded again

    # Only the metadata changes, no trigger: the reconcile sweep finds it, for the members too.
    h.container.get_blob_client("team.zip").set_blob_metadata({"acl_groups": "green"})
    h.handlers.handle_reconcile()
    assert h.drain() == 3
    h.settle()
    groups = {r.source: r.acl_groups for did in h.s.index.doc_ids() for r in h.s.index.records_of(did)}
    assert set(groups.values()) == {("green",)} and len(groups) == 3
    assert h.embedding_calls() == calls
