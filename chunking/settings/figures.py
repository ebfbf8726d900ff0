"""Settings of tables and figures in the sentence splitter: how big a table or a figure may be before it is split
(docs/splitters.md#step-5-oversize-figure, docs/settings.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from .values import SettingsError, int_value

__all__ = ["EMBEDDING_MAX_TOKENS", "FigureOptions"]

#: The embedding models' per-input limit (text-embedding-3-*, ada-002), in tokens: no chunk may exceed it.
EMBEDDING_MAX_TOKENS = 8191


@dataclass(frozen=True)
class FigureOptions:
    """``SPLIT_MAX_TABLE_TOKENS`` [unset: ``SPLIT_MAX_TOKENS``], ``SPLIT_MAX_FIGURE_TOKENS`` [8191].

    Attributes:
        max_table_tokens: a table over this many tokens is split by rows with its header repeated; None means
            the chunk cap (``SPLIT_MAX_TOKENS``), so every table part fits it; 8191 keeps tables whole.
        max_figure_tokens: a figure without a table (an image and its caption) is kept whole up to this many
            tokens, flagged when over the chunk cap, and split above it.
    """

    max_table_tokens: int | None = None
    max_figure_tokens: int = EMBEDDING_MAX_TOKENS

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> "FigureOptions":
        """Read the variables of the class docstring from *env*.

        Raises:
            SettingsError: a value is not an integer from 1 to 8191 (the message names the variable).
        """
        table = int_value(env, "SPLIT_MAX_TABLE_TOKENS", 0, 1) or None
        figure = int_value(env, "SPLIT_MAX_FIGURE_TOKENS", EMBEDDING_MAX_TOKENS, 1)
        for name, value in (("SPLIT_MAX_TABLE_TOKENS", table), ("SPLIT_MAX_FIGURE_TOKENS", figure)):
            if value is not None and value > EMBEDDING_MAX_TOKENS:
                raise SettingsError(f"{name} must be ≤ {EMBEDDING_MAX_TOKENS} (the embedding input limit), "
                                    f"got {value}")
        return cls(max_table_tokens=table, max_figure_tokens=figure)

    def sentence_settings(self) -> dict[str, int | None]:
        """The keyword arguments of ``SentenceTextSplitter`` these options set."""
        return {"max_table_tokens": self.max_table_tokens, "max_figure_tokens": self.max_figure_tokens}
