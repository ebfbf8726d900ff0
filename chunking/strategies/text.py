"""Old name of ``chunking.strategies.units``: the document text and its units, as the strategies see them.

Kept so that existing imports keep working; new code imports ``chunking.strategies.units``.
"""

from chunking.strategies.units import *  # noqa: F403
from chunking.strategies.units import __all__  # noqa: F401
