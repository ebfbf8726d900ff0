"""Old name of ``chunking.queue_messages``: the chunk-batch queue messages between stage 1 and stage 2.

Kept so that existing imports keep working; new code imports ``chunking.queue_messages``.
"""

from chunking.queue_messages import *  # noqa: F403
from chunking.queue_messages import __all__, MAX_RECORDS_PER_BATCH  # noqa: F401
