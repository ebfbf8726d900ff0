"""Settings of repair and backfill: whose chunks a deployment may delete, and how much reconcile re-enqueues
per run (docs/operations.md#reconcile, docs/operations.md#sharing-one-index)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from .values import SettingsError, int_value, str_value

__all__ = ["NAMESPACE_PATTERN", "ReconcileOptions"]

#: What a ``NAMESPACE`` may hold: key-safe characters, so that it reads well in an OData filter and a log line.
NAMESPACE_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}")

_NAMESPACE_RULE = "letters, digits and _ . : @ - (at most 128, starting with a letter or digit)"


@dataclass(frozen=True)
class ReconcileOptions:
    """``NAMESPACE`` [derived from the container and the ledger: ``chunking.pipeline.namespaces``] and
    ``BACKFILL_MAX_PER_RUN`` [200]: documents reconcile re-enqueues per run because their indexed version was
    made with other settings than the current ones (0 turns backfill off)."""

    namespace: str = ""
    backfill_max_per_run: int = 200

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> "ReconcileOptions":
        """Read the variables of the class docstring from *env*.

        Raises:
            SettingsError: a value is malformed (the message names the variable).
        """
        namespace = str_value(env, "NAMESPACE")
        if namespace and not NAMESPACE_PATTERN.fullmatch(namespace):
            raise SettingsError(f"NAMESPACE must be {_NAMESPACE_RULE}, got {namespace!r}")
        return cls(namespace=namespace, backfill_max_per_run=int_value(env, "BACKFILL_MAX_PER_RUN", 200, 0))
