"""Figure descriptions (docs/parsers.md#figure-descriptions) through both stages, the real openai SDK against a
fake chat endpoint with image input (``tests/openai_fakes.VisionChatAPI``): each figure's description in its
chunk, the cache (a re-upload describes only new figures), the token budget, 429s, the version fingerprint."""

from __future__ import annotations

from io import BytesIO

import httpx2 as httpx  # the HTTP client of openai 3.x
import pytest
from PIL import Image

from chunking.chat.vision import FigureDescriber, image_media_type
from chunking.documents.splitter import splitter_for
from chunking.embeddings import OfflineLexicalEmbedder
from chunking.index.local import LocalIndex
from chunking.ledger import Ledger, LocalLedgerStore
from chunking.parsers import ReadContext, parse_document
from chunking.parsers.limits import Limits
from chunking.pipeline import stage_one
from chunking.pipeline.stage_two import run_stage_one, run_stage_two
from chunking.services import figure_describer
from chunking.settings import Settings, SettingsError
from chunking.storage.claim_check import MemoryPayloadStore
from tests.openai_fakes import VisionChatAPI
from tests.pixel_documents import image_bytes, paragraph_image, pptx_with_picture
from tests.telemetry_capture import capturing

CHART = paragraph_image(["Quarter four peaked at 412 megawatts."])  # 1000 px wide
PUMP = paragraph_image(["Pump"], width_px=600)
#: What the fake model sees in each picture, by its width in pixels.
SEEN = {1000: "A bar chart of turbine output where the zeppelin quarter stands tallest.",
        600: "A cutaway drawing of a centrifugal pump with its impeller."}
OCR = '<p data-generated="ocr">Quarter four peaked at 412 megawatts.</p>'


def seen(data: bytes) -> str:
    return SEEN[Image.open(BytesIO(data)).size[0]]


def settings_for(tmp_path, **env: str) -> Settings:
    return Settings.from_env({"CHUNKING_STATE_DIR": str(tmp_path / "state"), "FIGURES_DESCRIBER": "openai",
                              "VISION_MODEL": "gpt-4o", "OPENAI_BASE_URL": "http://vision.invalid/v1", **env})


class Pipeline:
    """Both stages in-process (local ledger and index), the describer's HTTP on *api*."""

    def __init__(self, tmp_path, monkeypatch, api: VisionChatAPI, **env: str) -> None:
        self.settings = settings_for(tmp_path, **env)
        self.ledger = Ledger(LocalLedgerStore(tmp_path / "ledger.sqlite3"))
        self.index = LocalIndex(tmp_path / "index.sqlite3", self.settings.embedding_dimensions)
        self.embedder = OfflineLexicalEmbedder(self.settings.embedding_dimensions)
        self.payloads = MemoryPayloadStore()
        describer = figure_describer(self.settings, http_client=httpx.Client(transport=httpx.MockTransport(api)))
        monkeypatch.setattr(stage_one, "figure_describer", lambda settings: describer)

    def ingest(self, source: str, data: bytes, force: bool = False):
        one = run_stage_one(data, source=source, container="c", settings=self.settings, payloads=self.payloads,
                            ledger=self.ledger, force=force)
        for message in one.messages:
            run_stage_two(message, settings=self.settings, embedder=self.embedder, index=self.index,
                          payloads=self.payloads, ledger=self.ledger)
        return one

    def texts(self, one) -> list[str]:
        return [r.content for r in sorted(self.index.records_of(one.doc_id), key=lambda r: r.ordinal)]


def deck(*pictures: Image.Image, title: str = "Results") -> bytes:
    """A PPTX of one slide per picture, each titled *title* and the slide number."""
    import io

    import pptx
    from pptx.util import Inches

    presentation = pptx.Presentation()
    for n, picture in enumerate(pictures, 1):
        slide = presentation.slides.add_slide(presentation.slide_layouts[5])
        slide.shapes.title.text = f"{title} {n}"
        slide.shapes.add_picture(io.BytesIO(image_bytes(picture)), Inches(0.5), Inches(2), width=Inches(9))
    buffer = io.BytesIO()
    presentation.save(buffer)
    return buffer.getvalue()


