"""Document fields: titles (property, first heading, file name), language detection on real documents, metadata
and access lists mapped from storage properties, and the hash that tells a metadata-only change."""

from __future__ import annotations

import datetime as dt
import io
import os
import zipfile
from pathlib import Path

import docx
import pytest

from chunking.documents.fields import document_fields, file_properties, source_fields
from chunking.documents.language import SAMPLE_CHARS, detect_language
from chunking.documents.titles import document_title
from chunking.model import DocumentFields, Page, SourceProperties, acl_values, iso_utc
from chunking.parsers import parse_document
from chunking.parsers.titles import property_title

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
ROOT = Path(__file__).resolve().parents[2]


def corpus_file(name: str) -> Path:
    for folder in (CORPUS, ROOT / "samples", ROOT / "tests" / "data"):
        if (folder / name).exists():
            return folder / name
    raise FileNotFoundError(name)


@pytest.mark.parametrize(("name", "title", "language"), [
    ("amc-manual.en.pdf", "Auto Multiple Choice", "en"),  # PDF /Title
    ("amc-manual.ja.pdf", "Auto Multiple Choice", "ja"),
    ("debian-reference-ch01.es.docx", "Capítulo 1. Tutoriales de GNU/Linux", "es"),  # dc:title
    ("debian-reference-ch02.zh-cn.html", "第 2 章 Debian 软件包管理", "zh"),  # <title>
    # Partly translated: about 2,000 of its 32,000 letters are Japanese, so English it is.
    ("aptitude-ch02s05s05.ja.html", "Configuration file reference", "en"),
    ("pyenv-README.md", "Simple Python Version Management: pyenv", "en"),  # first heading
    ("debian-releases.csv", "debian-releases", ""),  # file name; too little running text for a language
])  # fmt: skip
def test_titles_and_languages_of_real_documents(name, title, language):
    data = corpus_file(name).read_bytes()
    pages = parse_document(data, source=name)
    assert document_title(data, name, pages) == title
    assert detect_language(p.text for p in pages)[0] == language



def test_the_declared_title_is_read_where_the_parse_runs(monkeypatch, tmp_path):
    # Under process isolation the child that reads the PDF reads its /Title too: the worker never opens the file.
    from chunking.parsers import ReadContext
    from chunking.parsers import sandbox as parse_sandbox
    from chunking.parsers.sandbox import reads
    from chunking.settings import Settings

    calls = []
    monkeypatch.setattr(reads, "property_title", lambda data, source: calls.append(source) or "parent")
    data = corpus_file("amc-manual.en.pdf").read_bytes()
    local = tmp_path / "m.pdf"
    local.write_bytes(data)
    title, head = parse_sandbox.read_head_bounded(local, source="m.pdf", settings=Settings.from_env({}),
                                                  context=ReadContext(), pages=3)
    assert (title, [p.page_num for p in head], calls) == ("Auto Multiple Choice", [0, 1, 2], [])
    assert document_title(data, "m.pdf", head, title) == "Auto Multiple Choice"
    assert calls == []
    # In-line, the worker reads it; a PDF that a service reads under process isolation is not opened for it.
    inline = parse_sandbox.read_head_bounded(data, source="m.pdf", settings=Settings.from_env(
        {"PARSE_ISOLATION": "inline"}), context=ReadContext())
    assert (inline, calls) == (("parent", []), ["m.pdf"])
    service = parse_sandbox.read_head_bounded(b"%PDF", source="s.pdf", settings=Settings.from_env({}),
                                              context=ReadContext(),
                                              readers={".pdf": lambda data, **kw: iter([Page(0, 0, "service")])})
    assert (service, calls) == (("", []), ["m.pdf"])


