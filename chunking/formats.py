"""The one table of file formats: for each extension, the parser that reads it, the splitter that cuts it by
default, what its pages and headings mean, where it declares its title, whether it can be read in page ranges,
whether it is a ZIP package, whether Document Intelligence reads it, and whether it is program code; and the
names a splitter can be chosen by. Every other module asks this table (``format_of(source)``, the extension sets
below) instead of naming extensions, so a new format is one ``FORMATS`` row, one parser module in
``chunking.parsers`` (registered by its name there), its tests, and its row in docs/parsers.md.

Defaults: PDF, DOCX, PPTX, XLSX, images and text → ``sentence``; Markdown → ``markdown`` (``MarkdownSectionSplitter``); HTML → ``html``
(header sections, then sentence); JSON → ``json`` (``RecursiveJsonSplitter``); CSV → ``csv`` (row groups, header
repeated); source code → ``code:<language>`` with the language preset of its extension. The setting ``SPLITTERS``
overrides per extension (``".txt=markdown,.html=sentence"``), and also selects the chunking strategies of
``chunking.strategies`` (``".pdf=semantic,.txt=hierarchical,.md=propositions+enrich"``; see
``chunking.documents.strategy``), whose parameters, model names and prompt versions then enter the fingerprint.

``chunking.parsers`` takes its parser per extension from ``FORMATS``; ``chunking.documents.splitter.splitter_for``
builds the splitter a document gets (a family adapter of that module, or a strategy looked up by name in
``chunking.documents.strategy``). This module imports no other module of ``chunking``, so the parsers, the
splitter adapters and the strategies can all read it.
"""

from __future__ import annotations

import mimetypes
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Mapping

__all__ = [
    "CODE_LANGUAGES", "DOCINTEL_EXTENSIONS", "ENRICH_SUFFIX", "FAMILY_NAMES", "FORMATS", "Format", "HEADING_EXTENSIONS",
    "IMAGE_EXTENSIONS", "PAGINATED_EXTENSIONS", "SPLITTER_NAMES", "STRATEGY_NAMES", "SUPPORTED_EXTENSIONS",
    "TITLE_SOURCES", "default_splitter", "extension_of", "format_of", "is_strategy", "splitter_name",
]
__all__ += ["MEMBER_EXTENSIONS", "member_depth", "member_root"]
__all__ += ["content_type_of"]

#: Where a file declares its own title (``Format.title_source``; read by ``chunking.parsers.titles``):
#: ``none``; ``pdf-info``, the ``/Title`` of a PDF's document information (PDFium reads it); ``ooxml-core``,
#: ``dc:title`` in the ``docProps/core.xml`` part of an Office Open XML package; ``html-title``, the ``<title>``
#: element; ``front-matter``, a ``title:`` line in Markdown's leading ``---`` block; ``epub-opf``, the
#: ``dc:title`` of an EPUB's package document (OPF); ``odf-meta``, the ``dc:title`` of an OpenDocument package's
#: ``meta.xml``; ``rtf-info``, the ``{\\info{\\title …}}`` group of an RTF file.
TITLE_SOURCES = ("none", "pdf-info", "ooxml-core", "html-title", "front-matter", "epub-opf", "odf-meta", "rtf-info")


