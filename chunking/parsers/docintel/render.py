"""A Document Intelligence ``AnalyzeResult`` (layout model) as page texts: the rules, independent of the service.

The input is the result's JSON (wire names: ``pages``, ``paragraphs``, ``tables``, ``figures``, each element with
``spans`` into ``content`` and ``boundingRegions`` with a 1-based ``pageNumber``; Document Intelligence REST
API 2024-11-30, "AnalyzeResult"). Every paragraph, table and figure goes on the page of its first bounding
region, in the order of the paragraphs (the service's reading order). An Office file's result (DOCX, PPTX, XLSX)
has no bounding regions at all ("Service quotas and limits", v4.0, on learn.microsoft.com); there an element goes
on the page whose ``pages[].spans`` hold the start of its first span, and only an element with neither is put
on the first page:

* a paragraph with role ``title`` becomes ``# text``, ``sectionHeading`` ``## text``; ``pageHeader`` goes to
  ``Page.header``, ``pageFooter`` and ``pageNumber`` to ``Page.footer`` (kept beside the text, out of every
  chunk, as the PDF parser does with running headers); ``footnote``, ``formulaBlock`` and plain paragraphs are
  text (one opening like a heading, ``# of bolts``, gets a ``\\`` before its ``#``: the headings, and so the
  chunks' heading paths in every format, come from the roles). Blocks are separated by a blank line.
* a table replaces the paragraphs inside its spans (its cells, and its caption) with one ``<figure><table>``:
  ``<caption>`` from the table's caption, cells placed by ``rowIndex``/``columnIndex`` with ``rowspan``/
  ``colspan`` from ``rowSpan``/``columnSpan``, rows made only of ``columnHeader`` cells as the ``<thead>``
  (repeated by the sentence splitter in each part of a table too large for one chunk). A table continued over
  several pages (bounding regions on each) stays whole on the page where it starts.
* a figure replaces the paragraphs inside its spans with ``<figure data-page="P" data-bbox="x0,y0,x1,y1">``
  holding ``<figcaption>`` (its caption) and the text found inside it; the box is the figure's first bounding
  region in the page's unit (inches for PDFs and images, pixels otherwise), so a citation can point at it.
"""

from __future__ import annotations

import bisect
import html
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from chunking.model import Page
from chunking.parsers.office import html_table

__all__ = ["HEADER_ROLES", "render_pages"]

#: Paragraph roles kept out of the page text (to ``Page.header`` / ``Page.footer``).
HEADER_ROLES = {"pageHeader": "header", "pageFooter": "footer", "pageNumber": "footer"}
_HEADINGS = {"title": "# ", "sectionHeading": "## "}
_ATX_START = re.compile(r"#{1,6}(?:[ \t]|$)")

_Json = Mapping[str, Any]


def render_pages(results: Iterable[_Json], *, first_page: int = 1) -> Iterator[Page]:
    """The pages of one document from the results of one or more analyze requests (page ranges, in order).

    Args:
        results: ``AnalyzeResult`` JSON objects; each one's page numbers are the document's.
        first_page: the document's first page number (1).

    Returns:
        One ``Page`` per page of the results, ``page_num`` = ``pageNumber - first_page``, in order, with the
        offsets of ``chunking.model.Page`` (header, text and footer of every page count).
    """
    offset = 0
    for result in results:
        for page_number, header, text, footer in _page_parts(result):
            yield Page(page_number - first_page, offset + len(header), text, header, footer)
            offset += len(header) + len(text) + len(footer)


def _page_parts(result: _Json) -> list[tuple[int, str, str, str]]:
    numbers = [page["pageNumber"] for page in result.get("pages") or ()]
    blocks: dict[int, list[str | int]] = {n: [] for n in numbers}  # an int: the table or figure of that index
    furniture: dict[int, dict[str, list[str]]] = {n: {"header": [], "footer": []} for n in numbers}
    locate = _PageLocator(result)
    regions = _Regions(result, locate)
    for paragraph in result.get("paragraphs") or ():
        text = " ".join(str(paragraph.get("content") or "").split())
        owner = regions.owner(paragraph)
        if owner is not None:
            if owner not in regions.inner:
                regions.inner[owner] = []
                blocks.setdefault(regions.page(owner), []).append(owner)
            regions.inner[owner].append(text)
            continue
        if not text:
            continue
        page = locate.page_of(paragraph)
        role = paragraph.get("role") or ""
        if role in HEADER_ROLES:
            furniture.setdefault(page, {"header": [], "footer": []})[HEADER_ROLES[role]].append(text)
        else:
            blocks.setdefault(page, []).append(_HEADINGS[role] + text if role in _HEADINGS else _not_a_heading(text))
    for owner in regions.unplaced():  # a table or figure no paragraph pointed to: after its page's text
        regions.inner[owner] = []
        blocks.setdefault(regions.page(owner), []).append(owner)
    parts = []
    for number in sorted(set(numbers) | set(blocks)):
        header = "".join(line + "\n" for line in furniture.get(number, {}).get("header", []))
        footer = "".join(line + "\n" for line in furniture.get(number, {}).get("footer", []))
        text = "\n\n".join(regions.render(b) if isinstance(b, int) else b for b in blocks.get(number, []))
        parts.append((number, header, text + "\n" if text else "", footer))
    return parts


