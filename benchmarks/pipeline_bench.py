"""Throughput and peak memory of stage 1 (parse + split + batch) and stage 2 (offline embedder, local index).

A plain script, run by hand (never collected by pytest)::

    .venv/bin/python benchmarks/pipeline_bench.py [--scales 1 4 16] [--no-stage-two-scaled]

Two inputs, each measured in a fresh worker process (``resource``'s peak RSS is per process):

- the corpus (``benchmarks/corpus_pages.py``: every distinct document of ``samples/``, ``tests/data/`` and
  ``../shared/corpus``), stage 1 then stage 2 over all its messages;
- synthetic scale-ups of the English AMC manual's text, as a PDF and as a .txt file, ×1, ×4, ×16: copy ``k > 0``
  of every page has its words shuffled (seeded), so the pages are distinct text, not repeats. The PDF is written
  here (Helvetica, ASCII) and read back by our PDF parser like any upload.

Per run: documents/s, pages/s, input MB/s, chunks/s of each stage, and peak RSS: the worker's peak after its
imports, a warm-up split and a warm-up language detection (baseline: the tokenizer tables and the language
identifier, about 100 MB, are loaded once per process), and after each stage. Stage 1's growth (peak after it
minus baseline) is compared with the target of at most 2× the input's bytes + 100 MB. Stage 1 parses in a child
process (``PARSE_ISOLATION=process``, the default), whose memory is not the worker's: ``stage_one_memory.py``
measures it.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_pages import ROOT, corpus_files  # noqa: E402
from bench_args import at_least  # noqa: E402

MB = 1024 * 1024
BASE_PDF = "amc-manual.en.pdf"
LINE_CHARS, PAGE_LINES = 95, 64


def _peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB


def worker(files: list[str], stage_two: bool) -> dict:
    """Run both stages over *files* in this process and return the figures (printed as JSON by ``--worker``)."""
    from chunking.documents.language import detect_language
    from chunking.pipeline import stage_two as pipeline
    from chunking.services import make_embedder, make_index, make_ledger
    from chunking.settings import Settings
    from chunking.splitters import SentenceTextSplitter
    from chunking.storage.claim_check import MemoryPayloadStore
    from chunking.tokens import get_backend

    with tempfile.TemporaryDirectory() as state:
        settings = Settings(state_dir=Path(state))
        index = make_index(settings)
        index.ensure()
        embedder, ledger, payloads = make_embedder(settings), make_ledger(settings), MemoryPayloadStore()
        list(SentenceTextSplitter().split_text("Warm-up. The tokenizer tables are built once per process."))
        detect_language(["Warm-up. The language identifier is loaded once per process, at its first document."])
        out: dict = {"backend": get_backend().name, "baseline_rss": _peak_rss_bytes(), "documents": 0, "pages": 0,
                     "chunks": 0, "bytes": 0, "failed": []}
        messages: list[str] = []
        start, start_cpu = time.perf_counter(), time.process_time()
        for name in files:
            data = Path(name).read_bytes()
            one = pipeline.run_stage_one(data, source=Path(name).name, container="bench", settings=settings,
                                         payloads=payloads, ledger=ledger)
            del data
            if one.error:
                out["failed"].append(f"{Path(name).name}: {one.error}")
                continue
            out["documents"] += 1
            out["pages"] += one.pages
            out["chunks"] += one.chunks
            out["bytes"] += one.size_bytes
            messages += one.messages
        out["stage1_seconds"] = time.perf_counter() - start
        out["stage1_cpu"] = time.process_time() - start_cpu
        out["stage1_rss"] = _peak_rss_bytes()
        if stage_two:
            start, start_cpu = time.perf_counter(), time.process_time()
            for message in messages:
                pipeline.run_stage_two(message, settings=settings, embedder=embedder, index=index,
                                       payloads=payloads, ledger=ledger)
            out["stage2_seconds"] = time.perf_counter() - start
            out["stage2_cpu"] = time.process_time() - start_cpu
            out["stage2_rss"] = _peak_rss_bytes()
        return out


def _run_worker(files: list[Path], stage_two: bool) -> dict:
    spec = json.dumps({"files": [str(f) for f in files], "stage_two": stage_two})
    done = subprocess.run([sys.executable, __file__, "--worker", spec], capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        sys.exit(f"worker failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# ---- synthetic inputs --------------------------------------------------------------------------------------

#: The tags of the tables the PDF parser renders as ``<figure><table>…`` (docs/parsers.md).
_TABLE_TAGS = re.compile(r"</?(?:figure|figcaption|table|thead|tbody|tr|th|td)\b[^>]*>")


def base_pages() -> list[str]:
    """The manual's non-blank pages as text, its tables' markup dropped (cell text kept): written into a PDF,
    the tags would be read back as text and, shuffled into the scale-ups, open figure blocks that span pages."""
    from chunking.parsers import parse_document

    path = next(p for p in corpus_files() if p.name == BASE_PDF)
    pages = [_TABLE_TAGS.sub(" ", p.text) for p in parse_document(path.read_bytes(), source=path.name)]
    return [text for text in pages if text.strip()]


def distinct_copies(pages: list[str], scale: int) -> list[str]:
    """The pages, then ``scale - 1`` more copies whose words are shuffled per page (seeded by copy and page)."""
    out = list(pages)
    for k in range(1, scale):
        for i, text in enumerate(pages):
            words = text.split()
            random.Random(k * 100_003 + i).shuffle(words)
            out.append(" ".join(words))
    return out


def _pdf_lines(text: str) -> list[str]:
    lines: list[str] = []
    for raw in text.encode("ascii", "replace").decode("ascii").splitlines():
        while len(raw) > LINE_CHARS:
            cut = raw.rfind(" ", 0, LINE_CHARS)
            cut = cut if cut > 0 else LINE_CHARS
            lines.append(raw[:cut])
            raw = raw[cut:].lstrip()
        lines.append(raw)
    return lines[:PAGE_LINES * 2]


def write_pdf(pages: list[str], path: Path) -> None:
    """A plain PDF 1.4: one page per text (Helvetica 7 pt, ASCII; long pages are cut), cross-reference table."""
    objects: list[bytes] = [b"", b""]  # 1: catalog, 2: page tree (filled in below)
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")  # 3
    kids = []
    for text in pages:
        ops = ["BT /F1 7 Tf 8 TL 30 815 Td"]
        for line in _pdf_lines(text):
            escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            ops.append(f"({escaped}) Tj T*")
        ops.append("ET")
        stream = "\n".join(ops).encode("ascii")
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
        content = len(objects)
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> "
                       b">> /Contents %d 0 R >>" % content)
        kids.append(len(objects))
    objects[0] = b"<< /Type /Catalog /Pages 2 0 R >>"
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (" ".join(f"{k} 0 R" for k in kids).encode(), len(kids))
    body, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, obj in enumerate(objects, 1):
        offsets.append(len(body))
        body += b"%d 0 obj\n%s\nendobj\n" % (number, obj)
    xref = len(body)
    body += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    body += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    body += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    path.write_bytes(bytes(body))


# ---- report ----------------------------------------------------------------------------------------------

def _rate(n: float, seconds: float) -> str:
    return f"{n / seconds:,.1f}" if seconds > 0 else "-"


def report(label: str, r: dict, stage_two: bool) -> None:
    s1 = r["stage1_seconds"]
    growth = r["stage1_rss"] - r["baseline_rss"]
    bound = 2 * r["bytes"] + 100 * MB
    print(f"| {label} | 1 | {r['documents']} | {r['pages']} | {r['bytes'] / MB:.2f} | {r['chunks']} | {s1:.2f} | "
          f"{_rate(r['documents'], s1)} | {_rate(r['pages'], s1)} | {_rate(r['bytes'] / MB, s1)} | "
          f"{_rate(r['chunks'], s1)} | {r['baseline_rss'] / MB:.0f} | {r['stage1_rss'] / MB:.0f} | "
          f"{growth / MB:.0f} ({'≤' if growth <= bound else '>'} {bound / MB:.0f}) |")
    if stage_two and "stage2_seconds" in r:
        s2 = r["stage2_seconds"]
        print(f"| {label} | 2 | {r['documents']} | {r['pages']} | {r['bytes'] / MB:.2f} | {r['chunks']} | {s2:.2f} | "
              f"{_rate(r['documents'], s2)} | {_rate(r['pages'], s2)} | {_rate(r['bytes'] / MB, s2)} | "
              f"{_rate(r['chunks'], s2)} | | {r['stage2_rss'] / MB:.0f} | |")
    for failure in r["failed"]:
        print(f"# {label}: failed {failure}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--scales", type=at_least(1), nargs="+", default=[1, 4, 16], help="synthetic scale-ups")
    parser.add_argument("--no-stage-two-scaled", action="store_true", help="stage 1 only for the scale-ups")
    args = parser.parse_args()
    if args.worker:
        spec = json.loads(args.worker)
        print(json.dumps(worker(spec["files"], spec["stage_two"])))
        return
    print("| input | stage | docs | pages | MB | chunks | seconds | docs/s | pages/s | MB/s | chunks/s | "
          "baseline RSS MB | peak RSS MB | stage-1 growth MB (target) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    files = corpus_files()
    corpus = _run_worker([f for f in files if f.name != "SOURCES.md"], True)
    report("corpus", corpus, True)
    print(f"# token backend: {corpus['backend']}", file=sys.stderr)
    pages = base_pages()
    growth: dict[str, list[tuple[int, float, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for scale in args.scales:
            copies = distinct_copies(pages, scale)
            pdf, txt = Path(tmp) / f"scaled-x{scale}.pdf", Path(tmp) / f"scaled-x{scale}.txt"
            write_pdf(copies, pdf)
            txt.write_text("\n\n".join(copies), encoding="utf-8")
            for path in (pdf, txt):
                r = _run_worker([path], not args.no_stage_two_scaled)
                report(f"{path.suffix[1:]} ×{scale}", r, not args.no_stage_two_scaled)
                growth.setdefault(path.suffix[1:], []).append(
                    (scale, r["bytes"] / MB, (r["stage1_rss"] - r["baseline_rss"]) / MB))
                path.unlink()
    for kind, rows in growth.items():
        steps = ", ".join(f"×{s}: {mb:.1f} MB in, +{g:.0f} MB" for s, mb, g in rows)
        print(f"# {kind} stage-1 RSS growth by scale: {steps}")


if __name__ == "__main__":
    main()