@dataclass(frozen=True)
class Format:
    """How one file format is read and cut.

    Attributes:
        parser: the module of ``chunking.parsers`` that parses it locally (``"pdf"``, ``"docx"``, ``"pptx"``,
            ``"xlsx"``, ``"html"``, ``"json"``, ``"text"``, ``"image"``); the setting ``PARSERS`` and
            ``DOCUMENT_INTELLIGENCE_ENDPOINT`` can send it to Document Intelligence instead
            (``chunking.parsers.selection``).
        splitter: its default splitter name (a ``SPLITTER_NAMES`` entry; ``SPLITTERS`` overrides it). A default of
            ``markdown`` also marks Markdown syntax for the parser (its nesting check).
        paginated: its pages are real pages (citations say ``#page=N``).
        headings: its ``#`` lines are headings (Markdown, and HTML/DOCX whose parsers render headings that way; in
            a PDF or a text file a leading ``#`` is as likely a shell comment).
        title_source: where the file declares its title, a ``TITLE_SOURCES`` entry (``"none"``: it has no such
            property; the first heading or the file name is the title).
        page_ranges: its local parser can read it in windows of pages (``start``/``end``), so stage 1 counts its
            pages first and reads a long one in ranges of ``STAGE1_PAGES_PER_JOB`` pages, the title and
            language coming from its first pages (docs/architecture.md#long-documents).
        zip_package: the file is a ZIP package (Office Open XML, OpenDocument, EPUB): a part such as its declared
            title can only be read from the whole file, never from its first bytes.
        docintel: the Document Intelligence layout model reads it, so ``DOCUMENT_INTELLIGENCE_ENDPOINT`` sends it
            there and ``PARSERS`` may name it with ``docintel``.
        program_code: program source, whose ``*`` and ``_`` are never emphasis (the CLI shows its hits verbatim;
            reStructuredText is markup, not code).
        members: a container whose attachments or members are documents of their own, each parsed by its own
            format's parser under an id below the container's (``mail.eml/attachments/report.pdf``,
            ``project.zip/docs/a.pdf``); the container's own pages are its text (a mail's headers and body) or
            the list of its members (docs/architecture.md#containers).
        content_type: its MIME type when the standard library's ``mimetypes`` does not know the extension
            (``""``: it does); ``content_type_of`` answers for any source.
    """

    parser: str
    splitter: str
    paginated: bool = False
    headings: bool = False
    title_source: str = "none"
    page_ranges: bool = False
    zip_package: bool = False
    docintel: bool = False
    program_code: bool = False
    members: bool = False
    content_type: str = ""


_TEXT = Format("text", "sentence")
_MARKDOWN = Format("text", "markdown", headings=True, title_source="front-matter")
_HTML = Format("html", "html", headings=True, title_source="html-title", docintel=True)
#: Image formats the Document Intelligence layout model reads (its "service limits" page lists JPEG, PNG, BMP,
#: TIFF and HEIF).
IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".heif")
#: Program-source extensions → LangChain ``Language`` names for the recursive splitter's presets.
_PROGRAM_LANGUAGES = {
    ".py": "python", ".js": "js", ".ts": "ts", ".go": "go", ".java": "java", ".c": "c", ".h": "c",
    ".cpp": "cpp", ".rs": "rust",
}  # fmt: skip

#: Every supported extension (lower case, with its dot) → its ``Format``.
FORMATS: dict[str, Format] = {
    ".pdf": Format("pdf", "sentence", paginated=True, title_source="pdf-info", page_ranges=True, docintel=True),
    ".docx": Format("docx", "sentence", headings=True, title_source="ooxml-core", zip_package=True, docintel=True),
    # A slide or a worksheet is a page (citations say #page=N for slide or sheet N); a slide opens with its title
    # as a heading, a sheet's table has the sheet's name as its caption.
    ".pptx": Format("pptx", "sentence", paginated=True, headings=True, title_source="ooxml-core", zip_package=True,
                    docintel=True),
    ".xlsx": Format("xlsx", "sentence", paginated=True, title_source="ooxml-core", zip_package=True, docintel=True),
    # A macro-enabled workbook: the layout model does not take it, so it is always parsed locally.
    ".xlsm": Format("xlsx", "sentence", paginated=True, title_source="ooxml-core", zip_package=True),
    # Images: read by Document Intelligence when it is configured, else by local OCR (the extra ``ocr``); with
    # neither, refused with a reason naming both.
    **dict.fromkeys(IMAGE_EXTENSIONS, Format("image", "sentence", paginated=True, docintel=True)),
    # GIF: the layout model does not take it, so it is always read by local OCR (its first frame).
    ".gif": Format("image", "sentence", paginated=True),
    ".html": _HTML,
    ".htm": _HTML,
    ".json": Format("json", "json"),
    # CSV stays CSV text: its rows are grouped by the CSV splitter (quoted newlines are normalised as well).
    ".csv": Format("text", "csv"),
    ".md": _MARKDOWN,
    ".markdown": _MARKDOWN,
    **dict.fromkeys((".txt", ".text", ".log", ".xml", ".yaml", ".yml"), _TEXT),
    **{ext: Format("text", f"code:{language}", program_code=True) for ext, language in _PROGRAM_LANGUAGES.items()},
    # reStructuredText: cut with the recursive splitter's rst preset, but markup, whose * and _ are emphasis.
    ".rst": Format("text", "code:rst"),
}

