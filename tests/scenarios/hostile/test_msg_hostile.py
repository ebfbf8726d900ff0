"""Hostile Outlook messages through stage 1 in a process of their own (tests/scenarios/hostile/measure.py): streams
that claim far more than the file holds, a FAT cycle, a damaged header. Each bad attachment is refused with its
reason before anything of it is read, the others are indexed, and peak memory stays within the bound."""

from __future__ import annotations

import struct

from chunking.ids import doc_id
from chunking.ledger import Ledger, LocalLedgerStore
from tests.parsers.made import outlook_message
from tests.parsers.test_cfb import entry_offset, fat_entry_offset, patched, start_sector
from tests.scenarios.hostile.measure import PEAK_RSS_BOUND_MB, stage_one

DATA = "__substg1.0_37010102"  # an attachment's data stream, one per attachment storage, in order


def _declared(data: bytes, occurrence: int, size_bytes: int) -> bytes:
    """*data* with the *occurrence*-th attachment data stream claiming *size_bytes*."""
    return patched(data, entry_offset(data, DATA, occurrence) + 120, size_bytes)


def test_lying_and_looping_attachments_are_refused_unread_within_the_memory_bound(tmp_path):
    data = outlook_message(subject="Depot", body="The fine notes are attached.", attachments=[
        {"filename": "lie.txt", "data": b"L" * 5000}, {"filename": "loop.txt", "data": b"O" * 5000},
        {"filename": "fine.txt", "data": b"Okapi notes."}])
    data = _declared(data, 0, 200 << 20)  # 200 MiB claimed by a 5 KB stream: past the budget, never read
    start = start_sector(data, DATA, 1)
    data = _declared(patched(data, fat_entry_offset(data, start + 2), start), 1, 50 << 20)  # 50 MiB in a loop
    path = tmp_path / "depot.msg"
    path.write_bytes(data)
    measured = stage_one(path, tmp_path / "state")

    assert (measured.outcome, measured.status) == ("added", "queued")
    assert measured.peak_rss_mb < PEAK_RSS_BOUND_MB
    ledger = Ledger(LocalLedgerStore(tmp_path / "state" / "ledger.sqlite3"))
    entries = {name: ledger.get(doc_id("hostile", f"depot.msg/attachments/{name}"))
               for name in ("lie.txt", "loop.txt", "fine.txt")}
    assert entries["lie.txt"].error == ("the mail's attachments up to this one add up past 100 MB "
                                        "(MAX_DECOMPRESSED_BYTES)")
    assert entries["loop.txt"].error == ("damaged attachment: damaged compound file: the sector chain of "
                                         "__attach_version1.0_#00000001/__substg1.0_37010102 loops (FAT cycle)")
    assert (entries["fine.txt"].status, entries["fine.txt"].error) == ("queued", "")


def test_a_damaged_header_fails_the_message_with_its_reason_and_no_traceback(tmp_path):
    data = outlook_message(subject="Depot", body="Body.")
    path = tmp_path / "bad.msg"
    path.write_bytes(data[:28] + struct.pack("<H", 0x1234) + data[30:])  # the byte-order mark
    measured = stage_one(path, tmp_path / "state")  # asserts that no traceback was printed
    assert (measured.outcome, measured.status, measured.reason) == (
        "failed", "failed", "not a valid MSG: damaged compound file: incorrect ByteOrder in OLE header")
