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
import lzma
import os
import re
import shutil
import tempfile
import zipfile
from array import array
from pathlib import Path
from typing import Iterable

import numpy as np

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


def _cache_file() -> Path:
    """Where the decompressed model is kept between processes: the temporary folder, per user and version."""
    from importlib.metadata import version

    user = getattr(os, "getuid", lambda: "u")()
    return Path(tempfile.gettempdir()) / f"chunking-py3langid-{version('py3langid')}-{user}.npz"


def _unsigned(values: np.ndarray) -> array:
    out = array({2: "H", 4: "I", 8: "L"}[values.dtype.itemsize])
    out.frombytes(np.ascontiguousarray(values).tobytes())
    return out


@functools.cache
def _identifier():
    """py3langid's identifier. Its model ships LZMA-compressed (4.5 MB, 68 MB inflated); inflating takes 1.5 s or
    more, so the first process keeps the inflated file in the temporary folder (written whole, then renamed) and
    later ones load that in a fraction of a second. Any problem with the cache: the shipped file is read."""
    from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

    cache = _cache_file()
    try:
        if not cache.exists():
            partial = cache.with_suffix(f".{os.getpid()}.part")
            with lzma.open(MODEL_DIR / MODEL_FILE) as source, open(partial, "wb") as target:
                shutil.copyfileobj(source, target, length=1 << 20)
            os.replace(partial, cache)
        with np.load(cache, allow_pickle=False) as data:
            return LanguageIdentifier(np.asarray(data["ptc"]), np.asarray(data["pc"]), data["classes"].tolist(),
                                      _unsigned(data["nextmove"]), data["out_feat"].tolist(), norm_probs=True,
                                      tk_row=_unsigned(data["nextmove_row"]))
    except (OSError, KeyError, ValueError, lzma.LZMAError, zipfile.BadZipFile):
        cache.unlink(missing_ok=True)  # a damaged copy: the next process inflates it again
        return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def _sample(texts: Iterable[str]) -> str:
    text = "\n".join(texts)
    if len(text) <= SAMPLE_CHARS:
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
