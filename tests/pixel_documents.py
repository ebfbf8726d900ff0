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