def test_each_description_is_in_its_figures_chunk_and_a_second_ingest_makes_no_vision_call(tmp_path, monkeypatch):
    api = VisionChatAPI(seen)
    p = Pipeline(tmp_path, monkeypatch, api)

    data = deck(CHART, PUMP)
    with capturing(azure_sdk=False) as got:
        one = p.ingest("deck.pptx", data)

    assert one.outcome == "added" and len(api.requests) == 2
    assert p.texts(one) == [
        f'# Results 1\n\n<figure><p data-generated="vision">{SEEN[1000]}</p>{OCR}</figure>',
        f'# Results 2\n\n<figure><p data-generated="vision">{SEEN[600]}</p><p data-generated="ocr">Pump</p></figure>']
    assert got.metrics("chunking.vision.calls") == {frozenset({("chunking.model", "openai/gpt-4o")}): 2}
    entry = p.ledger.get(one.doc_id)
    assert entry.is_indexed and "vision: 2 figures described by openai/gpt-4o (" in entry.note
    body = api.body(0)
    assert body["model"] == "gpt-4o" and body["messages"][1]["content"][1]["image_url"]["url"].startswith(
        "data:image/png;base64,")

    assert p.ingest("deck.pptx", data).outcome == "skipped"  # the same bytes: not parsed again
    forced = p.ingest("deck.pptx", data, force=True)  # parsed again: every figure from the cache
    assert len(api.requests) == 2 and p.texts(forced) == p.texts(one)
    assert "vision: 2 figures described by openai/gpt-4o (2 from the cache)" in p.ledger.get(one.doc_id).note


def test_a_reupload_describes_only_its_new_figures(tmp_path, monkeypatch):
    api = VisionChatAPI(seen)
    p = Pipeline(tmp_path, monkeypatch, api)
    p.ingest("deck.pptx", deck(CHART))
    assert len(api.requests) == 1

    one = p.ingest("deck.pptx", deck(CHART, PUMP, title="Results, revised"))

    assert one.outcome == "updated" and len(api.requests) == 2
    assert [Image.open(BytesIO(i)).size[0] for i in api.images] == [1000, 600]
    assert all('<p data-generated="vision">' in text for text in p.texts(one))


def test_a_throttled_model_leaves_the_captions_and_ocr_text_and_a_note_and_the_document_is_indexed(tmp_path,
                                                                                                monkeypatch):
    throttled = (429, {"retry-after": "1", "retry-after-ms": "10"})
    api = VisionChatAPI(seen, plan=[throttled] * 3)  # the first request and the SDK's 2 retries
    p = Pipeline(tmp_path, monkeypatch, api)

    one = p.ingest("deck.pptx", deck(CHART, PUMP))

    assert len(api.requests) == 3  # no call for the second figure once throttled
    assert p.texts(one) == [f"# Results 1\n\n<figure>{OCR}</figure>",
                            '# Results 2\n\n<figure><p data-generated="ocr">Pump</p></figure>']
    entry = p.ledger.get(one.doc_id)
    assert entry.is_indexed and "vision: not described: 2 throttled" in entry.note

    again = p.ingest("deck.pptx", deck(CHART, PUMP), force=True)  # later: the service answers
    assert len(api.requests) == 5 and all('data-generated="vision"' in t for t in p.texts(again))


