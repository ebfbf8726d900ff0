"""Backfill: which documents were indexed with other settings than the current ones.

A document's indexed version records what made it (``chunking.ledger.LedgerEntry``): the stage-1 settings
(``made_with``: the splitter's fingerprint, which covers the splitter, its parameters and the splitting rules,
and the namespace the chunks carry) and the embedder (``indexed_embedder``: model and dimensions). When the
current settings make something else for a blob, the document is *stale*: reconcile re-enqueues it, a bounded
number per run, and ``chunking reprocess`` on demand (docs/operations.md#backfill-after-a-settings-change).

A document indexed before these were recorded has none of them; it is not taken for stale (nothing says its
settings differ): ``chunking reprocess --all`` re-processes such documents once.
"""

from __future__ import annotations

from typing import Callable

from chunking.documents.splitter import splitter_for
from chunking.formats import extension_of
from chunking.ledger import LedgerEntry
from chunking.pipeline.namespaces import deployment_namespace

__all__ = ["KEY_SCHEME", "expected_settings", "stage_one_settings", "why_stale"]


#: The chunk-key scheme stage 1 writes: 2 since the namespace is part of every key (``chunking.ids.document_version``).
#: Recorded in ``made_with``, so the documents indexed under an older scheme are stale once, and backfilled.
KEY_SCHEME = 2


def stage_one_settings(splitter_fingerprint: str, namespace: str) -> str:
    """What the ledger records as ``made_with`` for a version:
    ``splitter=<fingerprint>;namespace=<namespace>;keys=<KEY_SCHEME>``."""
    return f"splitter={splitter_fingerprint};namespace={namespace};keys={KEY_SCHEME}"


def expected_settings(settings, container: str) -> Callable[[str], str]:
    """``made_with(path)`` under *settings* for blobs of *container*: what stage 1 would record now ('' when the
    configured splitter cannot be built for that path: stage 1 reports that itself). One splitter per extension
    is built, so a listing of any length costs a handful."""
    namespace = deployment_namespace(settings, container)
    cache: dict[str, str] = {}

    def made_with(path: str) -> str:
        ext = extension_of(path)
        if ext not in cache:
            try:
                cache[ext] = stage_one_settings(splitter_for(path, settings).fingerprint, namespace)
            except ValueError:
                cache[ext] = ""
        return cache[ext]

    return made_with


def why_stale(entry: LedgerEntry, made_with: str, embedder: str) -> str:
    """Why *entry* should be processed again under the current settings (*made_with* for its blob, *embedder*:
    ``Embedder.name``), or '' when it is current or unknown.

    Stale: an ``indexed`` entry whose indexed version was made with other stage-1 settings or another embedder,
    or a ``failed`` one whose failure is permanent and whose version was made with other stage-1 settings (a
    splitter change may be what it needed)."""
    if entry.is_indexed:
        if entry.indexed_made_with and made_with and entry.indexed_made_with != made_with:
            return _difference(entry.indexed_made_with, made_with)
        if entry.indexed_embedder and embedder and entry.indexed_embedder != embedder:
            return f"embedder {entry.indexed_embedder} → {embedder}"
        return ""
    if entry.is_failed and entry.failure == "permanent" and entry.made_with and made_with \
            and entry.made_with != made_with:
        return f"failed under other settings ({_difference(entry.made_with, made_with)})"
    return ""


def _difference(old: str, new: str) -> str:
    """``splitter settings`` / ``namespace a → b``: which part of two ``made_with`` strings differs."""
    before = dict(part.split("=", 1) for part in old.split(";") if "=" in part)
    after = dict(part.split("=", 1) for part in new.split(";") if "=" in part)
    changed = [name for name in sorted(set(before) | set(after)) if before.get(name) != after.get(name)]
    words = []
    for name in changed:
        if name == "namespace":
            words.append(f"namespace {before.get(name, '')} → {after.get(name, '')}")
        elif name == "keys":  # made_with of scheme 1 had no keys part
            words.append(f"chunk keys {before.get(name, '1')} → {after.get(name, '')}")
        else:
            words.append(f"{name} settings")
    return ", ".join(words) or "settings"