# EPUB, OpenDocument, RTF and legacy Excel, more program sources and text files (docs/parsers.md#formats). None of
# them goes to Document Intelligence: its layout model takes PDF, images, Office Open XML and HTML only.
#: More program-source extensions → LangChain ``Language`` names (presets of ``chunking.splitters.languages``).
_MORE_PROGRAM_LANGUAGES = {
    ".cs": "csharp", ".kt": "kotlin", ".kts": "kotlin", ".scala": "scala", ".swift": "swift", ".php": "php",
    ".rb": "ruby", ".lua": "lua", ".pl": "perl", ".pm": "perl", ".hs": "haskell", ".ex": "elixir",
    ".exs": "elixir", ".ps1": "powershell", ".proto": "proto", ".sol": "sol", ".r": "r", ".cc": "cpp",
    ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp", ".jsx": "js", ".mjs": "js", ".cjs": "js", ".tsx": "ts",
    ".cob": "cobol", ".cbl": "cobol",
}  # fmt: skip
FORMATS.update({
    # An EPUB's chapters (the spine's XHTML documents) are its pages, each rendered as HTML is.
    ".epub": Format("epub", "sentence", paginated=True, headings=True, title_source="epub-opf", zip_package=True),
    # OpenDocument: a text document is one page with # headings; a sheet or a slide is a page, as in XLSX/PPTX.
    ".odt": Format("odf", "sentence", headings=True, title_source="odf-meta", zip_package=True),
    ".ods": Format("odf", "sentence", paginated=True, title_source="odf-meta", zip_package=True),
    ".odp": Format("odf", "sentence", paginated=True, headings=True, title_source="odf-meta", zip_package=True),
    ".rtf": Format("rtf", "sentence", title_source="rtf-info"),
    # Excel 97-2003 workbooks (BIFF8): a sheet is a page, its cells' cached values a table, as in XLSX.
    ".xls": Format("xls", "sentence", paginated=True),
    # Tab-separated values are rows like CSV's: the CSV splitter groups them under their header row.
    ".tsv": Format("text", "csv"),
    # Text without a splitter preset of its own: SQL, shell scripts, configuration files.
    **dict.fromkeys((".sql", ".sh", ".bash", ".toml", ".ini", ".cfg", ".conf", ".properties"), _TEXT),
    **{ext: Format("text", f"code:{language}", program_code=True) for ext, language in _MORE_PROGRAM_LANGUAGES.items()},
    # LaTeX: cut with the latex preset, but markup (its * and _ are not program code).
    ".tex": Format("text", "code:latex"),
    # Containers: a mail (its headers and body are its page; its attachments are documents of their own) and a
    # ZIP archive (its page lists the members; each member is a document of its own).
    ".eml": Format("eml", "sentence", headings=True, members=True),
    ".zip": Format("archive", "sentence", members=True),
})
# Outlook messages: a container as a .eml mail is, read from its compound file ([MS-OXMSG]).
FORMATS.update({
    ".msg": Format("msg", "sentence", headings=True, members=True, content_type="application/vnd.ms-outlook"),
})

#: Lower-case file extensions, with the dot, that are parsed and indexed.
SUPPORTED_EXTENSIONS: frozenset[str] = frozenset(FORMATS)
#: Formats whose pages are real pages (citations say ``#page=N``).
PAGINATED_EXTENSIONS = frozenset(ext for ext, fmt in FORMATS.items() if fmt.paginated)
#: Formats whose ``#`` lines are headings.
HEADING_EXTENSIONS = frozenset(ext for ext, fmt in FORMATS.items() if fmt.headings)
#: Formats the Document Intelligence layout model reads.
DOCINTEL_EXTENSIONS = frozenset(ext for ext, fmt in FORMATS.items() if fmt.docintel)
#: Extensions cut by a recursive-splitter preset → the preset's LangChain ``Language`` name (``".py"`` →
#: ``"python"``).
CODE_LANGUAGES = {ext: fmt.splitter.partition(":")[2] for ext, fmt in FORMATS.items()
                  if fmt.splitter.startswith("code:")}

