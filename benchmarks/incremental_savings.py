"""Embedding tokens saved by reuse when one paragraph of a document changes.

Ingests a PDF made of the pages of ``amc-manual.en.pdf`` (both stages, in-process, offline embedder, a fresh
local index and ledger), then a second PDF, the same pages but one paragraph of one middle page rewritten, and
prints the embedding tokens and requests of each run and the share saved by reusing the vectors of unchanged
chunk text.

PDF bytes cannot be edited in place with the libraries we ship, so both versions are written from the parsed
pages by ``pipeline_bench.write_pdf`` (plain text pages, ASCII, long pages cut); each is then a real upload, read
by the whole pipeline from its bytes.

    .venv/bin/python benchmarks/incremental_savings.py [PDF]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from chunking.parsers import parse_document  # noqa: E402
from chunking.pipeline import stage_two as pipeline  # noqa: E402
from chunking.services import make_embedder, make_index, make_ledger  # noqa: E402
from chunking.settings import Settings  # noqa: E402
from chunking.storage.claim_check import MemoryPayloadStore  # noqa: E402
from pipeline_bench import write_pdf  # noqa: E402
from bench_args import existing  # noqa: E402


def run(data: bytes, source: str, settings: Settings, services) -> tuple[int, int, int]:
    embedder, index, ledger = services
    payloads = MemoryPayloadStore()
    one = pipeline.run_stage_one(data, source=source, container="bench", settings=settings, payloads=payloads,
                                 ledger=ledger)
    tokens = requests = 0
    for message in one.messages:
        two = pipeline.run_stage_two(message, settings=settings, embedder=embedder, index=index, payloads=payloads,
                                     ledger=ledger)
        tokens += two.embedding_tokens
        requests += two.embedding_requests
    return one.chunks, tokens, requests


def main(pdf: Path) -> None:
    pages = [page.text for page in parse_document(pdf.read_bytes(), source=pdf.name)]
    target = len(pages) // 2
    text = pages[target]
    cut = text.find(". ", len(text) // 3) + 2  # a sentence start near the page's first third
    edited = [*pages[:target], text[:cut] + "This paragraph was rewritten for the benchmark. " + text[cut:],
              *pages[target + 1:]]
    with tempfile.TemporaryDirectory() as state:
        versions = []
        for name, texts in (("original.pdf", pages), ("edited.pdf", edited)):
            write_pdf(texts, Path(state) / name)
            versions.append((Path(state) / name).read_bytes())
        settings = Settings(state_dir=Path(state))
        index = make_index(settings)
        index.ensure()
        services = (make_embedder(settings), index, make_ledger(settings))
        chunks, full_tokens, full_requests = run(versions[0], pdf.name, settings, services)
        chunks2, edit_tokens, edit_requests = run(versions[1], pdf.name, settings, services)

    print(f"document: {pdf.name}, {len(pages)} pages; one paragraph of page {target + 1} changed")
    print(f"{'run':<26}{'chunks':>8}{'emb tokens':>12}{'requests':>10}")
    print(f"{'full ingest':<26}{chunks:>8}{full_tokens:>12}{full_requests:>10}")
    print(f"{'after one-paragraph edit':<26}{chunks2:>8}{edit_tokens:>12}{edit_requests:>10}")
    print(f"embedding tokens saved by reuse: {1 - edit_tokens / full_tokens:.2%}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("pdf", nargs="?", type=existing, default=ROOT / "samples" / "amc-manual.en.pdf", metavar="PDF",
                        help="the document to ingest and edit (default: samples/amc-manual.en.pdf)")
    main(parser.parse_args().pdf)