def _not_a_heading(text: str) -> str:
    """A body paragraph that would read as a Markdown heading (``# of bolts: 4``) with its ``#`` escaped
    (``\\# of bolts: 4``, CommonMark's backslash escape), so the heading paths come from the roles alone."""
    return "\\" + text if _ATX_START.match(text) else text


class _PageLocator:
    """The page of an element: its first bounding region's ``pageNumber``; without regions (Office results) the
    page whose ``spans`` hold the element's first offset; else the result's first page."""

    def __init__(self, result: _Json) -> None:
        pages = result.get("pages") or ()
        self._first = int(pages[0]["pageNumber"]) if pages else 1
        ranges = sorted((int(span["offset"]), int(span["offset"]) + int(span["length"]), int(page["pageNumber"]))
                        for page in pages for span in page.get("spans") or ())
        self._starts = [start for start, _, _ in ranges]
        self._ranges = ranges

    def page_of(self, element: _Json) -> int:
        regions = element.get("boundingRegions") or ()
        if regions:
            return int(regions[0]["pageNumber"])
        offset = _first_offset(element)
        if offset is not None:
            position = bisect.bisect_right(self._starts, offset)
            if position:
                start, end, number = self._ranges[position - 1]
                if start <= offset < end:
                    return number
        return self._first


def _first_offset(element: _Json) -> int | None:
    spans = element.get("spans") or ()
    return min((int(span["offset"]) for span in spans), default=None)


class _Regions:
    """The tables and figures of a result, found by the offset of a paragraph's first span."""

    def __init__(self, result: _Json, locate: _PageLocator) -> None:
        self._locate = locate
        self.elements: list[tuple[str, _Json]] = [("table", t) for t in result.get("tables") or ()]
        self.elements += [("figure", f) for f in result.get("figures") or ()]
        ranges = []
        for index, (_, element) in enumerate(self.elements):
            for span in element.get("spans") or ():
                start = int(span["offset"])
                ranges.append((start, start + int(span["length"]), index))
        ranges.sort()
        self._starts = [start for start, _, _ in ranges]
        self._ranges = ranges
        self.inner: dict[int, list[str]] = {}  # paragraph texts inside each placed table or figure

    def owner(self, paragraph: _Json) -> int | None:
        offset = _first_offset(paragraph)
        if offset is None:
            return None
        # Figures can sit inside a table's cell and tables inside figures: the innermost (latest start) wins.
        position = bisect.bisect_right(self._starts, offset)
        for start, end, index in reversed(self._ranges[:position]):
            if start <= offset < end:
                return index
        return None

    def unplaced(self) -> list[int]:
        return [i for i in range(len(self.elements)) if i not in self.inner]

    def page(self, index: int) -> int:
        return self._locate.page_of(self.elements[index][1])

    def render(self, index: int) -> str:
        kind, element = self.elements[index]
        return render_table(element) if kind == "table" else render_figure(element, self.inner.get(index, ()))


def render_table(table: _Json) -> str:
    """One ``tables`` element as ``<figure><table>`` (module docstring).

    Example: 2 × 2 cells, the first row ``columnHeader`` → ``<figure><table>\\n<thead><tr><th>…</th>…</tr>
    </thead>\\n<tr><td>…</td>…</tr>\\n</table></figure>``.
    """
    rows: dict[int, list[_Json]] = {}
    for cell in table.get("cells") or ():
        rows.setdefault(int(cell.get("rowIndex", 0)), []).append(cell)
    ordered = [sorted(rows[r], key=lambda c: int(c.get("columnIndex", 0))) for r in sorted(rows)]
    header_rows = 0
    for row in ordered:
        if row and all(cell.get("kind") == "columnHeader" for cell in row):
            header_rows += 1
        else:
            break
    cells = [[(str(c.get("content") or ""), int(c.get("rowSpan") or 1), int(c.get("columnSpan") or 1)) for c in row]
             for row in ordered]
    caption = (table.get("caption") or {}).get("content") or ""
    return html_table(cells, header_rows=header_rows, caption=caption)


def render_figure(figure: _Json, texts: Sequence[str] = ()) -> str:
    """One ``figures`` element as ``<figure data-page data-bbox><figcaption>…</figcaption>…</figure>``, with
    *texts* (the paragraphs inside it other than its caption) after the caption, one line each."""
    attributes = ""
    regions = figure.get("boundingRegions") or ()
    if regions:
        polygon = [float(v) for v in regions[0].get("polygon") or ()]
        attributes = f' data-page="{int(regions[0]["pageNumber"])}"'
        if len(polygon) >= 4:
            xs, ys = polygon[0::2], polygon[1::2]
            attributes += f' data-bbox="{min(xs):g},{min(ys):g},{max(xs):g},{max(ys):g}"'
    caption = " ".join(str((figure.get("caption") or {}).get("content") or "").split())
    inner = f"<figcaption>{html.escape(caption, quote=False)}</figcaption>" if caption else ""
    lines = [html.escape(text, quote=False) for text in texts if text and text != caption]
    body = "".join(f"\n{line}" for line in lines) + ("\n" if lines else "")
    return f"<figure{attributes}>{inner}{body}</figure>"
