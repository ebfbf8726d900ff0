"""The ledger in an Azure Storage table (``azure-data-tables``; Azurite emulates it locally)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Iterator

from chunking.ledger.state import FAILED, TRANSIENT, BatchRecord, LedgerEntry
from chunking.storage import storage_error

__all__ = ["TableLedgerStore"]

_COLUMNS = [f.name for f in dataclasses.fields(LedgerEntry)]

# A string property of a table entity holds at most 64 KiB (32 K UTF-16 characters): keys are spread over
# properties k0, k1, … of at most this many characters.
_KEYS_CHARS_PER_PROPERTY = 30_000


class TableLedgerStore:
    """The ledger in an Azure Storage table (Azurite emulates it); one entity per document (PartitionKey
    ``"doc"``, RowKey = doc_id), the tag is the entity's ETag. Batch records are entities of the partition
    ``"batch-<doc_id>"`` with RowKey ``<version>-<batch_no>`` (one partition per document: a version's records
    are one range query away)."""

    def __init__(self, storage: Any, table: str) -> None:
        """*storage*: a connection string or a ``TableServiceClient`` (see ``chunking.storage``); the table is
        created if missing.

        Raises:
            StorageError: the table service cannot be reached or refuses (the message names table and account).
        """
        from azure.core.exceptions import AzureError
        from azure.data.tables import TableServiceClient

        service = TableServiceClient.from_connection_string(storage) if isinstance(storage, str) else storage
        try:
            self._client = service.create_table_if_not_exists(table)
        except AzureError as exc:
            raise storage_error(exc, service, f"ledger table '{table}'") from None

    def read(self, doc_id: str) -> tuple[LedgerEntry | None, object]:
        from azure.core.exceptions import ResourceNotFoundError

        try:
            entity = self._client.get_entity("doc", doc_id)
        except ResourceNotFoundError:
            return None, None
        return self._entry(entity), entity.metadata["etag"]

    def write(self, entry: LedgerEntry, tag: object) -> bool:
        from azure.core import MatchConditions
        from azure.core.exceptions import HttpResponseError, ResourceExistsError
        from azure.data.tables import UpdateMode

        entity = {"PartitionKey": "doc", "RowKey": entry.doc_id, **entry.to_dict()}
        try:
            if tag is None:
                self._client.create_entity(entity)
            else:
                self._client.update_entity(entity, mode=UpdateMode.REPLACE, etag=tag,
                                           match_condition=MatchConditions.IfNotModified)
        except ResourceExistsError:
            return False
        except HttpResponseError as exc:
            if exc.status_code == 412:
                return False
            raise
        return True

    def entries(self) -> Iterator[LedgerEntry]:
        return (self._entry(e) for e in self._client.query_entities("PartitionKey eq 'doc'"))

    def entries_where(self, statuses: tuple[str, ...], updated_since: str) -> Iterator[LedgerEntry]:
        """The entries in one of *statuses*, ``failed`` by a transient cause, or updated at *updated_since* or
        later: one query, filtered by the table service (ISO 8601 timestamps compare as strings)."""
        params = {f"s{i}": status for i, status in enumerate(statuses)}
        params.update(since=updated_since, failed=FAILED, transient=TRANSIENT)
        wanted = " or ".join(f"status eq @s{i}" for i in range(len(statuses)))
        # The SDK substitutes a parameter only between spaces: none touches a parenthesis.
        query = (f"PartitionKey eq 'doc' and ( {wanted} or updated_at ge @since "
                 f"or ( status eq @failed and failure eq @transient ) )")
        return (self._entry(e) for e in self._client.query_entities(query, parameters=params))

    def add_batch(self, record: BatchRecord) -> bool:
        from azure.core.exceptions import ResourceExistsError

        keys, hashes = _split(json.dumps(record.keys)), _split(json.dumps(record.hashes))
        entity = {"PartitionKey": f"batch-{record.doc_id}", "RowKey": f"{record.version}-{record.batch_no:06d}",
                  "version": record.version, "batch_no": record.batch_no, "parts": len(keys),
                  **{f"k{i}": part for i, part in enumerate(keys)}, "hash_parts": len(hashes),
                  **{f"h{i}": part for i, part in enumerate(hashes)}, "embedder": record.embedder}
        try:
            self._client.create_entity(entity)
        except ResourceExistsError:
            return False
        return True

    def batches(self, doc_id: str, version: str | None = None) -> list[BatchRecord]:
        query = "PartitionKey eq @pk"
        params = {"pk": f"batch-{doc_id}"}
        if version is not None:
            # RowKeys of the version sort between "<version>-" and "<version>." ("." follows "-").
            query += " and RowKey gt @lo and RowKey lt @hi"
            params.update(lo=f"{version}-", hi=f"{version}.")
        return [_batch_record(doc_id, e)
                for e in self._client.query_entities(query, parameters=params)]

    def remove_batches(self, doc_id: str, version: str) -> None:
        from azure.core.exceptions import ResourceNotFoundError

        for record in self.batches(doc_id, version):
            try:
                self._client.delete_entity(f"batch-{doc_id}", f"{version}-{record.batch_no:06d}")
            except ResourceNotFoundError:
                pass

    @staticmethod
    def _entry(entity: dict) -> LedgerEntry:
        return LedgerEntry(**{c: entity.get(c, LedgerEntry.__dataclass_fields__[c].default) for c in _COLUMNS
                              if c in entity or c == "doc_id"} | {"doc_id": entity["RowKey"]})


def _split(text: str) -> list[str]:
    return [text[i:i + _KEYS_CHARS_PER_PROPERTY] for i in range(0, len(text), _KEYS_CHARS_PER_PROPERTY)]


def _batch_record(doc_id: str, entity: dict) -> BatchRecord:
    """A batch record from its table entity (one written before hashes were recorded has none)."""
    def joined(prefix: str, count: object) -> list:
        return json.loads("".join(entity[f"{prefix}{i}"] for i in range(int(count or 0))) or "[]")

    return BatchRecord(doc_id, entity["version"], int(entity["batch_no"]), tuple(joined("k", entity["parts"])),
                       tuple(joined("h", entity.get("hash_parts"))), str(entity.get("embedder") or ""))
