"""Batch runs: ingest local files through both stages in-process, with the cleanup modes of
docs/architecture.md#batch-runs-and-cleanup-modes, mapped onto one-file-one-document:

- ``none``: nothing is deleted, not even the older versions of changed documents;
- ``incremental`` (default): a changed document's older versions are deleted once its new version is in;
  documents not in this run are untouched;
- ``full``: in addition, every document of the namespace not seen in this run is deleted; a run that saw no
  document raises instead of deleting everything (unless ``allow_empty_full``);
- ``scoped_full``: in addition, the documents under the run's folders that were not seen are deleted (files
  removed from a folder); documents elsewhere are untouched.

``full`` and ``scoped_full`` also remove, from every document they keep (all of the namespace for ``full``; the
run's own and those under its folders for ``scoped_full``), the chunks of any version that is not the ledger's
current or indexed one: versions left behind by ``none``, or by a run that stopped half-way.

Unlike LangChain's ``index()``, an unchanged document is never deleted and re-added (it is ``skipped`` before
parsing), whatever the batch size, because the ledger knows per document which version is indexed.
"""

from __future__ import annotations

import dataclasses
import errno
import fnmatch
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping, Sequence

from chunking.documents.fields import file_properties
from chunking.embeddings import Embedder
from chunking.errors import UnreadableFileError, describe_failure
from chunking.formats import SUPPORTED_EXTENSIONS, member_root
from chunking.ids import doc_id as make_doc_id
from chunking.index.protocol import IndexWriter
from chunking.ledger import Ledger
from chunking.parsers.pictures import pixel_counts
from chunking.pipeline.figures import vision_counts
from chunking.pipeline.namespaces import deployment_namespace
from chunking.pipeline.reconcile import delete_document
from chunking.pipeline.stage_two import run_stage_one, run_stage_two
from chunking.redact import redact
from chunking.services import make_figure_store
from chunking.settings import Settings
from chunking.storage.claim_check import MemoryPayloadStore
from chunking.storage.figures import FigureStore

__all__ = ["CLEANUP_MODES", "DocumentRow", "IngestSummary", "collect_files", "in_scope", "ingest_files",
           "missing_reason", "read_local_file"]

CLEANUP_MODES = ("none", "incremental", "full", "scoped_full")
#: The namespace (container) of documents ingested from local files.
LOCAL_CONTAINER = "local"

log = logging.getLogger("chunking.pipeline.ingest")


@dataclass
class DocumentRow:
    """One source of a batch run. ``outcome``: added, updated, skipped, failed (or deleted by cleanup).
    ``fields_updated``: chunks of a skipped (unchanged) document whose metadata or access lists were updated."""

    source: str
    outcome: str = ""
    pages: int = 0
    chunks: int = 0
    max_tokens: int = 0
    tokens: int = 0
    embedding_tokens: int = 0
    embedding_requests: int = 0
    stage1_seconds: float = 0.0
    stage2_seconds: float = 0.0
    error: str | None = None
    fields_updated: int = 0
    #: local OCR: pages read, pictures read, pictures skipped by reason (``chunking.parsers.pictures``).
    ocr_pages: int = 0
    figures_read: int = 0
    figures_skipped: dict = field(default_factory=dict)
    #: a vision describer: pictures described, pictures not described by reason (``chunking.pipeline.figures``).
    figures_described: int = 0
    figures_not_described: dict = field(default_factory=dict)


