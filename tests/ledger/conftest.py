import pytest

from chunking.ledger import Ledger, LocalLedgerStore, TableLedgerStore


@pytest.fixture(params=["local", "table"])
def ledger(request, tmp_path):
    """An empty ledger on each store: the SQLite file, and a table of the session's Azurite."""
    if request.param == "local":
        return Ledger(LocalLedgerStore(tmp_path / "ledger.sqlite3"))
    azurite = request.getfixturevalue("azurite")
    return Ledger(TableLedgerStore(azurite.connection_string, f"ledger{abs(hash(str(tmp_path))) % 10**8}"))
