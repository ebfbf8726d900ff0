"""Figure images through the Functions handlers on Azurite (docs/parsers.md#figure-images): a DOCX's picture
stored in the blob container ``FIGURES_CONTAINER`` as ``<doc_id>/<version>/<sha256>.png`` and pointed to by the
chunk holding its figure in the (fake) Azure AI Search index; a re-upload retiring the old version's images once
the new version is complete; a delete event and reconcile removing them."""

from __future__ import annotations

import datetime as dt
import hashlib
import json

import pytest
from azure.storage.blob import BlobServiceClient

from chunking.ids import doc_id
from chunking.pipeline.reconcile import sweep_figures
from tests.azurite_harness import harness_fixture
from tests.functions_host import queue_message
from tests.pixel_documents import docx_with_picture, image_bytes, paragraph_image

pytestmark = pytest.mark.integration

h = harness_fixture("fig")
PICTURE = paragraph_image(["Zeppelin output 412"], width_px=500)
PNG = image_bytes(PICTURE)
SHA = hashlib.sha256(PNG).hexdigest()


def _figures(h) -> dict[str, str]:
    """Blob name → content type of every blob in the harness's figure container."""
    service = BlobServiceClient.from_connection_string(h.env["AzureWebJobsStorage"])
    container = service.get_container_client(h.env["FIGURES_CONTAINER"])
    if not container.exists():
        return {}
    return {b.name: b.content_settings.content_type for b in container.list_blobs()}


def _holding(h, did: str) -> list[tuple[str, ...]]:
    h.settle()
    return [r.image_urls for r in h.s.index.records_of(did) if r.image_urls]


def test_a_picture_is_stored_per_version_pointed_to_and_removed_with_its_document(h):
    did = doc_id(h.cname, "memo.docx")
    h.upload("memo.docx", docx_with_picture("Version one of the memo.", PICTURE, "The end."))
    h.drain()
    first = h.s.ledger.get(did).version

    assert _figures(h) == {f"{did}/{first}/{SHA}.png": "image/png"}
    url = h.s.figures._container.get_blob_client(f"{did}/{first}/{SHA}.png").url
    assert _holding(h, did) == [(url,)]

    h.upload("memo.docx", docx_with_picture("Version two of the memo, changed.", PICTURE, "The end."))
    h.drain()
    second = h.s.ledger.get(did).version
    assert second != first
    assert _figures(h) == {f"{did}/{second}/{SHA}.png": "image/png"}  # the old version's went with its chunks
    assert _holding(h, did) == [(url.replace(first, second),)]

    blob = h.container.get_blob_client("memo.docx")
    event = {"eventType": "Microsoft.Storage.BlobDeleted", "subject": "x", "data": {"url": blob.url}}
    blob.delete_blob()
    h.app.remove_deleted_blob(queue_message(json.dumps([event])))
    assert _figures(h) == {}


def test_reconcile_removes_the_images_of_a_deleted_blob_and_sweeps_stray_versions(h):
    did = doc_id(h.cname, "deck.docx")
    h.upload("deck.docx", docx_with_picture("A deck of slides.", PICTURE, "The end."))
    h.drain()
    version = h.s.ledger.get(did).version
    store = h.s.figures
    store.put(did, "strayversion", PNG)  # a version the ledger never recorded (its stage 1 died)
    assert sorted(_figures(h)) == [f"{did}/{version}/{SHA}.png", f"{did}/strayversion/{SHA}.png"]

    later = dt.datetime.now(dt.timezone.utc) + dt.timedelta(minutes=11)
    assert sweep_figures(store, h.s.ledger, now=later) == [f"{did}/strayversion: 1"]
    assert sorted(_figures(h)) == [f"{did}/{version}/{SHA}.png"]

    h.container.get_blob_client("deck.docx").delete_blob()  # no event: reconcile finds it gone
    report = h.handlers.handle_reconcile()
    assert report.orphaned == ["deck.docx"]
    assert _figures(h) == {}