def test_a_throttled_model_defers_stage_one_when_asked_before_anything_is_sent(tmp_path, monkeypatch):
    throttled = (429, {"retry-after": "1", "retry-after-ms": "10"})
    api = VisionChatAPI(seen, plan=[throttled] * 3)
    p = Pipeline(tmp_path, monkeypatch, api)
    sent: list[str] = []

    one = run_stage_one(deck(CHART, PUMP), source="deck.pptx", container="c", settings=p.settings,
                        payloads=p.payloads, ledger=p.ledger, send=sent.extend, defer_throttled_figures=True)

    assert (one.outcome, one.retry_after_s, one.messages, sent) == ("deferred", 0.01, [], [])
    assert p.ledger.get(one.doc_id) is None and len(api.requests) == 3  # nothing recorded, no further call
    later = run_stage_one(deck(CHART, PUMP), source="deck.pptx", container="c", settings=p.settings,
                          payloads=p.payloads, ledger=p.ledger, send=sent.extend, defer_throttled_figures=True)
    assert later.outcome == "added" and len(api.requests) == 5 and sent  # the service answers now


def test_the_token_budget_per_document_stops_the_calls(tmp_path, monkeypatch):
    api = VisionChatAPI(seen)
    p = Pipeline(tmp_path, monkeypatch, api, FIGURES_MAX_TOKENS_PER_DOCUMENT="100")

    one = p.ingest("deck.pptx", deck(CHART, PUMP))

    assert len(api.requests) == 1  # one image alone costs 255 tokens
    assert "not described: 1 over FIGURES_MAX_TOKENS_PER_DOCUMENT" in p.ledger.get(one.doc_id).note
    assert 'data-generated="vision"' in p.texts(one)[0] and 'data-generated="vision"' not in p.texts(one)[1]


def test_a_refused_picture_keeps_its_text_and_the_others_are_described(tmp_path, monkeypatch):
    api = VisionChatAPI(seen, plan=[(400, {})])
    p = Pipeline(tmp_path, monkeypatch, api)

    one = p.ingest("deck.pptx", deck(CHART, PUMP))

    assert len(api.requests) == 2
    assert p.texts(one)[0] == f"# Results 1\n\n<figure>{OCR}</figure>"
    assert SEEN[600] in p.texts(one)[1]
    assert "vision: 1 figure described by openai/gpt-4o" in p.ledger.get(one.doc_id).note
    assert "not described: 1 refused" in p.ledger.get(one.doc_id).note


def test_icons_and_repeats_are_never_sent_and_a_bmp_is_sent_as_png():
    context = ReadContext(limits=Limits(keep_pictures=True))
    logo = paragraph_image(["ACME"], width_px=200)
    bmp_deck = pptx_with_picture("Results", Image.open(BytesIO(image_bytes(PUMP, "BMP"))), logo=logo, slides=2)

    pages = parse_document(bmp_deck, source="deck.pptx", context=context)

    assert len(context.images) == 2  # the picture and the logo, once each; the repeats only counted
    assert [image_media_type(data) for data in context.images.values()] == ["image/png", "image/png"]
    assert pages[1].text == "# Results\n"
    assert context.notes == ["figures: 2 read by local OCR; skipped: 2 repeated"]


