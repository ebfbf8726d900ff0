"""Offline, with no Azure setting: a word that exists only as pixels (a PNG of a paragraph, a scanned PDF page, a
picture inside a DOCX) is found by ``chunking search`` on the first hit, the scanned page cited by its page
number. The parse runs in the stage-1 child process under its default address-space limit
(STAGE1_MAX_MEMORY_MB=1024), OCR included."""

from __future__ import annotations

import json

from tests.pixel_documents import docx_with_picture, image_bytes, paragraph_image, pdf_of


def test_words_only_in_pixels_are_found_on_the_first_hit(cli):
    folder = cli.cwd / "scans"
    folder.mkdir()
    (folder / "note.png").write_bytes(image_bytes(paragraph_image(
        ["The quartermaster inspected the zeppelin hangar.", "Nobody expected the xylophonist to arrive."])))
    (folder / "report.pdf").write_bytes(pdf_of(
        ["A text page about harbours and ships.", paragraph_image(["The lighthouse keeper counted ninety marmots."])]))
    (folder / "memo.docx").write_bytes(docx_with_picture(
        "The memo opens with a diagram.", paragraph_image(["Pump station wiring uses ochre cables."]),
        "The memo ends here."))
    (folder / "plain.txt").write_text("Harbours, ships and a lighthouse, but no animals at all.\n", encoding="utf-8")

    run = cli("ingest", "scans")
    assert run.status == 0, run.err
    assert "\nlocal OCR: 2 pages read, 1 picture read in documents\n" in run.out  # the PNG, the scan; the DOCX


    for query, source, page in (("xylophonist", "scans/note.png", 1), ("marmots", "scans/report.pdf", 2),
                                ("ochre", "scans/memo.docx", None)):
        run = cli("search", query, "--json", "-k", "3")
        assert run.status == 0, run.err
        first = json.loads(run.out)[0]
        assert (first["source"], first["sourcepage"]) == (source, f"{source}#page={page}" if page else source)
        assert query in first["content"]

    status = cli("status")
    assert "local OCR: 2 pages and 1 picture read in the current versions" in status.out
    memo = next(line for line in status.out.splitlines() if line.startswith("scans/memo.docx "))
    assert memo.split() == ["scans/memo.docx", "indexed", "figures:", "1", "read", "by", "local", "OCR"]
