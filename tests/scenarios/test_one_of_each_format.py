"""A folder with one file of each format this pipeline reads besides the long-standing ones (EPUB, OpenDocument,
RTF, XLS, TSV, code, SQL, a mail with attachments, an Outlook message with an attached message, a ZIP archive), each
holding a marker word on a known page or member: after ``chunking ingest`` every marker is found, and its best hit
cites the right page or member."""

from __future__ import annotations

import datetime
import io
import zipfile
from email.message import EmailMessage

import pytest

from chunking.embeddings import OfflineLexicalEmbedder
from chunking.formats import member_root
from chunking.index.local import LocalIndex
from chunking.ledger import Ledger, LocalLedgerStore
from chunking.pipeline.ingest import collect_files, ingest_files
from chunking.retrieval import search
from chunking.settings import Settings
from tests.parsers.made import epub, msg_tree, odf, outlook_message, rtf, xls


def _pdf(pages: list[str]) -> bytes:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    for text in pages:
        pdf.add_page()
        pdf.multi_cell(0, 6, text)
    return bytes(pdf.output())


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as package:
        for name, data in members.items():
            package.writestr(name, data)
    return buffer.getvalue()


def _mail() -> bytes:
    message = EmailMessage()
    message["Subject"], message["From"], message["To"] = "Field trip", "sam@example.com", "team@example.com"
    message.set_content("We saw a marmot near the ridge.\n")
    message.add_attachment(_pdf(["Day one: rain.", "Day two: a jackal crossed the road."]), maintype="application",
                           subtype="pdf", filename="report.pdf")
    message.add_attachment(rtf(r"{\pard An ocelot slept.\par}"), maintype="application", subtype="rtf",
                           filename="notes.rtf")
    return message.as_bytes()


FILES = {
    "book.epub": lambda: epub([("c1.xhtml", "<h1>One</h1><p>A quiet harbour.</p>"),
                               ("c2.xhtml", "<h1>Two</h1><p>A quokka waved.</p>")]),
    "minutes.odt": lambda: odf("text", "<text:h text:outline-level=\"1\">Minutes</text:h>"
                                       "<text:p>The narwhal budget passed.</text:p>"),
    "sheet.ods": lambda: odf("spreadsheet", '<table:table table:name="A"><table:table-row><table:table-cell>'
                                            "<text:p>plain</text:p></table:table-cell></table:table-row></table:table>"
                                            '<table:table table:name="B"><table:table-row><table:table-cell>'
                                            "<text:p>wombat</text:p></table:table-cell></table:table-row></table:table>"),
    "deck.odp": lambda: odf("presentation", '<draw:page draw:name="1"/><draw:page draw:name="2"><draw:frame>'
                                            "<draw:text-box><text:p>An axolotl smiled.</text:p></draw:text-box>"
                                            "</draw:frame></draw:page>"),
    "letter.rtf": lambda: rtf(r"{\pard The pangolin arrived.\par}"),
    "old.xls": lambda: xls({"Zoo": [["Animal", "Since"], ["tapir", datetime.date(2001, 1, 1)]]}),
    "rows.tsv": lambda: b"animal\tcount\nibex\t3\n",
    "Cart.cs": lambda: b"class Cart\n{\n    // gecko discount\n    int Total() { return 0; }\n}\n",
    "query.sql": lambda: b"SELECT name FROM animals WHERE name = 'lemur';\n",
    "trip.eml": _mail,
    "project.zip": lambda: _zip({"inner/readme.md": b"# Readme\n\nA bison grazes.\n",
                                 "inner/story.epub": epub([("s.xhtml", "<p>A heron waited.</p>")])}),
}
MARKERS = {
    "quokka": "docs/book.epub#page=2",
    "narwhal": "docs/minutes.odt",
    "wombat": "docs/sheet.ods#page=2",
    "axolotl": "docs/deck.odp#page=2",
    "pangolin": "docs/letter.rtf",
    "tapir": "docs/old.xls#page=1",
    "ibex": "docs/rows.tsv",
    "gecko": "docs/Cart.cs",
    "lemur": "docs/query.sql",
    "marmot": "docs/trip.eml",
    "jackal": "docs/trip.eml/attachments/report.pdf#page=2",
    "ocelot": "docs/trip.eml/attachments/notes.rtf",
    "bison": "docs/project.zip/inner/readme.md",
    "heron": "docs/project.zip/inner/story.epub#page=1",
}


# An Outlook message: its body, an attachment, and an attached message (a .msg of its own) with an attachment.
FILES["memo.msg"] = lambda: outlook_message(
    subject="Herd count", sender=("Ana", "ana@example.com"), body="A walrus hauled out on the beach.",
    attachments=[{"filename": "tally.rtf", "data": rtf(r"{\pard Nine yaks in the barn.\par}")},
                 {"name": "Fwd: sightings", "message": msg_tree(
                     subject="Sightings", body="A vicuna grazed at dawn.", embedded=True,
                     attachments=[{"filename": "log.txt", "data": b"One tamarin called."}])}])
MARKERS.update({
    "walrus": "docs/memo.msg",
    "yaks": "docs/memo.msg/attachments/tally.rtf",
    "vicuna": "docs/memo.msg/attachments/Fwd: sightings.msg",
    "tamarin": "docs/memo.msg/attachments/Fwd: sightings.msg/attachments/log.txt",
})


@pytest.fixture(scope="module")
def ingested(tmp_path_factory):
    root = tmp_path_factory.mktemp("formats")
    docs = root / "docs"
    docs.mkdir()
    for name, build in FILES.items():
        (docs / name).write_bytes(build())
    index = LocalIndex(root / "state" / "index.sqlite3", 64)
    index.ensure()
    embedder = OfflineLexicalEmbedder(64)
    files, scopes, _ = collect_files([docs], cwd=root)
    summary = ingest_files(files, scopes=scopes, settings=Settings(state_dir=root / "state", embedding_dimensions=64),
                           embedder=embedder, index=index,
                           ledger=Ledger(LocalLedgerStore(root / "state" / "ledger.sqlite3")))
    return summary, index, embedder


def test_every_file_is_indexed(ingested):
    summary, _, _ = ingested
    # A container's members (mails, archives) follow it as rows of their own, each added too.
    assert {row.source: row.outcome for row in summary.rows if member_root(row.source) is None} == {
        f"docs/{name}": "added" for name in FILES}
    assert {row.outcome for row in summary.rows} == {"added"}


@pytest.mark.parametrize(("marker", "cited"), list(MARKERS.items()))
def test_every_marker_is_found_on_its_page_or_member(ingested, marker, cited):
    _, index, embedder = ingested
    hits = search(marker, index=index, embedder=embedder, k=3, ranking="bm25")
    assert hits
    record = hits[0].record
    source, _, page = cited.partition("#page=")
    assert record.source == source
    if page:  # the cited page lies in the chunk's pages: a title-only first slide joins the slide after it, and
        # the chunk then cites from its first page (docs/splitters.md#step-3-accumulate)
        assert record.page_start + 1 <= int(page) <= record.page_end + 1, (record.page_start, record.page_end)
