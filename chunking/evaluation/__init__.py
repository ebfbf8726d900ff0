"""Retrieval evaluation (``chunking eval``): question sets, the judge of relevant records, the metrics, and the
runner that ingests with each strategy and scores every question. docs/evaluation.md describes the method.

May import: everything but app.
"""
