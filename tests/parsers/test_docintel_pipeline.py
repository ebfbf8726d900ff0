"""Document Intelligence in stage 1 and 2 (local ledger and index, the fake service): chunks and citations of
a scanned document, the ledger's reasons and notes, and a throttled service left for a later try."""

from __future__ import annotations

import pytest
from azure.core.exceptions import HttpResponseError

from chunking.documents.splitter import splitter_for
from chunking.embeddings import OfflineLexicalEmbedder
from chunking.errors import describe_failure
from chunking.parsers import ocr
from chunking.index.local import LocalIndex
from chunking.ledger import Ledger, LocalLedgerStore
from chunking.pipeline import stage_one
from chunking.pipeline import stage_two as pipeline
from chunking.services import document_readers
from chunking.settings import Settings
from chunking.storage.claim_check import MemoryPayloadStore
from tests.docintel_fake import ENDPOINT, Cell, DocumentIntelligenceFake, LayoutDocument, Para, Table

SCAN = LayoutDocument(pages=[
    [Para("Invoice 2024-117", "title"), Para("Delivered to the north depot on 3 May.")],
    [Table(rows=[[Cell("Item", "columnHeader"), Cell("Price", "columnHeader")], [Cell("Bolts"), Cell("4.20")]]),
     Para("Page 2 of 2", "pageNumber")],
])


class Stage:
    def __init__(self, tmp_path, monkeypatch, env: dict[str, str], fake: DocumentIntelligenceFake | None = None):
        self.settings = Settings.from_env({"CHUNKING_STATE_DIR": str(tmp_path / "state"), **env})
        self.ledger = Ledger(LocalLedgerStore(tmp_path / "ledger.sqlite3"))
        self.index = LocalIndex(tmp_path / "index.sqlite3", self.settings.embedding_dimensions)
        self.payloads = MemoryPayloadStore()
        if fake is not None:
            monkeypatch.setattr(stage_one, "document_readers",
                                lambda settings: document_readers(settings, transport=fake, retry_total=2))

    def ingest(self, source: str, data: bytes):
        one = pipeline.run_stage_one(data, source=source, container="c", settings=self.settings,
                                     payloads=self.payloads, ledger=self.ledger)
        for message in one.messages:
            pipeline.run_stage_two(message, settings=self.settings, embedder=OfflineLexicalEmbedder(
                self.settings.embedding_dimensions), index=self.index, payloads=self.payloads, ledger=self.ledger)
        return one


def test_without_document_intelligence_nor_local_ocr_a_scan_fails_naming_both(tmp_path, monkeypatch):
    monkeypatch.setattr(ocr, "available", lambda: False)  # the extra "ocr" not installed (in-line parse: see below)
    stage = Stage(tmp_path, monkeypatch, {"PARSE_ISOLATION": "inline"})

    one = stage.ingest("scans/invoice.png", b"\x89PNG\r\n\x1a\n")

    assert one.outcome == "failed"
    entry = stage.ledger.get(one.doc_id)
    assert (entry.status, entry.error) == ("failed", f"image file: {ocr.NEEDS_OCR}")
    assert "pip install 'chunking[ocr]'" in entry.error


def test_with_document_intelligence_a_scan_is_indexed_with_page_citations_and_its_cost(tmp_path, monkeypatch):
    fake = DocumentIntelligenceFake(SCAN)
    stage = Stage(tmp_path, monkeypatch, {"DOCUMENT_INTELLIGENCE_ENDPOINT": ENDPOINT,
                                          "DOCUMENT_INTELLIGENCE_API_KEY": "k"}, fake)

    one = stage.ingest("scans/invoice.png", b"\x89PNG\r\n\x1a\n")

    entry = stage.ledger.get(one.doc_id)
    assert (entry.status, entry.note) == ("indexed", "Document Intelligence: 2 pages analysed in 1 request")
    records = sorted(stage.index.records_of(one.doc_id), key=lambda r: r.ordinal)
    assert [(r.sourcepage, r.content) for r in records] == [
        ("scans/invoice.png#page=1", "# Invoice 2024-117\n\nDelivered to the north depot on 3 May."),
        ("scans/invoice.png#page=2", "<figure><table>\n<thead><tr><th>Item</th><th>Price</th></tr></thead>\n"
                                     "<tr><td>Bolts</td><td>4.20</td></tr>\n</table></figure>"),
    ]


