"""The one table of file formats: for each extension, the parser that reads it, the splitter that cuts it by
default, and what its pages and headings mean; and the names a splitter can be chosen by.

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

from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Mapping

__all__ = [
    "CODE_LANGUAGES", "ENRICH_SUFFIX", "IMAGE_EXTENSIONS", "FAMILY_NAMES", "FORMATS", "DocumentSplitter", "Format", "HEADING_EXTENSIONS",
    "PAGINATED_EXTENSIONS", "SPLITTER_NAMES", "STRATEGY_NAMES", "SUPPORTED_EXTENSIONS", "default_splitter",
    "extension_of", "is_strategy", "splitter_for", "splitter_name",
]


@dataclass(frozen=True)
class Format:
    """How one file format is read and cut.

    Attributes:
        parser: the module of ``chunking.parsers`` that parses it locally (``"pdf"``, ``"docx"``, ``"pptx"``,
            ``"xlsx"``, ``"html"``, ``"json"``, ``"text"``, ``"image"``); the setting ``PARSERS`` and
            ``DOCUMENT_INTELLIGENCE_ENDPOINT`` can send it to Document Intelligence instead
            (``chunking.parsers.selection``).
        splitter: its default splitter name (a ``SPLITTER_NAMES`` entry; ``SPLITTERS`` overrides it).
        paginated: its pages are real pages (citations say ``#page=N``).
        headings: its ``#`` lines are headings (Markdown, and HTML/DOCX whose parsers render headings that way; in
            a PDF or a text file a leading ``#`` is as likely a shell comment).
    """

    parser: str
    splitter: str
    paginated: bool = False
    headings: bool = False


_TEXT = Format("text", "sentence")
#: Image formats the Document Intelligence layout model reads (its "service limits" page lists JPEG, PNG, BMP,
#: TIFF and HEIF).
IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".heif")
#: Source-code extensions → LangChain ``Language`` names for the recursive splitter's presets.
CODE_LANGUAGES = {
    ".py": "python", ".js": "js", ".ts": "ts", ".go": "go", ".java": "java", ".c": "c", ".h": "c",
    ".cpp": "cpp", ".rs": "rust", ".rst": "rst",
}  # fmt: skip

#: Every supported extension (lower case, with its dot) → its ``Format``.
FORMATS: dict[str, Format] = {
    ".pdf": Format("pdf", "sentence", paginated=True),
    ".docx": Format("docx", "sentence", headings=True),
    # A slide or a worksheet is a page (citations say #page=N for slide or sheet N); a slide opens with its title
    # as a heading, a sheet's table has the sheet's name as its caption.
    ".pptx": Format("pptx", "sentence", paginated=True, headings=True),
    ".xlsx": Format("xlsx", "sentence", paginated=True),
    ".xlsm": Format("xlsx", "sentence", paginated=True),
    # Images are read only by Document Intelligence; locally they are refused with a reason naming its setting.
    **dict.fromkeys(IMAGE_EXTENSIONS, Format("image", "sentence", paginated=True)),
    ".html": Format("html", "html", headings=True),
    ".htm": Format("html", "html", headings=True),
    ".json": Format("json", "json"),
    # CSV stays CSV text: its rows are grouped by the CSV splitter (quoted newlines are normalised as well).
    ".csv": Format("text", "csv"),
    ".md": Format("text", "markdown", headings=True),
    ".markdown": Format("text", "markdown", headings=True),
    **dict.fromkeys((".txt", ".text", ".log", ".xml", ".yaml", ".yml"), _TEXT),
    **{ext: Format("text", f"code:{language}") for ext, language in CODE_LANGUAGES.items()},
}

#: Lower-case file extensions, with the dot, that are parsed and indexed.
SUPPORTED_EXTENSIONS: frozenset[str] = frozenset(FORMATS)
#: Formats whose pages are real pages (citations say ``#page=N``).
PAGINATED_EXTENSIONS = frozenset(ext for ext, fmt in FORMATS.items() if fmt.paginated)
#: Formats whose ``#`` lines are headings.
HEADING_EXTENSIONS = frozenset(ext for ext, fmt in FORMATS.items() if fmt.headings)

#: The splitter families (adapters in ``chunking.documents.splitter``).
FAMILY_NAMES = ("sentence", "markdown", "html", "json", "csv")
#: The chunking strategies (``chunking.documents.strategy``).
STRATEGY_NAMES = ("semantic", "hierarchical", "small_to_big", "sentence_window", "propositions", "llm", "router")
#: A splitter or strategy name with this suffix is followed by context enrichment.
ENRICH_SUFFIX = "+enrich"
#: Names accepted in ``SPLITTERS``: the families, ``code:<language>`` for any preset, the strategies, and any of
#: these with ``+enrich`` (context enrichment of what is embedded).
SPLITTER_NAMES = (*FAMILY_NAMES, "code:<language>", *STRATEGY_NAMES, f"<name>{ENRICH_SUFFIX}")


def extension_of(source: str) -> str:
    """Lower-case extension with its dot (``".pdf"``), or ``""``."""
    return PurePosixPath(source).suffix.lower()


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

