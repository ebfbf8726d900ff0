"""Storage resources are created when missing, and storage errors name the resource, the account and the
reason, against a real Azurite (and a port where nothing listens)."""

from __future__ import annotations

import socket

import pytest
from azure.core.exceptions import AzureError
from azure.storage.blob import BlobServiceClient
from azure.storage.queue import QueueServiceClient

from chunking.errors import StorageError
from chunking.settings import Settings
from chunking.storage import blob_service, create_container, create_queue, queue_client, storage_error

pytestmark = pytest.mark.integration


def _error(call) -> AzureError:
    with pytest.raises(AzureError) as info:
        call()
    return info.value


def test_missing_resources_are_named_with_their_account(azurite):
    settings = Settings.from_env({"AzureWebJobsStorage": azurite.connection_string})
    container = blob_service(settings).get_container_client("never-made")
    message = str(storage_error(_error(lambda: list(container.list_blobs())), container, "container 'never-made'"))
    assert message == (f"container 'never-made' does not exist in storage account devstoreaccount1 "
                       f"(http://127.0.0.1:{azurite.blob_port}/devstoreaccount1/never-made)")
    queue = queue_client(settings, "never-made-q")
    message = str(storage_error(_error(lambda: queue.send_message("x")), queue, "queue 'never-made-q'"))
    assert message.startswith("queue 'never-made-q' does not exist in storage account devstoreaccount1 (")


def test_unreachable_storage_says_where_and_how_to_start_azurite():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    conn = (f"DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=a2V5;"
            f"BlobEndpoint=http://127.0.0.1:{port}/devstoreaccount1;")
    container = BlobServiceClient.from_connection_string(conn, retry_total=0).get_container_client("documents")
    with pytest.raises(StorageError) as info:
        create_container(container)
    message = str(info.value)
    assert message.startswith(f"storage not reachable: container 'documents' at "
                              f"http://127.0.0.1:{port}/devstoreaccount1/documents: ")
    assert message.endswith("; is Azurite running? Start it with `make azurite`")
    assert "a2V5" not in message and "AccountKey" not in message


def test_a_wrong_key_is_refused_access_and_the_key_never_printed(azurite):
    wrong = azurite.connection_string.replace("Eby8vdM02xNOcqFl", "AAAAvdM02xNOcqFl")
    queue = QueueServiceClient.from_connection_string(wrong, retry_total=0).get_queue_client("refused")
    with pytest.raises(StorageError) as info:
        create_queue(queue)
    message = str(info.value)
    assert message.startswith(f"storage account devstoreaccount1 (http://127.0.0.1:{azurite.queue_port}/"
                              f"devstoreaccount1/refused) refused access to queue 'refused': "
                              "AuthenticationFailed")
    assert "AAAAvdM02" not in message


def test_create_helpers_are_idempotent(azurite):
    service = BlobServiceClient.from_connection_string(azurite.connection_string)
    container = service.get_container_client("made-twice")
    create_container(container)
    create_container(container)
    assert container.exists()
    queues = QueueServiceClient.from_connection_string(azurite.connection_string)
    create_queue(queues.get_queue_client("made-twice"))
    create_queue(queues.get_queue_client("made-twice"))
    assert "made-twice" in {q.name for q in queues.list_queues()}


def test_a_blob_is_copied_to_a_file_in_ranges_under_one_etag(azurite, tmp_path, monkeypatch):
    import hashlib

    from chunking import storage
    from chunking.storage import BlobChangedError, download_to_file

    monkeypatch.setattr(storage, "DOWNLOAD_RANGE_BYTES", 1000)
    container = BlobServiceClient.from_connection_string(azurite.connection_string).get_container_client("ranged")
    create_container(container)
    data = bytes(range(256)) * 41  # 10,496 bytes: 11 ranges
    blob = container.upload_blob("a/b.bin", data, overwrite=True)
    reads: list[tuple] = []
    real = blob.download_blob
    monkeypatch.setattr(blob, "download_blob", lambda **kw: reads.append((kw["offset"], kw["length"])) or real(**kw))
    copied = download_to_file(blob, tmp_path / "copy")
    assert (tmp_path / "copy").read_bytes() == data
    assert (copied.size_bytes, copied.sha256) == (len(data), hashlib.sha256(data).hexdigest())
    assert copied.etag == blob.get_blob_properties().etag
    assert reads == [(0, 1000)] + [(n, min(1000, len(data) - n)) for n in range(1000, len(data), 1000)]

    # Overwritten since its ETag was taken: not read. Too large: not copied. Empty: an empty file.
    container.upload_blob("a/b.bin", data[:10], overwrite=True)
    with pytest.raises(BlobChangedError, match="a/b.bin"):
        download_to_file(container.get_blob_client("a/b.bin"), tmp_path / "stale", etag=copied.etag)
    big = download_to_file(blob, tmp_path / "big", max_bytes=5)
    assert (big.size_bytes, big.sha256, (tmp_path / "big").read_bytes()) == (10, "", b"")
    container.upload_blob("empty.txt", b"", overwrite=True)
    empty = download_to_file(container.get_blob_client("empty.txt"), tmp_path / "empty")
    assert (empty.size_bytes, empty.sha256) == (0, hashlib.sha256(b"").hexdigest())
    with pytest.raises(BlobChangedError):
        download_to_file(container.get_blob_client("gone.txt"), tmp_path / "gone")
