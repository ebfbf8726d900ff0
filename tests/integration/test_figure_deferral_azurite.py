"""A throttled figure describer defers the document's stage 1 like a throttled batch is deferred
(docs/parsers.md#figure-descriptions): through the Functions handlers on Azurite, nothing is sent or recorded, a
stage-1 job waits on its queue for the service's Retry-After, and when it runs the figures are described and the
document indexed."""

from __future__ import annotations

import httpx2 as httpx  # the HTTP client of openai 3.x
import pytest

from chunking.ids import doc_id
from chunking.pipeline import stage_one
from chunking.services import figure_describer
from tests.azurite_harness import harness_fixture
from tests.openai_fakes import VisionChatAPI
from tests.pixel_documents import docx_with_picture, paragraph_image

pytestmark = pytest.mark.integration

h = harness_fixture("defer")
SEEN = "A bar chart in which the zeppelin bar stands tallest."


def test_a_throttled_describer_defers_the_document_until_the_service_answers(h, monkeypatch):
    for name, value in {"FIGURES_DESCRIBER": "openai", "VISION_MODEL": "gpt-4o",
                        "OPENAI_BASE_URL": "http://vision.invalid/v1", "EMBEDDING_BACKEND": "offline"}.items():
        h.env[name] = value
    h.activate()
    throttled = (429, {"retry-after": "1", "retry-after-ms": "1000"})
    api = VisionChatAPI(lambda data: SEEN, plan=[throttled] * 3)  # the first request and the SDK's 2 retries
    describer = figure_describer(h.s.settings, http_client=httpx.Client(transport=httpx.MockTransport(api)))
    monkeypatch.setattr(stage_one, "figure_describer", lambda settings: describer)
    did = doc_id(h.cname, "memo.docx")

    sent = h.upload("memo.docx", docx_with_picture("The memo.", paragraph_image(["Output 412"]), "The end."))

    assert sent == [] and h.s.ledger.get(did) is None and len(api.requests) == 3
    assert list(h.jobs.peek_messages()) == []  # invisible for the service's wait
    assert h.jobs.get_queue_properties().approximate_message_count == 1
    h.drain()
    entry = h.s.ledger.get(did)
    assert entry.status == "indexed" and len(api.requests) == 4
    h.settle()
    assert any(SEEN in r.content for r in h.s.index.records_of(did))
    assert "vision: 1 figure described by openai/gpt-4o" in entry.note
