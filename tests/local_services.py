"""The local backends a pipeline test runs ``chunking.pipeline.ingest.ingest_files`` with, in one state folder."""

from __future__ import annotations

from pathlib import Path

from chunking.embeddings import OfflineLexicalEmbedder
from chunking.index.local import LocalIndex
from chunking.ledger import Ledger, LocalLedgerStore
from chunking.settings import Settings

__all__ = ["local_services"]


def local_services(state: Path, dimensions: int = 64) -> dict:
    """``ingest_files``' keyword arguments ``settings``, ``embedder``, ``index`` and ``ledger``: the offline embedder
    with *dimensions*, and a local index (created) and ledger under *state*."""
    index = LocalIndex(state / "index.sqlite3", dimensions)
    index.ensure()
    return {"settings": Settings(state_dir=state, embedding_dimensions=dimensions),
            "embedder": OfflineLexicalEmbedder(dimensions), "index": index,
            "ledger": Ledger(LocalLedgerStore(state / "ledger.sqlite3"))}
