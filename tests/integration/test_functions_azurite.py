"""End to end against a real Azurite: every corpus file uploaded to a blob container, the registered blob
function called with a real ``InputStream`` of each blob, its messages sent to the real queue base64-encoded as
the Functions host does, received, handed to the registered queue function, which writes through the real Azure
AI Search client to the lagging, stateful fake of the service (``tests/search_fake.py``: queries see writes only
after later requests); stage 2 must issue no search query, and once the index has caught up it must hold each
document's chunks and find each document by a phrase from its middle."""

from __future__ import annotations

import re

import pytest
from azure.storage.blob import BlobServiceClient
from azure.storage.queue import QueueClient, TextBase64DecodePolicy, TextBase64EncodePolicy

from chunking.index.azure import AzureSearchIndex
from tests.azurite_harness import VISIBILITY_LAG_REQUESTS
from tests.functions_host import queue_message, record_batches
from tests.search_fake import ENDPOINT, SearchServiceFake

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def deployed(azurite, tmp_path_factory):
    """function_app configured against Azurite, as on a Functions host with local settings."""
    from chunking.app import functions as handlers

    mp = pytest.MonkeyPatch()
    env = {
        "AzureWebJobsStorage": azurite.connection_string,
        "DOCUMENTS_CONTAINER": "documents",
        "CHUNK_BATCH_QUEUE": "chunk-batches",
        "PAYLOAD_CONTAINER": "chunk-payloads",
        "CHUNKING_STATE_DIR": str(tmp_path_factory.mktemp("state")),
        "BLOB_TRIGGER_SOURCE": "LogsAndContainerScan",
    }
    for key, value in env.items():
        mp.setenv(key, value)
    queues = record_batches(mp)
    search = SearchServiceFake(lag_requests=VISIBILITY_LAG_REQUESTS)
    mp.setattr("chunking.services.make_index", lambda settings: AzureSearchIndex(
        ENDPOINT, "chunks", settings.embedding_dimensions, "test-key", transport=search, sleep=lambda s: None))
    handlers.services.cache_clear()
    import function_app

    # The decorated objects are callable (azure-functions >= 1.21); app.get_functions() is not used here
    # because test_function_app may have called it already and it is not idempotent.
    yield {"ingest_document": function_app.ingest_document, "index_chunk_batch": function_app.index_chunk_batch,
           "queues": queues, "search": search}
    handlers.services.cache_clear()
    mp.undo()


def _phrase_from_middle(text: str) -> str:
    """About ten words (or 12 CJK characters) from the middle of *text*, without markup."""
    plain = re.sub(r"<[^>]+>", " ", text)
    words = plain.split()
    middle = len(words) // 2
    phrase = " ".join(words[max(0, middle - 5): middle + 5])
    if len(phrase) > 40 and any("\u3040" <= ch <= "\u9fff" for ch in phrase):
        start = max(0, len(phrase) // 2 - 6)
        phrase = phrase[start: start + 12]
    return phrase


def test_corpus_end_to_end(azurite, deployed, corpus):
    service = BlobServiceClient.from_connection_string(azurite.connection_string)
    container = service.create_container("documents")
    files = sorted(p for p in corpus.iterdir() if p.is_file() and p.name != "SOURCES.md")
    for path in files:
        container.upload_blob(f"corpus/{path.name}", path.read_bytes(), overwrite=True)

    # The queue does not exist yet: the blob function creates it when it first sends.
    queue = QueueClient.from_connection_string(
        azurite.connection_string, "chunk-batches",
        message_encode_policy=TextBase64EncodePolicy(), message_decode_policy=TextBase64DecodePolicy(),
    )

    expected: dict[str, int] = {}
    for path in files:
        name = f"corpus/{path.name}"
        stream = container.get_blob_client(name)
        sent = deployed["queues"][-1].sent if deployed["queues"] else []
        before = len(sent)
        deployed["ingest_document"](stream)
        messages = deployed["queues"][-1].sent[before:]
        assert messages, f"no messages for {name}"
        assert all(len(m.encode("utf-8")) <= 49_152 for m in messages)
        expected[name] = len(messages)

    handled = 0
    while True:
        batch = list(queue.receive_messages(messages_per_page=32, visibility_timeout=60))
        if not batch:
            break
        for m in batch:
            deployed["index_chunk_batch"](queue_message(m.content, m.dequeue_count))
            queue.delete_message(m)
            handled += 1
    assert handled == sum(expected.values())
    search = deployed["search"]
    assert search.queries == 0  # stage 2 decided everything from the ledger and lookups by key
    assert search.pending  # and some writes were still invisible to queries when it finished
    search.settle()  # the index's refresh catches up

    from chunking.app import functions as handlers
    from chunking.ids import doc_id

    index, embedder = handlers.services().index, handlers.services().embedder
    for path in files:
        name = f"corpus/{path.name}"
        records = sorted(index.records_of(doc_id("documents", name)), key=lambda r: r.ordinal)
        assert records, f"{name} not indexed"
        assert [r.ordinal for r in records] == list(range(len(records)))
        assert len({r.version for r in records}) == 1, f"{name} has chunks of several versions"
        assert {r.source for r in records} == {name}
        assert all(r.page_start <= r.page_end for r in records)
        assert all(a.page_start <= b.page_start for a, b in zip(records, records[1:]))
        assert all(0 < r.token_count <= 8191 for r in records)
        # Over the 500-token cap only where the splitter keeps a unit whole: a figure, or fenced code in Markdown.
        assert all(r.token_count <= 500 for r in records if "<figure" not in r.content and "```" not in r.content)
        phrase = _phrase_from_middle(records[len(records) // 2].content)
        hits = index.search(phrase, embedder.embed([phrase])[0], k=10)
        assert name in {h.record.source for h in hits}, f"searching {phrase!r} did not find {name}"

    pdf = index.records_of(doc_id("documents", "corpus/amc-manual.en.pdf"))
    assert len(pdf) > 100
    assert max(r.page_end for r in pdf) > 50
    assert all(r.sourcepage == f"corpus/amc-manual.en.pdf#page={r.page_start + 1}" for r in pdf)
