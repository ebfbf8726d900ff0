"""Page-aware sentence splitter (``shared/spec/sentence-splitter.md``)."""

from .config import SentenceSplitterConfig
from .splitter import SentenceTextSplitter

__all__ = ["SentenceSplitterConfig", "SentenceTextSplitter"]
