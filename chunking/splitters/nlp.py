"""Sentence splitters backed by NLP libraries (NLTK, spaCy, KoNLPy), with LangChain's names and defaults.

Each finds sentences with its library, then merges them greedily up to ``chunk_size`` with overlap
(:meth:`TextSplitter._merge_splits`, sentences joined by ``separator``). The library is imported when the splitter
is made, never when ``chunking.splitters`` is imported; a missing library raises :class:`ImportError` naming the
extra that installs it (``pip install chunking[nltk]``). Models and data files are never downloaded: NLTK's punkt
tables and spaCy pipelines must already be installed.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from chunking.splitters.base import TextSplitter
from chunking.splitters.extras import import_extra

__all__ = ["KonlpyTextSplitter", "NLTKTextSplitter", "SpacyTextSplitter"]


class NLTKTextSplitter(TextSplitter):
    """Split text into NLTK (punkt) sentences, then merge them up to ``chunk_size``.

    Args:
        separator: joins merged sentences (default ``"\\n\\n"``); must be ``""`` with *use_span_tokenize*.
        language: punkt model language (default ``"english"``).
        use_span_tokenize: find sentence spans instead of sentence strings, so the text between sentences
            (spaces, newlines) stays in the chunks.
        **kwargs: see :class:`TextSplitter`.

    Raises:
        ValueError: *use_span_tokenize* with a non-empty *separator*.
        ImportError: NLTK is not installed (``pip install chunking[nltk]``).
        LookupError: NLTK's punkt data for *language* is not installed (raised on the first split).
    """

    def __init__(self, separator: str = "\n\n", language: str = "english", *, use_span_tokenize: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if use_span_tokenize and separator:
            raise ValueError("When use_span_tokenize is True, separator should be ''")
        self._separator = separator
        self._language = language
        self._use_span_tokenize = use_span_tokenize
        self._nltk = import_extra("nltk", "nltk", "nltk")

    def _sentences(self, text: str) -> list[str]:
        if not self._use_span_tokenize:
            return list(self._nltk.tokenize.sent_tokenize(text, self._language))
        tokenizer = self._nltk.tokenize.PunktTokenizer(self._language)
        spans = list(tokenizer.span_tokenize(text))
        # Each sentence carries the text between it and the previous one, so joining them with "" is the text.
        return [text[(spans[i - 1][1] if i else start) : end] for i, (start, end) in enumerate(spans)]

    def split_text(self, text: str) -> list[str]:
        """Split *text* into chunks of whole sentences."""
        return self._merge_splits(self._sentences(text), self._separator)


class SpacyTextSplitter(TextSplitter):
    """Split text into spaCy sentences, then merge them up to ``chunk_size``.

    Args:
        separator: joins merged sentences (default ``"\\n\\n"``).
        pipeline: an installed spaCy pipeline (default ``"en_core_web_sm"``), or ``"sentencizer"`` for spaCy's
            rule-based sentencizer (no model needed).
        max_length: the pipeline's maximum text length in characters.
        strip_whitespace: sentences without their trailing whitespace (default ``True``).
        **kwargs: see :class:`TextSplitter`.

    Raises:
        ImportError: spaCy is not installed (``pip install chunking[spacy]``).
        OSError: the pipeline is not installed (spaCy's error; nothing is downloaded).
    """

    def __init__(self, separator: str = "\n\n", pipeline: str = "en_core_web_sm", max_length: int = 1_000_000, *,
                 strip_whitespace: bool = True, **kwargs: Any) -> None:
        super().__init__(strip_whitespace=strip_whitespace, **kwargs)
        spacy = import_extra("spacy", "spacy", "spacy")
        if pipeline == "sentencizer":
            self._nlp = import_module("spacy.lang.en").English()
            self._nlp.add_pipe("sentencizer")
        else:
            self._nlp = spacy.load(pipeline, exclude=["ner", "tagger"])
            self._nlp.max_length = max_length
        self._separator = separator

    def split_text(self, text: str) -> list[str]:
        """Split *text* into chunks of whole sentences."""
        sentences = (s.text if self._strip_whitespace else s.text_with_ws for s in self._nlp(text).sents)
        return self._merge_splits(sentences, self._separator)


class KonlpyTextSplitter(TextSplitter):
    """Split Korean text into sentences with KoNLPy's Kkma analyser, then merge them up to ``chunk_size``.

    Args:
        separator: joins merged sentences (default ``"\\n\\n"``).
        **kwargs: see :class:`TextSplitter`.

    Raises:
        ImportError: KoNLPy is not installed (``pip install chunking[konlpy]``; it also needs a Java runtime).
    """

    def __init__(self, separator: str = "\n\n", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        import_extra("konlpy", "konlpy", "konlpy")
        self._separator = separator
        self.kkma = import_module("konlpy.tag").Kkma()

    def split_text(self, text: str) -> list[str]:
        """Split *text* into chunks of whole sentences."""
        return self._merge_splits(self.kkma.sentences(text), self._separator)
