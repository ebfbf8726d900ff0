"""Outlook messages through the Functions handlers on Azurite (docs/architecture.md#containers): a .msg's
attachments and attached messages are documents of their own; a re-upload of a changed message leaves exactly its
current attachments in the index, each marker word found in the member that holds it."""

from __future__ import annotations

import pytest

from tests.azurite_harness import Harness
from tests.parsers.made import msg_tree, outlook_message

pytestmark = pytest.mark.integration


@pytest.fixture
def h(azurite, tmp_path, monkeypatch, request):
    harness = Harness(azurite, "ol" + request.node.name.replace("_", "")[4:18].lower(), tmp_path, monkeypatch)
    yield harness
    harness.handlers.services.cache_clear()


def _message(body: str, attachments: list[dict]) -> bytes:
    return outlook_message(subject="Quarterly figures", sender=("Kim", "kim@example.com"),
                           recipients=[(1, "Ops", "ops@example.com")], body=body, attachments=attachments)


def _statuses(h) -> dict[str, str]:
    return {e.source: e.status for e in h.s.ledger.entries()}


def _cited(h, word: str) -> str:
    h.settle()
    hits = h.s.index.search(word, None, k=3)
    return hits[0].record.source if hits else ""


def test_a_changed_message_leaves_exactly_its_current_attachments(h):
    forwarded = {"name": "Fwd: old plan", "message": msg_tree(
        subject="Old plan", body="The gazelle plan.", embedded=True,
        attachments=[{"filename": "steps.txt", "data": b"Step one: find the okapi."}])}
    h.upload("inbox/q3.msg", _message("The figures are attached; the marmot survey too.", [
        {"filename": "figures.txt", "data": b"Revenue rose with the lynx line."},
        {"filename": "old.txt", "data": b"Obsolete notes on the dodo."}, forwarded]))
    h.drain()
    h.assert_index_is_exactly_current()
    assert _statuses(h) == {
        "inbox/q3.msg": "indexed", "inbox/q3.msg/attachments/figures.txt": "indexed",
        "inbox/q3.msg/attachments/old.txt": "indexed", "inbox/q3.msg/attachments/Fwd: old plan.msg": "indexed",
        "inbox/q3.msg/attachments/Fwd: old plan.msg/attachments/steps.txt": "indexed"}
    assert [_cited(h, word) for word in ("marmot", "lynx", "dodo", "gazelle", "okapi")] == [
        "inbox/q3.msg", "inbox/q3.msg/attachments/figures.txt", "inbox/q3.msg/attachments/old.txt",
        "inbox/q3.msg/attachments/Fwd: old plan.msg", "inbox/q3.msg/attachments/Fwd: old plan.msg/attachments/steps.txt"]

    # Changed: figures.txt rewritten, old.txt and the attached message gone, summary.txt new.
    h.upload("inbox/q3.msg", _message("The figures are attached.", [
        {"filename": "figures.txt", "data": b"Revenue rose with the puma line."},
        {"filename": "summary.txt", "data": b"A summary about the ibis."}]))
    h.drain()
    h.assert_index_is_exactly_current()
    assert _statuses(h) == {
        "inbox/q3.msg": "indexed", "inbox/q3.msg/attachments/figures.txt": "indexed",
        "inbox/q3.msg/attachments/summary.txt": "indexed", "inbox/q3.msg/attachments/old.txt": "deleted",
        "inbox/q3.msg/attachments/Fwd: old plan.msg": "deleted",
        "inbox/q3.msg/attachments/Fwd: old plan.msg/attachments/steps.txt": "deleted"}
    assert [_cited(h, word) for word in ("puma", "ibis", "lynx", "dodo", "okapi")] == [
        "inbox/q3.msg/attachments/figures.txt", "inbox/q3.msg/attachments/summary.txt", "", "", ""]
