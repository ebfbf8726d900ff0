"""Text decoding without a declared charset, measured on samples in eight encodings that the test writes, and a
declared charset that does not fit the bytes reported as a note.

What we chose (``chunking/parsers/_common.py``): BOM, then the declared charset, then UTF-8, then
charset-normalizer; among its equally clean readings cp1252 wins, because on short Western text it ranks cp1250
or cp1257 first with the same (zero) chaos ("crème" → "crčme", "à" → "ą"). The price is the one row below that
is not read right: Baltic text in cp1257 reads as cp1252 ("Lietuviø"), since every byte of it is also valid and
equally clean cp1252. cp1252 is what browsers assume for unlabelled Western pages (WHATWG Encoding §4.2), and
Western text is by far the commoner of the two.
"""

from __future__ import annotations

import pytest

from chunking.parsers import ReadContext, parse_document

SAMPLES = {
    "cp1252": "Le café crème coûte 3 €. « Où est l’hôtel ? » demanda-t-il — à Noël, déjà.\nNaïve façade, œuvre.",
    "latin-1": "Der Bär läuft über die Straße; Jürgen aß Käse. Ça va très bien, señor. Año nuevo, niño.",
    "cp1257": "Lietuvių kalba yra viena seniausių. Ūkininkai šienauja pievose, žąsys ganosi.",
    "cp1251": "Москва — столица России. Съешь же ещё этих мягких французских булок, да выпей чаю.",
    "shift_jis": "日本語の文章です。東京都は日本の首都であり、多くの人々が住んでいます。",
    "gb18030": "中华人民共和国是一个位于东亚的国家。北京是首都，上海是最大的城市。",
    "euc-kr": "대한민국은 동아시아에 위치한 나라입니다. 서울은 수도이며 가장 큰 도시입니다.",
    "utf-16": "Unicode text with a byte order mark: café, Москва, 日本語.",
}
SHORT_WESTERN = ["Crème brûlée à la carte.", "à bientôt", "crème", "Voilà, c'est déjà fait à moitié.",
                 "Prix: 5 € — très cher!", "Ich möchte über München fahren.", "Æble på dansk, smørrebrød og ål."]

#: The measured outcome per encoding: True = decoded exactly (the table in the module docstring).
EXPECTED = {"cp1252": True, "latin-1": True, "cp1257": False, "cp1251": True, "shift_jis": True, "gb18030": True,
            "euc-kr": True, "utf-16": True}


@pytest.mark.parametrize("encoding", sorted(SAMPLES))
def test_undeclared_text_in_each_encoding(encoding):
    text = SAMPLES[encoding]
    decoded = parse_document(text.encode(encoding), source=f"sample-{encoding}.txt")[0].text

    assert (decoded == text) is EXPECTED[encoding], decoded
    if encoding == "cp1257":
        assert decoded.startswith("Lietuviø kalba")  # the known cost of preferring cp1252


@pytest.mark.parametrize("text", SHORT_WESTERN)
def test_short_western_cp1252_text_is_not_read_as_central_european_or_baltic(text):
    assert parse_document(text.encode("cp1252"), source="note.txt")[0].text == text


@pytest.mark.parametrize(("declared", "data", "note"), [
    ("iso-8859-1", "Crème brûlée".encode("utf-8"), "declared charset iso-8859-1 does not fit the bytes; read as utf-8"),
    ("utf-8", "Crème brûlée".encode("cp1252"),
     "declared charset utf-8 does not fit the bytes; read as a detected encoding"),
    ("shift_jis", "Crème brûlée".encode("utf-8"),
     "declared charset shift_jis does not fit the bytes; read as utf-8"),
])
def test_a_declared_charset_wrong_for_the_bytes_is_noted(declared, data, note):
    page = b'<html><head><meta charset="' + declared.encode() + b'"></head><body><p>' + data + b"</p></body></html>"
    context = ReadContext()

    pages = parse_document(page, source="page.html", context=context)

    assert pages[0].text == "Crème brûlée"
    assert context.notes == [note]


def test_a_right_declaration_makes_no_note():
    page = '<html><head><meta charset="windows-1252"></head><body><p>Crème</p></body></html>'.encode("cp1252")
    context = ReadContext()

    assert parse_document(page, source="page.html", context=context)[0].text == "Crème"
    assert context.notes == []


def test_utf8_with_a_few_damaged_bytes_is_read_with_replacements_and_noted():
    data = ("Привет, мир. " * 20).encode() + b"\xff\xfe" + " 日本語のテキスト。".encode()
    context = ReadContext()

    text = parse_document(data, source="damaged.md", context=context)[0].text

    assert text.endswith("Привет, мир. \ufffd\ufffd 日本語のテキスト。")
    assert context.notes == ["2 bytes that are not valid UTF-8 replaced by U+FFFD"]
