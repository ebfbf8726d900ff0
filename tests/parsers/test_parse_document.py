"""chunking.parsers.parse_document: dispatch by extension, the shared page rules, and every error's reason."""

from __future__ import annotations

import pickle

import pytest

import chunking.parsers as parsers
from chunking.formats import FORMATS
from chunking.parsers import SUPPORTED_EXTENSIONS, ParseError, UnsupportedFileType, ocr, parse_document
from tests.parsers.helpers import assert_page_invariants, parse_corpus

# (file, pages, characters of the document text); the text formats' counts are those of the files themselves.
CORPUS = [
    ("amc-manual.en.pdf", 101, None),
    ("amc-manual.ja.pdf", 78, None),
    ("aptitude-ch02s05s05.ja.html", 1, None),
    ("debian-reference-ch02.zh-cn.html", 1, None),
    ("debian-reference-ch01.es.docx", 1, None),
    ("pyenv-README.md", 1, 31_232),
    ("debian-releases.csv", 1, 1_220),
    ("iso_3166-1.json", 1, 41_781),
]


@pytest.mark.parametrize(("name", "page_count", "char_count"), CORPUS)
def test_every_corpus_file_parses_with_exact_offsets(name, page_count, char_count):
    pages = parse_corpus(name)

    assert len(pages) == page_count
    assert_page_invariants(pages)
    assert any(page.text.strip() for page in pages)
    if char_count is not None:
        assert sum(len(page.text) for page in pages) == char_count


def test_supported_extensions_are_the_format_table():
    # The rows themselves are checked one by one in tests/test_formats.py.
    assert SUPPORTED_EXTENSIONS == frozenset(FORMATS)
    assert all(ext == ext.lower() and ext.startswith(".") for ext in SUPPORTED_EXTENSIONS)


@pytest.mark.parametrize("source", ["scan.png", "photos/Receipt.JPG", "fax.tiff"])
def test_an_image_without_document_intelligence_nor_local_ocr_is_refused_naming_both(source, monkeypatch):
    monkeypatch.setattr(ocr, "available", lambda: False)  # the extra "ocr" not installed
    with pytest.raises(ParseError) as caught:
        parse_document(b"\x89PNG\r\n\x1a\n", source=source)

    assert caught.value.reason == ("image file: needs OCR: install the OCR extra (pip install 'chunking[ocr]', or "
                                   "pip install -r requirements-ocr.txt), or set DOCUMENT_INTELLIGENCE_ENDPOINT to "
                                   "read it with Document Intelligence")


@pytest.mark.parametrize("source", ["NOTES.TXT", "docs/Guide.Md", "a.b/c.markdown", "C:\\Users\\me\\readme.TxT"])
def test_extension_is_matched_case_insensitively_on_the_last_path_part(source):
    assert parse_document(b"hello", source=source)[0].text == "hello"


def test_html_extension_dispatches_to_the_html_parser():
    pages = parse_document(b"<h2>Title</h2><p>Body</p>", source="page.HTM")

    assert pages[0].text == "## Title\n\nBody"


# --- errors ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("archive/report.xyz", "unsupported file type .xyz"),
        ("photo.PSD", "unsupported file type .psd"),
        ("Makefile", "unsupported file type (no extension)"),
        ("old.doc", "unsupported file type .doc"),
    ],
)
def test_unsupported_file_type(source, reason):
    with pytest.raises(UnsupportedFileType) as caught:
        parse_document(b"data", source=source)

    assert isinstance(caught.value, ParseError) and isinstance(caught.value, ValueError)
    assert (caught.value.source, caught.value.reason) == (source, reason)
    assert str(caught.value) == f"{source}: {reason}"


@pytest.mark.parametrize("source", ["empty.pdf", "empty.docx", "empty.html", "empty.txt", "empty.json"])
def test_empty_file(source):
    with pytest.raises(ParseError) as caught:
        parse_document(b"", source=source)

    assert str(caught.value) == f"{source}: file is empty"


def test_file_over_max_size():
    limit = 1024 * 1024

    assert parse_document(b"x" * limit, source="ok.txt", max_bytes=limit)
    with pytest.raises(ParseError) as caught:
        parse_document(b"x" * (limit + 1), source="big.txt", max_bytes=limit)
    assert str(caught.value) == "big.txt: exceeds max size 1 MB"


@pytest.mark.parametrize(
    ("max_bytes", "reason"),
    [
        (200 * 1024 * 1024, "exceeds max size 200 MB"),
        (3 * 1024 * 1024 // 2, "exceeds max size 1.5 MB"),
        (10, "exceeds max size 10 bytes"),
    ],
)
def test_max_size_reason_names_the_limit(max_bytes, reason):
    class _Oversized(bytes):
        def __len__(self):  # stands for a file one byte over the limit without allocating it
            return max_bytes + 1

    with pytest.raises(ParseError) as caught:
        parse_document(_Oversized(b"x"), source="big.pdf", max_bytes=max_bytes)

    assert caught.value.reason == reason


@pytest.mark.parametrize(
    ("source", "data"),
    [("blank.txt", b"  \n\t\n"), ("chrome.html", b"<nav>Menu</nav><script>x()</script>"), ("bom.md", b"\xef\xbb\xbf")],
)
def test_document_without_text(source, data):
    with pytest.raises(ParseError) as caught:
        parse_document(data, source=source)

    assert str(caught.value) == f"{source}: no text found"


def test_unexpected_library_error_is_wrapped_with_the_file_name(monkeypatch):
    def broken_parser(data, *, source, context=None):
        raise KeyError("word/document.xml")

    monkeypatch.setitem(parsers._PARSERS, ".txt", broken_parser)

    with pytest.raises(ParseError) as caught:
        parse_document(b"text", source="in/notes.txt")

    assert str(caught.value) == "in/notes.txt: could not parse: KeyError: 'word/document.xml'"
    assert isinstance(caught.value.__cause__, KeyError)


def test_parse_error_survives_pickling():
    error = pickle.loads(pickle.dumps(UnsupportedFileType("a.xyz", "unsupported file type .xyz")))

    assert type(error) is UnsupportedFileType
    assert (error.source, error.reason) == ("a.xyz", "unsupported file type .xyz")
    assert str(error) == "a.xyz: unsupported file type .xyz"