def test_a_scan_attached_to_a_mail_goes_to_document_intelligence_as_a_document_of_its_own(tmp_path, monkeypatch):
    # A container's members are parsed by their own format's reader (docs/architecture.md#containers).
    from email.message import EmailMessage

    message = EmailMessage()
    message["Subject"], message["From"] = "Invoice", "billing@example.com"
    message.set_content("The scan is attached.\n")
    message.add_attachment(b"\x89PNG\r\n\x1a\n", maintype="image", subtype="png", filename="invoice.png")
    stage = Stage(tmp_path, monkeypatch, {"DOCUMENT_INTELLIGENCE_ENDPOINT": ENDPOINT,
                                          "DOCUMENT_INTELLIGENCE_API_KEY": "k"}, DocumentIntelligenceFake(SCAN))

    one = stage.ingest("inbox/invoice.eml", message.as_bytes())

    [member] = one.members
    assert (member.source, stage.ledger.get(member.doc_id).status) == ("inbox/invoice.eml/attachments/invoice.png",
                                                                       "indexed")
    assert [r.sourcepage for r in sorted(stage.index.records_of(member.doc_id), key=lambda r: r.ordinal)] == [
        "inbox/invoice.eml/attachments/invoice.png#page=1", "inbox/invoice.eml/attachments/invoice.png#page=2"]


def test_a_service_still_throttling_after_the_retries_leaves_the_document_for_a_later_try(tmp_path, monkeypatch):
    fake = DocumentIntelligenceFake(SCAN)
    fake.throttle(10, retry_after_s=3)
    stage = Stage(tmp_path, monkeypatch, {"DOCUMENT_INTELLIGENCE_ENDPOINT": ENDPOINT,
                                          "DOCUMENT_INTELLIGENCE_API_KEY": "k"}, fake)

    with pytest.raises(HttpResponseError) as caught:  # the trigger's retry and reconcile try it again
        stage.ingest("scans/invoice.png", b"\x89PNG\r\n\x1a\n")

    assert caught.value.status_code == 429
    assert fake.sleeps == [3, 3]
    assert stage.ledger.get(stage_one.make_doc_id("c", "scans/invoice.png")) is None  # not failed for good


def test_the_service_failure_names_document_intelligence_and_what_to_check(tmp_path, monkeypatch):
    fake = DocumentIntelligenceFake(SCAN)
    fake.throttle(10, retry_after_s=3)
    stage = Stage(tmp_path, monkeypatch, {"DOCUMENT_INTELLIGENCE_ENDPOINT": ENDPOINT,
                                          "DOCUMENT_INTELLIGENCE_API_KEY": "k"}, fake)
    with pytest.raises(HttpResponseError) as caught:
        stage.ingest("scans/invoice.png", b"\x89PNG\r\n\x1a\n")

    failure = describe_failure(caught.value, stage.settings)
    assert (failure.service, failure.kind, failure.status, failure.retry_after_s) == (
        "Document Intelligence at fake-docintel.cognitiveservices.azure.com", "throttled", 429, 3.0)


MANUAL = LayoutDocument(pages=[
    [Para("Pump manual", "title"), Para("Installation", "sectionHeading"), Para("Bolt the pump to the floor."),
     Para("# of bolts: four, one per corner."), Para("Manual page 1", "pageFooter")],
    [Para("Maintenance", "sectionHeading"), Para("Oil the bearings every month."), Para("2", "pageNumber")],
])


@pytest.mark.parametrize("source", ["manuals/pump.pdf", "scans/pump.png", "manuals/pump.docx"])
def test_document_intelligence_headings_are_the_heading_paths_of_the_chunks(tmp_path, monkeypatch, source):
    # A PDF or an image has no headings when read locally; through the service, its title and section
    # headings give every chunk its heading path, as a DOCX's do. A body paragraph opening with "#" is no heading.
    fake = DocumentIntelligenceFake(MANUAL)
    stage = Stage(tmp_path, monkeypatch, {"DOCUMENT_INTELLIGENCE_ENDPOINT": ENDPOINT,
                                          "DOCUMENT_INTELLIGENCE_API_KEY": "k", "SPLIT_MAX_TOKENS": "16"}, fake)

    one = stage.ingest(source, b"%PDF-1.7 read by the service only")

    records = sorted(stage.index.records_of(one.doc_id), key=lambda r: r.ordinal)
    page1, page2 = ("", "") if source.endswith(".docx") else ("#page=1", "#page=2")
    assert [(r.sourcepage.removeprefix(source), r.headings, r.content) for r in records] == [
        (page1, ("Pump manual",), "# Pump manual\n\n## Installation\n\nBolt the pump to the floor."),
        (page1, ("Pump manual", "Installation"), "\\# of bolts: four, one per corner."),
        (page2, ("Pump manual", "Maintenance"), "## Maintenance\n\nOil the bearings every month."),
    ]


def test_a_local_pdf_keeps_no_heading_paths_from_hash_lines(tmp_path, monkeypatch):
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    pdf.add_page()
    pdf.cell(0, 10, "# not a heading in a PDF")
    stage = Stage(tmp_path, monkeypatch, {})

    one = stage.ingest("notes.pdf", bytes(pdf.output()))

    assert [(r.headings, r.content) for r in stage.index.records_of(one.doc_id)] == [
        ((), "# not a heading in a PDF")]


