"""Which single-byte encoding undeclared legacy text is in: the reading whose letters a language would write.

charset-normalizer (the detector ``chunking.parsers._common`` asks last) scores readings by "chaos" (odd
character sequences), which cannot tell Western text from Baltic or Central European text: every byte of
French in cp1252 is also a letter in cp1257, and on short text the wrong reading often has the lower chaos
("crème" → "crčme", "à" → "ą"). Here the five legacy encodings of European text are decided by what their
readings' letters are instead:

- each reading is cut into words (runs of letters); a word whose letters are of two scripts (Latin and Cyrillic),
  a non-letter symbol inside a word (``Za¿ó³æ``: cp1250 Polish read as cp1252), a C1 control character, a word
  neither lower case, upper case nor capitalised (``нПУЛЧБ``: KOI8-R read as cp1251), and Cyrillic with under a
  quarter vowels (Russian has about 40 %: Greek bytes read as cp1251 have few) count against it;
- its non-ASCII letters are compared with the letters each language writes beyond ASCII (the inventories below,
  from each language's alphabet); the reading's *fit* is the share of its non-ASCII letters, among everything
  non-ASCII that counts, that the best-matching language writes;
- the reading that fits best wins; between equally good readings cp1252 first, then latin-1 (the order of
  ``ENCODINGS``): cp1252 is what browsers assume for unlabelled Western text (WHATWG Encoding Standard §4.2),
  latin-1 reads the five bytes cp1252 leaves undefined;
- a reading that fits less than ``PLAUSIBLE`` is no reading at all: the caller keeps the detector's choice
  (Greek, Hebrew, KOI8-R … are its business).

When another reading fits nearly as well (within ``NEAR``), the choice is a guess, and ``Choice.close`` names the
runner-up so that the caller can note it.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from dataclasses import dataclass

__all__ = ["ENCODINGS", "NEAR", "PLAUSIBLE", "Choice", "choose_single_byte"]

#: The legacy single-byte encodings of European text decided here, in order of preference among equals.
ENCODINGS = ("cp1252", "latin-1", "cp1250", "cp1257", "cp1251")
#: A reading is plausible when at least this share of what is non-ASCII in it fits one language.
PLAUSIBLE = 0.85
#: Readings whose fits differ by less than this are near-equal: the choice between them is a guess.
NEAR = 0.1

# Letters each language writes beyond ASCII, lower case (its alphabet minus a-z).
_LATIN_LANGUAGES = {
    "French": "àâæçéèêëîïôœùûüÿ",
    "Portuguese": "áâãàçéêíóôõúü",
    "Spanish": "áéíñóúü",
    "German": "äöüß",
    "Italian": "àèéìíîòóù",
    "Dutch": "éëïóöüè",
    "Catalan": "àçéèíïòóúü·",
    "Danish and Norwegian": "æøåéó",
    "Swedish": "åäöé",
    "Finnish": "äöåšž",
    "Icelandic": "áðéíóúýþæö",
    "Polish": "ąćęłńóśźż",
    "Czech": "áčďéěíňóřšťúůýž",
    "Slovak": "áäčďéíĺľňóôŕšťúýž",
    "Hungarian": "áéíóöőúüű",
    "Slovenian and Croatian": "čćđšž",
    "Romanian": "ăâîșțşţ",
    "Lithuanian": "ąčęėįšųūž",
    "Latvian": "āčēģīķļņšūž",
    "Estonian": "äõöüšž",
}
# Cyrillic languages: Russian and the letters cp1251 adds for Ukrainian, Belarusian, Serbian, Macedonian.
_CYRILLIC = set("абвгдеёжзийклмнопрстуфхцчшщъыьэюя" "іїєґў" "ђјљњћџѓќѕ")
_CYRILLIC_VOWELS = set("аеёиоуыэюяіїєў")
_LANGUAGES = {name: set(letters) for name, letters in _LATIN_LANGUAGES.items()} | {"Cyrillic": _CYRILLIC}
# Non-letters that belong inside words: apostrophes, hyphens, the Catalan middle dot, the soft hyphen.
_IN_WORD = set("’‘ʼ·‐‑–—\u00ad")
_WORD = re.compile(r"[^\W\d_]+(?:[^\s\w][^\W\d_]+)*")


@dataclass(frozen=True)
class Choice:
    """The decision: *encoding* and its *text*; *fit* its share (0-1); *close* the runner-up encoding when its
    fit is within ``NEAR`` (a guess), else ``""``."""

    encoding: str
    text: str
    fit: float
    close: str = ""


def _script(char: str) -> str:
    name = unicodedata.name(char, "")
    return "cyrillic" if name.startswith("CYRILLIC") else "latin" if "LATIN" in name else "other"


def _fit(text: str) -> float:
    """The share of the non-ASCII characters that count in *text* that one language writes (1.0 when there is
    nothing non-ASCII to judge)."""
    letters: dict[str, int] = {}
    bad = sum(1 for c in text if "\x80" <= c <= "\x9f")  # C1 controls: latin-1 reading cp1252 punctuation
    for word in _WORD.findall(text):
        for is_letters, group in itertools.groupby(word, key=str.isalpha):
            run = "".join(group)
            if not is_letters:  # a symbol inside a word: apostrophes and hyphens only
                bad += sum(1 for c in run if not c.isascii() and c not in _IN_WORD)
                continue
            scripts = {_script(c) for c in run}
            odd_case = not (run.islower() or run.isupper() or run.istitle())
            bad_run = len(scripts - {"other"}) > 1 or odd_case
            for c in run:
                if c.isascii():
                    continue
                if bad_run:
                    bad += 1
                else:
                    letters[c.lower()] = letters.get(c.lower(), 0) + 1
    cyrillic = sum(n for c, n in letters.items() if c in _CYRILLIC)
    if cyrillic >= 10 and sum(n for c, n in letters.items() if c in _CYRILLIC_VOWELS) < 0.25 * cyrillic:
        bad += cyrillic  # Russian text is about 40 % vowels; Greek or KOI8-R bytes read as cp1251 are not
        letters = {c: n for c, n in letters.items() if c not in _CYRILLIC}
    total = sum(letters.values()) + bad
    if not total:
        return 1.0
    best = max(sum(n for c, n in letters.items() if c in inventory) for inventory in _LANGUAGES.values())
    return best / total


def choose_single_byte(data: bytes) -> Choice | None:
    """The best reading of *data* among ``ENCODINGS`` (rules in the module docstring), or ``None`` when none
    is plausible (under ``PLAUSIBLE``) or none decodes."""
    readings: list[tuple[float, int, str, str]] = []
    for rank, encoding in enumerate(ENCODINGS):
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        if "\x00" in text:
            return None
        readings.append((_fit(text), -rank, encoding, text))
    if not readings:
        return None
    readings.sort(reverse=True)
    fit, _, encoding, text = readings[0]
    if fit < PLAUSIBLE:
        return None
    close = next((other for other_fit, _, other, other_text in readings[1:]
                  if other_text != text and fit - other_fit < NEAR), "")
    return Choice(encoding, text, fit, close)
