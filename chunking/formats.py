"""Which splitter handles which file format, and what that choice contributes to a document's version.

Defaults (issue #4): PDF, DOCX and text → ``sentence``; Markdown → ``markdown`` (``MarkdownSectionSplitter``);
HTML → ``html`` (header sections, then sentence); JSON → ``json`` (``RecursiveJsonSplitter``); CSV → ``csv`` (row
groups, header repeated); source code → ``code`` with the language preset of its extension. The setting
``SPLITTERS`` overrides per extension (``".txt=markdown,.html=sentence"``), and also selects the chunking strategies
of ``chunking.strategies`` (``".pdf=semantic,.txt=hierarchical,.md=propositions+enrich"``; see
``chunking.strategies.adapters``), whose parameters, model names and prompt versions then enter the fingerprint.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Callable, Mapping, Sequence

from chunking import format_splitters as fs
from chunking.model import Chunk, Page
from chunking.settings import Settings

__all__ = [
    "DocumentSplitter", "HEADING_EXTENSIONS", "PAGINATED_EXTENSIONS", "SPLITTER_NAMES", "extension_of",
    "splitter_for",
]

#: Formats whose pages are real pages (citations say ``#page=N``).
PAGINATED_EXTENSIONS = frozenset({".pdf"})
#: Formats whose ``#`` lines are headings: Markdown, and HTML/DOCX whose parsers render headings that way.
#: (In a PDF or a text file a leading ``#`` is as likely a shell comment.)
HEADING_EXTENSIONS = frozenset({".md", ".markdown", ".html", ".htm", ".docx"})

_Split = Callable[[Sequence[Page], int, int], list[Chunk]]
_FAMILIES: dict[str, _Split] = {
    "sentence": fs.split_sentences,
    "markdown": fs.split_markdown,
    "html": fs.split_html_sections,
    "json": fs.split_json,
    "csv": fs.split_csv,
}
#: Names accepted in ``SPLITTERS``: the families, ``code:<language>`` for any preset, the strategies, and any of
#: these with ``+enrich`` (context enrichment of what is embedded).
SPLITTER_NAMES = (*_FAMILIES, "code:<language>", "semantic", "hierarchical", "small_to_big", "sentence_window",
                  "propositions", "llm", "router", "<name>+enrich")

_DEFAULTS = {
    ".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html", ".json": "json", ".csv": "csv",
    **{ext: f"code:{lang}" for ext, lang in fs.CODE_LANGUAGES.items()},
}


def extension_of(source: str) -> str:
    """Lower-case extension with its dot (``".pdf"``), or ``""``."""
    return PurePosixPath(source).suffix.lower()


@dataclass(frozen=True)
class DocumentSplitter:
    """A configured splitter for one format: ``split(pages)`` returns the chunks; ``fingerprint`` identifies the
    splitter, its settings and this code's splitting rules (it goes into every document version, so a change of
    splitter or settings re-indexes)."""

    name: str
    fingerprint: str
    split: Callable[[Sequence[Page]], list[Chunk]]


def splitter_name(source: str, overrides: Mapping[str, str] = {}) -> str:  # noqa: B006 (read-only)
    """The splitter name for *source*'s extension: an override, else the default, else ``sentence``."""
    ext = extension_of(source)
    return overrides.get(ext) or _DEFAULTS.get(ext, "sentence")


def splitter_for(source: str, settings: Settings) -> DocumentSplitter:
    """The splitter for *source* under *settings* (``max_tokens`` tokens, ``max_chars`` characters).

    Raises:
        ValueError: an override names no known splitter.
    """
    name = splitter_name(source, settings.splitters)
    from chunking.strategies.adapters import is_strategy

    if is_strategy(name):
        from chunking.strategies.adapters import strategy_splitter

        default = _DEFAULTS.get(extension_of(source), "sentence")
        strategy, split_pages = strategy_splitter(name, source, settings, base=_format_splitter, default=default)
        config = {"splitter": name, "max_tokens": settings.max_tokens, "max_chars": settings.max_chars,
                  "rules": _RULES_VERSION, "strategy": strategy}
    else:
        config, split_pages = _format_splitter(name, settings, where=extension_of(source))
    fingerprint = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:16]
    return DocumentSplitter(name, fingerprint, split_pages)


def _format_splitter(name: str, settings: Settings,
                     where: str = "") -> tuple[dict, Callable[[Sequence[Page]], list[Chunk]]]:
    """``(config, split)`` of the format splitter *name* at ``settings.max_tokens``/``max_chars``.

    Raises:
        ValueError: *name* is no known splitter.
    """
    if name.startswith("code:"):
        split = fs.split_code(name.split(":", 1)[1])
    elif name in _FAMILIES:
        split = _FAMILIES[name]
    else:
        raise ValueError(f"unknown splitter {name!r}{' for ' + where if where else ''}; known: "
                         f"{', '.join(SPLITTER_NAMES)}")
    config = {"splitter": name, "max_tokens": settings.max_tokens, "max_chars": settings.max_chars,
              "rules": _RULES_VERSION}
    if name in ("sentence", "html"):
        from chunking.splitters import SentenceSplitterConfig

        config["sentence"] = SentenceSplitterConfig(max_tokens=settings.max_tokens,
                                                    max_chars=settings.max_chars).fingerprint()
    return config, lambda pages: split(pages, settings.max_tokens, settings.max_chars)


#: Bump when a splitter's output changes for the same settings, so stored versions are re-split.
_RULES_VERSION = 1
