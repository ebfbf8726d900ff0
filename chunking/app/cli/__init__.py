"""Command line: ``chunking {ingest,search,split,status,reconcile} …`` (also ``python -m chunking …``).

``ingest`` runs both pipeline stages in-process on the configured backends (by default the offline lexical
embedder and the local index under ``.chunking/``), exactly the code the Azure Functions run.

One module per command (``ingest``, ``search``, ``split``, ``status``, ``reconcile``), each with
``add_parser(sub)`` and ``run(args, settings) -> exit status``; ``app`` builds the parser and runs one;
``output`` holds what they print with.
"""

from chunking.app.cli.app import main

__all__ = ["main"]
