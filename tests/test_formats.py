"""Per-format default splitters in the pipeline, overrides, and their part in the version fingerprint."""

import json

import pytest

from chunking.documents.splitter import splitter_for
from chunking.formats import (
    CODE_LANGUAGES,
    DOCINTEL_EXTENSIONS,
    FORMATS,
    HEADING_EXTENSIONS,
    PAGINATED_EXTENSIONS,
    SUPPORTED_EXTENSIONS,
    TITLE_SOURCES,
    Format,
    content_type_of,
    format_of,
    splitter_name,
)
from chunking.model import Page
from chunking.parsers import parse_document
from chunking.settings import Settings, SettingsError
from chunking.tokens import count_tokens


def test_defaults_and_overrides():
    assert [splitter_name(f"x{ext}") for ext in (".pdf", ".docx", ".txt", ".md", ".html", ".htm", ".json", ".csv",
                                                  ".py", ".rs", ".unknown")] == [
        "sentence", "sentence", "sentence", "markdown", "html", "html", "json", "csv", "code:python",
        "code:rust", "sentence"]
    settings = Settings.from_env({"SPLITTERS": ".TXT=markdown, .html=sentence"})
    assert settings.splitters == {".txt": "markdown", ".html": "sentence"}
    assert splitter_for("a.txt", settings).name == "markdown"
    assert splitter_for("a.html", settings).name == "sentence"
    with pytest.raises(SettingsError, match="SPLITTERS"):
        Settings.from_env({"SPLITTERS": "txt"})
    with pytest.raises(ValueError, match="unknown splitter 'nope'"):
        splitter_for("a.txt", Settings(splitters={".txt": "nope"}))


# Every row of the format table, every column: parser, splitter, paginated, headings, title_source, page_ranges,
# zip_package, docintel, program_code, members ("p" paginated, "h" headings, "r" page ranges, "z" ZIP package,
# "d" Document Intelligence, "c" program code, "m" members: a container).
EXPECTED_TABLE = {
    ".pdf": ("pdf", "sentence", "pdf-info", "prd"),
    ".docx": ("docx", "sentence", "ooxml-core", "hzd"),
    ".pptx": ("pptx", "sentence", "ooxml-core", "phzd"),
    ".xlsx": ("xlsx", "sentence", "ooxml-core", "pzd"),
    ".xlsm": ("xlsx", "sentence", "ooxml-core", "pz"),
    **{ext: ("image", "sentence", "none", "pd") for ext in (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".heif")},
    ".gif": ("image", "sentence", "none", "p"),  # read by local OCR only: the layout model does not take GIF
    ".html": ("html", "html", "html-title", "hd"),
    ".htm": ("html", "html", "html-title", "hd"),
    ".json": ("json", "json", "none", ""),
    ".csv": ("text", "csv", "none", ""),
    ".md": ("text", "markdown", "front-matter", "h"),
    ".markdown": ("text", "markdown", "front-matter", "h"),
    **{ext: ("text", "sentence", "none", "") for ext in (".txt", ".text", ".log", ".xml", ".yaml", ".yml")},
    **{ext: ("text", f"code:{language}", "none", "c") for ext, language in (
        (".py", "python"), (".js", "js"), (".ts", "ts"), (".go", "go"), (".java", "java"), (".c", "c"), (".h", "c"),
        (".cpp", "cpp"), (".rs", "rust"))},
    ".rst": ("text", "code:rst", "none", ""),
}
# EPUB, OpenDocument, RTF, legacy Excel, and more code and text files.
EXPECTED_TABLE.update({
    ".epub": ("epub", "sentence", "epub-opf", "phz"),
    ".odt": ("odf", "sentence", "odf-meta", "hz"),
    ".ods": ("odf", "sentence", "odf-meta", "pz"),
    ".odp": ("odf", "sentence", "odf-meta", "phz"),
    ".rtf": ("rtf", "sentence", "rtf-info", ""),
    ".xls": ("xls", "sentence", "none", "p"),
    ".tsv": ("text", "csv", "none", ""),
    **{ext: ("text", "sentence", "none", "") for ext in (".sql", ".sh", ".bash", ".toml", ".ini", ".cfg", ".conf",
                                                         ".properties")},
    **{ext: ("text", f"code:{language}", "none", "c") for ext, language in (
        (".cs", "csharp"), (".kt", "kotlin"), (".kts", "kotlin"), (".scala", "scala"), (".swift", "swift"),
        (".php", "php"), (".rb", "ruby"), (".lua", "lua"), (".pl", "perl"), (".pm", "perl"), (".hs", "haskell"),
        (".ex", "elixir"), (".exs", "elixir"), (".ps1", "powershell"), (".proto", "proto"), (".sol", "sol"),
        (".r", "r"), (".cc", "cpp"), (".cxx", "cpp"), (".hpp", "cpp"), (".hh", "cpp"), (".jsx", "js"),
        (".mjs", "js"), (".cjs", "js"), (".tsx", "ts"), (".cob", "cobol"), (".cbl", "cobol"))},
    ".tex": ("text", "code:latex", "none", ""),
    ".eml": ("eml", "sentence", "none", "hm"),
    ".zip": ("archive", "sentence", "none", "m"),
})
EXPECTED_TABLE.update({".msg": ("msg", "sentence", "none", "hm")})


