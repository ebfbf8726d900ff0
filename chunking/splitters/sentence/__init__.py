"""Page-aware sentence splitter (algorithm and invariants: docs/splitters.md#the-sentence-splitter)."""

from .config import SentenceSplitterConfig
from .splitter import SentenceTextSplitter

__all__ = ["SentenceSplitterConfig", "SentenceTextSplitter"]
