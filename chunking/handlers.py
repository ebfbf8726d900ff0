"""What the Azure Functions run, minus the bindings: one call per trigger, with the process's services built
once from the environment (lazily, so importing ``function_app`` never touches the network: pitfall 7 of
shared/reference/azure-functions.md)."""

from __future__ import annotations

import functools
import logging

from chunking.embeddings import Embedder, make_embedder
from chunking.index import SearchIndex, make_index
from chunking.messages import MessageError
from chunking.payloads import PayloadStore, make_payload_store
from chunking.pipeline import StageOneResult, StageTwoResult, run_stage_one, run_stage_two
from chunking.settings import Settings

__all__ = ["handle_blob", "handle_batch", "services"]

log = logging.getLogger("chunking.handlers")


@functools.cache
def services() -> tuple[Settings, Embedder, SearchIndex, PayloadStore]:
    """Settings, embedder, index (ensured) and claim-check store of this process, built on first use."""
    settings = Settings.from_env()
    index = make_index(settings)
    index.ensure()
    payloads = make_payload_store(settings.storage_connection, settings.payload_container)
    return settings, make_embedder(settings), index, payloads


def handle_blob(data: bytes, blob_name: str) -> StageOneResult:
    """Stage 1 for a blob-trigger invocation. *blob_name* is ``container/path`` as the host gives it.

    Returns the result whose ``messages`` go to the chunk-batch queue; a rejected file has ``error`` set and no
    messages (logged, not raised, so the trigger does not retry a file that can never succeed).
    """
    settings, _, _, payloads = services()
    container, _, path = blob_name.partition("/")
    if not path:  # a name without container (should not happen with a {container}/{name} path)
        container, path = settings.documents_container, blob_name
    return run_stage_one(data, source=path, container=container, settings=settings, payloads=payloads)


def handle_batch(body: bytes | str) -> StageTwoResult | None:
    """Stage 2 for a queue-trigger invocation. A malformed message is logged and dropped (``None``): no retry
    can fix it. Other errors propagate, so the queue retries and finally moves the message to ``-poison``."""
    settings, embedder, index, payloads = services()
    try:
        return run_stage_two(body, settings=settings, embedder=embedder, index=index, payloads=payloads)
    except MessageError as exc:
        log.error("dropped a malformed chunk-batch message: %s", exc)
        return None
