"""Search indexes: the ``SearchIndex`` protocol, Azure AI Search, and the local single-file index."""

from chunking.index.base import IndexError_, SearchHit, SearchIndex

__all__ = ["IndexError_", "SearchHit", "SearchIndex"]
