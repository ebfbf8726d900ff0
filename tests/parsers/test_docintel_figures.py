"""Figure images of a PDF read by Document Intelligence (``chunking.parsers.docintel.figures``): each figure
region cropped from the page rendered at 150 DPI, stored through stage 1 and pointed to by its chunk; regions too
small, repeated or past ``FIGURES_MAX_PER_DOCUMENT`` are not kept."""

from __future__ import annotations

import dataclasses
import hashlib
import io

from PIL import Image, ImageDraw

from chunking.embeddings import OfflineLexicalEmbedder
from chunking.index.local import LocalIndex
from chunking.ledger import Ledger, LocalLedgerStore
from chunking.model import Page
from chunking.parsers import ReadContext
from chunking.parsers.docintel.figures import crop_figures
from chunking.parsers.limits import Limits
from chunking.pipeline import stage_one
from chunking.pipeline import stage_two as pipeline
from chunking.services import document_readers
from chunking.settings import Settings
from chunking.storage.claim_check import MemoryPayloadStore
from tests.docintel_fake import ENDPOINT, DocumentIntelligenceFake, Figure, LayoutDocument, Para


def _pdf_with_blue_box() -> bytes:
    """A one-page US-letter PDF (8.5 × 11 inches): a line of text and a blue picture at 1-5 × 2-4.5 inches."""
    from fpdf import FPDF

    picture = Image.new("RGB", (400, 250), (30, 90, 200))
    ImageDraw.Draw(picture).rectangle((0, 0, 399, 249), outline="black", width=4)
    pdf = FPDF(unit="pt", format=(612, 792))
    pdf.set_font("helvetica", size=10)
    pdf.add_page()
    pdf.text(72, 72, "Output by quarter.")
    pdf.image(picture, x=72, y=144, w=288, h=180)
    return bytes(pdf.output())


def _context(limit: int = 50) -> ReadContext:
    return ReadContext(limits=dataclasses.replace(Limits(), keep_pictures=True, figures_max_per_document=limit))


def test_a_figure_region_is_cropped_at_150_dpi_and_marked_in_its_block():
    pdf = _pdf_with_blue_box()
    text = 'Intro.\n\n<figure data-page="1" data-bbox="1,2,5,4.5"><figcaption>Output</figcaption></figure>'
    context = _context()

    pages = crop_figures([Page(0, 0, text), Page(1, len(text), "Next.")], pdf, source="r.pdf", context=context)

    (digest, png), = context.images.items()
    assert hashlib.sha256(png).hexdigest() == digest
    crop = Image.open(io.BytesIO(png))
    assert (crop.format, crop.size) == ("PNG", (600, 375))  # 4 × 2.5 inches at 150 DPI
    assert crop.convert("RGB").getpixel((300, 187)) == (30, 90, 200)  # the picture's middle
    mark = f'<p data-generated="ocr" data-picture="{digest}"></p>'
    assert pages[0].text == text.replace("<figcaption>", mark + "<figcaption>")
    assert pages[1].offset == len(pages[0].text)


def test_small_repeated_and_surplus_regions_are_not_kept():
    pdf = _pdf_with_blue_box()
    text = ('<figure data-page="1" data-bbox="1,2,1.5,4.5"></figure>'  # half an inch wide: an icon
            '<figure data-page="1" data-bbox="1,2,5,4.5"></figure>'
            '<figure data-page="1" data-bbox="1,2,5,4.5"></figure>'  # the same pixels: a repeat
            '<figure data-page="1" data-bbox="0,0,8.5,1.5"></figure>'
            '<figure data-page="1" data-bbox="1,5,5,7"></figure>')  # past the limit of 2
    context = _context(limit=2)

    pages = crop_figures([Page(0, 0, text)], pdf, source="r.pdf", context=context)

    assert len(context.images) == 2 and pages[0].text.count("data-picture") == 2
    assert context.notes == ["figures: skipped: 1 icons, 1 repeated, 1 over FIGURES_MAX_PER_DOCUMENT"]


def test_through_stage_one_the_crop_is_stored_and_its_chunk_points_to_it(tmp_path, monkeypatch):
    fake = DocumentIntelligenceFake(LayoutDocument(pages=[[
        Para("Output by quarter.", "title"), Para("The survey measured every turbine."),
        Figure(caption="Figure 1: Output", polygon=(1, 2, 5, 2, 5, 4.5, 1, 4.5)),
        Para("The hangar stood empty in winter.")]]))
    settings = Settings.from_env({"CHUNKING_STATE_DIR": str(tmp_path / "state"),
                                  "DOCUMENT_INTELLIGENCE_ENDPOINT": ENDPOINT, "DOCUMENT_INTELLIGENCE_API_KEY": "k"})
    monkeypatch.setattr(stage_one, "document_readers",
                        lambda settings: document_readers(settings, transport=fake, retry_total=2))
    ledger = Ledger(LocalLedgerStore(tmp_path / "ledger.sqlite3"))
    index = LocalIndex(tmp_path / "index.sqlite3", settings.embedding_dimensions)
    payloads = MemoryPayloadStore()

    one = pipeline.run_stage_one(_pdf_with_blue_box(), source="r.pdf", container="c", settings=settings,
                                 payloads=payloads, ledger=ledger)
    for message in one.messages:
        pipeline.run_stage_two(message, settings=settings, embedder=OfflineLexicalEmbedder(
            settings.embedding_dimensions), index=index, payloads=payloads, ledger=ledger)

    folder = tmp_path / "state" / "figures"
    (path,) = sorted(folder.rglob("*.png"))
    png = path.read_bytes()
    assert path.relative_to(folder).as_posix() == f"{one.doc_id}/{one.version}/{hashlib.sha256(png).hexdigest()}.png"
    assert Image.open(io.BytesIO(png)).size == (600, 375)
    records = index.records_of(one.doc_id)
    holding = [r for r in records if r.image_urls]
    assert [r.image_urls for r in holding] == [(path.resolve().as_uri(),)]
    assert "Figure 1: Output" in holding[0].content and "data-picture" not in holding[0].content
