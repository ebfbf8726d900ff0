"""A PDF page's painted paths, read by PDFium, as the edges pdfplumber's table finder works on.

pdfplumber (MIT) finds tables from *edges*: the sides of every painted line, rectangle and curve of a page, as
pdfminer classifies the paths of the page's content stream. pdfplumber gets them by interpreting the content
stream with pdfminer, in Python, which cost about 30-80 ms a page of the corpus manuals even with the page's
text taken out. PDFium has already parsed the same paths when it loaded the page, so ``path_edges`` reads them
from PDFium's page objects (top level and inside form XObjects) and classifies each subpath the way pdfminer's
``PDFLayoutAnalyzer.paint_path`` does (pdfminer.six ``converter.py``), then makes the edges with pdfplumber's own
``line_to_edge``, ``rect_to_edges`` and ``curve_to_edges``:

* a path with several subpaths is one shape per subpath (each ``m``);
* a subpath's points are each operator's end point, the start point for a close (``h``);
* ``m l`` or ``m l h``: a line; ``m l l l h`` or ``m l l l l`` closed with axis-parallel sides: a rectangle;
  anything else (curves, polygons): a curve, whose consecutive points make its edges.

PDFium gives a Bézier segment as its two control points and its end point, and a close as a flag on the last
point (on a point it adds at the start when the path was not there yet): both map onto pdfminer's operators
above. Coordinates are PDF points measured down from the top of the page box (pdfplumber's ``top``), in the
page's own space, unrotated: the space PDFium reads the table cells' text in, so a page with ``/Rotate`` keeps
its text around its tables. On the corpus manuals the edges are pdfplumber's within 0.05 pt and the tables found
are the same (docs/parsers.md#tables-in-pdfs).
"""

from __future__ import annotations

import ctypes
from typing import Any

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

__all__ = ["MAX_SEGMENTS", "Edges", "path_edges"]

#: Path segments read per page, forms included; a page drawing more is a drawing, not a table (``path_edges``).
MAX_SEGMENTS = 200_000
_MAX_FORM_DEPTH = 8  # form XObjects within form XObjects

Edges = list[dict[str, Any]]  # pdfplumber's edge dicts: x0, x1, top, bottom, width, height, orientation, ...
_Matrix = tuple[float, float, float, float, float, float]  # a, b, c, d, e, f as in PDF's ``cm``
_Point = tuple[float, float]


class _Shapes:
    """pdfminer's painted objects of one page, by kind, in painting order (pdfplumber lists lines, then rects,
    then curves)."""

    def __init__(self, top: float) -> None:
        self.top = top  # y of the page box's top edge: ``top`` coordinates are measured down from it
        self.lines: list[dict[str, Any]] = []
        self.rects: list[dict[str, Any]] = []
        self.curves: list[dict[str, Any]] = []
        self.segments = 0

    def add(self, shape: str, points: list[_Point]) -> None:
        """One subpath: its operators (``m``, ``l``, ``c``, ``h``) and their end points, in page space."""
        if len(shape) > 3 and shape[-2:] == "lh" and points[-2] == points[0]:
            shape, points = shape[:-2] + "h", points[:-2] + points[-1:]  # a line back to the start, then a close
        if shape in ("ml", "mlh"):
            self.lines.append(self._box(points[:2], "line"))
        elif shape in ("mlllh", "mllll") and _is_rectangle(points):
            self.rects.append(self._box([points[0], points[2]], "rect"))
        elif len(shape) > 1:
            curve = self._box(points, "curve")
            curve["pts"] = [(x, self.top - y) for x, y in points]
            self.curves.append(curve)

    def _box(self, points: list[_Point], kind: str) -> dict[str, Any]:
        xs, ys = [x for x, _ in points], [y for _, y in points]
        x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
        top = self.top - y1
        return {"object_type": kind, "x0": x0, "x1": x1, "y0": y0, "y1": y1, "top": top, "doctop": top,
                "bottom": self.top - y0, "width": x1 - x0, "height": y1 - y0}

    def edges(self) -> Edges:
        """pdfplumber's ``Page.edges``: the lines' edges, then the rectangles', then the curves'. (pdfplumber is
        imported here, on a page with a grid: it takes 60 ms to import, and most documents have none.)"""
        from pdfplumber.utils import curve_to_edges, line_to_edge, rect_to_edges

        return ([line_to_edge(line) for line in self.lines]
                + [edge for rect in self.rects for edge in rect_to_edges(rect)]
                + [edge for curve in self.curves for edge in curve_to_edges(curve)])


