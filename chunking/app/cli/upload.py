"""``chunking upload``: put files into the documents container, where the blob trigger picks them up."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from chunking.app.cli import status
from chunking.app.cli.arguments import metadata_item, metadata_refusal, unread_metadata
from chunking.app.cli.output import fail, plural
from chunking.errors import UnreadableFileError
from chunking.formats import content_type_of
from chunking.pipeline.ingest import collect_files, read_local_file
from chunking.storage import blob_service, ensure_reachable, storage_error

__all__ = ["add_parser", "blob_names", "run"]


def add_parser(sub, summary: str) -> None:
    """Add the ``upload`` subparser to *sub* (``argparse`` subparsers); *summary* is its line in ``--help``."""
    up = sub.add_parser(
        "upload", help=summary,
        description="Upload files (folders are searched recursively; files of types no parser reads are passed "
        "over) to the documents container (DOCUMENTS_CONTAINER) of the storage connection (AzureWebJobsStorage), "
        "replacing blobs of the same name. The container is created if missing. Blobs are named by their path "
        "relative to the working directory (files outside it by their path below the folder named, or their "
        "name), after --prefix. Then `status --watch` follows them.")
    up.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="a file or a folder")
    up.add_argument("--prefix", default="", metavar="FOLDER", help="a virtual folder for the blob names, e.g. manuals")
    up.add_argument("--watch", action="store_true", help="then follow them as `status --watch` does")
    up.add_argument("--metadata", action="append", default=[], metavar="NAME=VALUE", type=metadata_item,
                    help="blob metadata of every file uploaded (repeatable): the names of METADATA_FIELDS become "
                    "index fields, acl_users / acl_groups the access lists, e.g. --metadata acl_groups=hr,finance; "
                    "checked as ingest checks it before anything is uploaded: a malformed name, a name given twice, "
                    "an empty value or one that is not printable ASCII is refused (exit status 2); a name these "
                    "settings read no field from is uploaded with a warning (the Functions app reads its own "
                    "METADATA_FIELDS)")
    up.set_defaults(func=run)


def blob_names(paths: list[Path], prefix: str = "", cwd: Path | None = None) -> tuple[list[tuple[Path, str]], list[str]]:
    """``(file, blob name)`` pairs for *paths*, and the files of folders passed over (unsupported types).

    Raises:
        FileNotFoundError: a path does not exist.
        ValueError: two files would get the same blob name.
    """
    cwd = (cwd or Path.cwd()).resolve()
    prefix = prefix.strip("/")
    pairs: list[tuple[Path, str]] = []
    ignored: list[str] = []
    for path in paths:
        resolved = path.resolve()
        inside = resolved == cwd or cwd in resolved.parents
        base = cwd if inside else (resolved if path.is_dir() else resolved.parent)
        files, _, passed = collect_files([path], cwd=base)
        pairs.extend((file, f"{prefix}/{name}" if prefix else name) for file, name in files)
        ignored.extend(passed)
    names: dict[str, Path] = {}
    unique: list[tuple[Path, str]] = []
    for file, name in pairs:
        if name in names:
            if names[name].resolve() != file.resolve():
                raise ValueError(f"{names[name]} and {file} would both be uploaded as {name}")
            continue  # the same file named twice
        names[name] = file
        unique.append((file, name))
    return unique, ignored


def _content_settings(name: str):
    """The blob's content type, guessed from its name (the index's ``content_type``), or ``None``."""
    from azure.storage.blob import ContentSettings

    guessed = content_type_of(name)
    return ContentSettings(content_type=guessed) if guessed else None


def run(args: argparse.Namespace, settings) -> int:
    """Upload and print one line per file; 1 when the paths hold no supported file or a file could not be read
    (a dangling symbolic link: named on stderr as ``ingest`` names it, the others uploaded), 2 on a missing path,
    a refused ``--metadata`` or a storage error."""
    from azure.core.exceptions import AzureError

    # As ingest checks it, before any upload; but a name these settings do not read is only warned of: the
    # Functions app that indexes the blob reads its own METADATA_FIELDS.
    refused = metadata_refusal(args.metadata, settings.metadata, read_names_only=False)
    if refused:
        return fail(args, refused)
    for warning in unread_metadata(args.metadata, settings.metadata):
        print(f"{args.prog}: warning: {warning}", file=sys.stderr)
    try:
        pairs, ignored = blob_names(args.paths, args.prefix)
    except (FileNotFoundError, ValueError) as exc:
        return fail(args, str(exc))
    if not pairs:
        # As `ingest` says it (docs/operations.md#the-command-line): nothing to do is exit status 1, not usage.
        where = ", ".join(str(p) for p in args.paths)
        passed = f" ({plural(len(ignored), 'file')} of unsupported types passed over)" if ignored else ""
        return fail(args, f"no supported file{passed}", path=where, status=1)
    ensure_reachable(settings, container=settings.documents_container)
    container = blob_service(settings).get_container_client(settings.documents_container)
    total = 0
    unread: list[str] = []
    for file, name in pairs:
        try:
            data = read_local_file(file)
        except UnreadableFileError as exc:  # named, as ingest names it; the other files go on
            fail(args, str(exc), path=file)
            unread.append(name)
            continue
        try:
            container.upload_blob(name, data, overwrite=True, metadata=dict(args.metadata) or None,
                                  content_settings=_content_settings(name))
        except AzureError as exc:
            raise storage_error(exc, container, f"blob '{name}' of container '{container.container_name}'") from None
        total += len(data)
        print(f"uploaded {file} -> {container.container_name}/{name} ({len(data):,} bytes)", flush=True)
    url = container.url.split("?")[0]
    done = len(pairs) - len(unread)
    print(f"{done} file{'s' * (done != 1)} ({total:,} bytes) uploaded to {url}"
          + (f"; {plural(len(unread), 'file')} could not be read" if unread else ""))
    if ignored:
        print(f"{len(ignored)} files of unsupported types passed over: {', '.join(ignored[:5])}"
              f"{' …' if len(ignored) > 5 else ''}")
    if not args.watch:
        print("follow them with: chunking status --watch")
        return 1 if unread else 0
    watched = status.run(argparse.Namespace(watch=True, interval=2.0, timeout=900.0, json=False, prog=args.prog),
                         settings)
    return max(watched, 1 if unread else 0)
