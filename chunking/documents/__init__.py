"""One document between parsing and the queue: the splitter it gets (``splitter``, by the format table and the
``SPLITTERS`` setting, a strategy of ``chunking.strategies`` through ``strategy``), its document-level fields
(``fields``, ``version_fields``: title from ``titles``, language from ``language``, size, URL, metadata, access
lists) and its chunks turned into index records (``records``: keys, page citations, heading paths).

May import: core, errors, tokens, parsers, splitters, strategies, services.
"""
