"""What the callers of ``chunking.services`` ask instead of comparing backend names: where the ledger and the index
are, and whether they can be read without creating anything."""

from __future__ import annotations

from pathlib import Path

from chunking.ledger import LocalLedgerStore
from chunking.services import (
    index_known_empty,
    index_location,
    ledger_exists,
    ledger_table,
    make_index,
    make_ledger,
    vector_floor,
)
from chunking.settings import Settings


def test_a_local_ledger_has_no_table_and_exists_once_its_file_does(tmp_path: Path):
    settings = Settings(state_dir=tmp_path)
    assert ledger_table(settings) is None
    assert not ledger_exists(settings)  # asking creates nothing
    assert not (tmp_path / "ledger.sqlite3").exists()
    ledger = make_ledger(settings)
    assert isinstance(ledger.store, LocalLedgerStore)
    ledger.entries()
    assert ledger_exists(settings)


def test_a_table_ledger_names_its_table_and_always_counts_as_there():
    settings = Settings(ledger_backend="table", ledger_table="sharedledger",
                        storage_connection="UseDevelopmentStorage=true")
    assert ledger_table(settings) == "sharedledger"
    assert ledger_exists(settings)  # no request: the table is created when the ledger is built


def test_a_local_index_is_known_empty_until_its_file_exists(tmp_path: Path):
    settings = Settings(state_dir=tmp_path, embedding_dimensions=16)
    assert index_known_empty(settings)
    assert index_location(settings) == str(settings.local_index_path)
    assert vector_floor(settings) == 0.15  # the offline embedder's default SEARCH_MIN_VECTOR_SCORE
    assert not make_index(settings).schema_info().exists and index_known_empty(settings)  # read-only
    with make_index(settings):
        pass
    assert not index_known_empty(settings)


def test_a_remote_index_is_never_assumed_empty_and_has_no_local_floor(tmp_path: Path):
    settings = Settings(state_dir=tmp_path, index_backend="azure", search_endpoint="https://s.search.windows.net")
    assert not index_known_empty(settings)
    assert index_location(settings) == "https://s.search.windows.net"
    assert vector_floor(settings) is None
