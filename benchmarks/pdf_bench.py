"""PDF text throughput: bare PDFium, our parser, our whole stage 1 and the peers' PDF loaders, on the same files.

A plain script, run by hand (never collected by pytest)::

    .venv/bin/python benchmarks/pdf_bench.py [--corpus DIR ...] [--rounds 5] [--scale 4] [--no-peers]

Files: every PDF of ``samples/``, ``tests/data/`` and ``../shared/corpus`` (each content once), every PDF under
each ``--corpus DIR``, and with ``--scale N`` a synthetic PDF of the English manual's text ×N (pages with their
words shuffled, written by ``benchmarks/pipeline_bench.py``), to see the larger documents the targets speak of.

Rows (contenders), each run on every file in every round, round-robin in one process (load on a shared machine
drifts; every contender sees the same drift):

  (a) ``pdfium``: bare PDFium text extraction, ``PdfDocument``, then ``get_textpage().get_text_range()`` per page:
      the floor, every ratio is to it;
  (b) ``ours parser``: ``chunking.parsers.pdf.parse`` from the file (stream pre-scan, text, clean-up, table gate
      and pdfplumber on the gated pages, furniture and table-of-contents detection);
  (c) ``ours stage 1``: ``run_stage_one`` on the file as the Functions app gets it (a ``BlobFile``), with the
      default settings (``PARSE_ISOLATION=process``: every read in a child process; the offline splitter and
      records; local ledger, payloads in memory), ``force`` so every round parses; and ``ours stage 1
      (in-line)``, the same with ``PARSE_ISOLATION=inline`` (the difference is what isolation costs);
  (d) peers: ``pypdf`` page by page as azure-search-openai-demo's local PDF parser reads it
      (``PdfReader(...).pages``, ``extract_text()`` per page, offsets summed); LangChain's ``PyPDFLoader`` and
      ``PyPDFium2Loader`` (langchain-community); ``pdfplumber`` alone (``extract_text()`` per page).
      ``unstructured``'s fast PDF strategy is not measured: ``unstructured[pdf]`` would replace this venv's torch
      and pypdf versions (and pull CUDA wheels), which the shared venv must not do.

Per file and in total: pages/s and MB/s from the median round, the minimum seconds, and the ratio to (a): the
median over rounds of (contender's seconds / pdfium's seconds in the same round). A peer that fails on a file
shows ``failed`` (its error on stderr). ``--cpu`` times this process's CPU seconds instead of wall seconds:
steadier when other work shares the machine, but blind to the parse child (its row is left out). Requirements:
``benchmarks/requirements.txt``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_pages import ROOT, files_with_suffixes
from bench_args import at_least, existing  # noqa: E402

MB = 1024 * 1024
BARE = "pdfium"
Runner = Callable[[Path], int]  # reads one PDF file, returns the pages it read


def corpus(extra: list[Path]) -> list[Path]:
    """The PDFs of the corpus folders and of *extra* (files or folders), each content once (first seen wins)."""
    return files_with_suffixes((".pdf",), extra)


def bare_pdfium(path: Path) -> int:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(str(path))
    try:
        for index in range(len(document)):
            page = document[index]
            text_page = page.get_textpage()
            text_page.get_text_range()
            text_page.close()
            page.close()
        return len(document)
    finally:
        document.close()


def ours_parser(path: Path) -> int:
    from chunking.parsers import pdf

    return sum(1 for _ in pdf.parse(path, source=path.name))


def ours_stage_one(state_dir: Path, isolation: str = "process") -> Runner:
    import dataclasses

    from chunking.pipeline.stage_one import run_stage_one
    from chunking.services import make_ledger
    from chunking.settings import Settings
    from chunking.storage import BlobFile
    from chunking.storage.claim_check import MemoryPayloadStore

    settings = dataclasses.replace(Settings.from_env({"PARSE_ISOLATION": isolation}), state_dir=state_dir)
    ledger, payloads = make_ledger(settings), MemoryPayloadStore()

    def run(path: Path) -> int:
        data = path.read_bytes()
        blob = BlobFile(path, len(data), hashlib.sha256(data).hexdigest(), "")
        del data
        result = run_stage_one(blob, source=path.name, container="bench", settings=settings, payloads=payloads,
                               ledger=ledger, force=True)
        if result.error:
            raise RuntimeError(result.error)
        return result.pages

    return run


def pypdf_demo(path: Path) -> int:
    """pypdf as azure-search-openai-demo's local PDF parser uses it: every page's ``extract_text()``, with the
    running offset of the page texts before it."""
    from pypdf import PdfReader

    offset, pages = 0, 0
    for page in PdfReader(path).pages:
        text = page.extract_text()
        offset += len(text)
        pages += 1
    return pages


def langchain(loader_name: str) -> Runner:
    def run(path: Path) -> int:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from langchain_community import document_loaders

            return len(getattr(document_loaders, loader_name)(str(path)).load())

    return run


def pdfplumber_alone(path: Path) -> int:
    import pdfplumber

    pages = 0
    with pdfplumber.open(path) as pdf:
        for page in pdf.pages:
            page.extract_text()
            page.close()
            pages += 1
    return pages


def contenders(state_dir: Path, peers: bool, cpu: bool) -> dict[str, Runner]:
    runners: dict[str, Runner] = {BARE: bare_pdfium, "ours parser": ours_parser}
    if not cpu:  # its parse runs in another process, whose CPU time this one does not see
        runners["ours stage 1"] = ours_stage_one(state_dir)
    runners["ours stage 1 (in-line)"] = ours_stage_one(state_dir, "inline")
    if peers:
        runners.update({"pypdf (demo's local parser)": pypdf_demo, "langchain PyPDFLoader": langchain("PyPDFLoader"),
                        "langchain PyPDFium2Loader": langchain("PyPDFium2Loader"), "pdfplumber": pdfplumber_alone})
    return runners


def measure(runners: dict[str, Runner], files: list[Path], rounds: int,
            clock: Callable[[], float] = time.perf_counter) -> dict[tuple[str, Path], list[float]]:
    """Seconds (of *clock*) per (contender, file) and round; a contender that failed on a file has no entry."""
    seconds: dict[tuple[str, Path], list[float]] = {}
    failed: set[tuple[str, Path]] = set()
    for path in files:  # warm-up: imports, PDFium's caches, the parse server
        for name, run in runners.items():
            try:
                run(path)
            except Exception as error:  # noqa: BLE001  # a peer failing on a file is a result, not the end
                print(f"# {name} failed on {path.name}: {type(error).__name__}: {error}", file=sys.stderr)
                failed.add((name, path))
        break
    for _ in range(rounds):
        for path in files:
            for name, run in runners.items():
                if (name, path) in failed:
                    continue
                start = clock()
                try:
                    run(path)
                except Exception as error:  # noqa: BLE001  # as in the warm-up
                    print(f"# {name} failed on {path.name}: {type(error).__name__}: {error}", file=sys.stderr)
                    failed.add((name, path))
                    seconds.pop((name, path), None)
                    continue
                seconds.setdefault((name, path), []).append(clock() - start)
    return seconds


def report(runners: dict[str, Runner], files: list[Path], pages: dict[Path, int],
           seconds: dict[tuple[str, Path], list[float]]) -> None:
    print(f"{'file':<34}{'contender':<30}{'pages':>6}{'median s':>10}{'min s':>9}{'pages/s':>9}{'MB/s':>7}"
          f"{'ratio':>7}")
    totals: dict[str, list[float]] = {}
    for path in [*files, None]:
        for name in runners:
            if path is None:
                rounds = totals.get(name)
                if rounds is None or any((name, f) not in seconds for f in files):
                    continue
                label, n, size = "TOTAL", sum(pages.values()), sum(f.stat().st_size for f in files)
                bare = totals[BARE]
            else:
                rounds = seconds.get((name, path))
                label, n, size = path.name[:33], pages[path], path.stat().st_size
                if rounds is None:
                    print(f"{label:<34}{name:<30}{'failed':>6}")
                    continue
                totals[name] = [a + b for a, b in zip(totals.get(name, [0.0] * len(rounds)), rounds)]
                bare = seconds[(BARE, path)]
            median = statistics.median(rounds)
            ratio = statistics.median(t / b for t, b in zip(rounds, bare))
            print(f"{label:<34}{name:<30}{n:>6}{median:>10.3f}{min(rounds):>9.3f}{n / median:>9.1f}"
                  f"{size / MB / median:>7.2f}{ratio:>7.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=existing, action="append", default=[],
                        help="another folder of PDFs (repeatable)")
    parser.add_argument("--rounds", type=at_least(1), default=5, help="timed rounds (every contender on every file)")
    parser.add_argument("--scale", type=at_least(0), default=0,
                        help="add a synthetic PDF of the English manual's text ×N")
    parser.add_argument("--no-peers", action="store_true",
                        help="only PDFium, our parser and our stage 1 (no pypdf, LangChain or pdfplumber)")
    parser.add_argument("--cpu", action="store_true",
                        help="this process's CPU seconds instead of wall seconds (steadier on a loaded machine; "
                             "leaves out the stage-1 row that parses in a child process)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        files = corpus(args.corpus)
        if args.scale:
            from pipeline_bench import base_pages, distinct_copies, write_pdf

            scaled = Path(temp) / f"amc-text-x{args.scale}.pdf"
            write_pdf(distinct_copies(base_pages(), args.scale), scaled)
            files.append(scaled)
        if not files:
            sys.exit("no PDF found")
        state = Path(temp) / "state"
        state.mkdir()
        runners = contenders(state, peers=not args.no_peers, cpu=args.cpu)
        pages = {path: bare_pdfium(path) for path in files}
        versions = ", ".join(f"{d} {_version(d)}" for d in ("pypdfium2", "pdfplumber", "pypdf", "langchain-community"))
        print(f"# {len(files)} PDFs, {sum(pages.values())} pages, {sum(f.stat().st_size for f in files) / MB:.1f} MB; "
              f"{args.rounds} round{'' if args.rounds == 1 else 's'}; {versions}; Python {sys.version.split()[0]}; "
              f"{os.cpu_count()} CPUs")
        print(f"# {'CPU' if args.cpu else 'wall'} seconds")
        report(runners, files, pages, measure(runners, files, args.rounds,
                                              time.process_time if args.cpu else time.perf_counter))


def _version(distribution: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return "not installed"


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