def test_title_rules():
    page = [Page(0, 0, "Intro text\n\n## Usage\n")]
    assert document_title(b"x", "notes/readme.md", page) == "Usage"
    assert document_title(b"---\ntitle: 'Front matter'\n---\n# H\n", "a.md", page) == "Front matter"
    assert document_title(b"<title>Microsoft Word - plan.docx</title>", "plan.html", [Page(0, 0, "none")]) == "plan"
    assert document_title(b"<TITLE>  Two\n lines </TITLE>", "p.htm", [Page(0, 0, "x")]) == "Two lines"
    assert document_title(b"%PDF-broken", "folder/Report 2024.pdf", [Page(0, 0, "no heading")]) == "Report 2024"
    # A heading beyond the first 20,000 characters is no title.
    assert document_title(b"", "long.txt", [Page(0, 0, "x" * 20_000 + "\n# Late\n")]) == "long"


def _pdf_pages(lines_by_page: list[list[str]]) -> bytes:
    """A PDF made with fpdf2, without a /Title, one page per entry, each line written as it is."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    for lines in lines_by_page:
        pdf.add_page()
        for line in lines:
            pdf.cell(0, 8, line, new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def test_a_pdf_title_is_a_heading_on_its_first_page_only():
    # PDFium renders no headings: a "# ..." line in a code listing on page 3 is no title, the file name is.
    body = ["Plain text of a page."]
    data = _pdf_pages([body, body, ["Example:", "# This file was automatically generated by the", "x = 1"]])
    pages = parse_document(data, source="docs/spec.pdf")
    assert property_title(data, "docs/spec.pdf") == ""
    assert "\n# This file was automatically generated by the" in pages[2].text
    assert document_title(data, "docs/spec.pdf", pages) == "spec"
    # A "#" heading on page 1 (as Document Intelligence renders one) still is the title.
    data = _pdf_pages([["# Real Title", "Intro."], body, ["# comment"]])
    pages = parse_document(data, source="docs/spec.pdf")
    assert document_title(data, "docs/spec.pdf", pages) == "Real Title"
    # The rule is the format's: a paginated format that renders headings (PPTX) still looks past its first page.
    slides = [Page(0, 0, "no heading"), Page(1, 10, "# Second slide\n")]
    assert document_title(b"", "deck.pptx", slides) == "Second slide"
    assert document_title(b"", "deck.pdf", slides) == "deck"


def test_front_matter_holds_no_title_heading():
    # Without a title: key, the block is skipped: its closing --- underlines no heading.
    text = "---\nauthor: Someone\n---\n\n# Intro\n"
    assert document_title(text.encode(), "a.md", [Page(0, 0, text)]) == "Intro"
    text = "\ufeff---\nauthor: Someone\n...\nBody\n"
    assert document_title(text.encode(), "notes/b.md", [Page(0, 0, text)]) == "b"
    # Before the fix the title was "author: Someone" (a setext heading).
    # A block closed by "..." declares its title like one closed by "---".
    text = "---\ntitle: 'Dotted close'\n...\n# Heading\n"
    assert document_title(text.encode(), "c.md", [Page(0, 0, text)]) == "Dotted close"


def test_ooxml_title_from_core_properties(tmp_path):
    document = docx.Document()
    document.core_properties.title = "Quarterly <plan> & co"
    document.add_paragraph("body")
    buffer = io.BytesIO()
    document.save(buffer)
    assert property_title(buffer.getvalue(), "q.docx") == "Quarterly <plan> & co"
    # A core part too large to be properties is not read (nor are damaged packages).
    big = io.BytesIO()
    with zipfile.ZipFile(big, "w") as package:
        package.writestr("docProps/core.xml", "<dc:title>x</dc:title>" + " " * (1 << 20))
    assert property_title(big.getvalue(), "big.pptx") == ""
    assert property_title(b"PK\x03\x04 not a zip", "bad.xlsx") == ""


def test_language_needs_letters():
    assert detect_language(["12 34 56 <table><tr><td>7</td></tr></table>"]) == ("", 0.0)
    code, probability = detect_language(["Der schnelle braune Fuchs springt über den faulen Hund und läuft weg."])
    assert (code, probability >= 0.9) == ("de", True)


def test_a_long_text_is_judged_on_its_start_middle_and_end_only():
    """``SAMPLE_CHARS`` characters in all, a third from each place: a text of 26,000 characters that is German
    there and French in between (more French than German in all) reads as German."""
    german = ("Der schnelle braune Fuchs springt über den faulen Hund und läuft in den Wald. " * 60)[:4_000]
    french = ("Le renard brun rapide saute par-dessus le chien paresseux et court vers la forêt. " * 100)[:7_000]
    text = german + french + german + french + german
    assert len(text) == 26_000 > SAMPLE_CHARS and text[11_000:15_000] == german

    assert detect_language([text])[0] == "de"
    assert detect_language([french + french])[0] == "fr"


def test_acl_values_and_iso_utc():
    assert acl_values("bob, alice;bob  carol") == ("alice", "bob", "carol")
    assert acl_values("") == acl_values(None) == ()
    cest = dt.timezone(dt.timedelta(hours=2))
    assert iso_utc(dt.datetime(2024, 5, 1, 12, 20, 30, 999, tzinfo=cest)) == "2024-05-01T10:20:30Z"
    assert iso_utc(dt.datetime(2024, 5, 1)) == "2024-05-01T00:00:00Z"
    assert iso_utc(None) is None


def test_source_fields_map_metadata_tags_and_acls():
    props = SourceProperties(
        storage_url="https://acct.blob.core.windows.net/documents/hr/pay.pdf", content_type="application/octet-stream",
        last_modified="2024-05-01T10:20:30Z", size_bytes=1234,
        metadata={"Category": "policy", "ACL_Groups": "hr;finance", "acl_users": "alice"},
        tags={"department": "HR", "category": "ignored: metadata first"},
    )
    fields = source_fields(props, source="hr/pay.pdf", metadata_fields=[("category", "category"),
                                                                        ("department", "dept"), ("missing", "m")])
    assert fields == {
        "storage_url": "https://acct.blob.core.windows.net/documents/hr/pay.pdf", "content_type": "application/pdf",
        "last_modified": "2024-05-01T10:20:30Z", "acl_users": ("alice",), "acl_groups": ("finance", "hr"),
        "metadata": (("category", "policy"), ("dept", "HR")),
    }
    # Lists read from ADLS win over metadata; other metadata names can be configured.
    adls = SourceProperties(metadata={"readers": "x"}, acl_users=("o1",), acl_groups=())
    assert source_fields(adls, source="a.txt")["acl_users"] == ("o1",)
    assert source_fields(SourceProperties(metadata={"readers": "x,y"}), source="a.txt",
                         acl_users_key="readers")["acl_users"] == ("x", "y")


def test_document_fields_and_the_source_hash():
    pages = [Page(0, 0, "# Payroll\n\nSalaries are paid on the last working day of every month by transfer.")]
    props = SourceProperties(storage_url="u", content_type="text/markdown", last_modified="2024-05-01T10:20:30Z",
                             metadata={"acl_users": "alice"})
    fields = document_fields(b"x" * 10, "pay.md", pages, props)
    assert fields == DocumentFields(title="Payroll", storage_url="u", content_type="text/markdown",
                                    last_modified="2024-05-01T10:20:30Z", size_bytes=10, language="en",
                                    acl_users=("alice",))
    same = document_fields(b"x" * 10, "pay.md", pages, props)
    regrouped = document_fields(b"x" * 10, "pay.md", pages,
                                SourceProperties(**{**props.__dict__, "metadata": {"acl_users": "bob"}}))
    assert same.source_hash == fields.source_hash != regrouped.source_hash
    assert len(fields.source_hash) == 64


def test_file_properties(tmp_path):
    path = tmp_path / "notes.md"
    path.write_text("hello", encoding="utf-8")
    os.utime(path, (1_714_558_830, 1_714_558_830))
    props = file_properties(path)
    assert (props.storage_url, props.content_type, props.last_modified, props.size_bytes) == (
        path.resolve().as_uri(), "text/markdown", "2024-05-01T10:20:30Z", 5)


def test_metadata_fields_setting():
    import dataclasses

    from chunking.model import ChunkRecord
    from chunking.settings import Settings, SettingsError
    from chunking.settings.metadata import RESERVED_FIELDS

    assert {f.name for f in dataclasses.fields(ChunkRecord)} <= RESERVED_FIELDS
    meta = Settings.from_env({"METADATA_FIELDS": " category , department:dept ", "ACL_DEFAULT": "Deny",
                              "ACL_SOURCE": "adls"}).metadata
    assert (meta.metadata_fields, meta.field_names, meta.acl_default, meta.acl_source) == (
        (("category", "category"), ("department", "dept")), ("category", "dept"), "deny", "adls")
    defaults = Settings.from_env({}).metadata
    assert (defaults.metadata_fields, defaults.acl_source, defaults.acl_users_key, defaults.acl_groups_key,
            defaults.acl_default) == ((), "metadata", "acl_users", "acl_groups", "public")
    for bad in ("title", "a:Title", "x:1abc", "a,,b", "a:f,b:F", "k:azureSearchX"):
        with pytest.raises(SettingsError, match="METADATA_FIELDS must be"):
            Settings.from_env({"METADATA_FIELDS": bad})
    with pytest.raises(SettingsError, match="ACL_DEFAULT must be public or deny, got 'open'"):
        Settings.from_env({"ACL_DEFAULT": "open"})
    with pytest.raises(SettingsError, match="must name different metadata"):
        Settings.from_env({"ACL_USERS_METADATA": "who", "ACL_GROUPS_METADATA": "WHO"})


def test_the_inflated_model_cache_answers_as_the_shipped_model(tmp_path, monkeypatch):
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    from chunking.documents import language

    monkeypatch.setattr(language, "_cache_file", lambda: tmp_path / "model.npz")
    shipped = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    samples = ["Salaries are paid monthly.", "このコマンドはパッケージを解決します。", "Les salaires sont payés."]
    language._identifier.cache_clear()
    try:
        inflated = language._identifier()  # writes the cache
        assert (tmp_path / "model.npz").stat().st_size > 50_000_000
        language._identifier.cache_clear()
        cached = language._identifier()  # reads it
        assert [cached.classify(t) for t in samples] == [shipped.classify(t) for t in samples] == [
            inflated.classify(t) for t in samples]
        (tmp_path / "model.npz").write_bytes(b"damaged")
        language._identifier.cache_clear()
        assert language._identifier().classify(samples[0]) == shipped.classify(samples[0])
        assert not (tmp_path / "model.npz").exists()  # removed: the next process inflates it again
    finally:
        language._identifier.cache_clear()


def test_stage_one_records_carry_the_title_the_child_read(tmp_path, monkeypatch):
    # Through stage 1 as the Functions run it (process isolation): the DOCX's dc:title reaches every record, read
    # by the parsing child; the worker does not open the package for it.
    from chunking.documents import titles
    from chunking.ledger import Ledger, LocalLedgerStore
    from chunking.messages.batches import decode_message, load_records
    from chunking.pipeline.stage_two import run_stage_one
    from chunking.settings import Settings
    from chunking.storage.claim_check import MemoryPayloadStore

    monkeypatch.setattr(titles, "property_title", lambda data, source: "read in the worker")
    document = docx.Document()
    document.core_properties.title = "Travel expenses"
    document.add_paragraph("Receipts are kept for seven years. Travel is booked through the portal.")
    buffer = io.BytesIO()
    document.save(buffer)
    payloads = MemoryPayloadStore()
    result = run_stage_one(buffer.getvalue(), source="hr/travel.docx", container="docs",
                           settings=Settings(state_dir=tmp_path), payloads=payloads,
                           ledger=Ledger(LocalLedgerStore(tmp_path / "ledger.sqlite3")))
    records = [r for body in result.messages for r in load_records(decode_message(body), payloads)]
    assert records and {(r.title, r.language) for r in records} == {("Travel expenses", "en")}
