"""Settings of how stage 1 reads a document: in a child process bounded in time and memory, or in-line
(docs/operations.md#hostile-input-what-it-costs says what the child costs)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from .values import SettingsError, int_value, str_value

__all__ = ["PARSE_ISOLATION_MODES", "ParseIsolation"]

#: ``process``: every document is parsed in a child process that can be stopped; ``inline``: in the caller.
PARSE_ISOLATION_MODES = ("process", "inline")


@dataclass(frozen=True)
class ParseIsolation:
    """``PARSE_ISOLATION`` [process], ``STAGE1_MAX_MEMORY_MB`` [1024]: the address space (virtual memory,
    ``RLIMIT_AS``) the parsing child may map, in MiB; an allocation beyond it fails inside the child, which then
    reports the document as out of memory instead of the worker being killed."""

    mode: str = "process"
    max_memory_mb: int = 1024

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> "ParseIsolation":
        """Read the variables of the class docstring from *env*.

        Raises:
            SettingsError: a value is malformed (the message names the variable).
        """
        mode = str_value(env, "PARSE_ISOLATION", "process").lower()
        if mode not in PARSE_ISOLATION_MODES:
            raise SettingsError(f"PARSE_ISOLATION must be one of {', '.join(PARSE_ISOLATION_MODES)}, got {mode!r}")
        return cls(mode=mode, max_memory_mb=int_value(env, "STAGE1_MAX_MEMORY_MB", 1024, 256))
