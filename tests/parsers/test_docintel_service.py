"""Document Intelligence as the service answers on its unhappy paths (tests/docintel_fake.py, module docstring):
Office results without bounding regions, errors in the documented envelope, the free tier's two pages per
request. Everything goes through the real SDK."""

from __future__ import annotations

import pytest

from chunking.parsers import ParseError, ReadContext
from chunking.parsers.limits import Limits
from tests.docintel_fake import Cell, DocumentIntelligenceFake, LayoutDocument, Para, Table
from tests.parsers.helpers import assert_page_invariants, numbered_pdf
from tests.parsers.helpers import parse_through_docintel as _parse

SLIDES = LayoutDocument(pages=[
    [Para("Quarterly review", "title"), Para("Sales rose in the north.")],
    [Para("Outlook", "sectionHeading"), Para("Hiring continues."),
     Table(rows=[[Cell("Team", "columnHeader"), Cell("Hires", "columnHeader")], [Cell("Support"), Cell("3")]])],
    [Para("Questions?")],
])





# -- Office results: pages from pages[].spans --------------------------------------------------------------------

def test_the_office_result_has_no_regions_and_no_page_geometry():
    from tests.docintel_fake import office_result

    result = office_result(SLIDES.result(1, 3, "prebuilt-layout"))
    assert "boundingRegions" not in str(result) and "polygon" not in str(result)
    assert [sorted(page) for page in result["pages"]] == [["pageNumber", "spans"]] * 3


def test_each_slide_of_an_office_file_is_its_own_page():
    fake = DocumentIntelligenceFake(SLIDES, office=True)

    pages = _parse(fake, data=b"PK slides", source="review.pptx")

    assert_page_invariants(pages)
    assert [(p.page_num, p.text) for p in pages] == [
        (0, "# Quarterly review\n\nSales rose in the north.\n"),
        (1, "## Outlook\n\nHiring continues.\n\n<figure><table>\n<thead><tr><th>Team</th><th>Hires</th></tr></thead>\n"
            "<tr><td>Support</td><td>3</td></tr>\n</table></figure>\n"),
        (2, "Questions?\n"),
    ]


def test_an_office_file_is_held_to_max_page_chars_per_page_not_in_total():
    sheets = LayoutDocument(pages=[[Para("x" * 60)] for _ in range(3)])
    fake = DocumentIntelligenceFake(sheets, office=True)

    pages = _parse(fake, data=b"PK sheets", source="book.xlsx", context=ReadContext(limits=Limits(max_page_chars=100)))

    assert [len(p.text) for p in pages] == [61, 61, 61]


# -- failures in the documented envelope -------------------------------------------------------------------------

def test_a_content_error_in_the_details_is_permanent_and_names_the_page():
    fake = DocumentIntelligenceFake(SLIDES)
    fake.fail_operation("InvalidContentDimensions", "The input image dimensions are out of range.", target="2")

    with pytest.raises(ParseError) as caught:
        _parse(fake, retry_total=0)

    assert caught.value.reason == ("Document Intelligence refused it: InvalidContentDimensions (page 2): The input "
                                   "image dimensions are out of range.")


def test_a_content_error_in_innererror_is_permanent_whatever_the_top_level_code():
    fake = DocumentIntelligenceFake(SLIDES)
    fake.fail_operation("InvalidContent", "The file is corrupted or format is unsupported.",
                        top_code="InternalServerError")

    with pytest.raises(ParseError) as caught:
        _parse(fake, retry_total=0)

    assert caught.value.reason == ("Document Intelligence refused it: InvalidContent: The file is corrupted or "
                                   "format is unsupported.")


def test_a_failed_operation_with_only_a_service_fault_stays_transient():
    from azure.core.exceptions import HttpResponseError

    fake = DocumentIntelligenceFake(SLIDES)
    fake.fail_operation("InternalServerError", "An unexpected error occurred.", top_code="InternalServerError")

    with pytest.raises(HttpResponseError) as caught:
        _parse(fake, retry_total=0)

    assert not isinstance(caught.value, ParseError)


