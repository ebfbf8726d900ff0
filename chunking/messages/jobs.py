"""Stage-1 jobs: "run stage 1 on this blob" as a queue message, for the queue-triggered stage 1.

Three producers put them on the stage-1 job queue (setting ``STAGE1_JOB_QUEUE``):

- stage 1 itself, for the next page range of a document too long for one invocation (``STAGE1_PAGES_PER_JOB``
  pages per job; docs/architecture.md#long-documents): the job carries the version, the blob's ETag and where
  the range starts (``RangeState``);
- reconcile and ``chunking reprocess``, which enqueue whole-document jobs (``enqueue_stage_one``) instead of
  downloading and parsing inline, so a backlog of any size drains at the queue's pace.

A message is one JSON object::

    {"type": "stage-one", "schema": 1, "container": "documents", "path": "manuals/a.pdf", "force": true,
     "keep_old_versions": false, "reason": "reconcile"}                                # whole document
    {…, "version": "…", "etag": "\\"0x8D…\\"", "range": {"range_no": 1, "page_start": 500, "page_end": 1000,
     "page_count": 1800, "offset": 1523311, "ordinal": 1204, "batch_no": 301, "chars": 1519034,
     "text_seen": true, "header_keys": ["Handbook #"], "footer_keys": ["#"]}}          # a page range

The queue trigger (``chunking.app.functions.handle_stage_one_job``) reads the blob with the storage SDK in ranges to
a local file (never whole in memory), under the job's ETag when it has one: a blob overwritten since the job was
made is not read, the job is dropped, and the new upload's own trigger makes the new version.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from chunking.messages.envelope import STAGE_ONE_JOB, MessageError, open_envelope

__all__ = ["RangeState", "StageOneJob", "decode_job", "encode_job", "enqueue_stage_one"]

_SCHEMA = 1


@dataclass(frozen=True)
class RangeState:
    """Where a page range of a long document starts: what the ranges before it produced.

    Attributes:
        range_no: 0-based number of the range. page_start, page_end: its PDF pages (0-based, end excluded).
        page_count: the document's pages. offset: document offset (characters) of its first character.
        ordinal: ordinal of its first chunk. batch_no: number of its first batch.
        chars: characters of text in the ranges before (``MAX_DOCUMENT_CHARS`` counts the whole document).
        text_seen: whether a page before held text (a document with none is rejected at its last range).
        header_keys, footer_keys: the running headers and footers learnt from the range before (cut in this
            one too).
    """

    range_no: int
    page_start: int
    page_end: int
    page_count: int
    offset: int = 0
    ordinal: int = 0
    batch_no: int = 0
    chars: int = 0
    text_seen: bool = False
    header_keys: tuple[str, ...] = ()
    footer_keys: tuple[str, ...] = ()


@dataclass(frozen=True)
class StageOneJob:
    """One stage-1 job: the blob ``container/path``, and for a page range the version it continues.

    Attributes:
        force: process even if the ledger says this version is indexed (reconcile, reprocess).
        keep_old_versions: tell stage 2 not to delete older versions' chunks.
        reason: why it was enqueued, for logs (``"reconcile"``, ``"reprocess"``, ``"next page range"``).
        version, etag, range: set together, by stage 1, for the next page range of a long document.
        trace: the W3C trace context of the document version's trace (``chunking.telemetry.carrier``), so the
            next page range continues it; optional (``{}``: the job starts a trace of its own).
        deferrals: how many times this document's stage 1 was deferred because the figure describer was
            throttled (docs/parsers.md#figure-descriptions); optional (0).
    """

    container: str
    path: str
    force: bool = False
    keep_old_versions: bool = False
    reason: str = ""
    version: str = ""
    etag: str = ""
    range: RangeState | None = None
    trace: Mapping[str, str] = dataclasses.field(default_factory=dict, hash=False)
    deferrals: int = 0


def encode_job(job: StageOneJob) -> str:
    """The queue message of *job* (compact JSON, well under the 64 KiB queue limit)."""
    data = {"type": STAGE_ONE_JOB, "schema": _SCHEMA, **dataclasses.asdict(job)}
    if job.range is None:
        for name in ("range", "version", "etag"):
            data.pop(name)
    if not job.trace:  # optional: an untraced job is as before
        data.pop("trace")
    if not job.deferrals:
        data.pop("deferrals")
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def decode_job(body: str | bytes) -> StageOneJob:
    """Parse one stage-1 job message.

    Raises:
        MessageError: not JSON, not a ``stage-one`` message, or a field is missing or of the wrong type.
    """
    data = open_envelope(body, STAGE_ONE_JOB, _SCHEMA)
    try:
        span = data.get("range")
        if span is not None and not isinstance(span, dict):
            raise TypeError("range is not an object")
        job = StageOneJob(
            container=_typed(data, "container", str), path=_typed(data, "path", str),
            force=_typed(data, "force", bool, False), keep_old_versions=_typed(data, "keep_old_versions", bool, False),
            reason=_typed(data, "reason", str, ""), version=_typed(data, "version", str, ""),
            etag=_typed(data, "etag", str, ""),
            range=None if span is None else RangeState(**{f.name: _field(f.name, span.get(f.name, f.default))
                                                          for f in dataclasses.fields(RangeState)}),
            trace={str(k): v for k, v in data["trace"].items() if isinstance(v, str)}
            if isinstance(data.get("trace"), dict) else {},
            deferrals=_typed(data, "deferrals", int, 0),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise MessageError(f"stage-1 job lacks a valid field: {exc}") from None
    if not job.path or (job.range is not None and not job.version):
        raise MessageError("stage-1 job names no blob, or a page range without its version")
    return job


_MISSING = object()


def _typed(data: dict, name: str, kind: type, default=_MISSING):
    """``data[name]`` when it is a *kind* (an ``int`` is not a ``bool``), else *default* when it is absent.

    Raises:
        KeyError: absent without a default. TypeError: of another type.
    """
    if name not in data:
        if default is _MISSING:
            raise KeyError(name)
        return default
    value = data[name]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise TypeError(f"{name} is not a {kind.__name__}")
    return value


def _field(name: str, value):
    if value is dataclasses.MISSING:
        raise KeyError(name)
    if name == "text_seen":
        if not isinstance(value, bool):
            raise TypeError(f"range {name} is not a bool")
        return value
    if name.endswith("_keys"):
        if not isinstance(value, (list, tuple)) or not all(isinstance(k, str) for k in value):
            raise TypeError(f"range {name} is not a list of strings")
        return tuple(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise TypeError(f"range {name} is not an integer >= 0")
    return value


def enqueue_stage_one(send: Callable[[Sequence[str]], None], container: str, paths: Sequence[str], *,
                      force: bool = False, reason: str = "", keep_old_versions: bool = False) -> int:
    """Enqueue one whole-document stage-1 job per blob path of *container*: the queue-triggered stage 1 reads
    each blob and parses it as the blob trigger would (``force`` re-processes a version already indexed, e.g.
    after a settings change or when the index lost it). This is what reconcile and ``chunking reprocess`` call
    instead of parsing inline.

    Args:
        send: sends queue messages, e.g. ``chunking.services.services().jobs.send`` (a ``QueueSender`` on
            ``STAGE1_JOB_QUEUE``).
        container: the documents container the paths belong to. paths: blob names inside it.
        reason: recorded in the job for logs (``"reconcile"``, ``"reprocess"``).

    Returns:
        The number of jobs sent.

    Raises:
        StorageError: the queue cannot be written (jobs sent before the error stay sent; re-enqueueing is
            harmless: stage 1 skips a version already indexed unless forced, and forced duplicates rewrite
            the same chunks).
    """
    messages = [encode_job(StageOneJob(container, path, force=force, keep_old_versions=keep_old_versions,
                                       reason=reason)) for path in paths]
    if messages:
        send(messages)
    return len(messages)
