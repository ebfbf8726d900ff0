"""Figure images (docs/parsers.md#figure-images) through both stages in-process, with the local ledger, index
and figure folder: the PNG stored under ``<doc_id>/<version>/<sha256>.png``, the chunk holding the figure (and
no other) carrying its URL, a re-upload retiring the old version's images, a delete removing them, reconcile's
sweep of versions the ledger does not want; and the places of figures in a page's text, exactly."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import io

import pytest
from PIL import Image, ImageDraw

from chunking.embeddings import OfflineLexicalEmbedder
from chunking.ids import doc_id as make_doc_id
from chunking.index.local import LocalIndex
from chunking.ledger import Ledger, LocalLedgerStore
from chunking.model import ChunkRecord, Page
from chunking.parsers import ReadContext
from chunking.parsers.limits import Limits
from chunking.pipeline.figures import FigureSpan, attach_images, figure_pages
from chunking.pipeline.reconcile import delete_document, sweep_figures
from chunking.pipeline.stage_two import run_stage_one, run_stage_two
from chunking.services import make_figure_store
from chunking.settings import Settings
from chunking.storage.claim_check import MemoryPayloadStore
from chunking.storage.figures import LocalFigureStore
from tests.pixel_documents import docx_with_picture, image_bytes, paragraph_image, pptx_with_picture

PARAGRAPHS = [f"Paragraph {i} explains step {i} of the turbine survey in plain words for the reader."
              for i in range(12)]


def chart(width_px: int = 480, height_px: int = 320) -> Image.Image:
    """A bar chart: four bars of different heights and a label, on white."""
    image = Image.new("RGB", (width_px, height_px), "white")
    draw = ImageDraw.Draw(image)
    for i, height in enumerate((120, 200, 90, 260)):
        draw.rectangle((40 + i * 100, height_px - 20 - height, 110 + i * 100, height_px - 20), fill=(30, 90, 200))
    draw.text((40, 10), "Zeppelin output 412", fill="black")
    return image


def pdf_with_chart(picture: Image.Image, before: list[str], after: list[str]) -> bytes:
    """A one-page A4 PDF: text lines, the picture (4 × 2.67 inches), more text lines (fpdf2)."""
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format=(595, 842))
    pdf.set_font("helvetica", size=10)
    pdf.add_page()
    y = 60
    for line in before:
        pdf.text(60, y, line)
        y += 14
    pdf.image(picture, x=60, y=y + 10, w=288)
    y += 10 + 192 + 20
    for line in after:
        pdf.text(60, y, line)
        y += 14
    return bytes(pdf.output())


class Pipeline:
    """Both stages in-process on one state folder (local ledger, index and figure images)."""

    def __init__(self, tmp_path, **env: str) -> None:
        self.settings = Settings.from_env({"CHUNKING_STATE_DIR": str(tmp_path / "state"), "SPLIT_MAX_TOKENS": "80",
                                           **env})
        self.ledger = Ledger(LocalLedgerStore(tmp_path / "ledger.sqlite3"))
        self.index = LocalIndex(tmp_path / "index.sqlite3", self.settings.embedding_dimensions)
        self.embedder = OfflineLexicalEmbedder(self.settings.embedding_dimensions)
        self.payloads = MemoryPayloadStore()
        self.folder = tmp_path / "state" / "figures"

    def ingest(self, source: str, data: bytes):
        one = run_stage_one(data, source=source, container="c", settings=self.settings, payloads=self.payloads,
                            ledger=self.ledger)
        assert one.error is None, one.error
        for message in one.messages:
            run_stage_two(message, settings=self.settings, embedder=self.embedder, index=self.index,
                          payloads=self.payloads, ledger=self.ledger)
        return one

    def records(self, one) -> list[ChunkRecord]:
        return sorted(self.index.records_of(one.doc_id), key=lambda r: r.ordinal)

    def stored(self) -> dict[str, bytes]:
        """``<doc_id>/<version>/<name>`` → bytes of every image in the folder."""
        return {p.relative_to(self.folder).as_posix(): p.read_bytes() for p in sorted(self.folder.rglob("*.png"))}


def _only_figure_chunk(records: list[ChunkRecord]) -> ChunkRecord:
    holding = [r for r in records if "<figure" in r.content]
    assert len(holding) == 1
    return holding[0]


def test_a_pdf_chart_is_stored_as_a_png_and_its_chunk_alone_points_to_it(tmp_path):
    run = Pipeline(tmp_path)
    picture = chart()
    one = run.ingest("report.pdf", pdf_with_chart(picture, PARAGRAPHS[:6], PARAGRAPHS[6:]))

    (name, png), = run.stored().items()
    digest = hashlib.sha256(png).hexdigest()
    assert name == f"{one.doc_id}/{one.version}/{digest}.png"
    stored = Image.open(io.BytesIO(png))
    assert (stored.format, stored.size) == ("PNG", (480, 320))
    assert stored.convert("RGB").tobytes() == picture.tobytes()  # the image object's own pixels
    records = run.records(one)
    figure = _only_figure_chunk(records)
    url = (run.folder / name).resolve().as_uri()
    assert figure.image_urls == (url,)
    assert [r.ordinal for r in records if r.image_urls] == [figure.ordinal]
    assert "data-picture" not in figure.content  # the mark never reaches a chunk


def test_a_docx_picture_is_stored_as_it_is_embedded_and_a_pptx_picture_too(tmp_path):
    run = Pipeline(tmp_path)
    png = image_bytes(chart())
    digest = hashlib.sha256(png).hexdigest()
    word = run.ingest("memo.docx", docx_with_picture(" ".join(PARAGRAPHS[:4]), chart(), " ".join(PARAGRAPHS[4:8]),
                                                     alt_text="Bar chart of output"))
    deck = run.ingest("deck.pptx", pptx_with_picture("Turbine output", chart()))

    assert run.stored() == {f"{word.doc_id}/{word.version}/{digest}.png": png,
                            f"{deck.doc_id}/{deck.version}/{digest}.png": png}
    for one in (word, deck):
        records = run.records(one)
        figure = _only_figure_chunk(records)
        assert figure.image_urls == ((run.folder / one.doc_id / one.version / f"{digest}.png").resolve().as_uri(),)
        assert [r.id for r in records if r.image_urls] == [figure.id]


def test_a_jpeg_picture_is_stored_as_png(tmp_path):
    run = Pipeline(tmp_path)
    picture = chart()
    one = run.ingest("memo.docx", docx_with_picture("Before the chart.", picture, "After the chart."))
    (name, png), = run.stored().items()
    assert Image.open(io.BytesIO(png)).format == "PNG" and name.endswith(f"{hashlib.sha256(png).hexdigest()}.png")

    jpeg = _docx_with_jpeg(picture)
    two = run.ingest("photo.docx", jpeg)
    (stored,) = [data for key, data in run.stored().items() if key.startswith(two.doc_id)]
    assert stored.startswith(b"\x89PNG") and Image.open(io.BytesIO(stored)).size == (480, 320)
    assert one.doc_id != two.doc_id


def _docx_with_jpeg(picture: Image.Image) -> bytes:
    import docx

    document = docx.Document()
    document.add_paragraph("Before the photo.")
    document.add_picture(io.BytesIO(image_bytes(picture, "JPEG", quality=90)))
    document.add_paragraph("After the photo.")
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def test_an_uploaded_png_is_its_own_figure_for_every_chunk_of_its_page(tmp_path):
    run = Pipeline(tmp_path)
    data = image_bytes(paragraph_image(["The zeppelin hangar opens at nine."]))
    one = run.ingest("notice.png", data)

    (name, png), = run.stored().items()
    assert name == f"{one.doc_id}/{one.version}/{hashlib.sha256(png).hexdigest()}.png"
    assert Image.open(io.BytesIO(png)).tobytes() == Image.open(io.BytesIO(data)).tobytes()
    records = run.records(one)
    assert records and all(r.image_urls == ((run.folder / name).resolve().as_uri(),) for r in records)
    assert "zeppelin" in records[0].content and "data-page-picture" not in records[0].content


def test_a_reupload_retires_the_old_versions_images_and_a_delete_removes_all(tmp_path):
    run = Pipeline(tmp_path)
    png = image_bytes(chart())
    first = run.ingest("memo.docx", docx_with_picture("Version one text.", chart(), "The end."))
    assert list(run.stored()) == [f"{first.doc_id}/{first.version}/{hashlib.sha256(png).hexdigest()}.png"]

    second = run.ingest("memo.docx", docx_with_picture("Version two text, changed.", chart(), "The end."))

    assert second.version != first.version
    assert list(run.stored()) == [f"{second.doc_id}/{second.version}/{hashlib.sha256(png).hexdigest()}.png"]
    assert [r.image_urls for r in run.records(second) if r.image_urls] == [
        ((run.folder / second.doc_id / second.version / f"{hashlib.sha256(png).hexdigest()}.png").resolve().as_uri(),)]

    delete_document(second.doc_id, "memo.docx", index=run.index, ledger=run.ledger,
                    figures=make_figure_store(run.settings))
    assert run.stored() == {} and run.index.records_of(second.doc_id) == []


def test_no_image_is_stored_with_figures_store_off(tmp_path):
    run = Pipeline(tmp_path, FIGURES_STORE="false")
    one = run.ingest("memo.docx", docx_with_picture("Before the chart.", chart(), "After the chart."))
    assert run.stored() == {} and all(r.image_urls == () for r in run.records(one))
    assert make_figure_store(run.settings) is None


def test_reconcile_sweeps_images_of_unwanted_versions_after_the_grace(tmp_path):
    ledger = Ledger(LocalLedgerStore(tmp_path / "ledger.sqlite3"))
    store = LocalFigureStore(tmp_path / "figures")
    did = make_doc_id("c", "a.txt")
    ledger.begin_version(did, "a.txt", "vold", 1, 1, container="c")
    ledger.begin_version(did, "a.txt", "vnew", 1, 1, container="c")
    for version in ("vold", "vnew", "vfresh"):
        store.put(did, version, version.encode())
    store.put("dunknown", "v1", b"x")
    written = max(store.versions().values())

    assert sweep_figures(store, ledger, now=written + dt.timedelta(seconds=599), grace_seconds=600) == []
    swept = sweep_figures(store, ledger, now=written + dt.timedelta(seconds=601), grace_seconds=600)

    assert swept == [f"{did}/vfresh: 1", f"{did}/vold: 1", "dunknown/v1: 1"]
    assert sorted(store.versions()) == [(did, "vnew")]  # the current version stays


def _page_context(images: dict[str, bytes]) -> ReadContext:
    context = ReadContext(limits=dataclasses.replace(Limits(), keep_pictures=True))
    context.images.update(images)
    return context


class _Store:
    def __init__(self) -> None:
        self.put_calls: list[tuple[str, str, bytes]] = []

    def put(self, doc_id: str, version: str, png: bytes) -> str:
        self.put_calls.append((doc_id, version, png))
        return f"u:{png.decode()}"


def test_figure_pages_record_each_figure_block_and_remove_the_marks():
    a, b, c = "aa" * 32, "bb" * 32, "cc" * 32
    first = (f'Intro.\n\n<figure>Alt<p data-generated="ocr" data-picture="{a}">read</p></figure>\n\nMiddle.'
             f'\n\n<figure><p data-generated="ocr" data-picture="{b}"></p></figure>')
    second = f'<p data-page-picture="{c}"></p>Scan text.'
    context = _page_context({a: b"A", b: b"B", c: b"C"})
    store, spans = _Store(), []

    pages = list(figure_pages([Page(0, 0, first), Page(1, len(first), second)], context=context, store=store,
                              doc_id="d", version="v", spans=spans))

    assert pages[0].text == ('Intro.\n\n<figure>Alt<p data-generated="ocr">read</p></figure>\n\nMiddle.')
    assert pages[1] == Page(1, len(pages[0].text), "Scan text.")
    block = '<figure>Alt<p data-generated="ocr">read</p></figure>'
    assert spans == [FigureSpan(8, 8 + len(block), "u:A"), FigureSpan(len(pages[0].text), len(pages[0].text), "u:B"),
                     FigureSpan(len(pages[0].text), len(pages[0].text) + 10, "u:C")]
    assert store.put_calls == [("d", "v", b"A"), ("d", "v", b"B"), ("d", "v", b"C")]
    assert context.images == {}


def test_attach_images_gives_each_record_the_figures_its_own_span_overlaps():
    def record(start: int, end: int) -> ChunkRecord:
        return ChunkRecord(id=f"k{start}", doc_id="d", version="v", source="s", sourcepage="s", ordinal=start,
                           page_start=0, page_end=0, char_start=start, char_end=end, content="x",
                           content_hash="h", token_count=1)

    spans = [FigureSpan(40, 90, "fig"), FigureSpan(150, 150, "point"), FigureSpan(10, 20, "first")]
    out = attach_images([record(0, 50), record(50, 120), record(90, 150), record(150, 200)], spans)

    assert [r.image_urls for r in out] == [("first", "fig"), ("fig",), (), ("point",)]
    assert attach_images([record(0, 5)], []) == [record(0, 5)]


@pytest.mark.parametrize("mode", ["CMYK", "LA", "I;16"])
def test_png_bytes_stores_any_mode_pillow_opens(mode):
    from chunking.parsers.image import png_bytes

    image = Image.new(mode, (60, 50))
    decoded = Image.open(io.BytesIO(png_bytes(image)))
    assert decoded.format == "PNG" and decoded.size == (60, 50)


def test_the_settings_of_figure_images_and_their_refusals():
    from chunking.settings import SettingsError

    assert (Settings().figure_images.store, Settings().figure_images.container) == (True, "figures")
    chosen = Settings.from_env({"FIGURES_STORE": "false", "FIGURES_CONTAINER": "fig-2"}).figure_images
    assert (chosen.store, chosen.container) == (False, "fig-2")
    for bad in ("Figures", "fi", "a--b", "-ab", "ab-", "a_b"):
        with pytest.raises(SettingsError, match="FIGURES_CONTAINER must be a blob container name"):
            Settings.from_env({"FIGURES_CONTAINER": bad})
    with pytest.raises(SettingsError, match="FIGURES_STORE must be true or false"):
        Settings.from_env({"FIGURES_STORE": "sometimes"})
