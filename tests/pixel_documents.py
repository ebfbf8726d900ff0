"""Documents whose words exist only as pixels, made by the tests themselves: a paragraph drawn on a PNG with
Pillow's own font (``ImageFont.load_default(size=…)``, a TrueType font shipped inside Pillow, so no system font is
needed), and PDFs of such images (fpdf2), alone or beside a page with a text layer."""

from __future__ import annotations

import io

from PIL import Image, ImageDraw, ImageFont

#: Pixels between two drawn lines, for the default font size.
LINE_STEP_PX = 50


def paragraph_image(lines: list[str], *, width_px: int = 1000, size: int = 28, x_px: int = 40) -> Image.Image:
    """A white RGB image with *lines* drawn in black, one under the other, at *size* pixels."""
    font = ImageFont.load_default(size=size)
    image = Image.new("RGB", (width_px, 40 + LINE_STEP_PX * len(lines)), "white")
    draw = ImageDraw.Draw(image)
    for i, line in enumerate(lines):
        draw.text((x_px, 20 + LINE_STEP_PX * i), line, font=font, fill="black")
    return image


def image_bytes(image: Image.Image, fmt: str = "PNG", **kwargs) -> bytes:
    """*image* encoded as *fmt* (``"PNG"``, ``"JPEG"``, ``"TIFF"``…; *kwargs* go to ``Image.save``)."""
    buffer = io.BytesIO()
    image.save(buffer, fmt, **kwargs)
    return buffer.getvalue()


def pdf_of(pages: list[str | Image.Image | None]) -> bytes:
    """An A4 PDF with one page per item: a ``str`` as a text layer (Helvetica 12), an image drawn across the page
    width as a scan (no text layer), ``None`` as a blank page."""
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format=(595, 842))
    pdf.set_font("helvetica", size=12)
    for item in pages:
        pdf.add_page()
        if isinstance(item, str):
            pdf.text(72, 72, item)
        elif item is not None:
            pdf.image(item, x=40, y=80, w=515)
    return bytes(pdf.output())


def docx_with_picture(before: str, picture: Image.Image, after: str, *, alt_text: str = "") -> bytes:
    """A DOCX: a paragraph, an inline picture (its ``descr`` *alt_text*), a paragraph (python-docx)."""
    import docx

    document = docx.Document()
    document.add_paragraph(before)
    document.add_picture(io.BytesIO(image_bytes(picture)))
    if alt_text:
        document.inline_shapes[0]._inline.docPr.set("descr", alt_text)
    document.add_paragraph(after)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def pptx_with_picture(title: str, picture: Image.Image, *, logo: Image.Image | None = None, slides: int = 1) -> bytes:
    """A PPTX of *slides* title-only slides, each with *title* and *picture* (and *logo* in a corner)."""
    import pptx
    from pptx.util import Inches

    presentation = pptx.Presentation()
    for _ in range(slides):
        slide = presentation.slides.add_slide(presentation.slide_layouts[5])
        slide.shapes.title.text = title
        slide.shapes.add_picture(io.BytesIO(image_bytes(picture)), Inches(0.5), Inches(2), width=Inches(9))
        if logo is not None:
            slide.shapes.add_picture(io.BytesIO(image_bytes(logo)), Inches(8), Inches(6.5), width=Inches(1.5))
    buffer = io.BytesIO()
    presentation.save(buffer)
    return buffer.getvalue()
