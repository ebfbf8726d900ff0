"""Text decoding without a declared charset, measured on samples in eight encodings that the test writes, and a
declared charset that does not fit the bytes reported as a note.

What we chose (``chunking/parsers/_common.py``): BOM, then the declared charset, then UTF-8, then
charset-normalizer, whose cleanest reading stands for multi-byte and non-European encodings; European single-byte
text is decided by the letters of each reading (``chunking/parsers/charsets.py``): the reading whose non-ASCII
letters one language writes wins, cp1252 first among equals (what browsers assume for unlabelled Western pages,
WHATWG Encoding §4.2), so cp1252 French is not read as cp1257 ("crème" → "crčme", "à" → "ą") and cp1257
Lithuanian is not read as cp1252 ("Lietuviø"). When another reading fits nearly as well, the ledger note says
which one was chosen.
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

#: The measured outcome per encoding: True = decoded exactly.
EXPECTED = {"cp1252": True, "latin-1": True, "cp1257": True, "cp1251": True, "shift_jis": True, "gb18030": True,
            "euc-kr": True, "utf-16": True}

#: Undeclared legacy text per language, in the encoding its writers' Windows used.
LANGUAGES = {
    "French": ("cp1252", "Le café crème coûte trois euros à l'hôtel. Où est la gare ? Noël approche, déjà."),
    "Portuguese": ("cp1252", "A educação é fundamental. João não está em São Paulo; ele mora à beira-mar."),
    "Spanish": ("cp1252", "El niño pequeño comió paella en la montaña. ¿Dónde está la estación? ¡Qué día!"),
    "German": ("cp1252", "Der Bär läuft über die Straße; Jürgen aß Käse und öffnete die Tür."),
    "German (latin-1)": ("latin-1", "Grüße aus Köln: schöne Äpfel, süße Brötchen."),
    "Polish": ("cp1250", "Zażółć gęślą jaźń. Pchnąć w tę łódź jeża lub ośm skrzyń fig. Łódź jest dużym miastem."),
    "Lithuanian": ("cp1257", "Lietuvių kalba yra viena seniausių. Ūkininkai šienauja pievose, žąsys ganosi."),
    "Russian": ("cp1251", "Москва — столица России. Съешь же ещё этих мягких французских булок, да выпей чаю."),
}


@pytest.mark.parametrize("encoding", sorted(SAMPLES))
def test_undeclared_text_in_each_encoding(encoding):
    text = SAMPLES[encoding]
    decoded = parse_document(text.encode(encoding), source=f"sample-{encoding}.txt")[0].text

    assert (decoded == text) is EXPECTED[encoding], decoded


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_undeclared_legacy_text_of_each_language_is_read_right_without_a_note(language):
    encoding, text = LANGUAGES[language]
    for name in (f"{language}.txt", f"{language}.html"):
        context = ReadContext()
        data = text.encode(encoding) if name.endswith(".txt") else f"<p>{text}</p>".encode(encoding)
        assert parse_document(data, source=name, context=context)[0].text == text
        assert context.notes == []  # the other readings are far worse: no guess


def test_the_reported_french_line_is_read_as_cp1252():
    data = b"Le caf\xe9 cr\xe8me co\xfbte trois euros \xe0 l'h\xf4tel.\n"
    assert parse_document(data, source="fr.txt")[0].text == "Le café crème coûte trois euros à l'hôtel.\n"


def test_a_guess_between_near_equal_readings_is_noted():
    # "crème" is French in cp1252 and Czech ("crčme") in cp1250, equally well: cp1252 is chosen, and said so.
    context = ReadContext()
    assert parse_document("crème".encode("cp1252"), source="short.txt", context=context)[0].text == "crème"
    assert context.notes == ["no charset declared: read as cp1252, a guess (cp1250 reads nearly as well); declare "
                             "the charset if the text looks wrong"]


def test_greek_and_koi8_r_stay_with_the_detector():
    greek = "Η Αθήνα είναι η πρωτεύουσα και η μεγαλύτερη πόλη της Ελλάδας."
    russian = "Москва, столица России. Съешь же ещё этих мягких французских булок, да выпей чаю."
    assert parse_document(greek.encode("cp1253"), source="el.txt")[0].text == greek
    assert parse_document(russian.encode("koi8-r"), source="ru.txt")[0].text == russian


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


def test_the_guess_reaches_the_ledger_note(tmp_path):
    from chunking.pipeline.stage_two import run_stage_one
    from chunking.services import make_ledger
    from chunking.settings import Settings
    from chunking.storage.claim_check import MemoryPayloadStore

    settings = Settings.from_env({"CHUNKING_STATE_DIR": str(tmp_path), "LEDGER_BACKEND": "local"})
    ledger = make_ledger(settings)
    result = run_stage_one("Prix: crème.".encode("cp1252"), source="prix.txt", container="c", settings=settings,
                           payloads=MemoryPayloadStore(), ledger=ledger, send=lambda messages: None)
    assert ledger.get(result.doc_id).note == ("no charset declared: read as cp1252, a guess (cp1250 reads nearly "
                                              "as well); declare the charset if the text looks wrong")
