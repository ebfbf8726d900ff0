"""Old home of ``StrategyOptions`` (the strategies' parameters read from the environment).

The dataclass now lives in ``chunking.settings``, so that the settings import no strategy module; it is
re-exported here so that existing imports keep working.
"""

from chunking.settings import StrategyOptions

__all__ = ["StrategyOptions"]