def test_the_fake_refuses_what_the_service_refuses():
    api = VisionChatAPI(seen)
    describer = FigureDescriber.openai_compatible(model="gpt-4o", cache=_Memory(), api_key="k",
                                                  base_url="http://vision.invalid/v1", max_retries=0,
                                                  http_client=httpx.Client(transport=httpx.MockTransport(api)))
    tiff = image_bytes(PUMP, "TIFF")
    assert image_media_type(tiff) == ""
    outcome = describer.describe({"a" * 64: tiff})
    assert outcome.left == {"not an image the model reads": 1} and api.requests == []
    response = api(httpx.Request("POST", "http://vision.invalid/v1/chat/completions", json={
        "model": "gpt-4o", "messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "data:image/tiff;base64,AAAA"}}]}]}))
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_image_format"


def test_the_describer_and_its_prompt_version_are_in_the_version_of_documents_with_pictures(tmp_path, monkeypatch):
    offline = Settings.from_env({"CHUNKING_STATE_DIR": str(tmp_path)})
    vision = settings_for(tmp_path)
    assert splitter_for("a.pptx", offline).fingerprint != splitter_for("a.pptx", vision).fingerprint
    assert splitter_for("a.pdf", offline).fingerprint != splitter_for("a.pdf", vision).fingerprint
    assert splitter_for("a.txt", offline).fingerprint == splitter_for("a.txt", vision).fingerprint
    before = splitter_for("a.docx", vision).fingerprint
    monkeypatch.setattr("chunking.services.PROMPT_VERSION", "figure-v2")
    assert splitter_for("a.docx", vision).fingerprint != before


def test_settings():
    with pytest.raises(SettingsError, match="VISION_MODEL"):
        Settings.from_env({"FIGURES_DESCRIBER": "openai"})
    with pytest.raises(SettingsError, match="FIGURES_DESCRIBER must be one of"):
        Settings.from_env({"FIGURES_DESCRIBER": "gpt"})
    assert Settings.from_env({}).vision.describer == "offline"
    assert figure_describer(Settings.from_env({})) is None
    with pytest.raises(SettingsError, match="AZURE_OPENAI_ENDPOINT"):
        Settings.from_env({"FIGURES_DESCRIBER": "azure_openai", "VISION_MODEL": "gpt-4o"})
    azure = figure_describer(Settings.from_env({"FIGURES_DESCRIBER": "azure_openai", "VISION_MODEL": "gpt-4o",
                                                "AZURE_OPENAI_ENDPOINT": "https://aoai.example.com",
                                                "AZURE_OPENAI_API_KEY": "k"}))
    assert azure.name == "azure_openai/gpt-4o" and azure.fingerprint == "azure_openai/gpt-4o:figure-v1"


class _Memory:
    location = "memory"

    def __init__(self) -> None:
        self.entries: dict[str, str] = {}

    def get_many(self, keys):
        return {k: self.entries[k] for k in keys if k in self.entries}

    def put_many(self, items):
        self.entries.update(items)


WORDS = ["river", "copper", "lantern", "orchid", "glacier", "saffron", "meadow", "harbour", "quartz", "thistle"]
TALL_CHART = paragraph_image(["Quarter four peaked at 412 megawatts.", "Quarter three held at 380 megawatts."])
TALL_PUMP = paragraph_image(["Pump", "Impeller", "Outlet"], width_px=600)


def report_pdf(pages: int, pictures: dict[int, Image.Image]) -> bytes:
    """An A4 PDF of *pages* pages of prose, *pictures* drawn on the pages they key (each under its page's text, at
    least an inch high: not an icon)."""
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format=(595, 842))
    pdf.set_font("helvetica", size=12)
    for n in range(pages):
        pdf.add_page()
        pdf.text(72, 72, " ".join(WORDS[(n + i) % len(WORDS)] for i in range(3 + n % 4)) + ".")
        if n in pictures:
            pdf.image(pictures[n], x=40, y=100, w=515)
    return bytes(pdf.output())


@pytest.mark.parametrize(("pages", "isolation"), [(3, "process"), (18, "process"), (18, "inline")])
def test_pdf_pictures_are_described_on_their_pages(tmp_path, monkeypatch, pages, isolation):
    """3 pages: read whole with the head (≤ 16 pages); 18: streamed page by page, in the parse child or in-line."""
    api = VisionChatAPI(seen)
    p = Pipeline(tmp_path, monkeypatch, api, SPLIT_MAX_TOKENS="40", PARSE_ISOLATION=isolation)

    one = p.ingest("report.pdf", report_pdf(pages, {0: TALL_CHART, pages - 1: TALL_PUMP}))

    records = sorted(p.index.records_of(one.doc_id), key=lambda r: r.ordinal)
    described = {r.page_start: r.content for r in records if 'data-generated="vision"' in r.content}
    assert len(api.requests) == 2 and set(described) == {0, pages - 1}
    assert SEEN[1000] in described[0] and SEEN[600] in described[pages - 1]
    ends = [(r.char_start, r.char_end) for r in records]
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(ends, ends[1:]))


class _Describer:
    """A describer without a model: ``"seen <first 4 hex digits>"`` for each picture."""

    name = "test/fake"

    def describe(self, images, *, expired=None, outcome=None):
        for digest in images:
            outcome.descriptions[digest] = f"seen {digest[:4]}"
        return outcome


def test_a_described_page_moves_the_pages_after_it_by_what_its_text_gained():
    from chunking.model import Page
    from chunking.pipeline.figures import describe_pages

    digest = "ab" * 32
    first = f'Text.\n\n<figure>Alt<p data-generated="ocr" data-picture="{digest}">read</p></figure>'
    empty = f'A.\n\n<figure><p data-generated="ocr" data-picture="{"cd" * 32}"></p></figure>'
    context = ReadContext()
    context.images.update({digest: b"png"})
    pages = [Page(0, 0, first), Page(1, len(first), "Next page."), Page(2, len(first) + 10, empty, footer="7")]

    out = list(describe_pages(pages, context=context, describer=_Describer()))

    assert out[0].text == ('Text.\n\n<figure>Alt<p data-generated="vision">seen abab</p>'
                           '<p data-generated="ocr">read</p></figure>')
    assert out[1].offset == len(out[0].text) and out[2].offset == len(out[0].text) + 10
    assert out[2].text == "A." and out[2].footer == "7"  # a picture with nothing to say leaves no empty figure
    assert context.images == {} and context.notes == ["vision: 1 figure described by test/fake"]


def test_the_counts_of_the_notes_for_ingest_and_status():
    from chunking.pipeline.figures import vision_counts

    note = ("figures: 3 read by local OCR; vision: 2 figures described by openai/gpt-4o (1 from the cache); "
            "not described: 1 over FIGURES_MAX_TOKENS_PER_DOCUMENT, 2 throttled; vision: 1 figure described by x")
    assert vision_counts(note) == {"figures_described": 3, "figures_not_described": {
        "over FIGURES_MAX_TOKENS_PER_DOCUMENT": 1, "throttled": 2}}
    assert vision_counts(["vision: not described: 1 refused"]) == {"figures_described": 0,
                                                                    "figures_not_described": {"refused": 1}}
    assert vision_counts("") == {"figures_described": 0, "figures_not_described": {}}


def test_without_the_ocr_extra_the_pictures_are_described_all_the_same(tmp_path, monkeypatch):
    from chunking.parsers import ocr

    monkeypatch.setattr(ocr, "available", lambda: False)  # a Functions deployment without the extra `ocr`
    api = VisionChatAPI(seen)
    p = Pipeline(tmp_path, monkeypatch, api, PARSE_ISOLATION="inline")

    one = p.ingest("deck.pptx", deck(CHART, PUMP))

    assert p.texts(one) == [f'# Results 1\n\n<figure><p data-generated="vision">{SEEN[1000]}</p></figure>',
                            f'# Results 2\n\n<figure><p data-generated="vision">{SEEN[600]}</p></figure>']
    assert "figures: " not in p.ledger.get(one.doc_id).note  # nothing read by local OCR


def test_a_docx_picture_is_described_after_its_alternative_text(tmp_path, monkeypatch):
    from tests.pixel_documents import docx_with_picture

    api = VisionChatAPI(seen)
    p = Pipeline(tmp_path, monkeypatch, api)

    one = p.ingest("report.docx", docx_with_picture("Before the chart.", CHART, "After the chart.",
                                                    alt_text="Bar chart"))

    assert p.texts(one) == [f'Before the chart.\n\n<figure>Bar chart<p data-generated="vision">{SEEN[1000]}</p>'
                            f'{OCR}</figure>', "After the chart."]