@dataclass
class IngestSummary:
    """Totals of a batch run; ``to_dict`` is the ``--json`` output of ``python -m chunking ingest``."""

    rows: list[DocumentRow] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    #: source -> chunks of stale versions removed by ``full``/``scoped_full``.
    pruned: dict[str, int] = field(default_factory=dict)
    #: sources under the run's folders with a version in the index that were not found this time (kept: the
    #: cleanup mode deletes no document).
    vanished: list[str] = field(default_factory=list)
    #: sources that are also blobs of the documents container in the ledger shared with the Functions (which
    #: index them): not ingested a second time under another document id.
    uploaded: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: Why the run stopped before its last document (a service unreachable or refusing the credentials), or "".
    stopped: str = ""

    def count(self, outcome: str) -> int:
        return sum(1 for r in self.rows if r.outcome == outcome)

    def to_dict(self) -> dict:
        ok = [r for r in self.rows if r.outcome != "failed"]
        return {
            "documents": len(ok),
            "added": self.count("added"),
            "updated": self.count("updated"),
            "skipped": self.count("skipped"),
            "fields_updated": sum(1 for r in self.rows if r.fields_updated),
            "deleted": len(self.deleted),
            "failed": self.count("failed"),
            "pages": sum(r.pages for r in ok),
            "chunks": sum(r.chunks for r in ok),
            "tokens": sum(r.tokens for r in ok),
            "embedding_tokens": sum(r.embedding_tokens for r in self.rows),
            "embedding_requests": sum(r.embedding_requests for r in self.rows),
            "seconds": round(self.seconds, 3),
            "stopped": self.stopped,
            "failures": [{"source": r.source, "error": r.error} for r in self.rows if r.outcome == "failed"],
            "deleted_sources": list(self.deleted),
            "ignored_sources": list(self.ignored),
            "ocr_pages": sum(r.ocr_pages for r in ok),
            "figures_read": sum(r.figures_read for r in ok),
            "figures_skipped": _added(r.figures_skipped for r in ok),
            "figures_described": sum(r.figures_described for r in ok),
            "figures_not_described": _added(r.figures_not_described for r in ok),
            "stale_chunks_deleted": dict(self.pruned),
            "vanished_sources": list(self.vanished),
            "uploaded_sources": list(self.uploaded),
            "per_document": [
                {"source": r.source, "outcome": r.outcome, "pages": r.pages, "chunks": r.chunks,
                 "max_chunk_tokens": r.max_tokens, "tokens": r.tokens, "embedding_tokens": r.embedding_tokens,
                 "stage1_seconds": round(r.stage1_seconds, 3), "stage2_seconds": round(r.stage2_seconds, 3),
                 "fields_updated": r.fields_updated, "error": r.error}
                for r in self.rows
            ],
        }


def source_name(path: Path, cwd: Path | None = None) -> str:
    """The source name of a local file: its path relative to the working directory (``samples/a.pdf``) when it
    lies inside it, else its absolute path; ``/``-separated. Naming a file directly or through its folder gives
    the same name, so the same document id; two files of the same name in different folders stay apart. A byte
    of the name that is not UTF-8 (a Latin-1 name copied from an old system, which Python holds as a lone
    surrogate) is written as a backslash escape, ``caf\\xe9.md``: the name can then be stored, hashed into the
    document id and printed. A symbolic link is named by its target, but one whose target cannot be reached
    (``missing_reason``) by its own path."""
    resolved = path.parent.resolve() / path.name if _broken_link(path) else path.resolve()
    try:
        name = resolved.relative_to((cwd or Path.cwd()).resolve()).as_posix()
    except ValueError:
        name = resolved.as_posix()
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def collect_files(paths: Sequence[Path], cwd: Path | None = None,
                  exclude: Sequence[str] = ()) -> tuple[list[tuple[Path, str]], list[str], list[str]]:
    """``(file, source)`` pairs for *paths*, the folder scopes (``"folder/"`` source prefixes) they cover, and the
    files of those folders passed over because no parser reads their type (``LICENSE``, ``.png``…). A folder
    holding the working directory (``.``, ``..``) covers every source named relative to it: its scope list has
    ``""`` for them (``in_scope``), besides the folder's absolute prefix for those named by absolute path.

    Folders are searched recursively, hidden files and folders skipped, and so are files matching a glob of
    *exclude* (``fnmatch``, on the path relative to the folder or on the file name: ``SOURCES.md``,
    ``drafts/*``); a file named directly is always taken (an unsupported one then fails with its reason).
    A symbolic link of a folder whose target is missing (or a link loop) is taken as a file of its name's type,
    so that reading it fails with its reason (``read_local_file``) instead of its being passed over unseen.
    Sources are named by :func:`source_name`.

    Raises:
        FileNotFoundError: a path does not exist (the message says so, or names a dangling link).
    """
    cwd = (cwd or Path.cwd()).resolve()
    found: list[tuple[Path, str]] = []
    scopes: list[str] = []
    ignored: list[str] = []
    for path in paths:
        if path.is_dir():
            name = source_name(path, cwd)
            if name != ".":
                scopes.append(name.rstrip("/") + "/")
            if cwd.is_relative_to(path.resolve()):  # ".", "..": the sources named relative to the working directory
                scopes.append("")
            for file in sorted(p for p in path.rglob("*") if p.is_file() or _broken_link(p)):
                rel = file.relative_to(path)
                if any(part.startswith(".") for part in rel.parts) or _excluded(rel, exclude):
                    continue
                if file.suffix.lower() in SUPPORTED_EXTENSIONS:
                    found.append((file, source_name(file, cwd)))
                else:
                    ignored.append(source_name(file, cwd))
        elif path.is_file():
            found.append((path, source_name(path, cwd)))
        else:
            raise FileNotFoundError(f"{path}: {missing_reason(path)}")
    return found, scopes, ignored


