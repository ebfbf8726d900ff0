"""``chunking smoke``: the post-deploy check. One small document goes through the whole deployment — uploaded to
the documents container, followed in the ledger to ``indexed``, found by search, deleted, and followed until its
chunks are gone — and each step is printed as a check. Safe to run again: every run uses a new blob name under
``--prefix`` and deletes it, also when a step fails (docs/deploy.md#after-the-deployment-the-smoke-test).
"""

from __future__ import annotations

import argparse
import datetime as dt
import secrets
import time
from dataclasses import dataclass
from typing import Callable

from chunking.app.cli.arguments import count_at_least, seconds
from chunking.ids import doc_id
from chunking.retrieval import search
from chunking.services import make_embedder, make_index, make_ledger
from chunking.storage import blob_service, ensure_reachable, storage_error

__all__ = ["Check", "add_parser", "run", "smoke_document"]


def add_parser(sub, summary: str) -> None:
    """Add the ``smoke`` subparser to *sub* (``argparse`` subparsers); *summary* is its line in ``--help``."""
    smoke = sub.add_parser(
        "smoke", help=summary,
        description="Check a deployment end to end with one small Markdown document: upload it to the documents "
        "container, wait until the ledger says indexed (the Functions must be running), find it by a word only it "
        "holds, delete it, and wait until the ledger says deleted and search no longer finds it. Prints each check; "
        "exit status 0 when all pass. The blob is named PREFIX/smoke<random>.md and is removed in every case.")
    smoke.add_argument("--prefix", default="smoke-test", metavar="FOLDER",
                       help="virtual folder of the test blob (default smoke-test)")
    smoke.add_argument("--timeout", type=count_at_least(1), default=600, metavar="SECONDS",
                       help="how long to wait for each of indexing and removal (default 600)")
    smoke.add_argument("--interval", type=seconds(), default=2.0, metavar="SECONDS",
                       help="seconds between two looks at the ledger and the index (default 2)")
    smoke.set_defaults(func=run)


@dataclass(frozen=True)
class Check:
    """One step of the smoke test: what was checked, whether it held, and what was seen."""

    name: str
    passed: bool
    detail: str = ""

    def line(self) -> str:
        return f"{'PASS' if self.passed else 'FAIL'}  {self.name}" + (f": {self.detail}" if self.detail else "")


def smoke_document(marker: str) -> bytes:
    """The Markdown the smoke test uploads: a heading and one paragraph holding *marker*, a word no other
    document holds."""
    return (f"# Smoke test {marker}\n\nThis document checks the ingestion pipeline end to end: it is uploaded, "
            f"indexed, found by its marker word {marker}, then deleted. It can be removed at any time.\n").encode()


def _wait(until: Callable[[], tuple[bool, str]], *, timeout: float, interval: float,
          out: Callable[[str], None], clock=time.monotonic, sleep=time.sleep) -> tuple[bool, str]:
    """Call *until* every *interval* seconds until it says done or *timeout* passes; print each new state."""
    started, last = clock(), None
    while True:
        done, state = until()
        if state != last:
            out(f"  {dt.datetime.now().strftime('%H:%M:%S')}  {state}")
            last = state
        if done or clock() - started >= timeout:
            return done, state
        sleep(interval)


def run(args: argparse.Namespace, settings, *, out: Callable[[str], None] = print) -> int:
    """Run the four checks and print them; 0 if all pass, 1 if one fails.

    Raises:
        StorageError: the storage account cannot be reached or refuses (the CLI prints it, exit status 2).
    """
    from azure.core.exceptions import AzureError

    marker = f"smoke{secrets.token_hex(6)}"
    container_name = settings.documents_container
    path = f"{args.prefix.strip('/')}/{marker}.md" if args.prefix.strip("/") else f"{marker}.md"
    did = doc_id(container_name, path)
    ensure_reachable(settings, container=container_name)  # StorageError: main prints it, exit status 2
    container = blob_service(settings).get_container_client(container_name)
    ledger, index, embedder = make_ledger(settings), make_index(settings), make_embedder(settings)
    checks: list[Check] = []
    uploaded = False

    def first_hit() -> str | None:
        hits = search(marker, index=index, embedder=embedder, k=3)
        return hits[0].record.source if hits else None

    def indexed() -> tuple[bool, str]:
        entry = ledger.get(did)
        if entry is None:
            return False, "waiting for the blob trigger (no ledger entry yet)"
        if entry.is_failed:
            return True, f"failed: {entry.error}"
        return entry.is_indexed, entry.status + (f" ({entry.chunk_count} chunks)" if entry.is_indexed else "")

    def found() -> tuple[bool, str]:
        source = first_hit()
        return source == path, f"first hit {source}" if source else "no hit yet"

    def removed() -> tuple[bool, str]:
        entry = ledger.get(did)
        gone_from_ledger = entry is None or entry.is_deleted
        source = first_hit()
        state = f"ledger {'deleted' if gone_from_ledger else entry.status}, " + (
            "search finds nothing" if source != path else "search still finds it")
        return gone_from_ledger and source != path, state

    out(f"smoke test of {container_name}/{path} (marker word {marker})")
    try:
        container.upload_blob(path, smoke_document(marker), overwrite=True)
        uploaded = True
        checks.append(Check("upload to the documents container", True, f"{container_name}/{path}"))
        out(checks[-1].line())
        index.ensure()
        done, state = _wait(indexed, timeout=args.timeout, interval=args.interval, out=out)
        checks.append(Check("indexed (ledger)", done and state.startswith("indexed"), state))
        out(checks[-1].line())
        if checks[-1].passed:
            # The index's queries see writes in near real time: give them the same patience.
            done, state = _wait(found, timeout=min(args.timeout, 120), interval=args.interval, out=out)
            checks.append(Check("found by search (first hit)", done, state))
            out(checks[-1].line())
        container.delete_blob(path)
        uploaded = False
        done, state = _wait(removed, timeout=args.timeout, interval=args.interval, out=out)
        checks.append(Check("deleted from the ledger and the index", done, state))
        out(checks[-1].line())
    except AzureError as exc:
        checks.append(Check("storage", False, str(storage_error(exc, container, f"blob '{path}'"))))
        out(checks[-1].line())
    finally:
        if uploaded:
            try:
                container.delete_blob(path)
            except AzureError:
                out(f"could not delete {container_name}/{path}: delete it by hand")
    passed = sum(c.passed for c in checks)
    verdict = "passed" if passed == 4 and len(checks) == 4 else "FAILED"
    out(f"smoke test {verdict}: {passed} of 4 checks")
    return 0 if verdict == "passed" else 1
