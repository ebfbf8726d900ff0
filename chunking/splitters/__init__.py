# Splitter family (docs/splitters.md#the-langchain-compatible-family): LangChain-compatible names.
from chunking.splitters.base import TextSplitter
from chunking.splitters.character import (
    CharacterTextSplitter,
    LatexTextSplitter,
    MarkdownTextSplitter,
    PythonCodeTextSplitter,
    RecursiveCharacterTextSplitter,
)
from chunking.splitters.html_header import HTMLHeaderTextSplitter
from chunking.splitters.html_section import HTMLSectionSplitter
from chunking.splitters.html_semantic import HTMLSemanticPreservingSplitter
from chunking.splitters.json_splitter import RecursiveJsonSplitter
from chunking.splitters.languages import Language
from chunking.splitters.markdown import (
    ExperimentalMarkdownSyntaxTextSplitter,
    MarkdownChunk,
    MarkdownHeaderTextSplitter,
    MarkdownSectionSplitter,
)
from chunking.splitters.jsx import JSFrameworkTextSplitter
from chunking.splitters.token import TokenTextSplitter
from chunking.splitters.token_windows import Tokenizer, split_text_on_tokens
from chunking.splitters.sentence import SentenceSplitterConfig, SentenceTextSplitter

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

# Splitters backed by optional NLP libraries: their modules load on first use, so importing this package never
# imports NLTK, spaCy, KoNLPy or sentence-transformers.
_LAZY = {
    "KonlpyTextSplitter": "chunking.splitters.nlp",
    "NLTKTextSplitter": "chunking.splitters.nlp",
    "SpacyTextSplitter": "chunking.splitters.nlp",
    "SentenceTransformersTokenTextSplitter": "chunking.splitters.sentence_transformers_token",
}
__all__ += list(_LAZY)

# Chunking strategies (docs/splitters.md#strategies), re-exported from chunking.strategies. Imported on first use: the
# strategies themselves import this package.
_STRATEGIES = ("ContextEnricher", "HierarchicalChunker", "LLMChunker", "ParentDocumentRetriever",
               "PropositionChunker", "SemanticChunker")
__all__ += list(_STRATEGIES)


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    if name in _STRATEGIES:
        import chunking.strategies

        return getattr(chunking.strategies, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
