"""What the ledger says about a document whose strategy fell back (docs/splitters.md#rules-shared-by-the-strategies,
rule 3)."""

from __future__ import annotations

from typing import Sequence

from chunking.model import Chunk

__all__ = ["fallback_note"]

# Notes are for people reading `python -m chunking status`; the chunks' metadata holds every detail.
_MAX_NOTE_CHARS = 500


def fallback_note(chunks: Sequence[Chunk]) -> str:
    """``"fallback: <reason>"`` for the distinct ``metadata["fallback_reason"]`` values of *chunks* (in order of
    first appearance, each with the number of chunks it applies to when more than one), or ``""``.

    Example: two chunks with reason ``"embedding failed: TimeoutError"`` → ``"fallback: embedding failed:
    TimeoutError (2 chunks)"``.
    """
    counts: dict[str, int] = {}
    for chunk in chunks:
        reason = chunk.metadata.get("fallback_reason")
        if reason:
            counts[reason] = counts.get(reason, 0) + 1
    if not counts:
        return ""
    parts = [reason if n == 1 else f"{reason} ({n} chunks)" for reason, n in counts.items()]
    note = "fallback: " + "; ".join(parts)
    return note if len(note) <= _MAX_NOTE_CHARS else note[: _MAX_NOTE_CHARS - 1] + "…"
