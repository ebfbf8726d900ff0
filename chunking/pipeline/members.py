"""Containers: one blob, several documents (docs/architecture.md#containers).

A container (a format with ``members`` in ``chunking.formats``: a mail, a ZIP archive) is a document of its own
(its page: the mail's headers and body, the archive's list of files) and each of its members is another
document, with the source ``<container's source>/<member's name>`` (``inbox/mail.eml/attachments/report.pdf``,
``project.zip/docs/a.pdf``) and so a document id, ledger entry, versions and chunk keys of its own. What ties
them together is the ledger:

- stage 1 (``stage_members``, called by ``run_stage_one`` for a container version that is not indexed yet) runs
  stage 1 on every member first, each parsed by its own format's parser, then records the version's member list
  (``Ledger.record_members``), and only then reads the container's own page. A member the container refuses
  (``chunking.parsers.members``: a zip bomb, a path-traversal name, an encrypted member, a duplicate) or one
  nested deeper than ``MAX_ARCHIVE_DEPTH`` is ``failed`` with its reason, and the others go on;
- stage 2, when a container version completes and its older versions are retired (``remove_other_versions``),
  deletes every member the retired versions had and no wanted version has (``remove_vanished_members``): a
  member removed from an archive or a mail leaves no chunk, exactly when the new version of the container is
  searchable;
- deleting the container deletes its members (``chunking.pipeline.reconcile.delete_document`` follows the
  member lists);
- reconcile takes a member's entry as present while its container's blob is (``chunking.formats.member_root``),
  and puts the container, not the member, back on the stage-1 queue;
- a container uploaded again with the same bytes but other metadata or access lists sends a field update for
  each member too (``member_field_updates``), so a member is never searchable under its container's old ACL.

Every record of a member carries the container's storage fields (URL, time, metadata, tags, access lists; its
content type and size are its own: ``member_properties``): a member is cited back to the container through its
source and its URL.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
from pathlib import Path
from typing import Callable

from chunking.formats import format_of, member_depth
from chunking.ids import doc_id as make_doc_id
from chunking.ids import document_version
from chunking.index.protocol import IndexWriter
from chunking.ledger import Ledger
from chunking.model import SourceProperties
from chunking.parsers import ReadContext
from chunking.parsers.limits import Deadline, Limits
from chunking.parsers.members import iter_members
from chunking.pipeline.fields import fields_message_if_changed
from chunking.pipeline.reconcile import delete_document
from chunking.settings import Settings
from chunking.storage.claim_check import PayloadStore
from chunking.storage.figures import FigureStore

__all__ = ["member_field_updates", "passed_over", "remove_vanished_members", "stage_members"]

log = logging.getLogger("chunking.pipeline.members")


def stage_members(data: bytes | Path, *, source: str, doc_id: str, version: str, container: str,
                  settings: Settings, ledger: Ledger, run: Callable[..., object], result: Callable[..., object],
                  **stage_one) -> list:
    """Run stage 1 (*run*: ``run_stage_one``, with the keyword arguments *stage_one* besides the source and its
    bytes) on every member of the container *source*, then record *version*'s member list. *result* is
    ``StageOneResult``, made here for a refused member. ``stage_one["on_member"]``, when given, is called with
    each member's source before it is run or refused (and passed on to the members' runs).

    Returns:
        The members' ``StageOneResult``s, in the container's order; a refused member's has outcome ``failed``
        and its reason (its ledger entry says the same).

    Raises:
        ParseError: the container cannot be opened (``not a valid ZIP: …``): nothing is recorded, the previous
            members stay as they are.
    """
    limits = Limits.from_settings(settings)
    context = ReadContext(limits=limits, deadline=Deadline(settings.stage1_max_seconds))
    raw = data.read_bytes() if isinstance(data, Path) else data
    results = []
    sources: list[str] = []
    on_member = stage_one.get("on_member")
    if member_depth(source) + 1 <= limits.max_archive_depth:
        for member in iter_members(raw, source=source, context=context):
            if passed_over(member.name):
                continue
            child = f"{source}/{member.name}"
            sources.append(child)
            if on_member is not None:
                on_member(child)
            fmt = format_of(child)
            reason = member.reason
            if not reason and fmt is not None and fmt.members and member_depth(child) + 1 > limits.max_archive_depth:
                reason = limits.archive_depth_reason()
            if reason:
                child_id = make_doc_id(container, child)
                # A version of its own for the refusal: the container's, so a new upload tries it again.
                refused = document_version(hashlib.sha256(f"{version}/{member.name}".encode()).hexdigest(), "", "")
                ledger.mark_failed(child_id, child, refused, reason, container=container)
                log.error("rejected %s: %s", child, reason)
                results.append(result(source=child, doc_id=child_id, outcome="failed", version=refused,
                                      error=reason))
                continue
            results.append(run(member.data, source=child, container=container, settings=settings, ledger=ledger,
                               **{**stage_one, "properties": member_properties(stage_one.get("properties"))}))
    for note in context.notes:
        log.warning("%s: %s", source, note)
    ledger.record_members(doc_id, version, sources)
    return results


def passed_over(name: str) -> bool:
    """Whether the member *name* (its path in the container) is passed over, as ``chunking ingest`` passes over
    the hidden files of a folder: a part of the path starts with ``.`` (``.DS_Store``, ``.git/config``), or it lies
    under ``__MACOSX/``, where the macOS archiver puts each file's resource fork (``__MACOSX/a/._notes.md``, binary
    data under a text name)."""
    parts = name.split("/")
    return parts[0] == "__MACOSX" or any(part.startswith(".") for part in parts)


def member_properties(properties: SourceProperties | None) -> SourceProperties | None:
    """A member's source properties: its container's (URL, time, metadata, tags, access lists), but its content
    type guessed from its own name and its size counted from its own bytes."""
    return dataclasses.replace(properties, content_type="", size_bytes=None) if properties is not None else None


def member_field_updates(doc_id: str, version: str, *, container: str, ledger: Ledger, properties, settings: Settings,
                         payloads: PayloadStore) -> list[str]:
    """Field-update messages for the members of the container version *version* (already indexed) whose source
    fields differ from *properties*, the container blob's: its metadata or access lists changed, and every member
    carries them (``chunking.pipeline.fields``). Members of members are followed too."""
    messages: list[str] = []
    for source in sorted(ledger.member_lists(doc_id).get(version, set())):
        entry = ledger.get(make_doc_id(container, source))
        if entry is None or not entry.is_indexed:
            continue
        update = fields_message_if_changed(entry, member_properties(properties), source=source, settings=settings,
                                           payloads=payloads)
        if update is not None:
            messages.append(update)
        messages += member_field_updates(entry.doc_id, entry.indexed_version, container=container, ledger=ledger,
                                         properties=properties, settings=settings, payloads=payloads)
    return messages


def remove_vanished_members(doc_id: str, keep: str, *, index: IndexWriter, ledger: Ledger,
                            payloads: PayloadStore | None = None, figures: FigureStore | None = None) -> list[str]:
    """*keep* of the container *doc_id* is complete: delete the members that the versions about to be retired
    recorded and neither *keep* nor the version that is current now has (with their figure images, in
    *figures*). Returns their sources; ``[]`` for a document that is no container."""
    lists = ledger.member_lists(doc_id)
    if not lists:
        return []
    entry = ledger.get(doc_id)
    spare = {keep} | ({entry.version, entry.indexed_version} if entry and not entry.is_deleted else set())
    wanted = set().union(*(names for version, names in lists.items() if version in spare))
    gone = set().union(*(names for version, names in lists.items() if version not in spare)) - wanted
    container = entry.container if entry is not None else ""
    for source in sorted(gone):
        delete_document(make_doc_id(container, source), source, index=index, ledger=ledger, payloads=payloads,
                        figures=figures)
        log.info("removed %s: no longer a member of its container", source)
    return sorted(gone)