#: The splitter families (adapters in ``chunking.documents.splitter``).
FAMILY_NAMES = ("sentence", "markdown", "html", "json", "csv")
#: The chunking strategies (``chunking.documents.strategy``).
STRATEGY_NAMES = ("semantic", "hierarchical", "small_to_big", "sentence_window", "propositions", "llm", "router")
#: A splitter or strategy name with this suffix is followed by context enrichment.
ENRICH_SUFFIX = "+enrich"
#: Names accepted in ``SPLITTERS``: the families, ``code:<language>`` for any preset, the strategies, and any of
#: these with ``+enrich`` (context enrichment of what is embedded).
SPLITTER_NAMES = (*FAMILY_NAMES, "code:<language>", *STRATEGY_NAMES, f"<name>{ENRICH_SUFFIX}")


#: Formats whose attachments or members are documents of their own (``Format.members``).
MEMBER_EXTENSIONS = frozenset(ext for ext, fmt in FORMATS.items() if fmt.members)


def member_root(source: str) -> str | None:
    """The outermost container *source* is a member of: the shortest leading part of the path that ends in a
    ``MEMBER_EXTENSIONS`` extension and is followed by more path (``"in/mail.eml/attachments/a.zip/b.pdf"`` →
    ``"in/mail.eml"``); ``None`` for a source that is no member (``"in/mail.eml"``, ``"docs/a.pdf"``)."""
    parts = source.split("/")
    for end in range(1, len(parts)):
        if extension_of(parts[end - 1]) in MEMBER_EXTENSIONS:
            return "/".join(parts[:end])
    return None


def member_depth(source: str) -> int:
    """How many containers *source* lies in (``"a.zip/b.zip/c.pdf"`` → 2, ``"a.zip"`` → 0)."""
    parts = source.split("/")
    return sum(1 for part in parts[:-1] if extension_of(part) in MEMBER_EXTENSIONS)


def extension_of(source: str) -> str:
    """Lower-case extension with its dot (``".pdf"``), or ``""``; a Windows path's backslashes separate folders
    (``"docs\\v1.2\\README"`` has none). Blanks and dots at the end of the name are not part of it
    (``"trail.txt "`` is a ``.txt``): Windows drops them from file names, and a blob name keeps them by accident."""
    name = source.replace("\\", "/").rstrip(" \t\r\n.")
    return PurePosixPath(name).suffix.lower() if name and not name.endswith("/") else ""


def format_of(source: str) -> Format | None:
    """The ``Format`` of *source* (a file name or path, ``"docs/Guide.PDF"``) by its extension, compared
    case-insensitively; ``None`` for an unsupported or missing extension."""
    return FORMATS.get(extension_of(source))


def splitter_name(source: str, overrides: Mapping[str, str] = {}) -> str:  # noqa: B006 (read-only)
    """The splitter name for *source*'s extension: an override, else the default, else ``sentence``."""
    ext = extension_of(source)
    return overrides.get(ext) or default_splitter(ext)


def default_splitter(ext: str) -> str:
    """The default splitter name of extension *ext* (``".md"`` → ``"markdown"``); ``sentence`` if unknown."""
    fmt = FORMATS.get(ext)
    return fmt.splitter if fmt else "sentence"


def is_strategy(name: str) -> bool:
    """True for a strategy name (with or without ``+enrich``), False for a format splitter."""
    base = name[: -len(ENRICH_SUFFIX)] if name.endswith(ENRICH_SUFFIX) else name
    return base in STRATEGY_NAMES or base != name


def content_type_of(source: str) -> str:
    """The MIME type of *source* by its name: the format table's when it names one (``.msg`` →
    ``application/vnd.ms-outlook``), else the standard library's guess (``mimetypes``), else ``""``."""
    fmt = format_of(source)
    if fmt is not None and fmt.content_type:
        return fmt.content_type
    return mimetypes.guess_type(source.replace("\\", "/"))[0] or ""
