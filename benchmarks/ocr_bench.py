"""Local OCR: pages per second and peak memory per page, and the stage-1 child's memory bound with OCR in it.

A plain script, run by hand (never collected by pytest)::

    .venv/bin/python benchmarks/ocr_bench.py [--pages 4] [--lines 40]

The corpus is made here: *pages* A4 pages of *lines* lines of distinct English-like text each, drawn with Pillow's
own font at 150 DPI (10-point text is about 22 pixels high), saved as one scanned PDF (no text layer) and as PNG
files. Each measurement runs in a fresh Python process (peak RSS is per process):

- ``ours png``: ``chunking.parsers.parse_document`` on each PNG, in-line (the engine settings of
  ``chunking/parsers/ocr.py``: one thread, detection at 960 pixels, no angle classifier);
- ``ours pdf``: the scanned PDF through ``chunking.parsers.read_pages`` in-line (rendered at 150 DPI, then OCR);
- ``engine defaults png``: the peer: RapidOCR as it comes (``RapidOCR()``: all cores, detection on the whole
  image, angle classifier on), on the same PNGs;
- ``child pdf``: the scanned PDF read by the stage-1 child process of ``chunking.parsers.sandbox`` under its
  address-space limit (``STAGE1_MAX_MEMORY_MB``, default 1024): the child's peak RSS as it reports it, and
  whether the bound held (no ``out of memory`` reason).

Printed: seconds, pages/s, CPU seconds per page (of the measuring process: not for the child), peak RSS of the process (MB) and its growth over the process after imports, the
words recognised exactly (of the words drawn), and ratios ours / engine defaults. On a shared machine, compare
the ratios, not the seconds.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_args import at_least  # noqa: E402

_WORDS = ("harbour lighthouse keeper counted barrels turbine output quarter station wiring cables pump memo "
          "report north depot delivered invoice engineer survey river bridge valve pressure gauge spare parts "
          "schedule inspection").split()


def _peak_mb() -> float:
    with open("/proc/self/status") as status:
        return int(next(line for line in status if line.startswith("VmHWM")).split()[1]) / 1024


def _reset_peak() -> None:
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")


def make_corpus(folder: Path, pages: int, lines: int) -> list[str]:
    """Write ``page-N.png`` and ``scan.pdf`` into *folder*; return the words drawn, page by page."""
    from PIL import Image, ImageDraw, ImageFont

    rng = random.Random(7)
    font = ImageFont.load_default(size=22)
    drawn, images = [], []
    for n in range(pages):
        image = Image.new("RGB", (1240, 1754), "white")
        draw = ImageDraw.Draw(image)
        for i in range(lines):
            line = " ".join(rng.choice(_WORDS) for _ in range(9)) + f" {n * 100 + i}."
            drawn.extend(line.rstrip(".").split())
            draw.text((100, 100 + i * 38), line, font=font, fill="black")
        image.save(folder / f"page-{n}.png")
        images.append(image)
    (folder / "scan.pdf").write_bytes(_scan_pdf(images))
    return drawn


def _scan_pdf(images) -> bytes:
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format=(595, 842))
    for image in images:
        pdf.add_page()
        pdf.image(image, x=0, y=0, w=595, h=842)
    return bytes(pdf.output())


def worker(mode: str, folder: str) -> dict:
    """One measurement in this process (``--worker``)."""
    from chunking.parsers import ReadContext, ocr, parse_document, read_pages

    folder_path = Path(folder)
    pngs = sorted(folder_path.glob("page-*.png"))
    engine = None
    if mode == "engine defaults png":
        from rapidocr import RapidOCR

        engine = RapidOCR()
    elif mode != "child pdf":
        ocr.available()
        import numpy  # noqa: F401
        import rapidocr  # noqa: F401
    _reset_peak()
    base = _peak_mb()
    texts: list[str] = []
    child_peak_mb = 0.0
    bound = "held"
    start, cpu = time.perf_counter(), time.process_time()
    if mode == "ours png":
        for png in pngs:
            texts += [page.text for page in parse_document(png.read_bytes(), source=png.name)]
        count = len(pngs)
    elif mode == "engine defaults png":
        for png in pngs:
            result = engine(str(png))
            texts.append("\n".join(result.txts or ()))
        count = len(pngs)
    elif mode == "ours pdf":
        pages = list(read_pages(folder_path / "scan.pdf", source="scan.pdf", context=ReadContext()))
        texts += [page.text for page in pages]
        count = len(pages)
    else:
        import logging

        from chunking.parsers import ParseError
        from chunking.parsers.sandbox import read_pages_in_child
        from chunking.settings.isolation import ParseIsolation

        peaks: list[float] = []

        class _Peaks(logging.Handler):
            def emit(self, record):
                if "peak RSS" in record.getMessage():
                    peaks.append(float(record.args[-1]))

        log = logging.getLogger("chunking.parsers.sandbox")
        log.setLevel(logging.DEBUG)
        log.addHandler(_Peaks())
        limit = ParseIsolation().max_memory_mb
        try:
            pages = list(read_pages_in_child(folder_path / "scan.pdf", source="scan.pdf", context=ReadContext(),
                                             max_memory_mb=limit))
            texts += [page.text for page in pages]
        except ParseError as error:
            bound = f"failed: {error.reason}"
            pages = []
        count = len(pages)
        child_peak_mb = max(peaks, default=0.0)
        bound = f"{bound} ({limit} MB)"
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    return {"mode": mode, "pages": count, "seconds": seconds, "cpu_seconds": cpu, "peak_mb": _peak_mb(), "growth_mb": _peak_mb() - base,
            "child_peak_mb": child_peak_mb, "bound": bound, "words": " ".join(texts).split()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=at_least(1), default=4, help="pages to draw and read (default 4)")
    parser.add_argument("--lines", type=at_least(1), default=40, help="lines of words per page (default 40)")
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(*args.worker)))
        return
    with tempfile.TemporaryDirectory() as folder:
        drawn = make_corpus(Path(folder), args.pages, args.lines)
        rows = {}
        for mode in ("ours png", "engine defaults png", "ours pdf", "child pdf"):
            out = subprocess.run([sys.executable, __file__, "--worker", mode, folder], capture_output=True, text=True,
                                 cwd=ROOT, check=True).stdout.strip().splitlines()[-1]
            rows[mode] = json.loads(out)
    print(f"{args.pages} A4 pages of {args.lines} lines, {len(drawn)} words drawn\n")
    print(f"{'run':<22}{'pages':>6}{'seconds':>9}{'pages/s':>9}{'CPU s/page':>11}{'peak MB':>9}{'growth MB':>11}{'child MB':>10}"
          f"{'words ok':>10}  bound")
    for mode, row in rows.items():
        ok = _exact_words(drawn, row["words"])
        cpu = f"{row['cpu_seconds'] / row['pages']:.1f}" if mode != "child pdf" and row["pages"] else "-"
        print(f"{mode:<22}{row['pages']:>6}{row['seconds']:>9.1f}{row['pages'] / row['seconds']:>9.3f}{cpu:>11}"
              f"{row['peak_mb']:>9.0f}{row['growth_mb']:>11.0f}{row['child_peak_mb']:>10.0f}{ok:>9.1%}  "
              f"{row['bound'] if mode == 'child pdf' else ''}")
    ours, peer = rows["ours png"], rows["engine defaults png"]
    print(f"\nours / engine defaults (png): time ×{ours['seconds'] / peer['seconds']:.2f}, "
          f"CPU ×{ours['cpu_seconds'] / max(peer['cpu_seconds'], 1e-9):.2f}, "
          f"peak growth ×{ours['growth_mb'] / max(peer['growth_mb'], 1):.2f}")


def _exact_words(drawn: list[str], read: list[str]) -> float:
    """Share of the drawn words found, counted as multisets (order-free: a word read wrong is missing)."""
    from collections import Counter

    have = Counter(word.rstrip(".") for word in read)
    need = Counter(drawn)
    return sum(min(n, have[w]) for w, n in need.items()) / max(sum(need.values()), 1)


if __name__ == "__main__":
    main()