def _broken_link(path: Path) -> bool:
    """A symbolic link whose target cannot be reached (missing, or a loop of links)."""
    return path.is_symlink() and not path.exists()


def missing_reason(path: Path) -> str:
    """Why a path named on the command line is not there: ``no such file or folder``, or, for a symbolic link
    whose target is missing, ``dangling symbolic link: its target … does not exist``."""
    if not _broken_link(path):
        return "no such file or folder"
    try:
        target = os.readlink(path)
    except OSError:
        return "dangling symbolic link"
    return f"dangling symbolic link: its target {target} does not exist"


def read_local_file(path: Path) -> bytes:
    """The bytes of the local file *path*.

    Raises:
        UnreadableFileError: it cannot be read; the message is the reason, without the path: ``dangling symbolic
            link: its target … does not exist``, ``symbolic link loop``, ``cannot be read: permission denied``,
            ``cannot be read: <the system's reason>``.
    """
    try:
        return path.read_bytes()
    except FileNotFoundError:
        reason = missing_reason(path) if path.is_symlink() else "no such file (removed during the run)"
    except PermissionError:
        reason = "cannot be read: permission denied"
    except OSError as exc:
        reason = ("symbolic link loop" if exc.errno == errno.ELOOP
                  else f"cannot be read: {(exc.strerror or str(exc)).lower()}")
    raise UnreadableFileError(reason)


def in_scope(source: str, scope: str) -> bool:
    """Whether *source* lies under the folder scope *scope* of ``collect_files``: a ``"folder/"`` prefix, or
    ``""``, the working directory, which holds every source named relative to it (not those named by absolute
    path, which lie outside it)."""
    return not Path(source).is_absolute() if scope == "" else source.startswith(scope)


def _excluded(rel: Path, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatch(rel.as_posix(), p) or fnmatch.fnmatch(rel.name, p) for p in patterns)


