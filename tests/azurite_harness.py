"""The Functions app driven against Azurite by hand, as the host would: every *_azurite.py test builds its
scenario on ``Harness`` (blob container, base64 queue, ledger table on Azurite; the real Azure AI Search client
over a fake service whose queries lag its writes, ``tests/search_fake.py``)."""

from __future__ import annotations

import hashlib
import time

import pytest
from azure.storage.blob import BlobServiceClient
from azure.storage.queue import QueueClient, TextBase64DecodePolicy, TextBase64EncodePolicy

from chunking.pipeline.stage_two import run_stage_one
from chunking.storage.claim_check import MemoryPayloadStore
from tests.functions_host import queue_message, record_batches
from tests.search_fake import ENDPOINT, SearchServiceFake

__all__ = ["Harness", "VISIBILITY_LAG_REQUESTS", "_paragraphs", "harness_fixture"]


def _paragraphs(n: int, tag: str) -> bytes:
    """*n* distinct sentences-rich paragraphs (≈ 1 chunk each at 60 tokens)."""
    return "\n\n".join(
        f"Paragraph {i} of {tag} explains step number {i} in plain words. It adds detail {i * 7} for the reader."
        for i in range(n)
    ).encode()


# Writes and deletes become visible to index queries only after this many further requests to the service.
VISIBILITY_LAG_REQUESTS = 6


