"""How stage 1 cuts a long document into page-range jobs, and the queue those jobs travel on
(docs/architecture.md#long-documents)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from .values import int_value, str_value

__all__ = ["JOB_QUEUE_DEFAULT", "StageOneJobs"]

#: The stage-1 job queue's default name (a binding setting: ``function_app`` reads it when the host indexes it).
JOB_QUEUE_DEFAULT = "stage1-jobs"


@dataclass(frozen=True)
class StageOneJobs:
    """Environment variables (defaults in brackets): ``STAGE1_JOB_QUEUE`` [stage1-jobs], the queue of stage-1
    jobs (next page ranges, and the whole-document jobs reconcile and ``chunking reprocess`` enqueue);
    ``STAGE1_PAGES_PER_JOB`` [500], the most PDF pages one stage-1 invocation reads: a longer PDF is done in
    page ranges of this many pages, one job each, so that no invocation nears ``STAGE1_MAX_SECONDS`` or the
    function timeout (the corpus manuals take about 5-10 ms a page here, so 500 pages is seconds, with room
    for pages a hundred times slower)."""

    job_queue: str = JOB_QUEUE_DEFAULT
    pages_per_job: int = 500

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> "StageOneJobs":
        """Read the group from *env*.

        Raises:
            SettingsError: ``STAGE1_PAGES_PER_JOB`` is not an integer ≥ 1.
        """
        return cls(job_queue=str_value(env, "STAGE1_JOB_QUEUE", JOB_QUEUE_DEFAULT),
                   pages_per_job=int_value(env, "STAGE1_PAGES_PER_JOB", 500, 1))
