"""The mutations of ``fuzz_parsers.py``: of bytes (``mutate``), of one ZIP member's inflated bytes with the package
rebuilt (``mutate_member``), and of the ZIP structure's fields (``mutate_zip``: PKWARE APPNOTE.TXT §4.3.7 local
header, §4.3.12 central directory header, §4.3.16 end of central directory record). Each takes a *plan*, a list of
``(operation, seed, bytes)`` that hypothesis draws, so that a failing input shrinks and replays.
"""

from __future__ import annotations

import io
import random
import struct
import zipfile

__all__ = ["KINDS", "OPS", "mutate", "mutate_member", "mutate_zip"]

OPS = ("flip", "overwrite", "cut", "duplicate", "delete", "insert", "truncate")
KINDS = ("bytes", "member", "zip")


def mutate(data: bytes, plan: list[tuple[str, int, bytes]]) -> bytes:
    """Apply *plan* (operation, a position seed, bytes) to *data*; positions are taken modulo its length."""
    buf = bytearray(data)
    for op, seed, payload in plan:
        rng = random.Random(seed)
        n = len(buf)
        if n == 0:
            break
        at = rng.randrange(n)
        span = rng.randint(1, max(1, min(4096, n - at)))
        if op == "flip":
            buf[at] ^= 1 << rng.randrange(8)
        elif op == "overwrite":
            buf[at : at + len(payload)] = payload
        elif op == "cut":
            del buf[at:]
        elif op == "duplicate":
            buf[at:at] = buf[at : at + span] * rng.randint(2, 64)
        elif op == "delete":
            del buf[at : at + span]
        elif op == "insert":
            buf[at:at] = payload
        elif op == "truncate":
            del buf[max(1, n - span) :]
    return bytes(buf)


def mutate_member(data: bytes, plan: list[tuple[str, int, bytes]]) -> bytes:
    """Mutate the inflated bytes of one member (chosen by the plan's first seed) of the ZIP *data* and rebuild it
    with each member's compression method and order kept, so the mutations reach the member's XML or its own
    parser instead of only breaking the ZIP's checksums."""
    with zipfile.ZipFile(io.BytesIO(data)) as source:
        infos = source.infolist()
        files = [i for i in infos if not i.filename.endswith("/")]
        target = files[plan[0][1] % len(files)].filename if files and plan else None
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as package:
            for info in infos:
                member = source.read(info)
                copy = zipfile.ZipInfo(info.filename, info.date_time)
                copy.compress_type = info.compress_type
                package.writestr(copy, mutate(member, plan) if info.filename == target else member)
    return out.getvalue()


# Record layouts (PKWARE APPNOTE.TXT §4.3.7 local file header, §4.3.12 central directory header, §4.3.16 end of
# central directory record): field name → (offset from the signature, struct format).
_LOCAL = (b"PK\x03\x04", {"version": (4, "H"), "flags": (6, "H"), "method": (8, "H"), "crc": (14, "I"),
                         "compressed": (18, "I"), "size": (22, "I"), "name_length": (26, "H"),
                         "extra_length": (28, "H")})
_CENTRAL = (b"PK\x01\x02", {"made_by": (4, "H"), "version": (6, "H"), "flags": (8, "H"), "method": (10, "H"),
                           "crc": (16, "I"), "compressed": (20, "I"), "size": (24, "I"), "name_length": (28, "H"),
                           "extra_length": (30, "H"), "comment_length": (32, "H"), "disk": (34, "H"),
                           "offset": (42, "I")})
_END = (b"PK\x05\x06", {"disk": (4, "H"), "cd_disk": (6, "H"), "entries_here": (8, "H"), "entries": (10, "H"),
                       "cd_size": (12, "I"), "cd_offset": (16, "I"), "comment_length": (20, "H")})
#: Values worth trying per field (besides the field's value ± a little and a random one).
_EDGES = {"version": (0, 10, 20, 45, 63, 100, 0xFFFF), "made_by": (0, 0x0314, 0xFFFF),
          "method": (0, 1, 6, 8, 9, 12, 14, 93, 98, 99, 0xFFFF), "flags": (0x1, 0x8, 0x800, 0x41, 0xFFFF)}
_NAME_BYTES = (b"\xff\xfe", b"\xc3", b"\x80abc", b"..", b"/", b"\x00", b"\xe9t\xe9")


def mutate_zip(data: bytes, plan: list[tuple[str, int, bytes]]) -> bytes:
    """Set fields of the ZIP structure of *data* to edge values, one per plan step (its seed picks the record,
    the field and the value); a step may instead make a name's bytes non-UTF-8 (in the local header, the central
    directory or both, with or without the UTF-8 flag). Lengths and offsets are not repaired: the parsers must
    refuse what no longer fits."""
    buf = bytearray(data)
    for _, seed, payload in plan:
        rng = random.Random(seed)
        records = [(layout, at) for layout in (_LOCAL, _CENTRAL, _END) for at in _find_all(buf, layout[0])]
        if not records:
            break
        (signature, fields), at = rng.choice(records)
        if signature != _END[0] and rng.random() < 0.2:
            _garble_name(buf, at, signature, rng)
            continue
        name = rng.choice(sorted(fields))
        offset, fmt = fields[name]
        if at + offset + struct.calcsize("<" + fmt) > len(buf):
            continue
        (value,) = struct.unpack_from("<" + fmt, buf, at + offset)
        top = 0xFFFF if fmt == "H" else 0xFFFFFFFF
        choices = [0, 1, top, (value + 1) & top, (value - 1) & top, value ^ (1 << rng.randrange(16)) & top,
                   rng.randrange(top + 1), len(buf) & top, (len(buf) * 2) & top, *_EDGES.get(name, ())]
        if name == "flags":
            choices += [value | bit for bit in _EDGES["flags"]]
        struct.pack_into("<" + fmt, buf, at + offset, rng.choice(choices) & top)
    return bytes(buf)


def _find_all(buf: bytearray, signature: bytes) -> list[int]:
    found, at = [], buf.find(signature)
    while at != -1:
        found.append(at)
        at = buf.find(signature, at + 1)
    return found


def _garble_name(buf: bytearray, at: int, signature: bytes, rng: random.Random) -> None:
    """Overwrite the start of the name of the record at *at* with bytes that are not UTF-8 (or unsafe), and set or
    clear its UTF-8 flag (general purpose bit 11)."""
    length_at, name_at, flags_at = (26, 30, 6) if signature == _LOCAL[0] else (28, 46, 8)
    if at + name_at > len(buf):
        return
    (length,) = struct.unpack_from("<H", buf, at + length_at)
    junk = rng.choice(_NAME_BYTES)[: max(length, 0)]
    buf[at + name_at : at + name_at + len(junk)] = junk
    (flags,) = struct.unpack_from("<H", buf, at + flags_at)
    struct.pack_into("<H", buf, at + flags_at, flags | 0x800 if rng.random() < 0.5 else flags & ~0x800)


# --------------------------------------------------------------------------------------------------- run
