"""Stop words: the function words of a language (articles, pronouns, prepositions, auxiliaries, question
words), which occur in nearly every chunk and so say nothing about which chunk answers a query.

Used by the offline lexical embedder (``chunking.embeddings.offline``) and the search highlighter. The
lists are one union over English, Spanish, French, German, Portuguese and Italian, without the words that are
content words in another of these languages (``son``, ``war``, ``car``, ``pour``, ``era``, ``man``, ``die``),
so a word is a stop word whatever the language of the text around it, and a query and a chunk are always
treated alike. Scripts written without spaces are handled by rule instead of by list:

* Japanese: a two-character unit of hiragana only (``ます``, ``して``, ``では``) is grammar, not content; the
  content of Japanese text is written in kanji and katakana.
* Chinese: a unit holding one of the structural particles ``的 了 着 之`` or made only of common function
  characters (``是 在 和 也 就 都 而 及 与 这 那``).
* Korean: whole function words (``그리고``, ``하지만``, ``또는`` …) and single-syllable particles.

The lists are ours, chosen from general knowledge of the languages; docs/search.md says how they were checked.
"""

from __future__ import annotations

__all__ = ["STOP_WORDS", "is_stop_word"]

_EN = """a about above after again against all am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have having he her
here hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of
off on once only or other our ours ourselves out over own same she should so some such than that the their theirs
them themselves then there these they this those through to too under until up very was we were what when where
which while who whom why will with would you your yours yourself yourselves also may might must shall via upon
it's i'm don't doesn't isn't""".split()
_ES = """el la los las un una unos unas lo al del de en y o u e ni que es fue ser estar está están
esta este esto estos estas ese esa eso esos esas por para con como cómo cuál cuáles qué quién quiénes dónde cuándo
cuánto cuántos cuántas su sus mi mis tu tus se le les me te nos os ya muy más pero si sí también porque cuando
donde hay entre sobre hasta desde hacia según ante tras otro otra otros otras todo toda todos todas cada puede
pueden hace hacer""".split()
_FR = """le les des du au aux une et ou où est sont été être avoir ont il elle ils elles nous vous je tu ce cet
cette ces qui quoi quel quelle quels quelles comment pourquoi quand dans par avec sur sous entre mais donc
ne pas plus leur leurs sa ses mon ma mes ton ta tes notre nos votre vos lui y""".split()
_DE = """der das den dem des ein eine einer eines einem einen und oder ist sind waren wird werden wurde
ich du er sie es wir ihr mit von zu zum zur auf aus bei nach für über unter wie wo wer wann warum nicht kein keine
auch noch nur sich dass ob im am vom ins""".split()
_PT = """o os as um uma uns umas do dos da das no nos na nas ao aos pelo pela pelos pelas com em é são foi ser
está estão isso isto esse essa este esta eles elas ele ela não sim mais mas ou porque quando onde qual quais
quem seu sua seus suas""".split()
_IT = """il lo gli i una uno di del della dei delle degli nel nella nei alla alle agli è sono essere che chi
cosa come dove quando perché quale quali per tra fra ma anche non più suo sua suoi sue questo questa questi
queste quello quella""".split()
_KO = """그리고 그러나 하지만 또는 및 등 이 그 저 것 수 더 또 즉 및 의 를 을 은 는 가 에 와 과 도 로""".split()

#: Every listed stop word, lower-case.
STOP_WORDS: frozenset[str] = frozenset(_EN + _ES + _FR + _DE + _PT + _IT + _KO)

_HIRAGANA = ("\u3041", "\u309f")
_ZH_PARTICLES = frozenset("的了着之")
_ZH_FUNCTION = frozenset("是在和也就都而及与这那有为")


def _hiragana(ch: str) -> bool:
    return _HIRAGANA[0] <= ch <= _HIRAGANA[1]


def is_stop_word(word: str) -> bool:
    """Whether *word* (lower-case; a CJK unit of one or two characters) is a stop word (module docstring).

    ``is_stop_word("the")`` and ``is_stop_word("ます")`` are true; ``is_stop_word("printing")``,
    ``is_stop_word("東京")`` false.
    """
    if word in STOP_WORDS:
        return True
    if not word or len(word) > 2 or word.isascii():
        return False
    if all(_hiragana(ch) for ch in word):
        return True
    return any(ch in _ZH_PARTICLES for ch in word) or all(ch in _ZH_FUNCTION for ch in word)

