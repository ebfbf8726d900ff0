"""Full-text search over SQLite FTS5 for the local index: the text written to FTS5 and the query built from a
user's words, so that any script is matched (``chunking.index.local`` uses both).

FTS5's ``unicode61`` tokenizer cuts words at spaces and punctuation, and scripts written without spaces (Han, kana,
Hangul) have none: a CJK character is written as a token of its own, and a CJK run in a query becomes its
overlapping character bigrams as phrases (the CJK-bigram strategy, as Lucene's ``CJKBigramFilter``).

The ``porter`` tokenizer stems English only. For the languages of ``SEARCH_LANGUAGES`` that Snowball stems
(``SNOWBALL``: Spanish, French, German, …; the ``snowballstemmer`` package, as Azure AI Search's Lucene analyzers
stem them), a chunk of that language is written with its words' stems appended, each marked with its language
(``zq<code><stem>``, a token no text holds), and a query also asks for its words' stems in every such language:
``apago`` then finds ``apagar``, which ``porter`` leaves apart. English, and scripts without Snowball stemmers (Japanese,
Chinese, Korean: SQLite has no dictionary segmenter), are matched as before.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Sequence

import snowballstemmer

__all__ = ["SNOWBALL", "fts_query", "fts_text", "stem_tokens"]

#: Language code → Snowball stemmer, for the languages the local index stems besides English (``porter``).
SNOWBALL = {"es": "spanish", "fr": "french", "de": "german", "it": "italian", "pt": "portuguese", "nl": "dutch",
            "ru": "russian", "ar": "arabic"}
# Marks a stem token: letters only (unicode61 splits at "_"), and no word of any text starts with it.
_STEM_MARK = "zq"

# Upper bound on OR-ed query terms, so pasting a whole page as a query stays fast.
_MAX_QUERY_TERMS = 64

# Scripts written without spaces between words (Han, kana, Hangul, and their compatibility/extension blocks).
_CJK = (
    "\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3040-\u30ff\u3100-\u312f\u3130-\u318f\u31f0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0002fa1f"
)
_CJK_CHAR = re.compile(f"([{_CJK}])")
_CJK_RUN = re.compile(f"([{_CJK}]+)")
_TERM = re.compile(r"[^\W_]+")  # letters and digits of any script; "_" splits like unicode61 does


def fts_text(text: str, language: str = "") -> str:
    """Text as written to FTS5: every CJK character surrounded by spaces so unicode61 makes it one token; with a
    *language* of ``SNOWBALL``, its words' marked stems appended (``stem_tokens``)."""
    spaced = _CJK_CHAR.sub(r" \1 ", text)
    stems = stem_tokens(text, language)
    return f"{spaced}\n{' '.join(stems)}" if stems else spaced


@lru_cache(maxsize=None)
def _stemmer(language: str):
    return snowballstemmer.stemmer(SNOWBALL[language])


def stem_tokens(text: str, language: str) -> list[str]:
    """The marked stems of *text*'s words in *language* (a code; ``es-ES`` reads as ``es``), in order, each once;
    ``[]`` for a language without a Snowball stemmer here.

    Words the stemmer leaves unchanged get none (``del`` here). Example: ``stem_tokens("Configuraciones del
    sistema", "es")`` → ``["zqesconfigur", "zqessistem"]``.
    """
    code = language.split("-", 1)[0].lower()
    if code not in SNOWBALL:
        return []
    words = [w.lower() for w in _TERM.findall(text) if not _CJK_RUN.search(w)]
    # A word the stemmer leaves as it is (a command, a number, most English words) is matched as a word already:
    # its stem would only count it twice.
    return list(dict.fromkeys(f"{_STEM_MARK}{code}{stem}" for word, stem in zip(words, _stemmer(code).stemWords(words))
                              if stem != word))


def _quote(phrase: str) -> str:
    # FTS5 string literal: double quotes, embedded quotes doubled. Inside quotes no operator is special.
    return '"' + phrase.replace('"', '""') + '"'


def fts_query(text: str, languages: Sequence[str] = ()) -> str:
    """An FTS5 MATCH expression for free user text: its terms OR-ed, every term quoted.

    Letter/digit runs become quoted terms (so ``AND``, ``(``, ``"`` and ``*`` are plain text, never syntax); a
    CJK run becomes its overlapping character bigrams as quoted phrases, a single CJK character itself.

    Example: ``fts_query('"foo" AND (東京タワー')`` → ``'"foo" OR "AND" OR "東 京" OR "京 タ" OR "タ ワ" OR "ワ ー"'``.
    With *languages* (codes), the marked stems of the query's words in each of them are OR-ed too
    (``stem_tokens``), after the words.

    Returns:
        the expression, or ``""`` when *text* has no letters or digits (nothing to match).
    """
    terms: dict[str, None] = {}  # ordered set
    for word in _TERM.findall(text):
        for i, part in enumerate(_CJK_RUN.split(word)):
            if not part:
                continue
            # split() with one group alternates non-CJK, CJK, non-CJK, ...; a lone CJK character stays whole.
            if i % 2 == 0 or len(part) == 1:
                terms[_quote(part)] = None
            else:
                for j in range(len(part) - 1):
                    terms[_quote(f"{part[j]} {part[j + 1]}")] = None
    words = list(terms)[:_MAX_QUERY_TERMS]
    stems = [_quote(stem) for code in languages for stem in stem_tokens(text, code)]
    return " OR ".join(words + [s for s in dict.fromkeys(stems) if s not in terms][:_MAX_QUERY_TERMS])