# -- pages the service did not analyse ---------------------------------------------------------------------------

def test_the_free_tier_two_pages_per_request_are_followed_by_the_next_range():
    document = LayoutDocument(pages=[[Para(f"Page {n} text.")] for n in range(1, 6)])
    fake = DocumentIntelligenceFake.free_tier(document)
    context = ReadContext()

    pages = _parse(fake, data=numbered_pdf(5), context=context)

    assert fake.analyses() == [None, "3-5", "5-5"]
    assert [(p.page_num, p.text) for p in pages] == [(n, f"Page {n + 1} text.\n") for n in range(5)]
    assert context.notes == ["Document Intelligence: 5 pages analysed in 3 requests"]


def test_a_service_that_analyses_no_page_of_a_range_is_an_error_naming_the_pages():
    document = LayoutDocument(pages=[[Para(f"Page {n} text.")] for n in range(1, 3)])  # the service sees 2 pages
    fake = DocumentIntelligenceFake(document)

    with pytest.raises(ParseError) as caught:
        _parse(fake, data=numbered_pdf(4))  # PDFium counts 4

    assert caught.value.reason == ("Document Intelligence analysed pages 1-2 of 4; pages 3-4 came back empty "
                                   "(nothing is indexed rather than a part)")


# -- offsets in the unit asked for -------------------------------------------------------------------------------

ACCENTS = LayoutDocument(pages=[[Para("Cafe\u0301 cre\u0300me"), Para("Thumbs \U0001F44D\U0001F3FD up")],
                                [Para("Last line")]])


def test_the_fake_counts_text_elements_unless_asked_otherwise():
    from tests.docintel_fake import in_string_index_type

    built = ACCENTS.result(1, 2, "prebuilt-layout")
    elements = in_string_index_type(built, "textElements")
    code_points = in_string_index_type(built, "unicodeCodePoint")
    utf16 = in_string_index_type(built, "utf16CodeUnit")

    assert [p["spans"][0] for p in elements["paragraphs"]] == [
        {"offset": 0, "length": 10}, {"offset": 11, "length": 11}, {"offset": 23, "length": 9}]
    assert [p["spans"][0] for p in code_points["paragraphs"]] == [
        {"offset": 0, "length": 12}, {"offset": 13, "length": 12}, {"offset": 26, "length": 9}]
    assert [p["spans"][0] for p in utf16["paragraphs"]] == [
        {"offset": 0, "length": 12}, {"offset": 13, "length": 14}, {"offset": 28, "length": 9}]
    assert elements["stringIndexType"] == "textElements"


def test_the_reader_asks_for_code_points_so_spans_slice_python_strings():
    fake = DocumentIntelligenceFake(ACCENTS, office=True)

    pages = _parse(fake, data=b"PK accents", source="accents.docx")

    assert fake.requests[0][2]["stringIndexType"] == "unicodeCodePoint"
    result = fake._operations["op0"]["body"]["analyzeResult"]
    assert [result["content"][s["offset"]:s["offset"] + s["length"]] for p in result["paragraphs"]
            for s in p["spans"]] == ["Cafe\u0301 cre\u0300me", "Thumbs \U0001F44D\U0001F3FD up", "Last line"]
    assert [p.text for p in pages] == ["Cafe\u0301 cre\u0300me\n\nThumbs \U0001F44D\U0001F3FD up\n", "Last line\n"]


def test_a_page_left_out_inside_a_range_is_an_error_not_a_loss():
    document = LayoutDocument(pages=[[Para(f"Page {n} text.")] for n in range(1, 4)])
    fake = DocumentIntelligenceFake(document)
    original = document.result

    def without_page_two(first, last, model_id):
        result = original(first, last, model_id)
        result["pages"] = [p for p in result["pages"] if p["pageNumber"] != 2]
        return result

    document.result = without_page_two

    with pytest.raises(ParseError) as caught:
        _parse(fake, data=numbered_pdf(3))

    assert caught.value.reason == ("Document Intelligence left out page 2 of 3 in pages 1-3 (nothing is indexed "
                                   "rather than a part)")
