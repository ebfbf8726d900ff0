"""Command line: ``chunking {ingest,upload,status,reconcile,reprocess,search,eval,split} …`` (also
``python -m chunking …``).

``ingest`` runs both pipeline stages in-process on the configured backends (by default the offline lexical
embedder and the local index under ``.chunking/``), exactly the code the Azure Functions run.

One module per command, each with ``add_parser(sub, summary)`` and ``run(args, settings) -> exit status``;
``app`` lists the commands (``COMMANDS``), builds the parser, imports the module of the command that runs and
runs it; ``output`` and ``hits`` hold what they print with.
"""

from chunking.app.cli.app import main

__all__ = ["main"]
