"""How tables in text PDFs are found: pdfplumber on every page against PDFium's geometry as a gate for it.

Run by hand from the repository root:

    .venv/bin/python benchmarks/pdf_tables.py [FILE.pdf ...]     # default: the corpus manuals

Rows, per file:
  pypdfium2 text       PDFium's text extraction of every page (what the PDF parser does without tables)
  pypdfium2 gate       the geometry gate of ``chunking.parsers.pdf.tables`` on every page: pages passing it
  pdfplumber all       ``find_tables`` on every page: tables found, and those of at least 2 rows × 2 columns
  pdfplumber gated     ``find_tables`` on the pages passing the gate only (what the parser does)

A "table" of pdfplumber with one column is the frame of a code listing or a box, not a table.
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from pathlib import Path

import pdfplumber
import pypdfium2 as pdfium

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from chunking.parsers import ReadContext  # noqa: E402
from chunking.parsers.pdf.tables import page_has_grid  # noqa: E402
from tests.sample_documents import document_path  # noqa: E402
from bench_args import existing  # noqa: E402

_FILES = ("amc-manual.en.pdf", "amc-manual.ja.pdf")


def _plumber(data: bytes, pages: list[int] | None) -> tuple[float, int, list[int]]:
    started = time.perf_counter()
    found, real = 0, []
    wanted = None if pages is None else [i + 1 for i in pages]
    with pdfplumber.open(io.BytesIO(data), pages=wanted) as pdf:
        for page in pdf.pages:
            for table in page.find_tables():
                found += 1
                rows = table.extract()
                if len(rows) >= 2 and max(len(row) for row in rows) >= 2:
                    real.append(page.page_number - 1)
            page.close()
    return time.perf_counter() - started, found, real


def _gated(document: pdfium.PdfDocument, count: int) -> list[int]:
    """The 0-based pages passing the parser's geometry gate, each page loaded for the gate alone."""
    gated = []
    for index in range(count):
        page = document[index]
        try:
            if page_has_grid(page, index, ReadContext()):
                gated.append(index)
        finally:
            page.close()
    return gated


def main(paths: list[Path]) -> None:
    print(f"{'file':<20} {'method':<18} {'seconds':>8} {'pages':>6}  result")
    for path in paths:
        data = path.read_bytes()
        started = time.perf_counter()
        document = pdfium.PdfDocument(data)
        count = len(document)
        for index in range(count):
            page = document[index]
            text_page = page.get_textpage()
            text_page.get_text_range()
            text_page.close()
            page.close()
        text_seconds = time.perf_counter() - started
        started = time.perf_counter()
        gated = _gated(document, count)
        gate_seconds = time.perf_counter() - started
        document.close()
        all_seconds, all_found, all_real = _plumber(data, None)
        gated_seconds, _, gated_real = _plumber(data, gated)
        name = path.name
        print(f"{name:<20} {'pypdfium2 text':<18} {text_seconds:>8.2f} {count:>6}")
        print(f"{name:<20} {'pypdfium2 gate':<18} {gate_seconds:>8.2f} {count:>6}  pages passing: {gated}")
        print(f"{name:<20} {'pdfplumber all':<18} {all_seconds:>8.2f} {count:>6}  {all_found} found, "
              f"{len(all_real)} of 2x2 or more on pages {sorted(set(all_real))}")
        print(f"{name:<20} {'pdfplumber gated':<18} {gated_seconds:>8.2f} {len(gated):>6}  "
              f"{len(gated_real)} of 2x2 or more on pages {sorted(set(gated_real))}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("files", nargs="*", type=existing, metavar="FILE.pdf",
                        help=f"PDFs to measure (default: {', '.join(_FILES)})")
    main(parser.parse_args().files or [document_path(name) for name in _FILES])