class Harness:
    def __init__(self, azurite, name: str, state_dir, monkeypatch, lag_requests: int = VISIBILITY_LAG_REQUESTS) -> None:
        from chunking.app import functions as handlers
        from chunking.index.azure import AzureSearchIndex

        env = {
            "AzureWebJobsStorage": azurite.connection_string,
            "DOCUMENTS_CONTAINER": f"docs{name}",
            "CHUNK_BATCH_QUEUE": f"batches{name}",
            "STAGE1_JOB_QUEUE": f"jobs{name}",
            "PAYLOAD_CONTAINER": f"payloads{name}",
            "FIGURES_CONTAINER": f"figures{name}",
            "LEDGER_TABLE": f"ledger{name}",
            "CHUNKING_STATE_DIR": str(state_dir),
            "SPLIT_MAX_TOKENS": "60",
            "SPLIT_MAX_CHARS": "300",
            "BATCH_MAX_CHUNKS": "4",
        }
        self.env, self._monkeypatch = env, monkeypatch
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        self.queues = record_batches(monkeypatch)
        self.search = SearchServiceFake(lag_requests=lag_requests)
        self.sleeps: list[float] = []
        monkeypatch.setattr("chunking.services.make_index", lambda settings: AzureSearchIndex(
            ENDPOINT, "chunks", settings.embedding_dimensions, "test-key", transport=self.search,
            sleep=self.sleeps.append))
        handlers.services.cache_clear()
        self.handlers = handlers
        import function_app

        self.app = function_app
        service = BlobServiceClient.from_connection_string(azurite.connection_string)
        self.container = service.create_container(env["DOCUMENTS_CONTAINER"])
        self.queue = QueueClient.from_connection_string(
            azurite.connection_string, env["CHUNK_BATCH_QUEUE"],
            message_encode_policy=TextBase64EncodePolicy(), message_decode_policy=TextBase64DecodePolicy())
        self.queue.create_queue()
        self.jobs = QueueClient.from_connection_string(
            azurite.connection_string, env["STAGE1_JOB_QUEUE"],
            message_encode_policy=TextBase64EncodePolicy(), message_decode_policy=TextBase64DecodePolicy())
        self.cname = env["DOCUMENTS_CONTAINER"]
        self.sent: list[str] = []

    @property
    def s(self):
        return self.handlers.services()

    def activate(self) -> None:
        """Make this harness's settings the process's again (a test may run several deployments)."""
        for key, value in self.env.items():
            self._monkeypatch.setenv(key, value)
        self.handlers.services.cache_clear()

    def upload(self, path: str, data: bytes) -> list[str]:
        """Upload, then run the blob function as the host would; it sends its messages to the real queue, and
        they are returned."""
        self.container.upload_blob(path, data, overwrite=True)
        before = len(self.queues[-1].sent) if self.queues else 0
        self.app.ingest_document(self.container.get_blob_client(path))
        messages = self.queues[-1].sent[before:] if self.queues else []
        self.sent.extend(messages)
        return messages

    def drain(self, fail_first: set[int] | None = None) -> int:
        """Receive and handle every queued message (stage-1 jobs first, then chunk batches) until both queues are
        empty; messages whose handler raises stay on the queue and come back after 1 s, as with the host's
        retries. Returns the number of chunk-batch messages handled.

        A received message stays invisible for 60 s, longer than handling its page of 16 takes even on a loaded
        machine: with a shorter lease it becomes visible again while the page is still being handled, and its
        pop receipt no longer deletes it."""
        handled = 0
        for _ in range(400):
            jobs = list(self.jobs.receive_messages(messages_per_page=4, visibility_timeout=60)) \
                if self._jobs_exist() else []
            for m in jobs:
                try:
                    self.app.run_stage_one_job(queue_message(m.content, m.dequeue_count))
                except RuntimeError:
                    self.jobs.update_message(m, visibility_timeout=1)
                    continue
                self.jobs.delete_message(m)
            batch = list(self.queue.receive_messages(messages_per_page=16, visibility_timeout=60))
            if not batch and not jobs:
                if self.queue.get_queue_properties().approximate_message_count == 0 and self._jobs_left() == 0:
                    break
                time.sleep(0.5)
                continue
            for m in batch:
                try:
                    self.app.index_chunk_batch(queue_message(m.content, m.dequeue_count))
                except RuntimeError:
                    self.queue.update_message(m, visibility_timeout=1)
                    continue
                self.queue.delete_message(m)
                handled += 1
        return handled

    def _jobs_exist(self) -> bool:
        from azure.core.exceptions import ResourceNotFoundError

        try:
            self.jobs.get_queue_properties()
        except ResourceNotFoundError:
            return False
        return True

    def _jobs_left(self) -> int:
        return self.jobs.get_queue_properties().approximate_message_count if self._jobs_exist() else 0

    def index_outage(self, monkeypatch) -> dict[str, bool]:
        """Make every write to the index fail with a 500, as a service outage does, until the returned switch's
        ``"on"`` is set to False."""
        from chunking.errors import IndexError_

        index = self.s.index
        real = index.upsert
        down = {"on": True}

        def outage(records):
            if down["on"]:
                raise IndexError_("mergeOrUpload of 4 documents failed: HTTP 500: internal error", status=500)
            return real(records)

        monkeypatch.setattr(index, "upsert", outage)
        return down

    def embedding_calls(self) -> int:
        return self.s.embedder.requests

    def settle(self) -> None:
        """Let the index's queries catch up with its writes (as a little waiting does on the service)."""
        self.search.settle()

    def assert_index_is_exactly_current(self) -> None:
        """The index holds, for every blob in the container, exactly the chunks of its current bytes (ids,
        contents, version), and nothing else (once its queries have caught up)."""
        expected, actual = self.expected_and_actual()
        assert actual == expected

    def drift(self) -> dict[str, int]:
        """How far the index is from exactly current: ``lost`` (chunks of current bytes missing or wrong),
        ``stale`` (chunks that are not of a blob's current bytes), ``duplicated`` (stale chunks whose text a
        current chunk of the same document holds too: the same passage returned twice)."""
        expected, actual = self.expected_and_actual()
        current = {(key.split("-", 1)[0], content) for key, content in expected.items()}
        stale = [k for k in actual if k not in expected]
        return {"lost": sum(1 for k, c in expected.items() if actual.get(k) != c), "stale": len(stale),
                "duplicated": sum(1 for k in stale if (k.split("-", 1)[0], actual[k]) in current)}

    def expected_and_actual(self) -> tuple[dict[str, str], dict[str, str]]:
        """``({key: content} the index must hold, {key: content} it holds)`` once its queries caught up."""
        self.settle()
        expected: dict[str, str] = {}
        for item in self.container.list_blobs():
            data = self.container.get_blob_client(item.name).download_blob().readall()
            store = MemoryPayloadStore()
            probe = run_stage_one(data, source=item.name, container=self.cname, settings=self.s.settings,
                                  payloads=store, ledger=_NoLedger())
            if probe.error:
                continue
            from chunking.messages.batches import decode_message, load_records

            for m in probe.messages:
                for r in load_records(decode_message(m), store):
                    expected[r.id] = r.content
        actual: dict[str, str] = {}
        for did in self.s.index.doc_ids():
            for r in self.s.index.records_of(did):
                actual[r.id] = r.content
        return expected, actual


class _NoLedger:
    """A ledger that knows nothing: stage 1 then always splits (to compute the expected records)."""

    def get(self, doc_id):
        return None

    def begin_version(self, *a, **k):
        return None

    def mark_failed(self, *a, **k):
        return None

    def record_members(self, *a, **k):  # a container's member list (chunking.pipeline.members)
        return None


def harness_fixture(prefix: str):
    """A pytest fixture ``h``: a ``Harness`` whose container, queue and table names are *prefix* plus a hash of
    the test's name (unique per test, valid Azure names), its services forgotten afterwards."""

    @pytest.fixture
    def h(azurite, tmp_path, monkeypatch, request):
        name = prefix + hashlib.sha256(request.node.name.encode()).hexdigest()[:12]
        harness = Harness(azurite, name, tmp_path, monkeypatch)
        yield harness
        harness.handlers.services.cache_clear()

    return h
