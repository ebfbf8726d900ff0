"""Compare PDF text extractors on the corpus manuals: speed, size and text quality.

Run by hand from the repository root (needs pypdf from requirements-dev.txt):

    .venv/bin/python benchmarks/pdf_parsers.py [FOLDER]     # default: the test documents in the repository

Columns, per file and extractor:
  seconds      wall time to open the PDF and extract every page (one run, after one warm-up import)
  pages, chars page count and total characters extracted
  glued        runs of 20+ ASCII letters: justified lines whose word spaces were lost ("Themaximumnumber")
  eol-hyphens  line-end hyphens left splitting a word ("com-\\nmand") or marked by PDFium (U+FFFE/U+0002)
  cjk-spaced   a space between two CJK characters (letter-spaced Japanese/Chinese lines)
  ligatures    ligature code points U+FB00-FB06 ("ﬁ" instead of "fi")
  replaced     U+FFFD replacement characters (glyphs the extractor could not map to text)

The last row of each file is our parser (``chunking.parsers.pdf``: pypdfium2 plus its clean-up).
pymupdf is not measured: it is AGPL.
"""

from __future__ import annotations

import argparse
import io
import logging
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pypdf
import pypdfium2 as pdfium

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from chunking.parsers import pdf as chunking_pdf  # noqa: E402
from tests.sample_documents import document_path  # noqa: E402
from bench_args import existing  # noqa: E402

_FILES = ("amc-manual.en.pdf", "amc-manual.ja.pdf")

_CJK = r"[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]"
_METRICS: dict[str, Callable[[str], int]] = {
    "glued": lambda text: len(re.findall(r"[A-Za-z]{20,}", text)),
    "eol-hyphens": lambda text: len(re.findall(r"[a-z]-\r?\n[a-z]|[\ufffe\x02]", text)),
    "cjk-spaced": lambda text: len(re.findall(f"(?<={_CJK}) (?={_CJK})", text)),
    "ligatures": lambda text: len(re.findall("[\ufb00-\ufb06]", text)),
    "replaced": lambda text: text.count("\ufffd"),
}


def extract_pypdfium2(data: bytes) -> list[str]:
    document = pdfium.PdfDocument(data)
    texts = []
    for index in range(len(document)):
        page = document[index]
        text_page = page.get_textpage()
        texts.append(text_page.get_text_range())
        text_page.close()
        page.close()
    document.close()
    return texts


def extract_pypdf(data: bytes) -> list[str]:
    reader = pypdf.PdfReader(io.BytesIO(data))
    return [page.extract_text() for page in reader.pages]


def extract_chunking(data: bytes) -> list[str]:
    return [page.text for page in chunking_pdf.parse(data, source="benchmark.pdf")]


_EXTRACTORS: dict[str, Callable[[bytes], list[str]]] = {
    f"pypdfium2 {pdfium.PYPDFIUM_INFO}": extract_pypdfium2,
    f"pypdf {pypdf.__version__}": extract_pypdf,
    "chunking.parsers.pdf": extract_chunking,
}


def main(corpus: Path | None) -> None:
    # pypdf logs a warning per font it cannot decode without the optional fontTools; the counts show the effect.
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    header = ["file", "extractor", "seconds", "pages", "chars", *_METRICS]
    rows = []
    for name in _FILES:
        data = (corpus / name if corpus else document_path(name)).read_bytes()
        for label, extract in _EXTRACTORS.items():
            started = time.perf_counter()
            texts = extract(data)
            seconds = time.perf_counter() - started
            text = "\n".join(texts)
            rows.append(
                [name, label, f"{seconds:.2f}", str(len(texts)), f"{sum(map(len, texts)):,}"]
                + [f"{metric(text):,}" for metric in _METRICS.values()]
            )
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, ["-" * width for width in widths], *rows]:
        print("  ".join(cell.ljust(width) if i < 2 else cell.rjust(width) for i, (cell, width) in
                        enumerate(zip(row, widths))))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("folder", nargs="?", type=existing, metavar="FOLDER",
                        help=f"a folder holding {' and '.join(_FILES)} (default: the repository's copies)")
    main(parser.parse_args().folder)