def ingest_files(
    files: Iterable[tuple[Path, str]],
    *,
    settings: Settings,
    embedder: Embedder,
    index: IndexWriter,
    ledger: Ledger,
    cleanup: str = "incremental",
    scopes: Sequence[str] = (),
    allow_empty_full: bool = False,
    progress: Callable[[Iterable], Iterable] = lambda it: it,
    metadata: Mapping[str, str] | None = None,
    on_member: Callable[[str], None] | None = None,
) -> IngestSummary:
    """Run stage 1 and stage 2 in-process for each ``(file, source)``, then the cleanup mode. Each document's
    fields come from its file (``file://`` URL, type, modification time, size) and *metadata*, which stands for
    blob metadata (``METADATA_FIELDS``, ``acl_users``, ``acl_groups``) for every file of the run. *progress*
    wraps the files as they are taken; *on_member* is called with each member's source as a container (a mail,
    an archive) reads it, the progress within one file.

    Raises:
        ValueError: unknown *cleanup*, or ``full`` over a run that saw no document (and not *allow_empty_full*).
    """
    if cleanup not in CLEANUP_MODES:
        raise ValueError(f"cleanup must be one of {', '.join(CLEANUP_MODES)}, got {cleanup!r}")
    files = list(files)
    if cleanup == "full" and not files and not allow_empty_full:
        raise ValueError("cleanup 'full' over a run with no documents would delete every document; "
                         "pass allow_empty_full (--allow-empty-full) if that is what you want")
    started = time.perf_counter()
    payloads = MemoryPayloadStore()
    figures = make_figure_store(settings)  # one store for the run (docs/parsers.md#figure-images)
    summary = IngestSummary()
    seen: set[str] = set()
    namespace = deployment_namespace(settings, LOCAL_CONTAINER)  # cleanup never touches another deployment's
    # The documents the index holds: one the ledger says is indexed but the index lacks (the index file was
    # removed, or belongs to another ledger) is split and written again rather than skipped.
    held = index.doc_ids(namespace)
    for file, source in progress(files):
        row = DocumentRow(source)
        summary.rows.append(row)
        did = make_doc_id(LOCAL_CONTAINER, source)
        seen.add(did)
        try:
            if settings.ledger_backend == "table":  # the ledger is the Functions': is this file uploaded too?
                blob = ledger.get(make_doc_id(settings.documents_container, source))
                if blob is not None and not blob.is_deleted:
                    row.outcome = "skipped"
                    summary.uploaded.append(source)
                    continue
            entry = ledger.get(did)
            lost = entry is not None and entry.is_indexed and did not in held
            members = _live_members(ledger, did) if entry is not None else []
            summary.rows += _ingest_one(file, source, row, settings=settings, embedder=embedder, index=index,
                                        ledger=ledger, payloads=payloads, figures=figures,
                                        keep_old_versions=cleanup == "none", metadata=metadata or {}, force=lost,
                                        on_member=on_member)
            # Members the container's new version no longer has were deleted with its old one.
            summary.deleted += [member for member in members if _is_deleted(ledger, member)]
        except UnreadableFileError as exc:  # its reason is the row's; the others go on
            row.outcome, row.error = "failed", str(exc)
            _record_failure(ledger, source, row.error, None)
        except Exception as exc:  # one document's failure is its row and ledger reason; the others go on
            failure = describe_failure(exc, settings)
            row.outcome = "failed"
            row.error = failure.line if failure else f"crashed: {type(exc).__name__}: {redact(str(exc))[:300]}"
            _record_failure(ledger, source, row.error, failure)
            if failure is not None and failure.kind in ("unreachable", "auth"):
                summary.stopped = failure.line  # every other document would fail the same way
                break
    for entry in ledger.entries():
        if entry.container != LOCAL_CONTAINER or entry.is_deleted:
            continue
        scoped = cleanup == "full" or any(in_scope(entry.source, scope) for scope in scopes)
        if entry.doc_id not in seen and not _member_of_seen(entry.source, seen) and scoped:
            if cleanup in ("full", "scoped_full"):
                delete_document(entry.doc_id, entry.source, index=index, ledger=ledger, namespace=namespace,
                                figures=figures)
                summary.deleted.append(entry.source)
            elif entry.indexed_version:
                summary.vanished.append(entry.source)
        elif cleanup in ("full", "scoped_full") and (scoped or entry.doc_id in seen):
            removed = _prune_stale_versions(entry, index, namespace)
            if removed:
                summary.pruned[entry.source] = removed
    if cleanup == "full":
        # Documents of this deployment's namespace that the ledger has no row for (its ledger was lost or
        # replaced while the index was kept): the index and the ledger describe the same documents again.
        known = {e.doc_id for e in ledger.entries()}
        for did in sorted(index.doc_ids(namespace) - known):
            records = [r for r in index.records_of(did) if r.namespace == namespace]
            if records:
                index.delete([r.id for r in records])
                summary.deleted.append(records[0].source)
    summary.seconds = time.perf_counter() - started
    return summary


def _added(counts) -> dict[str, int]:
    """Counters (reason → count) added up."""
    total: dict[str, int] = {}
    for count in counts:
        for reason, n in count.items():
            total[reason] = total.get(reason, 0) + n
    return total


def _prune_stale_versions(entry, index: IndexWriter, namespace: str) -> int:
    """Delete the chunks of *entry*'s document (of *namespace*) whose version is neither its current nor its
    indexed one (the indexed one stays searchable while a newer one is queued or failed); returns how many."""
    keep = {entry.version, entry.indexed_version} - {""}
    stale = [key for key, version in index.keys_of(entry.doc_id, namespace).items() if version not in keep]
    if stale:
        index.delete(stale)
    return len(stale)


def _ingest_one(file: Path, source: str, row: DocumentRow, *, settings: Settings, embedder: Embedder,
                index: IndexWriter, ledger: Ledger, payloads: MemoryPayloadStore, figures: FigureStore | None,
                keep_old_versions: bool, metadata: Mapping[str, str], force: bool = False,
                on_member: Callable[[str], None] | None = None) -> list[DocumentRow]:
    """Run both stages on *file* into *row*. Returns the rows of a container's members (a mail's attachments, an
    archive's files, at any depth, in the container's order: docs/architecture.md#containers), each with its own
    outcome, counts and seconds, which *row* then leaves out; for an unchanged (skipped) container, whose members
    are not read again, a ``failed`` row for each member the ledger holds as failed."""
    data = read_local_file(file)  # first: a dangling link has no properties either
    properties = dataclasses.replace(file_properties(file), metadata=dict(metadata))
    one = run_stage_one(data, source=source, container=LOCAL_CONTAINER, settings=settings,
                        payloads=payloads, ledger=ledger, keep_old_versions=keep_old_versions, properties=properties,
                        force=force, figures=figures, on_member=on_member)
    _fill(row, one)
    members = _member_rows(one.members)
    by_source = {member.source: member for member in members}
    for message in one.messages:  # the members' batches come first, then the container's own
        two = run_stage_two(message, settings=settings, embedder=embedder, index=index, payloads=payloads,
                            ledger=ledger, figures=figures)
        target = by_source.get(two.source, row)
        target.stage2_seconds += two.seconds
        target.embedding_tokens += two.embedding_tokens
        target.embedding_requests += two.embedding_requests
        if one.outcome == "skipped":  # a field update: the same bytes with other metadata or access lists
            row.fields_updated += two.records
    if one.outcome == "skipped":
        return [DocumentRow(member, outcome="failed", error=error or "failed")
                for member, error in _recorded_member_failures(ledger, one.doc_id, one.version)]
    return members


