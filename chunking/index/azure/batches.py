"""Indexing requests to Azure AI Search: documents sent in batches of ≤ 1,000 and ≤ 16 MB
(``azure_schema.batches_by_size``), per-document failures read from the 207 answer, and only the keys that failed
transiently (409, 422, 429, 503: "Index Documents" REST reference) sent again."""

from __future__ import annotations

import functools
from typing import Any

from azure.search.documents.models import IndexDocumentsBatch

from chunking.errors import IndexError_
from chunking.index.azure.retries import RetryPolicy
from chunking.index.azure.schema import RETRYABLE_STATUS, batches_by_size

__all__ = ["index_all"]

_ADD = {"delete": "add_delete_actions", "merge": "add_merge_actions", "mergeOrUpload": "add_merge_or_upload_actions"}


def index_all(documents: Any, retry: RetryPolicy, action: str, docs: list[dict[str, Any]], *, max_docs: int,
              max_bytes: int, index_name: str) -> None:
    """Send *docs* with *action* (``delete``, ``merge``, ``mergeOrUpload``) through *documents* (a
    ``SearchClient``). A ``merge`` of a key the index no longer holds (404) counts as done: its document was
    deleted meanwhile.

    Raises:
        IndexError_: documents failed permanently (keys and errors named, at most 20), or one document alone
            exceeds *max_bytes*.
    """
    failures: dict[str, str] = {}
    for batch in batches_by_size(docs, action, max_docs, max_bytes):
        failures.update(_index_batch(documents, retry, action, batch))
    if failures:
        shown = "; ".join(f"{key}: {error}" for key, error in list(failures.items())[:20])
        more = f" (and {len(failures) - 20} more)" if len(failures) > 20 else ""
        raise IndexError_(f"{action} failed for {len(failures)} documents in {index_name!r}: {shown}{more}")


def _index_batch(documents: Any, retry: RetryPolicy, action: str, batch: list[dict[str, Any]]) -> dict[str, str]:
    """Send one batch, resending only the keys that failed transiently; return permanent failures."""
    pending = {doc["id"]: doc for doc in batch}
    permanent: dict[str, str] = {}
    last_error: dict[str, str] = {}
    for attempt in range(retry.max_attempts):
        request = IndexDocumentsBatch()
        getattr(request, _ADD[action])(list(pending.values()))
        keys = ", ".join(list(pending)[:5])
        send = functools.partial(documents.index_documents, request)
        results = retry.run(f"{action} of {len(pending)} documents ({keys}, …)", send)
        again: dict[str, dict[str, Any]] = {}
        for result in results:
            if result.succeeded or (action == "merge" and result.status_code == 404):
                continue
            error = f"HTTP {result.status_code}: {result.error_message}"
            if result.status_code in RETRYABLE_STATUS and result.key in pending:
                again[result.key] = pending[result.key]
                last_error[result.key] = error
            else:
                permanent[result.key] = error
        pending = again
        if not pending:
            return permanent
        if attempt + 1 < retry.max_attempts:
            retry.wait(attempt, None)
    for key in pending:
        permanent[key] = f"{last_error[key]} (still failing after {retry.max_attempts} attempts)"
    return permanent
