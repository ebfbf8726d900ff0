"""Old name of ``chunking.claim_check``: the claim-check payload stores.

Kept so that existing imports keep working; new code imports ``chunking.claim_check``.
"""

from chunking.claim_check import *  # noqa: F403
from chunking.claim_check import __all__  # noqa: F401
