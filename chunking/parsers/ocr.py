"""Reading text from pixels on this machine: image files and PDF pages without a text layer, with RapidOCR
(``rapidocr``, Apache-2.0) on ONNX Runtime (MIT). Nothing is downloaded at run time: the ``rapidocr`` wheel ships
its detection and recognition models (PP-OCRv6 small, Apache-2.0, about 31 MB) inside itself, and the engine is
pointed at them. It is the extra ``ocr`` (``pip install 'chunking[ocr]'`` or ``-r requirements-ocr.txt``), not a
default dependency: with OpenCV and ONNX Runtime it adds about 300 MB installed to the deployment package
(docs/parsers.md#images-and-scanned-pdfs). Without it, an image or a scanned page is refused with a reason naming
the extra (``NEEDS_OCR``).

What this module adds to the engine:

* **Settings chosen for a bounded child process** (``chunking.parsers.sandbox``): one inference thread (the
  Functions host runs several documents at once on 2 cores), no angle classifier (it turned upright Latin lines
  upside down on rendered pages), detection on the page scaled so its longer side is at most 960 pixels
  (PaddleOCR's own default): a rendered A4 page then peaks near 350-400 MB resident and 900 MB of address
  space, against about 660 MB and 1.3 GB at full size, and the lines it finds are recognised from the full-size
  page (figures: docs/parsers.md#images-and-scanned-pdfs, ``benchmarks/ocr_bench.py``).
* **Reading order** (``reading_order``): the engine returns text lines in no promised order. They are put in
  order by a recursive XY cut (Nagy and Seth, "Hierarchical representation of optically scanned documents",
  1984): a region is cut at a vertical gutter (columns, left to right) where one crosses it whole, else at its
  wide horizontal gaps (paragraphs, top to bottom), until a region is a run of lines; boxes that share a
  line's height are one line, joined left to right.
* **Cost**: every page read is counted in the document's notes (``local OCR: N pages``), which the ledger keeps.

The engine is built once per process, on first use, behind a lock (ONNX Runtime sessions may run concurrently,
but the engine's pre- and post-processing keep state).
"""

from __future__ import annotations

import functools
import logging
import re
import threading
from dataclasses import dataclass
from typing import Any

from chunking.parsers._common import ParseError, ReadContext

__all__ = ["DETECT_MAX_SIDE_PX", "INSTALL_HINT", "NEEDS_OCR", "OcrLine", "available", "count_page", "read_image",
           "reading_order", "recognize"]

log = logging.getLogger(__name__)

#: What to install for local OCR.
INSTALL_HINT = "install the OCR extra (pip install 'chunking[ocr]', or pip install -r requirements-ocr.txt)"
#: The reason an image (or a PDF page without a text layer) is not read: neither local OCR nor Document
#: Intelligence is there.
NEEDS_OCR = f"needs OCR: {INSTALL_HINT}, or set DOCUMENT_INTELLIGENCE_ENDPOINT to read it with Document Intelligence"
#: The longer side, in pixels, of the image text lines are detected on (PaddleOCR's default ``det_limit_side_len``).
DETECT_MAX_SIDE_PX = 960
#: Lines recognised with a confidence below this are dropped (the engine's own default ``text_score``).
MIN_SCORE = 0.5

_ENGINE_LOCK = threading.Lock()
_NOTE = re.compile(r"^local OCR: (\d+) pages?$")


@dataclass(frozen=True)
class OcrLine:
    """One text line found on an image: its text and its box in pixels (``x0 < x1``, ``y0 < y1``, origin top
    left)."""

    text: str
    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def height(self) -> float:
        return self.y1 - self.y0


@functools.cache
def available() -> bool:
    """True when the OCR extra is installed (``rapidocr`` and ``onnxruntime`` are found). Nothing is imported
    here: ONNX Runtime and OpenCV are loaded only when a page or a picture is read, so a process (the parse
    server whose children every document inherits) that never reads one never maps them."""
    from importlib.util import find_spec

    return find_spec("rapidocr") is not None and find_spec("onnxruntime") is not None


@functools.cache
def _engine() -> Any:
    from rapidocr import RapidOCR

    logging.getLogger("RapidOCR").setLevel(logging.ERROR)
    return RapidOCR(params={
        "Global.log_level": "error",
        "Global.use_cls": False,
        "Global.text_score": MIN_SCORE,
        "Det.limit_type": "max",
        "Det.limit_side_len": DETECT_MAX_SIDE_PX,
        "Rec.rec_batch_num": 1,
        "EngineConfig.onnxruntime.intra_op_num_threads": 1,
        "EngineConfig.onnxruntime.inter_op_num_threads": 1,
    })


