"""PowerPoint files (.pptx): one page per slide, read with python-pptx (MIT).

Each slide's page holds, in order:
  1. its title (the title or centre-title placeholder) as a ``#`` heading; a slide without one gets
     ``# Slide N`` so every slide opens a section of its own;
  2. the other shapes in reading order (top to bottom, then left to right; group shapes opened): text frames as
     paragraphs, a paragraph indented by its outline level as a ``- item`` line when the shape is a body
     placeholder or the paragraph is indented; tables as ``<figure><table>`` with ``rowspan``/``colspan`` from
     merged cells, the first row a header row when the table is marked so (PowerPoint's "Header Row");
     pictures as ``<figure>`` with their alternative text when they have one;
  3. the speaker notes, after a ``Notes:`` line.

Hidden slides are read like the others (they are still part of the document). The package is checked first
(``chunking.parsers.office.check_package``); ``MAX_PAGES`` bounds the slides, ``MAX_PAGE_CHARS`` each slide's
text.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Iterator

from chunking.model import Page
from chunking.parsers._common import ParseError, ReadContext, pages_from_texts
from chunking.parsers.office import check_package, html_table
from chunking.parsers.pictures import figure_block, read_picture, take_kept

__all__ = ["parse"]

_TITLE_TYPES = frozenset({"TITLE", "CENTER_TITLE", "VERTICAL_TITLE"})
_BODY_TYPES = frozenset({"BODY", "OBJECT", "VERTICAL_BODY", "VERTICAL_OBJECT"})
_FILE_NAME = re.compile(r"\S+\.(?:png|jpe?g|gif|bmp|tiff?|emf|wmf|svg|heif)", re.IGNORECASE)
_SKIPPED_TYPES = frozenset({"DATE", "FOOTER", "SLIDE_NUMBER", "HEADER"})  # slide furniture, not content


def parse(data: bytes, *, source: str, context: ReadContext | None = None) -> Iterator[Page]:
    """Parse a .pptx file into one page per slide (module docstring).

    Returns:
        ``Page(n, offset, text)`` for slide ``n + 1``; every page text ends with a newline.

    Raises:
        ParseError: the package checks' reasons; ``not a valid PPTX: …`` when python-pptx cannot open it, its
            list of slides or a slide (``not a valid PPTX: slide 2: …``); ``N pages, more than M (MAX_PAGES)``;
            ``page N has more than … characters (MAX_PAGE_CHARS)``.
    """
    import pptx

    context = context if context is not None else ReadContext()
    check_package(data, source=source, context=context, kind="PPTX", old_format=".ppt")
    try:
        presentation = pptx.Presentation(io.BytesIO(data))
    except Exception as error:  # python-pptx raises KeyError, ValueError, PackageNotFoundError, lxml errors
        raise ParseError(source, f"not a valid PPTX: {error}") from None
    try:
        slides = list(presentation.slides)  # python-pptx follows the relationships only now
    except Exception as error:  # KeyError for a slide the package does not hold, lxml errors
        raise ParseError(source, f"not a valid PPTX: its list of slides is damaged ({type(error).__name__}: "
                                 f"{error})"[:300]) from None
    limits = context.limits
    if len(slides) > limits.max_pages:
        raise ParseError(source, limits.pages_reason(len(slides)))
    texts = []
    for index, slide in enumerate(slides):
        context.check_time(source)
        try:
            text = slide_text(slide, index, context=context, source=source)
        except ParseError:
            raise
        except Exception as error:  # a part python-pptx reads only now: KeyError, ValueError, lxml errors
            raise ParseError(source, f"not a valid PPTX: slide {index + 1}: {type(error).__name__}: "
                                     f"{error}"[:300]) from None
        if len(text) > limits.max_page_chars:
            raise ParseError(source, limits.page_chars_reason(index))
        texts.append(text)
    return pages_from_texts(texts)


def slide_text(slide, index: int, *, context: ReadContext | None = None, source: str = "") -> str:
    """One slide as text: ``# title``, its shapes' blocks, then its notes; blocks separated by blank lines. With
    *context*, the text of its pictures is read by local OCR (``chunking.parsers.pictures``) into their blocks."""
    title = ""
    blocks: list[str] = []
    for shape in _reading_order(slide.shapes):
        kind = _placeholder_type(shape)
        if kind in _SKIPPED_TYPES:
            continue
        if kind in _TITLE_TYPES and not title and shape.has_text_frame:
            title = " ".join(shape.text_frame.text.split())
            if title:
                continue
        blocks.extend(_shape_blocks(shape, kind, context, source))
    blocks.insert(0, f"# {title or f'Slide {index + 1}'}")
    notes = _notes(slide)
    if notes:
        blocks.append("Notes:\n" + notes)
    return "\n\n".join(blocks) + "\n"


def _reading_order(shapes: Iterable) -> list:
    """Shapes top to bottom, then left to right; group shapes replaced by their members (in the same order)."""
    flat = []
    for shape in shapes:
        if shape.shape_type is not None and str(shape.shape_type).startswith("GROUP"):
            flat.extend(_reading_order(shape.shapes))
        else:
            flat.append(shape)
    # Shapes without a position (inherited from the layout) keep their place relative to each other, first.
    return sorted(flat, key=lambda s: (s.top or 0, s.left or 0))


def _placeholder_type(shape) -> str:
    if not shape.is_placeholder:
        return ""
    try:
        return shape.placeholder_format.type.name
    except (AttributeError, ValueError):
        return ""


def _shape_blocks(shape, kind: str, context: ReadContext | None = None, source: str = "") -> list[str]:
    if getattr(shape, "has_table", False) and shape.has_table:
        figure = _table(shape.table)
        return [figure] if figure else []
    if shape.has_text_frame:
        return _text_frame_blocks(shape.text_frame, as_list=kind in _BODY_TYPES)
    if str(shape.shape_type).startswith("PICTURE"):
        read = _picture_text(shape, context, source) if context is not None else ""
        block = figure_block(_alt_text(shape), read, take_kept(context))
        return [block] if block else []
    return []


def _text_frame_blocks(frame, *, as_list: bool) -> list[str]:
    """Paragraphs of one text frame: a block of ``- item`` lines for a body placeholder or indented paragraphs
    (two spaces per outline level), plain paragraphs as blocks of their own."""
    blocks: list[str] = []
    items: list[str] = []
    for paragraph in frame.paragraphs:
        text = " ".join(_paragraph_text(paragraph).split())
        if not text:
            continue
        level = paragraph.level or 0
        if as_list or level:
            items.append("  " * level + "- " + text)
            continue
        if items:
            blocks.append("\n".join(items))
            items = []
        blocks.append(text)
    if items:
        blocks.append("\n".join(items))
    return blocks


def _paragraph_text(paragraph) -> str:
    # python-pptx's paragraph.text turns a:br into a vertical tab; a line break is only a space here.
    return paragraph.text.replace("\v", " ")


def _table(table) -> str:
    rows = []
    has_text = False
    for row in table.rows:
        cells = []
        for cell in row.cells:
            if cell.is_spanned:
                continue
            text = " ".join(cell.text.split())
            has_text = has_text or bool(text)
            rowspan, colspan = (cell.span_height, cell.span_width) if cell.is_merge_origin else (1, 1)
            cells.append((text, rowspan, colspan))
        if any(text for text, _, _ in cells) or any(c.is_spanned or c.is_merge_origin for c in row.cells):
            rows.append(cells)  # a row that is empty and takes part in no merge adds nothing
    if not has_text:
        return ""
    return html_table(rows, header_rows=1 if table.first_row else 0)


def _picture_text(shape, context: ReadContext, source: str) -> str:
    try:
        blob = shape.image.blob
    except (AttributeError, KeyError, ValueError):  # a linked picture, or a relationship to nothing
        return ""
    return read_picture(blob, source=source, context=context)


def _alt_text(shape) -> str:
    c_nv_pr = shape._element.xpath("./*[1]/p:cNvPr")  # the picture's non-visual properties: descr, title
    if not c_nv_pr:
        return ""
    description = " ".join((c_nv_pr[0].get("descr") or c_nv_pr[0].get("title") or "").split())
    # Tools that insert a picture from a file often describe it by the file's name, which says nothing.
    return "" if _FILE_NAME.fullmatch(description) else description


def _notes(slide) -> str:
    if not slide.has_notes_slide:
        return ""
    frame = slide.notes_slide.notes_text_frame
    if frame is None:
        return ""
    lines = (" ".join(_paragraph_text(p).split()) for p in frame.paragraphs)
    return "\n".join(line for line in lines if line)
