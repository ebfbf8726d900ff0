"""chunking.parsers.docintel through the real SDK against the fake service of tests/docintel_fake.py."""

from __future__ import annotations

import pytest
from azure.core.exceptions import AzureError, HttpResponseError

from chunking.parsers import ParseError, ReadContext
from tests.docintel_fake import Cell, DocumentIntelligenceFake, Figure, LayoutDocument, Para, Table
from tests.parsers.helpers import assert_page_invariants, numbered_pdf
from tests.parsers.helpers import docintel_settings as _settings
from tests.parsers.helpers import parse_through_docintel as _parse

REPORT = LayoutDocument(pages=[
    [Para("ACME Annual Report", "pageHeader"), Para("Annual report 2024", "title"), Para("Overview", "sectionHeading"),
     Para("Revenue grew in every region, as the table shows", continues=True),
     Table(rows=[[Cell("Region", "columnHeader"), Cell("Q1", "columnHeader"), Cell("Q2", "columnHeader")],
                 [Cell("North", row_span=2), Cell("10"), Cell("12")], [None, Cell("11"), Cell("13")],
                 [Cell("Total & more", column_span=3), None, None]], caption="Table 1: Sales", rows_on_next_page=1),
     Para("1", "pageNumber")],
    [Figure(caption="Figure 1: Growth", texts=["2023", "2024"]), Para("A note.", "footnote"),
     Para("Page 2", "pageFooter")],
])




def test_layout_is_rendered_with_roles_tables_figures_and_furniture_exactly():
    fake = DocumentIntelligenceFake(REPORT)
    context = ReadContext()

    pages = _parse(fake, context=context)

    assert_page_invariants(pages)
    assert [(p.header, p.text, p.footer) for p in pages] == [
        ("ACME Annual Report\n",
         "# Annual report 2024\n\n## Overview\n\nRevenue grew in every region, as the table shows\n\n"
         "<figure><table>\n<caption>Table 1: Sales</caption>\n"
         "<thead><tr><th>Region</th><th>Q1</th><th>Q2</th></tr></thead>\n"
         '<tr><td rowspan="2">North</td><td>10</td><td>12</td></tr>\n<tr><td>11</td><td>13</td></tr>\n'
         '<tr><td colspan="3">Total &amp; more</td></tr>\n</table></figure>\n',
         "1\n"),
        ("", '<figure data-page="2" data-bbox="1,2,5,4.5"><figcaption>Figure 1: Growth</figcaption>\n2023\n2024\n'
             "</figure>\n\nA note.\n", "Page 2\n"),
    ]
    assert context.notes == ["Document Intelligence: 2 pages analysed in 1 request"]


def test_a_table_continued_past_the_page_footer_stays_whole_and_the_furniture_stays_out():
    rows = [[Cell("Part", "columnHeader"), Cell("Qty", "columnHeader")], [Cell("Bolt"), Cell("4")],
            [Cell("Nut"), Cell("8")], [Cell("Washer"), Cell("8")]]
    document = LayoutDocument(pages=[
        [Para("Parts list", "sectionHeading"),
         Table(rows=rows, rows_on_next_page=2, between_pages=[Para("1", "pageNumber"), Para("ACME", "pageHeader")])],
        [Para("Keep spares.")],
    ])
    fake = DocumentIntelligenceFake(document)

    pages = _parse(fake)

    [table] = fake.document.result(1, 2, "prebuilt-layout")["tables"]
    assert [region["pageNumber"] for region in table["boundingRegions"]] == [1, 2]
    assert len(table["spans"]) == 2  # around the furniture between its pages
    assert_page_invariants(pages)
    assert [(p.header, p.text, p.footer) for p in pages] == [
        ("", "## Parts list\n\n<figure><table>\n<thead><tr><th>Part</th><th>Qty</th></tr></thead>\n"
             "<tr><td>Bolt</td><td>4</td></tr>\n<tr><td>Nut</td><td>8</td></tr>\n<tr><td>Washer</td><td>8</td></tr>\n"
             "</table></figure>\n", "1\n"),
        ("ACME\n", "Keep spares.\n", ""),
    ]


def test_the_operation_is_submitted_once_and_polled_until_it_succeeds():
    fake = DocumentIntelligenceFake(REPORT, running_polls=3, poll_retry_after_s=2)

    _parse(fake)

    methods = [method for method, _, _ in fake.requests]
    assert methods == ["POST", "GET", "GET", "GET", "GET"]
    post = fake.requests[0]
    assert post[1] == "/documentintelligence/documentModels/prebuilt-layout:analyze"
    assert post[2] == {"api-version": "2024-11-30", "stringIndexType": "unicodeCodePoint"}
    assert fake.sleeps.count(2) == 3  # each "running" answer's Retry-After