def recognize(image: Any, *, source: str) -> list[OcrLine]:
    """The text lines the engine finds on *image* (a ``PIL.Image.Image``, any mode), in the engine's order.

    Raises:
        ParseError: ``needs OCR: install the OCR extra …`` when the extra is missing; ``out of memory while
            parsing …`` when ONNX Runtime cannot allocate (the stage-1 child's address-space limit).
    """
    if not available():
        raise ParseError(source, NEEDS_OCR)
    import numpy as np

    pixels = np.asarray(_on_white(image))
    with _ENGINE_LOCK:
        engine = _engine()
        try:
            result = engine(pixels)
        except MemoryError:
            raise
        except Exception as error:
            if "bad_alloc" in str(error) or "Failed to allocate" in str(error):
                raise MemoryError(str(error)) from None
            raise
    boxes, texts = getattr(result, "boxes", None), getattr(result, "txts", None)
    if boxes is None or texts is None:
        return []
    lines = []
    for box, text in zip(boxes, texts):
        xs = [float(point[0]) for point in box]
        ys = [float(point[1]) for point in box]
        text = " ".join(str(text).split())
        if text:
            lines.append(OcrLine(text, min(xs), min(ys), max(xs), max(ys)))
    return lines


def _on_white(image: Any) -> Any:
    """*image* as RGB, its transparent pixels white: a diagram or logo saved with a transparent background keeps
    arbitrary colours (often black) under it, which a plain conversion would show, hiding dark text."""
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        from PIL import Image

        rgba = image.convert("RGBA")
        white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(white, rgba).convert("RGB")
    return image.convert("RGB")


def read_image(image: Any, *, source: str) -> str:
    """The text of *image* in reading order (``reading_order``), ending with ``\\n``; ``""`` when it holds none.

    Raises:
        ParseError: as ``recognize``.
    """
    return reading_order(recognize(image, source=source))


def count_page(context: ReadContext) -> None:
    """Count one page read by local OCR in *context*'s notes: one note, ``local OCR: N pages``."""
    for i, note in enumerate(context.notes):
        match = _NOTE.match(note)
        if match:
            context.notes[i] = _pages_note(int(match.group(1)) + 1)
            return
    context.note(_pages_note(1))


def _pages_note(pages: int) -> str:
    return f"local OCR: {pages} page" + ("" if pages == 1 else "s")


def reading_order(lines: list[OcrLine]) -> str:
    """Text lines found on one page, as the page's text in reading order.

    A recursive XY cut: a region is cut at the vertical gutters wider than one text line's height (the median
    box height) that cross it from top to bottom (its columns, read left to right), else at the horizontal gaps
    wider than that (its paragraphs, top to bottom); a region that cannot be cut is one block. In a block, boxes
    whose vertical centres lie within each other's heights are one line, read left to right and joined with a
    space. Lines are separated by ``\\n``, blocks by a blank line.

    Example: two columns of two lines each, ``A1 A2`` left and ``B1 B2`` right, give ``"A1\\nA2\\n\\nB1\\nB2\\n"``.

    Returns:
        The text, ending with ``\\n``; ``""`` for no lines.
    """
    if not lines:
        return ""
    heights = sorted(line.height for line in lines)
    unit = max(heights[len(heights) // 2], 1.0)
    blocks: list[list[OcrLine]] = []
    _cut(lines, unit, blocks)
    return "\n\n".join(_block_text(block) for block in blocks) + "\n"


def _cut(lines: list[OcrLine], unit: float, out: list[list[OcrLine]]) -> None:
    for axis, gap in ((_x_span, unit), (_y_span, unit)):
        parts = _split(lines, axis, gap)
        if len(parts) > 1:
            for part in parts:
                _cut(part, unit, out)
            return
    out.append(lines)


def _x_span(line: OcrLine) -> tuple[float, float]:
    return line.x0, line.x1


def _y_span(line: OcrLine) -> tuple[float, float]:
    return line.y0, line.y1


def _split(lines: list[OcrLine], span, min_gap: float) -> list[list[OcrLine]]:
    """*lines* grouped by the gaps of their projection on one axis (*span* gives each line's interval): a gap
    wider than *min_gap* starts a new group. Groups in increasing order of the axis."""
    ordered = sorted(lines, key=lambda line: span(line)[0])
    groups: list[list[OcrLine]] = []
    reach = None
    for line in ordered:
        start, end = span(line)
        if reach is None or start - reach > min_gap:
            groups.append([line])
            reach = end
        else:
            groups[-1].append(line)
            reach = max(reach, end)
    return groups


def _block_text(block: list[OcrLine]) -> str:
    rows: list[list[OcrLine]] = []
    for line in sorted(block, key=lambda line: (line.y0 + line.y1) / 2):
        centre = (line.y0 + line.y1) / 2
        if rows and any(other.y0 <= centre <= other.y1 or line.y0 <= (other.y0 + other.y1) / 2 <= line.y1
                        for other in rows[-1]):
            rows[-1].append(line)
        else:
            rows.append([line])
    return "\n".join(" ".join(line.text for line in sorted(row, key=lambda line: line.x0)) for row in rows)
