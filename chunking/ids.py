"""Stable identifiers: document ids, versions, chunk keys and content hashes.

Azure AI Search keys may hold only letters, digits, ``_``, ``-`` and ``=`` and must not start with ``_``
(docs/architecture.md#platform-facts-and-their-sources), so every id here is a hex hash behind a letter prefix.
"""

from __future__ import annotations

import hashlib

__all__ = ["chunk_id", "content_hash", "doc_id", "document_version"]


def doc_id(container: str, path: str) -> str:
    """Stable id of a source: ``"d"`` + 32 hex characters of SHA-256 over ``container/path``.

    The full path counts, not the basename: ``a/x.pdf`` and ``b/x.pdf`` are different documents. The path is taken
    exactly as storage names the blob: ``/abs/x.txt``, ``abs/x.txt`` and ``dir//x.txt`` are three blobs, so three
    documents.
    """
    key = f"{container.strip('/')}/{path}"
    return "d" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def document_version(data_sha256: str, fingerprint: str, namespace: str = "") -> str:
    """Version of a document: 24 hex characters over the source bytes' SHA-256, the settings fingerprint and
    the *namespace* of the deployment that writes it (``chunking.pipeline.namespaces``).

    The same bytes chunked with other settings are another version, so a settings change re-indexes. The
    namespace is in it because the version is in every chunk key (``chunk_id``): two deployments sharing an
    index, with the same container name, path, bytes and settings, write different keys, so neither one's
    upsert overwrites the other's chunk, nor its delete removes it. Without a namespace (``""``) the version
    is what it was before namespaces were part of it (docs/operations.md#sharing-one-index: keys change once).
    """
    key = f"{data_sha256}:{fingerprint}" + (f":{namespace}" if namespace else "")
    return hashlib.sha256(key.encode()).hexdigest()[:24]


def chunk_id(document_id: str, version: str, ordinal: int) -> str:
    """Search key of a chunk: ``doc_id-version[:8]-ordinal`` (ordinal zero-padded to 6 digits).

    The version is part of the key, unlike a plain ``doc_id-ordinal``: a new version's chunks are written beside
    the old ones instead of over them, so the previous version stays whole and searchable until the new one is
    completely indexed (then the old keys are deleted), and a late batch of an old version can never overwrite a
    chunk of the current one.
    """
    return f"{document_id}-{version[:8]}-{ordinal:06d}"


def content_hash(text: str) -> str:
    """SHA-256 hex of a chunk's text (the key for reusing embeddings of unchanged text)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
