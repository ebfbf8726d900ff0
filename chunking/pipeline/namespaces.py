"""Index ownership: the namespace of a deployment, carried by every chunk it writes.

Several deployments (two Function apps, or a Function app and ``chunking ingest`` on a laptop) may share one
search index. Each one knows only the documents of its own ledger, so a chunk unknown to that ledger is an
orphan only if the same deployment wrote it: reconcile and cleanup delete records of their own namespace and
never touch the others (docs/operations.md#sharing-one-index).

The namespace is the ``NAMESPACE`` setting when set, else derived from what makes a deployment: the container
its documents come from and the ledger that records them (``<container>-<8 hex of the ledger's identity>``, e.g.
``documents-1f0c9a2e``). The ledger's identity is the storage account and table name of a table ledger, or the
absolute path of a SQLite ledger.
"""

from __future__ import annotations

import hashlib
import re

from chunking.ledger import local_ledger_path
from chunking.services import ledger_table

__all__ = ["deployment_namespace", "ledger_identity"]


def ledger_identity(settings) -> str:
    """Where the ledger of *settings* lives: ``table:<account>/<table>`` or ``sqlite:<absolute path>``.

    The account comes from ``AzureWebJobsStorage__accountName``, the table endpoint, or the connection
    string's ``AccountName`` (``devstoreaccount1`` for ``UseDevelopmentStorage=true``)."""
    table = ledger_table(settings)
    if table is not None:
        return f"table:{_account(settings)}/{table}"
    return f"sqlite:{local_ledger_path(settings).resolve()}"


def deployment_namespace(settings, container: str) -> str:
    """The namespace of the records a deployment writes for documents of *container*: ``NAMESPACE``
    (``settings.reconcile.namespace``) when set, else ``<container>-<first 8 hex of SHA-256 of ledger_identity(settings)>``.

    Example: container ``documents``, ledger table ``chunkingledger`` on account ``prodstore`` →
    ``documents-`` followed by 8 hex digits that depend only on ``table:prodstore/chunkingledger``."""
    explicit = settings.reconcile.namespace
    if explicit:
        return explicit
    digest = hashlib.sha256(ledger_identity(settings).encode("utf-8")).hexdigest()[:8]
    return f"{container.strip('/') or 'documents'}-{digest}"


def _account(settings) -> str:
    if settings.storage_account:
        return settings.storage_account
    for uri in (settings.storage_table_uri, settings.storage_blob_uri):
        if uri:
            host = re.sub(r"^[a-z]+://", "", uri).split("/", 1)[0]
            return host.split(".", 1)[0]
    connection = settings.storage_connection or ""
    if "UseDevelopmentStorage=true" in connection:
        return "devstoreaccount1"
    match = re.search(r"(?:^|;)\s*AccountName=([^;]+)", connection)
    if match:
        return match.group(1).strip()
    match = re.search(r"(?:^|;)\s*TableEndpoint=([^;]+)", connection)
    return match.group(1).strip() if match else ""  # never the connection string: it may hold a key