def test_every_row_of_the_format_table_column_by_column():
    def row(fmt: Format) -> tuple[str, str, str, str]:
        flags = [("p", fmt.paginated), ("h", fmt.headings), ("r", fmt.page_ranges), ("z", fmt.zip_package),
                 ("d", fmt.docintel), ("c", fmt.program_code), ("m", fmt.members)]
        return fmt.parser, fmt.splitter, fmt.title_source, "".join(letter for letter, on in flags if on)

    assert {ext: row(fmt) for ext, fmt in FORMATS.items()} == EXPECTED_TABLE
    assert all(fmt.title_source in TITLE_SOURCES for fmt in FORMATS.values())
    # Only a format that reads page windows is counted and read in page ranges; a ZIP package is Office Open XML,
    # OpenDocument or EPUB (its title is in one of its parts).
    assert all(fmt.paginated for fmt in FORMATS.values() if fmt.page_ranges)
    assert all(fmt.title_source in ("ooxml-core", "odf-meta", "epub-opf") for fmt in FORMATS.values()
               if fmt.zip_package)
    # The derived sets are the columns.
    assert SUPPORTED_EXTENSIONS == set(EXPECTED_TABLE)
    assert PAGINATED_EXTENSIONS == {ext for ext, (*_, flags) in EXPECTED_TABLE.items() if "p" in flags}
    assert HEADING_EXTENSIONS == {ext for ext, (*_, flags) in EXPECTED_TABLE.items() if "h" in flags}
    assert DOCINTEL_EXTENSIONS == {ext for ext, (*_, flags) in EXPECTED_TABLE.items() if "d" in flags}
    assert CODE_LANGUAGES == {ext: splitter[5:] for ext, (_, splitter, *_) in EXPECTED_TABLE.items()
                              if splitter.startswith("code:")}


@pytest.mark.parametrize(("source", "extension"), [("docs/Guide.PDF", ".pdf"), ("a.b/notes.Md", ".md"),
                                                   ("x.tar.gz", None), ("README", None), ("a.docm", None),
                                                   ("C:\\docs\\Guide.PDF", ".pdf"), ("docs\\v1.2\\README", None)])
def test_format_of_reads_the_last_extension_case_insensitively(source, extension):
    assert format_of(source) is (FORMATS[extension] if extension else None)


def test_fingerprint_changes_with_splitter_and_settings():
    base = Settings()
    fp = splitter_for("a.txt", base).fingerprint
    assert fp == splitter_for("b.txt", base).fingerprint
    assert fp != splitter_for("a.txt", base.replace(max_tokens=200)).fingerprint
    assert fp != splitter_for("a.txt", base.replace(splitters={".txt": "markdown"})).fingerprint
    assert fp != splitter_for("a.md", base).fingerprint


