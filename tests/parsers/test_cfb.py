"""chunking.parsers.cfb: compound files written by ``write_compound`` read back by olefile (an independent reader),
and damaged ones (a bad header, a FAT cycle, a sector past the end of the file) refused with their reasons."""

from __future__ import annotations

import struct

import olefile
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunking.parsers.cfb import CompoundError, CompoundFile, write_compound

SECTOR = 512


def sector_offset(sector: int) -> int:
    """Where sector *sector* starts ([MS-CFB] §2.2: sector 0 follows the 512-byte header)."""
    return SECTOR * (sector + 1)


def fat_entry_offset(data: bytes, sector: int) -> int:
    """Where the FAT entry of *sector* lies (the FAT sectors named by the header's first DIFAT entries)."""
    fat_sector = struct.unpack_from("<I", data, 76 + 4 * (sector // 128))[0]
    return sector_offset(fat_sector) + 4 * (sector % 128)


def entry_offset(data: bytes, name: str, occurrence: int = 0) -> int:
    """Where the directory entry named *name* lies (its *occurrence*-th, in directory order); ``write_compound``
    writes the directory in consecutive sectors."""
    first = struct.unpack_from("<I", data, 48)[0]
    encoded = name.encode("utf-16-le") + b"\0\0"
    seen = 0
    offset = sector_offset(first)
    while offset < len(data):
        length = struct.unpack_from("<H", data, offset + 64)[0]
        if data[offset:offset + length] == encoded:
            if seen == occurrence:
                return offset
            seen += 1
        offset += 128
    raise KeyError(name)


def start_sector(data: bytes, name: str, occurrence: int = 0) -> int:
    return struct.unpack_from("<I", data, entry_offset(data, name, occurrence) + 116)[0]


def patched(data: bytes, offset: int, value: int) -> bytes:
    return data[:offset] + struct.pack("<I", value) + data[offset + 4:]


def test_a_written_tree_reads_back_with_olefile_small_streams_in_the_mini_stream():
    tree = {"small": b"tiny", "empty": b"", "box": {"big": b"B" * 5000, "inner": {"x": b"x" * 100}},
            "edge": b"e" * 4096, "under": b"u" * 4095}
    data = write_compound(tree)
    with olefile.OleFileIO(data, raise_defects=olefile.DEFECT_INCORRECT) as ole:
        assert sorted("/".join(path) for path in ole.listdir(streams=True, storages=True)) == [
            "box", "box/big", "box/inner", "box/inner/x", "edge", "empty", "small", "under"]
        for path, value in (("small", b"tiny"), ("empty", b""), ("box/big", b"B" * 5000),
                            ("box/inner/x", b"x" * 100), ("edge", b"e" * 4096), ("under", b"u" * 4095)):
            assert ole.openstream(path).read() == value
        assert ole.root.size == 64 + 128 + 4096  # tiny, x, under: the mini stream, in 64-byte mini sectors
    with CompoundFile(data) as compound:
        box = compound.child(compound.root(), "BOX")  # names compare case-insensitively
        assert [(e.name, e.is_storage, e.size_bytes) for e in compound.children(box)] == [
            ("big", False, 5000), ("inner", True, 0)]


@settings(max_examples=25, deadline=None)
@given(st.dictionaries(st.text("abcdefgh_#0/", min_size=1, max_size=12),
                       st.binary(max_size=300).map(lambda b: b * 20), min_size=1, max_size=40))
def test_any_flat_tree_round_trips(tree):
    # Whatever the names (a "/" is a character of a name) and sizes (mini and regular streams mixed, many siblings
    # in one red-black tree).
    data = write_compound(tree)
    with CompoundFile(data) as compound:
        entries = list(compound.children(compound.root()))
        assert {e.name: compound.read(e) for e in entries} == tree
    assert_red_black(data, len(tree))


def assert_red_black(data: bytes, count: int) -> None:
    """The root's children form a red-black tree ordered as [MS-CFB] §2.6.4 says: shorter names first, then by
    upper-cased name; no red node has a red child; every path down passes the same number of black nodes."""
    first = struct.unpack_from("<I", data, 48)[0]
    entries = {}
    for sid in range(count + 1):
        offset = sector_offset(first) + 128 * sid  # write_compound's directory sectors are consecutive
        length = struct.unpack_from("<H", data, offset + 64)[0]
        color, left, right, child = struct.unpack_from("<BIII", data, offset + 67)
        entries[sid] = (data[offset:offset + length - 2].decode("utf-16-le"), color, left, right, child)

    def walk(sid: int, parent_red: bool) -> tuple[int, list[str]]:
        if sid == 0xFFFFFFFF:
            return 1, []
        name, color, left, right, _ = entries[sid]
        red = color == 0
        assert not (red and parent_red), "a red node with a red child"
        left_blacks, left_names = walk(left, red)
        right_blacks, right_names = walk(right, red)
        assert left_blacks == right_blacks, "black heights differ"
        return left_blacks + (0 if red else 1), [*left_names, name, *right_names]

    root_child = entries[0][4]
    assert entries[root_child][1] == 1  # the tree's root is black
    _, names = walk(root_child, False)
    key = [(len(name), name.upper()) for name in names]
    assert key == sorted(key) and len(names) == count


def test_a_large_file_takes_difat_sectors():
    # 109 FAT sectors cover 109 × 128 sectors of 512 bytes (about 7 MB); past that the FAT continues in DIFAT
    # sectors ([MS-CFB] §2.5).
    big = bytes(range(256)) * (8 * 1024 * 1024 // 256)
    data = write_compound({"big": big})
    assert struct.unpack_from("<I", data, 72)[0] == 1  # one DIFAT sector
    with CompoundFile(data) as compound:
        assert compound.read(next(compound.children(compound.root()))) == big


def test_damaged_files_are_refused_with_their_reason():
    data = write_compound({"a": b"A" * 5000, "b": b"b"})
    with pytest.raises(CompoundError, match="^not an OLE compound file$"):
        CompoundFile(b"PK\x03\x04" + data[4:])
    with pytest.raises(CompoundError, match="^damaged compound file: incorrect DllVersion in OLE header$"):
        CompoundFile(data[:8] + b"\0" * 600)  # shorter than olefile's smallest file: still read as bytes
    with pytest.raises(CompoundError, match="^damaged compound file: incorrect sector_size in OLE header$"):
        CompoundFile(data[:30] + struct.pack("<H", 7) + data[32:])
    # The directory's sector points to itself.
    directory = struct.unpack_from("<I", data, 48)[0]
    with pytest.raises(CompoundError, match="^damaged compound file: the sector chain of the directory loops "
                                            r"\(FAT cycle\)$"):
        CompoundFile(patched(data, fat_entry_offset(data, directory), directory))
    # A stream whose second sector points back to its first; the others are still read.
    start = start_sector(data, "a")
    looped = patched(data, fat_entry_offset(data, start + 1), start)
    assert read_error(looped, "a") == "damaged compound file: the sector chain of a loops (FAT cycle)"
    with CompoundFile(looped) as compound:
        assert compound.read(compound.child(compound.root(), "b")) == b"b"
    # A stream starting past the end of the file; one cut short by a truncated file; a chain that ends
    # (ENDOFCHAIN) before the stream's declared size.
    past = "damaged compound file: a points past the end of the file"
    assert read_error(patched(data, entry_offset(data, "a") + 116, 4000), "a") == past
    assert read_error(data[:-1024], "a") == past
    assert read_error(patched(data, fat_entry_offset(data, start + 2), 0xFFFFFFFE), "a") == (
        "damaged compound file: a ends before its declared size (5000 bytes)")


def read_error(data: bytes, name: str) -> str:
    """The reason reading stream *name* of *data* is refused."""
    with CompoundFile(data) as compound, pytest.raises(CompoundError) as error:
        compound.read(compound.child(compound.root(), name))
    return str(error.value)