def test_a_long_pdf_is_analysed_in_page_ranges_and_the_cost_is_noted():
    document = LayoutDocument(pages=[[Para(f"Page {n} text.")] for n in range(1, 6)])
    fake = DocumentIntelligenceFake(document, max_pages_per_request=2)  # as the free tier
    context = ReadContext()

    pages = _parse(fake, data=numbered_pdf(5), settings=_settings(DOCUMENT_INTELLIGENCE_PAGES_PER_REQUEST="2"),
                   context=context)

    assert fake.analyses() == ["1-2", "3-4", "5-5"]
    assert [(p.page_num, p.text) for p in pages] == [(n, f"Page {n + 1} text.\n") for n in range(5)]
    assert_page_invariants(pages)
    assert context.notes == ["Document Intelligence: 5 pages analysed in 3 requests"]


def test_a_service_that_stops_early_is_asked_for_the_rest_no_page_is_lost():
    document = LayoutDocument(pages=[[Para(f"Page {n} text.")] for n in range(1, 6)])
    fake = DocumentIntelligenceFake(document, max_pages_per_request=2)

    pages = _parse(fake, data=numbered_pdf(5))  # the default, 2000 pages per request: one request, then the rest

    assert fake.analyses() == [None, "3-5", "5-5"]
    assert [p.text for p in pages] == [f"Page {n} text.\n" for n in range(1, 6)]


def test_429_is_retried_after_the_retry_after_the_service_sends():
    fake = DocumentIntelligenceFake(REPORT)
    fake.throttle(2, retry_after_s=7)

    pages = _parse(fake)

    assert pages[0].text.startswith("# Annual report 2024")
    assert fake.sleeps[:2] == [7, 7]


def test_5xx_is_retried_with_back_off():
    fake = DocumentIntelligenceFake(REPORT)
    fake.fail(2, status=503)

    pages = _parse(fake, retry_backoff_factor=0.5)

    assert len(pages) == 2
    # azure-core retries the first failure at once, then waits backoff_factor * 2 ** (failures - 1) seconds.
    assert fake.sleeps[0] == 1.0


@pytest.mark.parametrize("status", [429, 500, 503])
def test_a_service_that_keeps_failing_raises_its_error_not_a_parse_error(status):
    fake = DocumentIntelligenceFake(REPORT)
    fake.throttle(10) if status == 429 else fake.fail(10, status)

    with pytest.raises(HttpResponseError) as caught:
        _parse(fake, retry_total=2)

    assert caught.value.status_code == status
    assert isinstance(caught.value, AzureError) and not isinstance(caught.value, ParseError)


def test_a_failed_operation_is_a_parse_error_naming_the_service_and_code():
    fake = DocumentIntelligenceFake(REPORT)
    fake.fail_operation("InvalidContent", "The file is corrupted or format is unsupported.")

    with pytest.raises(ParseError) as caught:
        _parse(fake)

    assert caught.value.reason == ("Document Intelligence refused it: InvalidContent: The file is corrupted or "
                                   "format is unsupported.")


def test_a_file_over_the_size_limits_is_refused():
    with pytest.raises(ParseError) as caught:
        _parse(DocumentIntelligenceFake(REPORT), data=b"%PDF" + bytes(2 * 1024 * 1024),
               settings=_settings(DOCUMENT_INTELLIGENCE_MAX_BYTES=str(1024 * 1024)))
    assert caught.value.reason == ("larger than 1 MB, the most Document Intelligence accepts "
                                   "(DOCUMENT_INTELLIGENCE_MAX_BYTES)")

    fake = DocumentIntelligenceFake(REPORT, max_bytes=1000)  # the service's own limit is lower (free tier)
    with pytest.raises(ParseError) as caught:
        _parse(fake, data=b"x" * 2000, source="scan.png")
    assert caught.value.reason == ("Document Intelligence refused it: InvalidContentLength: The input document is "
                                   "too large.")  # the specific code of innererror, not the generic top level


def test_an_image_is_read_by_the_service_with_the_key_header():
    fake = DocumentIntelligenceFake(LayoutDocument(pages=[[Para("Receipt total 12.50")]]))
    sent = []
    original = fake.send
    fake.send = lambda request, **kw: (sent.append({k.lower(): v for k, v in request.headers.items()}),
                                       original(request, **kw))[1]

    [page] = _parse(fake, data=b"\x89PNG\r\n\x1a\n", source="receipt.png")

    assert page.text == "Receipt total 12.50\n"
    assert sent[0]["ocp-apim-subscription-key"] == "test-key"
    assert sent[0]["content-type"] == "application/octet-stream"


def test_too_many_pages_from_the_service_are_refused_by_max_pages():
    fake = DocumentIntelligenceFake(LayoutDocument(pages=[[Para("x")], [Para("y")], [Para("z")]]))
    from chunking.parsers.limits import Limits

    with pytest.raises(ParseError) as caught:
        _parse(fake, data=b"PK docx", source="long.docx", context=ReadContext(limits=Limits(max_pages=2)))

    assert caught.value.reason == "3 pages, more than 2 (MAX_PAGES)"
