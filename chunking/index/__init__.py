"""Search indexes: the ``IndexWriter`` and ``IndexSearcher`` protocols (``SearchIndex`` is both), the OData filter
subset, security trimming and hybrid fusion; the backends live in ``chunking.index.azure`` (Azure AI Search) and
``chunking.index.local`` (one SQLite file).

May import: core, errors, tokens.
"""

from chunking.index.protocol import IndexSearcher, IndexWriter, SearchHit, SearchIndex

__all__ = ["IndexSearcher", "IndexWriter", "SearchHit", "SearchIndex"]
