"""Compound files ([MS-CFB], Microsoft's Compound File Binary File Format, the "OLE2 structured storage" of Outlook
``.msg`` files): opened with olefile (BSD-2-Clause), every stream's sector chain checked before it is read, and a
small writer for the tree of storages and streams that a message re-rooted as a file of its own needs.

Reading. olefile parses the header, the FAT and the directory; ``CompoundFile`` adds what a hostile file needs
before any stream is read (olefile reads a whole stream into memory, and follows a FAT chain without noticing a
loop): each stream's chain is walked in its allocation table (the FAT, or the mini FAT for streams under the
4,096-byte cutoff, [MS-CFB] §2.3 and §2.4) and refused when it loops (a FAT cycle), leaves the file (a sector past
its end) or ends before the stream's declared size. The reasons:

- ``not an OLE compound file`` (no [MS-CFB] §2.2 signature);
- ``damaged compound file: <olefile's reason>`` (a bad header, directory or DIFAT);
- ``damaged compound file: the sector chain of <stream> loops (FAT cycle)``;
- ``damaged compound file: <stream> points past the end of the file``;
- ``damaged compound file: <stream> ends before its declared size (N bytes)``.

Writing (``write_compound``): version 3 (512-byte sectors, [MS-CFB] §2.2), streams under 4,096 bytes in the mini
stream (64-byte mini sectors), the others in sectors of their own, each storage's children in a red-black tree
ordered as §2.6.4 says (shorter names first, then by upper-cased UTF-16 code units), DIFAT sectors past 109 FAT
sectors. No timestamps or class ids are written.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Union

__all__ = ["CompoundError", "CompoundFile", "Entry", "Tree", "write_compound"]

SIGNATURE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # [MS-CFB] §2.2 header signature
_MAX_SECTOR = 0xFFFFFFFA  # §2.1: higher sector numbers are markers
_DIFSECT, _FATSECT, _ENDOFCHAIN, _FREESECT = 0xFFFFFFFC, 0xFFFFFFFD, 0xFFFFFFFE, 0xFFFFFFFF
_NOSTREAM = 0xFFFFFFFF
_SECTOR = 512  # version 3
_MINI_SECTOR = 64
_MINI_CUTOFF = 4096
_STORAGE, _STREAM, _ROOT = 1, 2, 5  # §2.6.1 object types
_RED, _BLACK = 0, 1

#: A tree of storages (``dict``) and streams (``bytes``), by name, for ``write_compound``.
Tree = dict[str, Union[bytes, "Tree"]]


class CompoundError(ValueError):
    """A compound file that cannot be read; ``str(error)`` is the reason (module docstring)."""


@dataclass(frozen=True)
class Entry:
    """A storage or stream of an open compound file.

    Attributes:
        name: its name (up to 31 UTF-16 characters).
        path: the names from the root down to it, ``/``-separated (``"__attach_version1.0_#00000000/…"``).
        is_storage: a storage (it has children) rather than a stream.
        size_bytes: a stream's declared size; 0 for a storage.
    """

    name: str
    path: str
    is_storage: bool
    size_bytes: int
    _node: object
    _names: tuple[str, ...] = ()


class CompoundFile:
    """One compound file, opened from its bytes (module docstring).

    Raises (from the constructor):
        CompoundError: the file is not a compound file, or its header, FAT or directory is damaged.
    """

    def __init__(self, data: bytes) -> None:
        import olefile

        if not data.startswith(SIGNATURE):
            raise CompoundError("not an OLE compound file")
        _check_directory_chain(data)
        try:
            # DEFECT_INCORRECT: what [MS-CFB] forbids is raised, not only what olefile cannot get past.
            # A file object: olefile takes bytes shorter than 1,536 for a file name.
            self._ole = olefile.OleFileIO(io.BytesIO(data), raise_defects=olefile.DEFECT_INCORRECT)
        except RecursionError:
            raise CompoundError("damaged compound file: its directory nests too deeply") from None
        except Exception as error:  # noqa: BLE001 - olefile raises OleFileError, OSError, struct and index errors
            raise CompoundError(f"damaged compound file: {error}"[:300]) from None
        self._sector = self._ole.sectorsize
        self._sectors_in_file = max((len(data) + self._sector - 1) // self._sector - 1, 0)
        self._fat = self._ole.fat
        self._check_chain(self._fat, self._ole.first_dir_sector, None, self._sectors_in_file, "the directory")
        self._minifat: object | None = None
        self._mini_sectors = 0

    def close(self) -> None:
        self._ole.close()

    def __enter__(self) -> CompoundFile:  # noqa: PYI034
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def root(self) -> Entry:
        """The root storage."""
        return Entry("", "", True, 0, self._ole.root, ())

    def children(self, storage: Entry) -> Iterator[Entry]:
        """The storages and streams directly in *storage*, in directory order."""
        for kid in storage._node.kids:
            if kid.entry_type in (_STORAGE, _STREAM):
                path = f"{storage.path}/{kid.name}" if storage.path else kid.name
                yield Entry(kid.name, path, kid.entry_type == _STORAGE, kid.size if kid.entry_type == _STREAM else 0,
                            kid, (*storage._names, kid.name))

    def child(self, storage: Entry, name: str) -> Entry | None:
        """The entry of *storage* named *name* (compared case-insensitively, as [MS-CFB] §2.6.4 compares), or
        ``None``."""
        lowered = name.upper()
        return next((entry for entry in self.children(storage) if entry.name.upper() == lowered), None)

    def read(self, stream: Entry) -> bytes:
        """The bytes of *stream* (its declared size, at most the file's size: the chain is checked first).

        Raises:
            CompoundError: its chain loops, leaves the file or is short (module docstring).
        """
        size = stream.size_bytes
        if size == 0:
            return b""
        start = stream._node.isectStart
        if size < self._ole.minisectorcutoff:
            minifat = self._load_minifat()
            self._check_chain(minifat, start, size, self._mini_sectors, stream.path)
        else:
            self._check_chain(self._fat, start, size, self._sectors_in_file, stream.path)
        try:
            return self._ole.openstream(list(stream._names)).read()  # names may hold "/"
        except Exception as error:  # noqa: BLE001 - whatever olefile raises, the stream is damaged
            raise CompoundError(f"damaged compound file: {stream.path}: {error}"[:300]) from None

    def _load_minifat(self):
        if self._minifat is None:
            root = self._ole.root
            self._check_chain(self._fat, root.isectStart, root.size, self._sectors_in_file, "the mini stream")
            self._check_chain(self._fat, self._ole.first_mini_fat_sector, None, self._sectors_in_file,
                              "the mini FAT")
            try:
                self._ole.loadminifat()
            except Exception as error:  # noqa: BLE001 - whatever olefile raises, the mini FAT is damaged
                raise CompoundError(f"damaged compound file: the mini FAT: {error}"[:300]) from None
            self._minifat = self._ole.minifat
            self._mini_sectors = min(len(self._minifat), (root.size + _MINI_SECTOR - 1) // _MINI_SECTOR)
        return self._minifat

    def _check_chain(self, table, start: int, size: int | None, sectors: int, name: str) -> None:
        _check_chain(table, start, size, sectors, name, self._sector if table is self._fat else _MINI_SECTOR)


def _check_chain(table, start: int, size: int | None, sectors: int, name: str, unit: int) -> None:
    """Walk the chain from *start* in *table* (FAT or mini FAT, sectors of *unit* bytes) for the sectors *size*
    bytes need (``None``: to its end); *sectors*: how many sectors the table may point to.

    Raises:
        CompoundError: the chain loops, leaves the file or ends early (module docstring).
    """
    needed = None if size is None else (size + unit - 1) // unit
    seen: set[int] = set()
    sector = start
    while needed is None or len(seen) < needed:
        if sector == _ENDOFCHAIN and needed is None:
            return
        if sector > _MAX_SECTOR:
            raise CompoundError(f"damaged compound file: {name} ends before its declared size ({size} bytes)"
                                if needed is not None else f"damaged compound file: {name} has no end of chain")
        if sector >= sectors or sector >= len(table):
            raise CompoundError(f"damaged compound file: {name} points past the end of the file")
        if sector in seen:
            raise CompoundError(f"damaged compound file: the sector chain of {name} loops (FAT cycle)")
        seen.add(sector)
        sector = table[sector]


def _check_directory_chain(data: bytes) -> None:
    """The directory's chain checked before olefile reads it (olefile reads a looping directory over and over, up
    to the file's size, and then fails on its duplicate entries with a reason that hides the loop). Reads the FAT
    sectors the header names (up to 109; a larger FAT, past about 7 MB of file, is checked after olefile read it);
    what does not fit these bounds is left to olefile's checks."""
    shift = struct.unpack_from("<H", data, 30)[0] if len(data) >= _SECTOR else 0
    if shift not in (9, 12) or len(data) < _SECTOR:
        return
    size = 1 << shift
    sectors = max((len(data) + size - 1) // size - 1, 0)
    fat_count, first_dir = struct.unpack_from("<II", data, 44)
    if fat_count > 109:  # the FAT continues in DIFAT sectors: checked once olefile has read it
        return
    fat: list[int] = []
    for fat_sector in struct.unpack_from("<109I", data, 76)[:fat_count]:
        offset = size * (fat_sector + 1)
        if fat_sector > _MAX_SECTOR or offset + size > len(data):
            return
        fat += struct.unpack_from(f"<{size // 4}I", data, offset)
    _check_chain(fat[:sectors], first_dir, None, sectors, "the directory", size)


def write_compound(tree: Tree) -> bytes:
    """A version-3 compound file holding *tree* (module docstring): ``{"stream": b"…", "storage": {…}}``.

    Raises:
        ValueError: a name longer than 31 UTF-16 code units, or empty.
    """
    entries: list[dict] = [{"name": "Root Entry", "type": _ROOT, "data": b"", "kids": []}]
    _flatten(tree, entries, 0)
    mini = bytearray()
    minifat: list[int] = []
    big: list[tuple[dict, bytes]] = []
    for entry in entries[1:]:
        data = entry["data"]
        if entry["type"] != _STREAM or not data:
            entry["start"] = _ENDOFCHAIN if entry["type"] == _STREAM else 0
            continue
        if len(data) < _MINI_CUTOFF:
            first = len(mini) // _MINI_SECTOR
            count = (len(data) + _MINI_SECTOR - 1) // _MINI_SECTOR
            minifat += [first + i + 1 for i in range(count - 1)] + [_ENDOFCHAIN]
            mini += data + b"\0" * (count * _MINI_SECTOR - len(data))
            entry["start"] = first
        else:
            big.append((entry, data))
    dir_sectors = (len(entries) * 128 + _SECTOR - 1) // _SECTOR
    minifat_sectors = (len(minifat) * 4 + _SECTOR - 1) // _SECTOR
    mini_sectors = (len(mini) + _SECTOR - 1) // _SECTOR
    big_sectors = [(len(data) + _SECTOR - 1) // _SECTOR for _, data in big]
    data_sectors = dir_sectors + minifat_sectors + mini_sectors + sum(big_sectors)
    fat_sectors, difat_sectors = 1, 0
    while fat_sectors * (_SECTOR // 4) < data_sectors + fat_sectors + difat_sectors:
        fat_sectors += 1
        difat_sectors = max(0, -(-(fat_sectors - 109) // (_SECTOR // 4 - 1)))
    fat = [_FREESECT] * (fat_sectors * (_SECTOR // 4))
    sector = 0

    def chain(count: int) -> int:
        nonlocal sector
        first = sector
        for i in range(count):
            fat[sector + i] = sector + i + 1 if i < count - 1 else _ENDOFCHAIN
        sector += count
        return first if count else _ENDOFCHAIN

    for i in range(fat_sectors):
        fat[sector + i] = _FATSECT
    fat_first, sector = sector, sector + fat_sectors
    for i in range(difat_sectors):
        fat[sector + i] = _DIFSECT
    difat_first, sector = sector, sector + difat_sectors
    dir_first = chain(dir_sectors)
    minifat_first = chain(minifat_sectors)
    entries[0]["start"] = chain(mini_sectors)
    entries[0]["size"] = len(mini)
    for (entry, data), count in zip(big, big_sectors):
        entry["start"] = chain(count)
    body = bytearray()
    body += b"".join(struct.pack("<I", value) for value in fat)
    fat_ids = [fat_first + i for i in range(fat_sectors)]
    per = _SECTOR // 4 - 1
    for i in range(difat_sectors):
        ids = fat_ids[109 + i * per: 109 + (i + 1) * per]
        ids += [_FREESECT] * (per - len(ids))
        nxt = difat_first + i + 1 if i < difat_sectors - 1 else _ENDOFCHAIN
        body += struct.pack(f"<{per + 1}I", *ids, nxt)
    directory = b"".join(_entry_bytes(entry) for entry in entries)
    body += _padded(directory + _EMPTY_ENTRY * (dir_sectors * 4 - len(entries)))
    body += _padded(b"".join(struct.pack("<I", value) for value in minifat))
    body += _padded(bytes(mini))
    for _, data in big:
        body += _padded(data)
    header = bytearray(_SECTOR)
    header[0:8] = SIGNATURE
    struct.pack_into("<HHHHH", header, 24, 0x003E, 3, 0xFFFE, 9, 6)
    struct.pack_into("<IIIIIIIII", header, 40, 0, fat_sectors, dir_first, 0, _MINI_CUTOFF,
                     minifat_first if minifat_sectors else _ENDOFCHAIN, minifat_sectors,
                     difat_first if difat_sectors else _ENDOFCHAIN, difat_sectors)
    header_ids = fat_ids[:109] + [_FREESECT] * (109 - min(109, fat_sectors))
    struct.pack_into("<109I", header, 76, *header_ids)
    return bytes(header) + bytes(body)


_EMPTY_ENTRY = b"\0" * 64 + struct.pack("<HBBIII", 0, 0, 0, _NOSTREAM, _NOSTREAM, _NOSTREAM) + b"\0" * 48


def _padded(data: bytes) -> bytes:
    return data + b"\0" * (-len(data) % _SECTOR)


def _flatten(tree: Tree, entries: list[dict], parent: int) -> None:
    """Append *tree*'s entries below *parent*, then link the parent's children as a red-black tree."""
    kids = []
    for name, value in tree.items():
        if not name or len(name.encode("utf-16-le")) > 62:
            raise ValueError(f"compound file names have 1 to 31 characters: {name!r}")
        index = len(entries)
        is_storage = isinstance(value, dict)
        entries.append({"name": name, "type": _STORAGE if is_storage else _STREAM,
                        "data": b"" if is_storage else bytes(value), "kids": []})
        kids.append(index)
        if is_storage:
            _flatten(value, entries, index)
    kids.sort(key=lambda i: (len(entries[i]["name"].encode("utf-16-le")), entries[i]["name"].upper()))
    entries[parent]["child"] = _balanced(kids, entries, 0, _depth_of_full(len(kids)))


def _depth_of_full(count: int) -> int:
    """The depth (root 0) below which a balanced tree of *count* nodes is complete."""
    depth = 0
    while (1 << (depth + 1)) - 1 < count:
        depth += 1
    return depth if (1 << (depth + 1)) - 1 == count else depth - 1


def _balanced(ids: list[int], entries: list[dict], depth: int, full_depth: int) -> int:
    """The middle of *ids* as the subtree's root; the nodes below the complete levels red, the rest black: every
    path from the root to a leaf then passes the same number of black nodes ([MS-CFB] §2.6.4)."""
    if not ids:
        return _NOSTREAM
    middle = len(ids) // 2
    node = ids[middle]
    entries[node]["color"] = _RED if depth > full_depth else _BLACK
    entries[node]["left"] = _balanced(ids[:middle], entries, depth + 1, full_depth)
    entries[node]["right"] = _balanced(ids[middle + 1:], entries, depth + 1, full_depth)
    return node


def _entry_bytes(entry: dict) -> bytes:
    name = entry["name"].encode("utf-16-le") + b"\0\0"
    size = entry.get("size", len(entry["data"]))
    return (name.ljust(64, b"\0") + struct.pack("<HBBIII", len(name), entry["type"], entry.get("color", _BLACK),
                                                entry.get("left", _NOSTREAM), entry.get("right", _NOSTREAM),
                                                entry.get("child", _NOSTREAM))
            + b"\0" * 36 + struct.pack("<IQ", entry.get("start", _ENDOFCHAIN), size))