def _fill(row: DocumentRow, one) -> None:
    """*row* from the stage-1 result *one* (``StageOneResult``): its outcome, reason, counts and notes, and its
    own stage-1 seconds (without those of its members, which their rows have)."""
    row.outcome, row.error = one.outcome, one.error or ("failed" if one.outcome == "failed" else None)
    row.stage1_seconds = max(0.0, one.seconds - sum(member.seconds for member in one.members))
    row.pages, row.chunks, row.tokens, row.max_tokens = one.pages, one.chunks, one.tokens, one.max_chunk_tokens
    pixels = pixel_counts(one.notes)
    row.ocr_pages, row.figures_read, row.figures_skipped = (pixels["ocr_pages"], pixels["figures_read"],
                                                            pixels["figures_skipped"])
    described = vision_counts(one.notes)
    row.figures_described, row.figures_not_described = (described["figures_described"],
                                                        described["figures_not_described"])


def _member_rows(members: Sequence) -> list[DocumentRow]:
    """A row for each of *members* (``StageOneResult``s of a container's run), each followed by its own
    members' rows."""
    rows = []
    for member in members:
        rows.append(DocumentRow(member.source))
        _fill(rows[-1], member)
        rows += _member_rows(member.members)
    return rows


def _live_members(ledger: Ledger, doc_id: str) -> list[str]:
    """The sources of the members, at any depth, that the ledger records for any version of the container
    *doc_id* and holds as not deleted; ``[]`` for a document that is no container."""
    found: list[str] = []
    for source in sorted(set().union(*ledger.member_lists(doc_id).values())):
        entry = ledger.get(make_doc_id(LOCAL_CONTAINER, source))
        if entry is not None and not entry.is_deleted:
            found.append(source)
            found += _live_members(ledger, entry.doc_id)
    return found


def _is_deleted(ledger: Ledger, source: str) -> bool:
    entry = ledger.get(make_doc_id(LOCAL_CONTAINER, source))
    return entry is not None and entry.is_deleted


def _recorded_member_failures(ledger: Ledger, doc_id: str, version: str) -> Iterator[tuple[str, str]]:
    """``(source, reason)`` of each member of the container *doc_id*'s *version* (unchanged, so not run again)
    that the ledger holds as failed, and of their own members, sorted by source: the same failures the run that
    read this version reported."""
    for source in sorted(ledger.member_lists(doc_id).get(version, ())):
        entry = ledger.get(make_doc_id(LOCAL_CONTAINER, source))
        if entry is None or entry.is_deleted:
            continue
        if entry.is_failed:
            yield source, entry.error
        yield from _recorded_member_failures(ledger, entry.doc_id, entry.version)


def _record_failure(ledger: Ledger, source: str, reason: str, failure) -> None:
    """The ledger after a document's run raised: ``failed`` with *reason*, except after a retryable service
    failure (throttled, 5xx, unreachable), where the version stays ``queued`` for the next run with the reason."""
    did = make_doc_id(LOCAL_CONTAINER, source)
    try:
        entry = ledger.get(did)
        if failure is not None and failure.kind in ("throttled", "server", "unreachable") and entry is not None:
            ledger.record_error(did, source, entry.version, f"{reason}; next attempt: the next ingest run")
        else:
            ledger.mark_failed(did, source, entry.version if entry else "", reason, container=LOCAL_CONTAINER)
    except Exception as exc:  # the ledger itself is unreachable: the row still says why
        log.error("could not record the failure of %s in the ledger: %s", source, redact(str(exc)))


def _member_of_seen(source: str, seen: set[str]) -> bool:
    """*source* is a member of a container this run saw (docs/architecture.md#containers): the container's own
    run keeps its members exactly, so the cleanup modes leave them to it."""
    root = member_root(source)
    return root is not None and make_doc_id(LOCAL_CONTAINER, root) in seen