def _is_rectangle(points: list[_Point]) -> bool:
    (x0, y0), (x1, y1), (x2, y2), (x3, y3), last = points
    return points[0] == last and ((x0 == x1 and y1 == y2 and x2 == x3 and y3 == y0)
                                  or (y0 == y1 and x1 == x2 and y2 == y3 and x3 == x0))


def path_edges(page: pdfium.PdfPage) -> Edges | None:
    """The edges of every path *page* paints (module docstring), or None past ``MAX_SEGMENTS`` path segments.

    The caller holds the PDFium lock. Cost: a few ctypes calls per path segment (about 10 ms for the 250 paths
    of the Japanese manual's busiest table page, where pdfminer took 80 ms)."""
    shapes = _Shapes(page.get_bbox()[3])  # the page box's top, unrotated: where the page objects' space is
    raw_page = page.raw
    objects = [pdfium_c.FPDFPage_GetObject(raw_page, k) for k in range(pdfium_c.FPDFPage_CountObjects(raw_page))]
    if not _walk(objects, None, shapes, 0):
        return None
    return shapes.edges()


def _walk(objects: list, outer: _Matrix | None, shapes: _Shapes, depth: int) -> bool:
    """Add the paths among *objects* (and inside their forms) to *shapes*; False past ``MAX_SEGMENTS``."""
    matrix = pdfium_c.FS_MATRIX()
    get_type, get_matrix = pdfium_c.FPDFPageObj_GetType, pdfium_c.FPDFPageObj_GetMatrix
    path_type, form_type = pdfium_c.FPDF_PAGEOBJ_PATH, pdfium_c.FPDF_PAGEOBJ_FORM
    for obj in objects:
        kind = get_type(obj)
        if kind not in (path_type, form_type) or not get_matrix(obj, matrix):
            continue
        own = (matrix.a, matrix.b, matrix.c, matrix.d, matrix.e, matrix.f)
        placed = own if outer is None else _then(own, outer)
        if kind == form_type:
            if depth < _MAX_FORM_DEPTH:
                inner = [pdfium_c.FPDFFormObj_GetObject(obj, k) for k in range(pdfium_c.FPDFFormObj_CountObjects(obj))]
                if not _walk(inner, placed, shapes, depth + 1):
                    return False
            continue
        count = pdfium_c.FPDFPath_CountSegments(obj)
        shapes.segments += max(count, 0)
        if shapes.segments > MAX_SEGMENTS:
            return False
        _subpaths(obj, count, placed, shapes)
    return True


def _then(first: _Matrix, second: _Matrix) -> _Matrix:
    """The matrix applying *first*, then *second* (a form's content, then the form's placement)."""
    a1, b1, c1, d1, e1, f1 = first
    a2, b2, c2, d2, e2, f2 = second
    return (a1 * a2 + b1 * c2, a1 * b2 + b1 * d2, c1 * a2 + d1 * c2, c1 * b2 + d1 * d2,
            e1 * a2 + f1 * c2 + e2, e1 * b2 + f1 * d2 + f2)


def _subpaths(obj, count: int, placed: _Matrix, shapes: _Shapes) -> None:
    """Add path object *obj*'s subpaths (pdfminer's operators and end points, module docstring) to *shapes*."""
    a, b, c, d, e, f = placed
    x, y = ctypes.c_float(), ctypes.c_float()
    get_segment, get_type = pdfium_c.FPDFPath_GetPathSegment, pdfium_c.FPDFPathSegment_GetType
    get_point, get_close = pdfium_c.FPDFPathSegment_GetPoint, pdfium_c.FPDFPathSegment_GetClose
    move, line = pdfium_c.FPDF_SEGMENT_MOVETO, pdfium_c.FPDF_SEGMENT_LINETO
    shape, points, controls = "", [], 0
    for k in range(count):
        segment = get_segment(obj, k)
        kind = get_type(segment)
        get_point(segment, x, y)
        point = (a * x.value + c * y.value + e, b * x.value + d * y.value + f)
        if kind == move or not shape:
            if shape:
                shapes.add(shape, points)
            shape, points, controls = "m", [point], 0
            continue
        if kind != line:  # a Bézier segment: two control points, then the end point
            controls += 1
            if controls < 3:
                continue
            controls = 0
        shape += "l" if kind == line else "c"
        points.append(point)
        if get_close(segment):  # a line back to the start then a close is a close (``_Shapes.add``)
            shape += "h"
            points.append(points[0])
    if shape:
        shapes.add(shape, points)