def test_csv_row_groups_repeat_the_header():
    text = "id,name\n1,alpha\n2,\"beta\ngamma\"\n3,delta\n"
    pages = [Page(0, 0, text)]
    tokens = count_tokens("id,name\n") + count_tokens('2,"beta\ngamma"\n') + count_tokens("1,alpha\n")
    chunks = splitter_for("t.csv", Settings(max_tokens=tokens)).split(pages)
    assert [c.text for c in chunks] == ['id,name\n1,alpha\n2,"beta\ngamma"', "id,name\n3,delta"]
    assert [(c.char_start, c.char_end) for c in chunks] == [(8, 30), (31, 38)]
    assert text[8:30] == '1,alpha\n2,"beta\ngamma"'
    assert all(c.token_count == count_tokens(c.text) for c in chunks)


def test_json_chunks_are_valid_and_within_the_token_cap(corpus):
    data = (corpus / "iso_3166-1.json").read_bytes()
    pages = parse_document(data, source="iso_3166-1.json")
    chunks = splitter_for("iso_3166-1.json", Settings(max_tokens=200)).split(pages)
    assert len(chunks) > 20
    assert all(c.token_count <= 200 for c in chunks)
    # Lists stay lists: each chunk holds a run of the country list, in order, none lost or repeated.
    names = [e["name"] for c in chunks for e in json.loads(c.text)["3166-1"]]
    assert names == [e["name"] for e in json.loads(data)["3166-1"]]
    assert chunks[0].headings == ("/3166-1",)
    # Offsets are the span of the chunk's elements in the document text, in order and disjoint.
    text = pages[0].text
    assert all(a.char_end < b.char_start for a, b in zip(chunks, chunks[1:]))
    for chunk in chunks:
        elements = json.loads(f"[{text[chunk.char_start:chunk.char_end]}]")
        assert elements == json.loads(chunk.text)["3166-1"]


def test_html_sections_carry_headings_and_never_span_two_sections():
    text = "# Guide\nIntro text here.\n\n## Install\nRun the installer. It is quick.\n\n## Use\nOpen the app.\n"
    chunks = splitter_for("g.html", Settings()).split([Page(0, 0, text)])
    assert [(c.text, c.headings) for c in chunks] == [
        ("# Guide\nIntro text here.", ("Guide",)),
        ("## Install\nRun the installer. It is quick.", ("Guide", "Install")),
        ("## Use\nOpen the app.", ("Guide", "Use")),
    ]
    assert [text[c.char_start:c.char_end] for c in chunks] == [c.text for c in chunks]


def test_html_heading_only_sections_join_the_next():
    text = "# Guide\n\n## Part one\n\n### Setup\nRun it.\n\n### Use\nOpen it.\n"
    chunks = splitter_for("g.html", Settings()).split([Page(0, 0, text)])
    assert [(c.text, c.headings) for c in chunks] == [
        ("# Guide\n\n## Part one\n\n### Setup\nRun it.", ("Guide", "Part one", "Setup")),
        ("### Use\nOpen it.", ("Guide", "Part one", "Use")),
    ]


def test_markdown_keeps_fences_whole_and_records_the_heading_path():
    text = "# Setup\n\nInstall it.\n\n## Shell\n\n```sh\n# not a heading\necho hi\n```\n"
    chunks = splitter_for("r.md", Settings()).split([Page(0, 0, text)])
    assert [c.headings for c in chunks] == [("Setup",), ("Setup", "Shell")]
    assert chunks[1].text.endswith("```sh\n# not a heading\necho hi\n```")
    assert all(text[c.char_start:c.char_end] == c.text for c in chunks)


