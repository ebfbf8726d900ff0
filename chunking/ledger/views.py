"""What the ledger answers an operator, in one place for the CLI (``chunking status``) and the status HTTP API of
the Functions app (docs/operations.md#the-status-api): the counts by status with the failures and notes
(``summary``), documents by status a page at a time (``list_documents``), and one document (``document_view``).
Each answer is a JSON-ready dict; the callers only print or serve it."""

from __future__ import annotations

import base64
import binascii
from typing import Iterable

from chunking.ledger.state import DELETED, FAILED, INDEXED, QUEUED, SENDING, STATUSES, LedgerEntry, status_counts

__all__ = ["MAX_PAGE_SIZE", "SUMMARY_STATUSES", "document_view", "list_documents", "summary"]

#: The statuses ``summary`` counts, in its order (a ``throttled`` document is in none: it is on its way).
SUMMARY_STATUSES = (INDEXED, QUEUED, SENDING, FAILED, DELETED)
#: The most documents one page of ``list_documents`` holds.
MAX_PAGE_SIZE = 500


def summary(entries: Iterable[LedgerEntry]) -> dict:
    """``{"counts": {status: n} (SUMMARY_STATUSES), "failed": [{source, doc_id, version, error, attempts,
    updated_at}], "retrying": [{source, doc_id, status, error, attempts, updated_at}], "notes": [{source, status,
    note}]}``: every failed document with its reason; every document still on its way (``sending``, ``queued``,
    ``throttled``) whose last attempt failed with an error that can go away (``record_error``: throttled, 5xx,
    unreachable), with that error, since its status alone does not say it is waiting for a retry (locally: the next
    ``chunking ingest``); and every other document with a note (e.g. a strategy's fallback), in the ledger's
    order."""
    entries = list(entries)
    return {
        "counts": status_counts(entries, SUMMARY_STATUSES),
        "failed": [{"source": e.source, "doc_id": e.doc_id, "version": e.version, "error": e.error,
                    "attempts": e.attempts, "updated_at": e.updated_at} for e in entries if e.is_failed],
        "retrying": [{"source": e.source, "doc_id": e.doc_id, "status": e.status, "error": e.error,
                      "attempts": e.attempts, "updated_at": e.updated_at}
                     for e in entries if e.error and (e.is_sending or e.is_queued or e.is_throttled)],
        "notes": [{"source": e.source, "status": e.status, "note": e.note}
                  for e in entries if e.note and not e.is_failed],
    }


def document_view(entry: LedgerEntry) -> dict:
    """One document as the API and ``chunking status`` show it: path, container, id, status, current and indexed
    version, chunk and batch counts, reason of the last failure and its kind, note, attempts, and its timings
    (``created_at``, ``updated_at``, ``retry_at``, ``requeued_at``; ISO 8601 UTC, '' when none)."""
    return {"path": entry.source, "container": entry.container, "doc_id": entry.doc_id, "status": entry.status,
            "version": entry.version, "indexed_version": entry.indexed_version, "chunk_count": entry.chunk_count,
            "batch_count": entry.batch_count, "reason": entry.error, "failure": entry.failure, "note": entry.note,
            "attempts": entry.attempts, "created_at": entry.created_at, "updated_at": entry.updated_at,
            "retry_at": entry.retry_at, "requeued_at": entry.requeued_at}


def list_documents(entries: Iterable[LedgerEntry], *, status: str | None = None, limit: int = 100,
                   cursor: str | None = None) -> dict:
    """One page of documents (``document_view``) in path order: ``{"documents": [...], "next": cursor or None}``.
    *status* keeps one status only; *cursor* is the ``next`` of the page before (opaque); *limit* 1 …
    ``MAX_PAGE_SIZE``. A page is computed from the entries as they are now: a document added between two pages
    appears on a later page if its path sorts after the cursor.

    Raises:
        ValueError: an unknown *status*, a *limit* out of range or a malformed *cursor* (the message says which).
    """
    if status is not None and status not in STATUSES:
        raise ValueError(f"unknown status {status!r}: one of {', '.join(STATUSES)}")
    if not 1 <= limit <= MAX_PAGE_SIZE:
        raise ValueError(f"limit must be 1 to {MAX_PAGE_SIZE}, got {limit}")
    after = _decode_cursor(cursor) if cursor else None
    chosen = sorted((e for e in entries if (status is None or e.status == status)
                     and (after is None or (e.source, e.doc_id) > after)), key=lambda e: (e.source, e.doc_id))
    page = chosen[:limit]
    more = len(chosen) > limit
    return {"documents": [document_view(e) for e in page],
            "next": _encode_cursor(page[-1].source, page[-1].doc_id) if more else None}


def _encode_cursor(source: str, doc_id: str) -> str:
    return base64.urlsafe_b64encode(f"{doc_id}\n{source}".encode("utf-8")).decode("ascii")


def _decode_cursor(cursor: str) -> tuple[str, str]:
    try:
        doc_id, _, source = base64.urlsafe_b64decode(cursor.encode("ascii")).decode("utf-8").partition("\n")
    except (binascii.Error, UnicodeError, ValueError):
        raise ValueError("cursor is not one this API returned") from None
    if not doc_id:
        raise ValueError("cursor is not one this API returned")
    return source, doc_id
