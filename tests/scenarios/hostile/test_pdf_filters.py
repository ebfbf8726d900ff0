"""The PDF stream decoders that bound a PDF's decompressed bytes: exact outputs for small inputs, round trips
against independent encoders (the standard library's, and the test generator's), and PDFium reading the same
streams to the same text."""

from __future__ import annotations

import base64
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunking.parsers import parse_document
from chunking.parsers.pdf import filters as pdf_filters
from chunking.parsers.pdf.streams import inflated_bytes
from tests.scenarios.hostile import generate


def _decode(decoder, data: bytes, step: int = 3, params: bytes = b"") -> bytes:
    return b"".join(decoder((data[i : i + step] for i in range(0, len(data), step)), params))


def test_small_inputs_decode_exactly():
    assert _decode(pdf_filters.run_length, b"\x02abc\xfdz\x80ignored") == b"abczzzz"
    assert _decode(pdf_filters.ascii_hex, b"48 65\n6c6C 6f>") == b"Hello"
    assert _decode(pdf_filters.ascii_hex, b"7>") == b"p"  # an odd last digit is followed by 0
    assert _decode(pdf_filters.ascii85, b"87cURDZ~>") == b"Hello"
    assert _decode(pdf_filters.ascii85, b"z~>") == b"\0\0\0\0"
    # ISO 32000-1 §7.4.4.2 example: 45 45 45 45 45 65 45 45 45 66 encodes to 80 0B 60 50 22 0C 0C 85 01.
    assert _decode(pdf_filters.lzw, bytes.fromhex("800B6050220C0C8501")) == b"\x2d\x2d\x2d\x2d\x2d\x41\x2d\x2d\x2d\x42"


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=3000), st.integers(1, 64))
def test_round_trips_through_independent_encoders(data, step):
    assert _decode(pdf_filters.flate, zlib.compress(data), step) == data
    assert _decode(pdf_filters.run_length, generate.run_length(data), step) == data
    assert _decode(pdf_filters.lzw, generate.lzw_literal(data), step) == data
    assert _decode(pdf_filters.ascii_hex, data.hex().encode() + b">", step) == data
    assert _decode(pdf_filters.ascii85, base64.a85encode(data, wrapcol=7) + b"~>", step) == data


def test_every_decoder_yields_bounded_pieces():
    pieces = list(pdf_filters.lzw([generate.lzw_bomb(1)] * 1))
    assert sum(map(len, pieces)) == sum(range(1, 3838))  # 1 + 2 + … + 3,837 spaces
    assert max(map(len, pieces)) <= pdf_filters.PIECE_BYTES + 4096
    assert max(map(len, pdf_filters.run_length([generate.run_length_bomb(3)]))) <= pdf_filters.PIECE_BYTES


@pytest.mark.parametrize(("filters", "encode"), [
    (b"/LZWDecode", generate.lzw_literal),
    (b"/RunLengthDecode", generate.run_length),
    (b"[/ASCII85Decode /FlateDecode]", lambda data: base64.a85encode(zlib.compress(data)) + b"~>"),
    (b"[/AHx /RL]", lambda data: generate.run_length(data).hex().encode() + b">"),
])
def test_pdfium_reads_what_the_scan_counts(filters, encode):
    content = generate.text_line(b"Filtered streams are read")
    data = generate.filtered_pdf(encode(content), filters)

    assert inflated_bytes(data, 1 << 20) == len(content)
    assert parse_document(data, source="filtered.pdf")[0].text == "Filtered streams are read\n"


def test_a_chain_through_an_image_codec_is_not_counted():
    data = generate.filtered_pdf(zlib.compress(b" " * 100_000), b"[/DCTDecode /FlateDecode]")
    assert inflated_bytes(data, 1 << 20) == 0


def test_an_indirect_length_bounds_a_run_length_stream():
    encoded = generate.run_length(b"abc")[:-1]  # no EOD: only /Length says where the data ends
    body = generate.filtered_pdf(encoded, b"/RunLengthDecode").replace(
        b"<< /Length %d " % len(encoded), b"<< /Length 6 0 R ", 1)
    body = body.replace(b"xref", b"6 0 obj\n%d\nendobj\nxref" % len(encoded), 1)
    assert inflated_bytes(body, 1 << 20) == 3


def test_flate_stops_at_the_end_of_its_zlib_stream_when_more_bytes_follow_it():
    # A stream inflating to more than one piece, then the rest of the file in the same raw piece (a Flate chain
    # is fed to the end of the file): the inflater reaches its end with input left over, and must stop there.
    raw = b"1 0 Td (ab) Tj " * 300_000  # 4.5 MB of output: five pieces
    piece = zlib.compress(raw) + b"\nendstream\nendobj\n" * 100
    assert b"".join(pdf_filters.flate(iter([piece]))) == raw
    data = generate.text_pdf([b"BT /F1 1 Tf " + raw + b"ET\n"])
    assert len(raw) < inflated_bytes(data, 100 << 20) < len(raw) + 1000
