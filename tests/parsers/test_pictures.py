"""Pictures inside documents (chunking/parsers/pictures.py): DOCX, PPTX and PDF pictures read by local OCR into
their ``<figure>`` blocks, marked as generated; icons, repeats and ``FIGURES_MAX_PER_DOCUMENT`` left out and
counted in one note."""

from __future__ import annotations

from fpdf import FPDF

from chunking.parsers import ReadContext, parse_document
from chunking.parsers.limits import Limits
from tests.pixel_documents import docx_with_picture, paragraph_image, pptx_with_picture

CHART = paragraph_image(["Figure 3: turbine output by quarter", "Quarter four peaked at 412 megawatts."])
READ = ('<figure><p data-generated="ocr">Figure 3: turbine output by quarter Quarter four peaked at 412 '
        'megawatts.</p></figure>')
LOGO = paragraph_image(["ACME"], width_px=200)


def test_a_docx_picture_is_read_into_its_figure_after_its_alternative_text():
    context = ReadContext()
    pages = parse_document(docx_with_picture("Before the chart.", CHART, "After the chart.", alt_text="Bar chart"),
                           source="report.docx", context=context)

    assert pages[0].text == ("Before the chart.\n\n" + READ.replace("<figure>", "<figure>Bar chart")
                             + "\n\nAfter the chart.")
    assert context.notes == ["figures: 1 read by local OCR"]


def test_a_pptx_logo_on_every_slide_is_read_once():
    context = ReadContext()
    pages = parse_document(pptx_with_picture("Results", CHART, logo=LOGO, slides=2), source="deck.pptx",
                           context=context)

    assert [p.text for p in pages] == [f'# Results\n\n{READ}\n\n<figure><p data-generated="ocr">ACME</p></figure>\n',
                                       "# Results\n"]
    assert context.notes == ["figures: 2 read by local OCR; skipped: 2 repeated"]


def test_the_budget_per_document_leaves_the_rest_unread():
    context = ReadContext(limits=Limits(figures_max_per_document=1))
    pages = parse_document(pptx_with_picture("Results", CHART, logo=LOGO), source="deck.pptx", context=context)

    assert pages[0].text == f"# Results\n\n{READ}\n"
    assert context.notes == ["figures: 1 read by local OCR; skipped: 1 over FIGURES_MAX_PER_DOCUMENT"]


def test_a_pdf_page_with_text_gets_its_pictures_figures_after_its_text_and_icons_are_left_out():
    pdf = FPDF(unit="pt", format=(595, 842))
    pdf.add_page()
    pdf.set_font("helvetica", size=12)
    pdf.text(72, 72, "Report text.")
    pdf.image(CHART, x=40, y=100, w=515)
    pdf.image(LOGO, x=500, y=20, w=40)  # 40 points wide: an icon
    context = ReadContext()

    pages = parse_document(bytes(pdf.output()), source="report.pdf", context=context)

    assert pages[0].text == f"Report text.\n\n{READ}\n"
    assert context.notes == ["figures: 1 read by local OCR; skipped: 1 icons"]


def test_a_pdf_without_pictures_is_not_looked_at_page_by_page(monkeypatch):
    from chunking.parsers import scans

    monkeypatch.setattr(scans, "read_picture", lambda *a, **k: (_ for _ in ()).throw(AssertionError("read")))
    pdf = FPDF(unit="pt", format=(595, 842))
    pdf.add_page()
    pdf.set_font("helvetica", size=12)
    pdf.text(72, 72, "Only text.")
    context = ReadContext()

    assert parse_document(bytes(pdf.output()), source="text.pdf", context=context)[0].text == "Only text.\n"
    assert context.pictures.pdf_images is False and context.notes == []


def test_pixel_counts_read_the_notes_back_from_a_list_or_the_ledgers_joined_note():
    from chunking.parsers.pictures import pixel_counts

    ledger_note = "local OCR: 3 pages; figures: 2 read by local OCR; skipped: 3 icons, 1 repeated; other note"
    assert pixel_counts(ledger_note) == {"ocr_pages": 3, "figures_read": 2,
                                         "figures_skipped": {"icons": 3, "repeated": 1}}
    assert pixel_counts(["figures: skipped: 1 over FIGURES_MAX_PER_DOCUMENT", "local OCR: 1 page"]) == {
        "ocr_pages": 1, "figures_read": 0, "figures_skipped": {"over FIGURES_MAX_PER_DOCUMENT": 1}}
    assert pixel_counts("") == {"ocr_pages": 0, "figures_read": 0, "figures_skipped": {}}


def test_a_pdf_picture_over_the_pixel_limit_is_not_decoded(monkeypatch):
    from chunking.parsers import scans

    monkeypatch.setattr(scans, "MAX_IMAGE_PIXELS", 1000)
    pdf = FPDF(unit="pt", format=(595, 842))
    pdf.add_page()
    pdf.set_font("helvetica", size=12)
    pdf.text(72, 72, "Report text.")
    pdf.image(CHART, x=40, y=100, w=515)
    context = ReadContext()

    assert parse_document(bytes(pdf.output()), source="report.pdf", context=context)[0].text == "Report text.\n"
    assert context.notes == ["figures: skipped: 1 unreadable"]