def test_the_heading_paths_enter_the_version_of_a_document_the_service_reads():
    local = Settings.from_env({})
    service = Settings.from_env({"DOCUMENT_INTELLIGENCE_ENDPOINT": ENDPOINT})
    fingerprint = {(source, name): splitter_for(source, settings).fingerprint
                   for source in ("a.pdf", "a.docx") for name, settings in (("local", local), ("service", service))}

    # The same splitter reads both formats; the service's parser changes both versions, and the heading paths the
    # PDF's chunks now get change its version once more (a PDF indexed without them is split again).
    assert fingerprint["a.pdf", "local"] == fingerprint["a.docx", "local"]
    assert fingerprint["a.pdf", "service"] not in (fingerprint["a.docx", "service"], fingerprint["a.pdf", "local"])


def test_with_document_intelligence_a_pdf_with_scanned_pages_goes_there_not_to_local_ocr(tmp_path, monkeypatch):
    from tests.pixel_documents import paragraph_image, pdf_of

    monkeypatch.setattr(ocr, "read_image", lambda *a, **k: pytest.fail("local OCR ran"))
    fake = DocumentIntelligenceFake(SCAN)
    stage = Stage(tmp_path, monkeypatch, {"DOCUMENT_INTELLIGENCE_ENDPOINT": ENDPOINT,
                                          "DOCUMENT_INTELLIGENCE_API_KEY": "k", "PARSE_ISOLATION": "inline"}, fake)

    one = stage.ingest("scans/invoice.pdf", pdf_of(["Invoice 2024-117", paragraph_image(["Delivered north."])]))

    entry = stage.ledger.get(one.doc_id)
    assert (entry.status, entry.note) == ("indexed", "Document Intelligence: 2 pages analysed in 1 request")
    assert [r.sourcepage for r in sorted(stage.index.records_of(one.doc_id), key=lambda r: r.ordinal)] == [
        "scans/invoice.pdf#page=1", "scans/invoice.pdf#page=2"]


def test_a_pdf_kept_local_beside_document_intelligence_reads_its_scanned_pages_with_local_ocr(tmp_path, monkeypatch):
    from tests.pixel_documents import paragraph_image, pdf_of

    fake = DocumentIntelligenceFake(SCAN)
    stage = Stage(tmp_path, monkeypatch, {"DOCUMENT_INTELLIGENCE_ENDPOINT": ENDPOINT, "PARSERS": ".pdf=local",
                                          "DOCUMENT_INTELLIGENCE_API_KEY": "k", "PARSE_ISOLATION": "inline"}, fake)

    one = stage.ingest("scans/mixed.pdf", pdf_of(["Invoice 2024-117", paragraph_image(["Delivered north."])]))

    entry = stage.ledger.get(one.doc_id)
    assert (entry.status, entry.note) == ("indexed", "local OCR: 1 page")
    records = sorted(stage.index.records_of(one.doc_id), key=lambda r: r.ordinal)
    assert [(r.content, r.page_start, r.page_end) for r in records] == [("Invoice 2024-117\nDelivered north.", 0, 1)]
    assert fake.requests == []  # the service was not asked


def test_a_scanned_pdf_is_read_once_for_its_chunks_and_its_language_is_detected(tmp_path, monkeypatch):
    from chunking.parsers import scans
    from tests.pixel_documents import paragraph_image, pdf_of

    calls = []
    read = ocr.read_image
    monkeypatch.setattr(ocr, "read_image", lambda image, *, source: calls.append(1) or read(image, source=source))
    stage = Stage(tmp_path, monkeypatch, {"PARSE_ISOLATION": "inline"})
    german = [["Der Bericht wurde am Montag in der Stadt vorgestellt."], ["Alle Mitarbeiter haben ihn gelesen."],
              ["Danach gingen sie gemeinsam nach Hause."]]

    one = stage.ingest("scans/bericht.pdf", pdf_of([paragraph_image(lines) for lines in german]))

    entry = stage.ledger.get(one.doc_id)
    assert (entry.status, entry.note) == ("indexed", "local OCR: 3 pages")
    # A PDF of at most HEAD_PAGES pages is read once: the head read that finds the title and language is the read
    # its chunks come from, so each page goes through OCR once (a longer PDF's head: at most HEAD_OCR_PAGES more).
    assert scans.HEAD_OCR_PAGES == 2 and len(calls) == 3
    records = stage.index.records_of(one.doc_id)
    assert {r.language for r in records} == {"de"}
    assert "Der Bericht wurde am Montag in der Stadt vorgestellt." in records[0].content
