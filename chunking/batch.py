"""Old name of ``chunking.ingest``: in-process runs of both pipeline stages, with the cleanup modes.

Kept so that existing imports keep working; new code imports ``chunking.ingest``.
"""

from chunking.ingest import *  # noqa: F403
from chunking.ingest import __all__, LOCAL_CONTAINER, source_name  # noqa: F401
