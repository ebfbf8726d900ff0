"""docs/parsers.md#examples-of-chunks is what the code makes of one small document per format."""

from __future__ import annotations

from tests.parsers.examples import EXAMPLES, chunks_of, documented, section


def test_the_documented_examples_are_what_the_code_makes_now():
    # On a difference: python -m tests.parsers.examples --write, and read the diff of docs/parsers.md.
    assert documented() == section()


def test_every_format_has_an_example():
    sources = [example.source for example in EXAMPLES]
    assert sorted(source.rsplit(".", 1)[1] for source in sources) == [
        "cs", "csv", "docx", "eml", "epub", "html", "json", "md", "msg", "odt", "pdf", "pdf", "png", "pptx", "rtf", "txt",
        "xls", "xlsx"]
    assert [e.source for e in EXAMPLES if e.layout is not None] == ["report.pdf", "delivery.png"]


def test_a_pdf_read_by_the_service_has_heading_paths_and_one_read_locally_has_none():
    by_source = {example.source: example for example in EXAMPLES}

    assert [headings for _, _, _, headings, _ in chunks_of(by_source["report.pdf"])] == [
        ("Annual report 2024",), ("Annual report 2024", "Outlook")]
    assert [headings for _, _, _, headings, _ in chunks_of(by_source["prices.pdf"])] == [(), ()]
