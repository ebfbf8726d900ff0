"""Stage 1 on every hostile input the tests write, one fresh process each: the ledger reason (or note), the peak
RSS and the seconds, as a Markdown table.

Run by hand from the repository root:

    .venv/bin/python benchmarks/hostile_inputs.py

The inputs are the full-size cases (a 1 GiB flate bomb and zip bomb, where the tests use 200 MiB ones); the
tests in ``tests/scenarios/hostile/`` assert the same reasons and the 500 MB bound. Each case parses and splits in one
process (``PARSE_ISOLATION=inline``), so its peak RSS is the document's whole cost, except the slow page, which
needs the default child process to be stopped (its peak is the parent's; the child is killed).
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.scenarios.hostile import generate  # noqa: E402
from tests.scenarios.hostile.measure import stage_one  # noqa: E402

_ENTITY_XML = (generate.DOCUMENT_HEAD.replace(b"?>\n", b'?>\n<!DOCTYPE w:document [<!ENTITY ext SYSTEM '
                                              b'"file:///etc/passwd">]>', 1)
               + b"<w:p><w:r><w:t>Before &ext; after the reference.</w:t></w:r></w:p>" + generate.DOCUMENT_TAIL)


def _types_dtd() -> bytes:
    small = generate.small_docx()
    with zipfile.ZipFile(io.BytesIO(small)) as package:
        types, document = package.read("[Content_Types].xml"), package.read("word/document.xml")
    hostile = types.replace(b"?>", b'?><!DOCTYPE Types [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>', 1)
    return generate.docx_with(document, replace={"[Content_Types].xml": hostile})


# A paragraph of 190 bytes of XML holding two characters of text.
_FORMATTED = (b'<w:p><w:pPr><w:spacing w:before="0" w:after="0"/><w:jc w:val="left"/></w:pPr><w:r><w:rPr><w:b/>'
              b'<w:i/><w:sz w:val="24"/><w:szCs w:val="24"/><w:color w:val="333333"/></w:rPr><w:t>ok</w:t></w:r></w:p>')

CASES = [
    ("1 MB flate-bomb PDF (inflates to 1 GiB)", "bomb.pdf", lambda: generate.flate_bomb_pdf(1024), {}),
    ("330 KB LZW-bomb PDF (inflates to 1.3 GB)", "lzw.pdf",
     lambda: generate.filtered_pdf(generate.lzw_bomb(180), b"/LZWDecode"), {}),
    ("16 MB RunLength-bomb PDF (inflates to 1 GiB)", "rle.pdf",
     lambda: generate.filtered_pdf(generate.run_length_bomb(1024), b"/RunLengthDecode"), {}),
    ("PDF page whose text takes PDFium 3-5 s in one call (STAGE1_MAX_SECONDS=1)", "slow.pdf",
     lambda: generate.text_pdf([b"BT /F1 1 Tf " + b"1 0 Td (ab) Tj " * 1_000_000 + b"ET\n"]),
     {"STAGE1_MAX_SECONDS": "1", "PARSE_ISOLATION": "process"}),
    ("100,000-page PDF", "pages.pdf",
     lambda: generate.text_pdf([generate.text_line(b"page %d" % i) for i in range(100_000)]), {}),
    ("truncated PDF", "cut.pdf", lambda: generate.text_pdf([generate.text_line(b"cut")])[:200], {}),
    ("PDF page-tree cycle", "cycle.pdf", lambda: generate.pdf([b"<< /Type /Catalog /Pages 2 0 R >>",
                                                               b"<< /Type /Pages /Kids [2 0 R] /Count 1 >>"]), {}),
    ("DOCX zip bomb, sizes declared 1 KB (inflates to 1 GiB)", "lying.docx",
     lambda: generate.docx_with(generate.paragraphs(1024 << 20, b"<w:p/>" * 100), declared=1000), {}),
    ("DOCX with a 250 MB document.xml", "big.docx", lambda: generate.docx_with(generate.paragraphs(250 << 20)), {}),
    ("DOCX with a 95 MB document.xml (under the limit)", "95.docx",
     lambda: generate.docx_with(generate.paragraphs(95 << 20)), {}),
    ("DOCX with a 95 MB document.xml of formatting, 1 MB of text (under the limits)", "markup.docx",
     lambda: generate.docx_with(generate.paragraphs(95 << 20, _FORMATTED)), {}),
    ("DOCX external-entity reference", "entity.docx", lambda: generate.docx_with(_ENTITY_XML), {}),
    ("DOCX DTD in [Content_Types].xml", "types.docx", _types_dtd, {}),
    ("50 MB text without newlines", "line.txt", lambda: b"x" * 50_000_000, {}),
    ("10 MB of words without newlines (under the limit)", "words.txt", lambda: b"word " * 1_999_000, {}),
    ("900-deep JSON", "deep.json", lambda: b"[" * 900 + b"]" * 900, {}),
    ("100k-deep JSON", "deeper.json", lambda: b"[" * 100_000, {}),
    ("HTML nested 5,000 deep", "deep.html", lambda: b"<div>" * 5000 + b"x" + b"</div>" * 5000, {}),
    ("Markdown list nested 3,000 deep", "deep.md",
     lambda: "".join("  " * i + "- item\n" for i in range(3000)).encode(), {}),
    ("cp1252 text without a charset", "cp1252.txt", lambda: "Crème brûlée à la carte.".encode("cp1252"), {}),
    ("HTML declaring iso-8859-1, bytes UTF-8", "decl.html",
     lambda: '<meta charset="iso-8859-1"><p>Crème brûlée</p>'.encode(), {}),
]


def main() -> int:
    print("| input | ledger | reason or note | peak RSS | seconds |")
    print("|---|---|---|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for n, (label, name, make, env) in enumerate(CASES):
            path = Path(tmp) / name
            path.write_bytes(make())
            measured = stage_one(path, Path(tmp) / f"state{n}", env=env)
            path.unlink()
            text = measured.reason or measured.note or f"{measured.pages} pages, {measured.chunks} chunks"
            print(f"| {label} | {measured.status} | {text} | {measured.peak_rss_mb:.0f} MB | "
                  f"{measured.seconds:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split())).parse_args()
    raise SystemExit(main())
