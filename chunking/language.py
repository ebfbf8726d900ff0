"""The language of a document, for the index's ``language`` field: ``py3langid`` (a maintained fork of Lui and
Baldwin's langid.py, "langid.py: An Off-the-shelf Language Identification Tool", ACL 2012: a naive Bayes model over
byte n-grams for 97 languages, shipped inside the package, deterministic, no download) on a sample of the text.

Markup the parsers leave in the text (``<figure>``/``<table>`` tags, Markdown heading marks), fenced code, URLs
and code-like tokens are removed first: they are the same in every language and pull short texts towards
English. Accuracy on the repository's corpus is measured by ``benchmarks/language_detection.py`` (figures in
docs/operations.md).
"""

from __future__ import annotations

import functools
import re
from typing import Iterable

__all__ = ["MIN_LETTERS", "MIN_CONFIDENCE", "SAMPLE_CHARS", "detect_language"]

#: Characters of text sampled: the start, the middle and the end of the document, a third each.
SAMPLE_CHARS = 12_000
#: Fewer letters than this: no language (``""``), a guess would be noise.
MIN_LETTERS = 20
#: Below this probability (py3langid's normalised score) the answer is ``""``.
MIN_CONFIDENCE = 0.5

_FENCED = re.compile(r"^```.*?^```[ \t]*$", re.M | re.S)
_MARKUP = re.compile(r"<[^>\n]{0,300}>|https?://\S+|\S*[_/\\=@{}$]\S*|^#{1,6}\s", re.M)
_LETTER = re.compile(r"[^\W\d_]")


@functools.cache
def _identifier():
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def _sample(texts: Iterable[str]) -> str:
    text = "\n".join(texts)
    if len(text) <= 3 * SAMPLE_CHARS:
        return text
    third = SAMPLE_CHARS // 3
    middle = len(text) // 2
    return "\n".join((text[:third], text[middle - third // 2 : middle + third // 2], text[-third:]))


def detect_language(texts: Iterable[str]) -> tuple[str, float]:
    """The language of the concatenated *texts* (e.g. a document's page texts) and its probability.

    Returns:
        ``(code, probability)``: an ISO 639-1 code (``"en"``, ``"ja"``, ``"zh"``; py3langid's labels) and a
        probability in [0, 1]; ``("", p)`` when the sample has fewer than ``MIN_LETTERS`` letters (``p`` 0) or
        the best probability is below ``MIN_CONFIDENCE``.
    """
    sample = _MARKUP.sub(" ", _FENCED.sub(" ", _sample(texts)))
    if len(_LETTER.findall(sample, 0, 10 * SAMPLE_CHARS)) < MIN_LETTERS:
        return "", 0.0
    code, probability = _identifier().classify(sample)
    return (code if probability >= MIN_CONFIDENCE else ""), round(float(probability), 4)
