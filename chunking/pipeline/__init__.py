"""The pipeline as plain functions over the adapters' interfaces: stage 1 (``stage_one``: parse, split, send
batches; ``batches``), stage 2 (``stage_two``: embed, upsert, complete a version; ``vector_reuse``), removing old
versions (``versions``), field-only updates (``fields``, ``field_sweep``), deletes and repair (``reconcile``),
backfill and reprocess of documents made with other settings (``backfill``, ``reprocess``), index ownership
(``namespaces``) and batch runs of local files through both stages (``ingest``).

May import: core, errors, tokens, parsers, splitters, embeddings, storage, index, ledger, messages, chat,
strategies, services, documents.
"""
