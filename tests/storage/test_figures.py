"""Figure image stores (``chunking.storage.figures``): names, write-once, deletes by prefix and the listing
reconcile sweeps from, for the local folder and for a blob container on Azurite."""

from __future__ import annotations

import datetime as dt
import hashlib

import pytest
from azure.storage.blob import BlobServiceClient

from chunking.storage.figures import BlobFigureStore, LocalFigureStore, figure_name

PNG_A = b"\x89PNG\r\n\x1a\n" + b"a" * 20
PNG_B = b"\x89PNG\r\n\x1a\n" + b"b" * 20
SHA_A, SHA_B = hashlib.sha256(PNG_A).hexdigest(), hashlib.sha256(PNG_B).hexdigest()


def test_a_figure_is_named_by_its_document_version_and_the_sha256_of_its_png():
    assert figure_name("d1", "v1", PNG_A) == f"d1/v1/{SHA_A}.png"


def test_the_local_store_writes_each_image_once_per_version_and_deletes_by_prefix(tmp_path):
    store = LocalFigureStore(tmp_path / "figures")

    url = store.put("d1", "v1", PNG_A)
    again = store.put("d1", "v1", PNG_A)
    store.put("d1", "v2", PNG_A)
    store.put("d1", "v2", PNG_B)
    store.put("d2", "v9", PNG_B)

    path = tmp_path / "figures" / "d1" / "v1" / f"{SHA_A}.png"
    assert url == again == path.resolve().as_uri()
    assert path.read_bytes() == PNG_A
    assert sorted(p.relative_to(tmp_path / "figures").as_posix() for p in (tmp_path / "figures").rglob("*.png")) == [
        f"d1/v1/{SHA_A}.png", f"d1/v2/{SHA_B}.png", f"d1/v2/{SHA_A}.png", f"d2/v9/{SHA_B}.png"]  # SHA_B < SHA_A
    assert sorted(store.versions()) == [("d1", "v1"), ("d1", "v2"), ("d2", "v9")]
    assert store.delete_prefix("d1/v2/") == 2
    assert sorted(store.versions()) == [("d1", "v1"), ("d2", "v9")]
    assert store.delete_prefix("d1/") == 1
    assert store.delete_prefix("d1/") == 0  # idempotent
    assert sorted(store.versions()) == [("d2", "v9")]


def test_the_local_store_lists_when_each_version_was_last_written(tmp_path):
    store = LocalFigureStore(tmp_path / "figures")
    store.put("d1", "v1", PNG_A)
    store.put("d1", "v1", PNG_B)
    old, new = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc), dt.datetime(2026, 1, 2, tzinfo=dt.timezone.utc)
    import os

    os.utime(tmp_path / "figures" / "d1" / "v1" / f"{SHA_A}.png", (old.timestamp(), old.timestamp()))
    os.utime(tmp_path / "figures" / "d1" / "v1" / f"{SHA_B}.png", (new.timestamp(), new.timestamp()))

    assert store.versions() == {("d1", "v1"): new}
    assert LocalFigureStore(tmp_path / "none").versions() == {}
    assert LocalFigureStore(tmp_path / "none").delete_prefix("d1/") == 0


@pytest.mark.integration
def test_the_blob_store_on_azurite(azurite):
    service = BlobServiceClient.from_connection_string(azurite.connection_string)
    store = BlobFigureStore(service, "figurestoretest")
    assert store.versions() == {} and store.delete_prefix("d1/") == 0  # no container yet: nothing stored

    url = store.put("d1", "v1", PNG_A)
    assert store.put("d1", "v1", PNG_A) == url  # the second write finds it there
    store.put("d1", "v2", PNG_B)

    container = service.get_container_client("figurestoretest")
    assert url == container.get_blob_client(f"d1/v1/{SHA_A}.png").url
    assert [b.name for b in container.list_blobs()] == [f"d1/v1/{SHA_A}.png", f"d1/v2/{SHA_B}.png"]
    blob = container.get_blob_client(f"d1/v1/{SHA_A}.png")
    assert blob.download_blob().readall() == PNG_A
    assert blob.get_blob_properties().content_settings.content_type == "image/png"
    listed = store.versions()
    assert sorted(listed) == [("d1", "v1"), ("d1", "v2")]
    assert all(moment.tzinfo is not None for moment in listed.values())
    assert store.delete_prefix("d1/v1/") == 1
    assert sorted(b.name for b in container.list_blobs()) == [f"d1/v2/{SHA_B}.png"]
    assert store.delete_prefix("d1/") == 1
    assert list(container.list_blobs()) == []
