"""The splitters: text in, chunks out, with no knowledge of files or of the pipeline. The LangChain-compatible
family (``character``, ``token``, ``markdown``, ``html``, ``json``, ``jsx``, ``nlp``, …; docs/splitters.md) and
our page-aware ``sentence`` splitter, all importable from here.

May import: core, tokens.
"""

# Splitter family (docs/splitters.md#the-langchain-compatible-family): LangChain-compatible names.
from chunking.splitters.base import TextSplitter
from chunking.splitters.character import (
    CharacterTextSplitter,
    LatexTextSplitter,
    MarkdownTextSplitter,
    PythonCodeTextSplitter,
    RecursiveCharacterTextSplitter,
)
from chunking.splitters.html.header import HTMLHeaderTextSplitter
from chunking.splitters.html.section import HTMLSectionSplitter
from chunking.splitters.html.semantic import HTMLSemanticPreservingSplitter
from chunking.splitters.json.recursive import RecursiveJsonSplitter
from chunking.splitters.jsx import JSFrameworkTextSplitter
from chunking.splitters.languages import Language
from chunking.splitters.markdown import (
    ExperimentalMarkdownSyntaxTextSplitter,
    MarkdownChunk,
    MarkdownHeaderTextSplitter,
    MarkdownSectionSplitter,
)
from chunking.splitters.nlp import KonlpyTextSplitter, NLTKTextSplitter, SpacyTextSplitter
from chunking.splitters.sentence import SentenceSplitterConfig, SentenceTextSplitter
from chunking.splitters.sentence_transformers_token import SentenceTransformersTokenTextSplitter
from chunking.splitters.token import TokenTextSplitter
from chunking.splitters.token_windows import Tokenizer, split_text_on_tokens

__all__ = [
    "CharacterTextSplitter",
    "ExperimentalMarkdownSyntaxTextSplitter",
    "HTMLHeaderTextSplitter",
    "HTMLSectionSplitter",
    "HTMLSemanticPreservingSplitter",
    "JSFrameworkTextSplitter",
    "Language",
    "LatexTextSplitter",
    "MarkdownChunk",
    "MarkdownHeaderTextSplitter",
    "MarkdownSectionSplitter",
    "MarkdownTextSplitter",
    "PythonCodeTextSplitter",
    "RecursiveCharacterTextSplitter",
    "RecursiveJsonSplitter",
    "SentenceSplitterConfig",
    "SentenceTextSplitter",
    "TextSplitter",
    "TokenTextSplitter",
    "Tokenizer",
    "split_text_on_tokens",
]
# Backed by optional NLP libraries, which their modules import on first use: importing this package never imports
# NLTK, spaCy, KoNLPy or sentence-transformers.
__all__ += ["KonlpyTextSplitter", "NLTKTextSplitter", "SpacyTextSplitter", "SentenceTransformersTokenTextSplitter"]