def test_code_uses_the_language_preset():
    text = "def a():\n    return 1\n\n\ndef b():\n    return 2\n"
    chunks = splitter_for("m.py", Settings(max_tokens=10)).split([Page(0, 0, text)])
    assert [c.text for c in chunks] == ["def a():\n    return 1", "def b():\n    return 2"]
    assert [text[c.char_start:c.char_end] for c in chunks] == [c.text for c in chunks]


TABLE = ("<figure><table><tr><th>Item</th><th>Price</th></tr>"
         + "".join(f"<tr><td>item number {i}</td><td>{i}.50</td></tr>" for i in range(12)) + "</table></figure>")


def test_table_and_figure_sizes_come_from_the_settings():
    assert Settings.from_env({}).figures.sentence_settings() == {"max_table_tokens": None, "max_figure_tokens": 8191}
    whole = Settings.from_env({"SPLIT_MAX_TOKENS": "60", "SPLIT_MAX_TABLE_TOKENS": "8191"})
    split = Settings.from_env({"SPLIT_MAX_TOKENS": "60"})
    assert count_tokens(TABLE) > 60
    pages = [Page(0, 0, TABLE)]
    assert [(c.kind, c.text) for c in splitter_for("a.html", whole).split(pages)] == [("figure", TABLE)]
    parts = splitter_for("a.html", split).split(pages)
    assert len(parts) > 1 and all(c.kind == "figure_part" and c.token_count <= 60 for c in parts)
    assert all(c.text.startswith("<figure><table><tr><th>Item</th><th>Price</th></tr>") for c in parts)
    assert splitter_for("a.pdf", whole).fingerprint != splitter_for("a.pdf", split).fingerprint
    for name, value in (("SPLIT_MAX_TABLE_TOKENS", "9000"), ("SPLIT_MAX_FIGURE_TOKENS", "0"),
                        ("SPLIT_MAX_TABLE_TOKENS", "many")):
        with pytest.raises(SettingsError, match=name):
            Settings.from_env({name: value})


def test_new_code_and_text_rows_reach_their_splitters():
    # C# is cut with the csharp preset at its declarations; a tab-separated file by rows under its header.
    source = "namespace Shop\n{\n    class Cart\n    {\n        void Add() { total += 1; }\n    }\n" \
             "    class Order\n    {\n        void Pay() { paid = true; }\n    }\n}\n"
    chunks = splitter_for("Cart.cs", Settings(max_tokens=20)).split(parse_document(source.encode(), source="Cart.cs"))
    assert splitter_for("Cart.cs", Settings()).name == "code:csharp"
    assert [c.text for c in chunks] == ["namespace Shop\n{", "class Cart\n    {\n        void Add() { total += 1; }"
                                        "\n    }", "class Order\n    {\n        void Pay() { paid = true; }\n    }\n}"]
    table = "id\tname\n1\talpha\n2\tbeta\n"
    cap = max(count_tokens("id\tname\n1\talpha"), count_tokens("id\tname\n2\tbeta"))
    rows = splitter_for("t.tsv", Settings(max_tokens=cap)).split(
        parse_document(table.encode(), source="t.tsv"))
    assert [c.text for c in rows] == ["id\tname\n1\talpha", "id\tname\n2\tbeta"]
    assert [splitter_for(f"x{ext}", Settings()).name for ext in (".sql", ".yaml", ".xml", ".log", ".tex", ".tsx")] == [
        "sentence", "sentence", "sentence", "sentence", "code:latex", "code:ts"]


@pytest.mark.parametrize(("source", "content_type"), [("in/mail.MSG", "application/vnd.ms-outlook"),
                                                      ("a.pdf", "application/pdf"), ("x.eml", "message/rfc822"),
                                                      ("README", "")])
def test_content_type_from_the_table_else_the_standard_guess(source, content_type):
    assert content_type_of(source) == content_type
    # Only formats the standard library does not know name their type in the table.
    assert [ext for ext, fmt in FORMATS.items() if fmt.content_type] == [".msg"]
