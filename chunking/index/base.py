"""Old name of ``chunking.index.protocol``: the search-index protocol.

Kept so that existing imports keep working; new code imports ``chunking.index.protocol``.
"""

from chunking.index.protocol import *  # noqa: F403
from chunking.index.protocol import __all__  # noqa: F401
