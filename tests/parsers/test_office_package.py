"""A ZIP that is not an Office package (no ``[Content_Types].xml``: a renamed archive, an EPUB or OpenDocument file
named ``.docx``) is refused with one reason for DOCX, PPTX and XLSX alike, not with the library's ``KeyError``."""

from __future__ import annotations

import pytest

from chunking.parsers import ParseError, parse_document
from tests.parsers.made import zip_package


@pytest.mark.parametrize("kind", ["DOCX", "PPTX", "XLSX"])
def test_a_zip_without_content_types_is_not_an_office_file(kind):
    data = zip_package({"notes.txt": b"Just an archive.", "mimetype": b"application/vnd.oasis.opendocument.text"})
    with pytest.raises(ParseError) as caught:
        parse_document(data, source=f"renamed.{kind.lower()}")

    assert caught.value.reason == f"not a valid {kind}: a ZIP without [Content_Types].xml, so not an Office file"


def test_a_member_encrypted_with_zip_encryption_is_named():
    # Office encrypts a whole file as an OLE compound file; a ZIP-encrypted member is refused by its name.
    import io

    from docx import Document

    from tests.parsers.made import flag_encrypted

    written = io.BytesIO()
    document = Document()
    document.add_paragraph("Hello")
    document.save(written)
    with pytest.raises(ParseError) as caught:
        parse_document(flag_encrypted(written.getvalue(), "word/document.xml"), source="a.docx")

    assert caught.value.reason == "not a valid DOCX: word/document.xml is encrypted"
