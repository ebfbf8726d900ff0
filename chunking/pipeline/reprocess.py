"""``chunking reprocess``: put documents of the documents container on the stage-1 job queue on demand.

Which ones: by default those reconcile's backfill would take (``chunking.pipeline.backfill.why_stale``: indexed
with other settings than the current ones), all of them, without the per-run limit; with ``--all`` every blob; with
``--prefix P`` every blob whose name starts with P. Nothing is parsed here: the queue-triggered stage 1 reads
each blob, so a backlog of any size drains at the queue's pace (docs/operations.md#backfill-after-a-settings-change).
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from chunking.ids import doc_id as make_doc_id
from chunking.ledger import Ledger, LedgerEntry, clock
from chunking.pipeline.backfill import why_stale

__all__ = ["ReprocessReport", "reprocess", "select"]

log = logging.getLogger("chunking.pipeline.reprocess")

#: Jobs sent per queue call (and per progress step).
CHUNK = 100


@dataclass
class ReprocessReport:
    """What ``reprocess`` found and did: ``checked`` blobs, ``selected`` as ``"path: why"``, ``enqueued`` paths
    (none on a dry run), ``failed`` as ``"path: reason"``."""

    checked: int = 0
    selected: list[str] = field(default_factory=list)
    enqueued: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    dry_run: bool = False

    def to_dict(self) -> dict:
        return {"checked": self.checked, "selected": self.selected, "enqueued": self.enqueued,
                "failed": self.failed, "dry_run": self.dry_run}


def select(paths: Iterable[str], entries: dict[str, LedgerEntry], *, container: str, every: bool = False,
           prefix: str | None = None, made_with: Callable[[str], str], embedder: str) -> list[tuple[str, str]]:
    """``[(path, why)]`` in path order: with *every*, each of *paths*; with *prefix*, those starting with it;
    otherwise the stale ones (*made_with(path)*: what stage 1 records now; *embedder*: ``Embedder.name``)."""
    chosen = []
    for path in sorted(paths):
        if prefix is not None:
            if path.startswith(prefix):
                chosen.append((path, f"under {prefix}"))
            continue
        if every:
            chosen.append((path, "all"))
            continue
        entry = entries.get(make_doc_id(container, path))
        why = why_stale(entry, made_with(path), embedder) if entry is not None else ""
        if why:
            chosen.append((path, why))
    return chosen


def reprocess(chosen: Sequence[tuple[str, str]], *, container: str, ledger: Ledger,
              send: Callable[[list[str]], int], checked: int, dry_run: bool = False,
              progress: Callable[[int], None] = lambda n: None, now: dt.datetime | None = None) -> ReprocessReport:
    """Enqueue *chosen* (``send(paths)`` puts one forced stage-1 job per path on the queue), *CHUNK* at a time,
    calling *progress(n)* after each; every document enqueued is marked ``requeued_at`` in the ledger. A chunk
    whose send raises is listed in ``failed`` and the others go on."""
    report = ReprocessReport(checked=checked, selected=[f"{p}: {why}" for p, why in chosen], dry_run=dry_run)
    if dry_run:
        return report
    now = now or clock.now()
    for start in range(0, len(chosen), CHUNK):
        paths = [p for p, _ in chosen[start:start + CHUNK]]
        try:
            send(paths)
        except Exception as exc:  # the next chunk may still go; the failed ones are named
            log.error("reprocess could not enqueue %d documents: %s", len(paths), exc)
            report.failed.extend(f"{p}: {exc}" for p in paths)
        else:
            report.enqueued.extend(paths)
            for path in paths:
                ledger.mark_requeued(make_doc_id(container, path), path, now)
        progress(len(paths))
    return report
