"""Old name of ``chunking.index_records``: chunks turned into search-index records.

Kept so that existing imports keep working; new code imports ``chunking.index_records``.
"""

from chunking.index_records import *  # noqa: F403
from chunking.index_records import __all__  # noqa: F401
