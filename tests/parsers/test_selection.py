"""Which parser reads which extension: chunking.settings.docintel and chunking.parsers.selection."""

from __future__ import annotations

import pytest

from chunking.documents.splitter import splitter_for
from chunking.parsers.selection import parser_fingerprint
from chunking.services import document_readers
from chunking.settings import Settings, SettingsError

ENDPOINT = "https://acme.cognitiveservices.azure.com"


def test_without_an_endpoint_every_format_is_parsed_locally():
    settings = Settings.from_env({})

    assert document_readers(settings) == {}
    assert parser_fingerprint("scan.png", settings) == ""


def test_an_endpoint_sends_the_layout_formats_to_document_intelligence():
    settings = Settings.from_env({"DOCUMENT_INTELLIGENCE_ENDPOINT": ENDPOINT + "/"})

    assert settings.document_intelligence.endpoint == ENDPOINT
    assert sorted(document_readers(settings)) == [
        ".bmp", ".docx", ".heif", ".htm", ".html", ".jpeg", ".jpg", ".pdf", ".png", ".pptx", ".tif", ".tiff", ".xlsx"]
    assert parser_fingerprint("a/b.PDF", settings) == "docintel:prebuilt-layout:2024-11-30"
    assert parser_fingerprint("notes.md", settings) == ""


def test_parsers_overrides_keep_single_formats_local():
    settings = Settings.from_env({"DOCUMENT_INTELLIGENCE_ENDPOINT": ENDPOINT, "PARSERS": ".PDF=local, .xlsx=local"})

    readers = document_readers(settings)
    assert ".pdf" not in readers and ".xlsx" not in readers and ".png" in readers


def test_the_parser_enters_the_document_version():
    local = Settings.from_env({})
    service = Settings.from_env({"DOCUMENT_INTELLIGENCE_ENDPOINT": ENDPOINT})
    newer = Settings.from_env({"DOCUMENT_INTELLIGENCE_ENDPOINT": ENDPOINT,
                               "DOCUMENT_INTELLIGENCE_API_VERSION": "2025-01-01"})

    prints = {splitter_for("a.pdf", s).fingerprint for s in (local, service, newer)}
    assert len(prints) == 3
    assert splitter_for("a.md", local).fingerprint == splitter_for("a.md", service).fingerprint


@pytest.mark.parametrize(("env", "message"), [
    ({"PARSERS": ".pdf=ocr"}, "PARSERS must look like '.pdf=local,.png=docintel' (parsers: local, docintel), "
                              "got '.pdf=ocr'"),
    ({"PARSERS": "pdf=local"}, "PARSERS must look like '.pdf=local,.png=docintel' (parsers: local, docintel), "
                               "got 'pdf=local'"),
    ({"PARSERS": ".png=docintel"}, "PARSERS sends .png to Document Intelligence, but DOCUMENT_INTELLIGENCE_ENDPOINT "
                                   "is not set"),
    ({"PARSERS": ".txt=docintel", "DOCUMENT_INTELLIGENCE_ENDPOINT": ENDPOINT},
     "PARSERS: Document Intelligence does not read .txt files; it reads .bmp, .docx, .heif, .htm, .html, .jpeg, "
     ".jpg, .pdf, .png, .pptx, .tif, .tiff, .xlsx"),
    ({"DOCUMENT_INTELLIGENCE_ENDPOINT": "acme.cognitiveservices.azure.com"},
     "DOCUMENT_INTELLIGENCE_ENDPOINT must be a URL, got 'acme.cognitiveservices.azure.com'"),
    ({"DOCUMENT_INTELLIGENCE_PAGES_PER_REQUEST": "0"}, "DOCUMENT_INTELLIGENCE_PAGES_PER_REQUEST must be ≥ 1, got 0"),
])
def test_malformed_settings_are_refused_naming_the_variable(env, message):
    with pytest.raises(SettingsError) as caught:
        Settings.from_env(env)

    assert str(caught.value) == message
