"""The splitter each document gets (``splitter_for``), and the adapters that run each splitter family over a
parsed document's pages and return ``Chunk``s with document offsets, token counts and heading paths, ready for the
pipeline.

Each adapter is ``split(pages, max_tokens, max_chars) -> list[Chunk]``; ``chunking.formats`` names the default one
of each file extension, the setting ``SPLITTERS`` overrides it, and a strategy name is built by
``chunking.documents.strategy``.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Sequence

from chunking.documents.strategy import strategy_splitter
from chunking.formats import (
    HEADING_EXTENSIONS,
    SPLITTER_NAMES,
    default_splitter,
    extension_of,
    is_strategy,
    splitter_name,
)
from chunking.model import Chunk, Page
from chunking.parsers.selection import has_headings, parser_fingerprint, reads_pictures
from chunking.services import figures_fingerprint
from chunking.settings import Settings
from chunking.splitters import (
    Language,
    MarkdownSectionSplitter,
    RecursiveCharacterTextSplitter,
    SentenceSplitterConfig,
    SentenceTextSplitter,
)
from chunking.splitters.json.spans import split_json_spans
from chunking.splitters.markdown import HeadingOutline
from chunking.splitters.markdown.fences import parse_atx_heading
from chunking.tokens import token_counter

__all__ = [
    "DocumentSplitter", "split_code", "split_csv", "split_html_sections", "split_json", "split_markdown",
    "check_splitters", "split_sentences", "splitter_for",
]

#: The embedding models' per-input limit (text-embedding-3-*, ada-002), in tokens.
EMBEDDING_MAX_TOKENS = 8191


def _count() -> Callable[[str], int]:
    return token_counter("cl100k_base")


def split_sentences(pages: Sequence[Page], max_tokens: int, max_chars: int,
                    **sentence_settings: object) -> list[Chunk]:
    """The page-aware sentence splitter over all pages (PDF, DOCX, text); ``sentence_settings`` are further
    ``SentenceTextSplitter`` settings (the table and figure sizes of ``Settings.figures``)."""
    return list(SentenceTextSplitter(max_tokens=max_tokens, max_chars=max_chars,
                                     **sentence_settings).split_pages(pages))


def split_html_sections(pages: Sequence[Page], max_tokens: int, max_chars: int,
                        **sentence_settings: object) -> list[Chunk]:
    """Header-aware, then sentence: each ``#`` section of the parsed page (the HTML parser renders headings as
    Markdown lines, and code in fences) is split on its own by the sentence splitter, so no chunk spans two
    sections and each carries its heading path. A heading with no text of its own before the next heading
    (``## Part`` directly followed by ``### Chapter``) opens the next section instead of becoming a chunk of
    its own; the section's path is then the deepest heading's."""
    splitter = SentenceTextSplitter(max_tokens=max_tokens, max_chars=max_chars, **sentence_settings)
    outline = HeadingOutline(pages)
    chunks: list[Chunk] = []
    for page in pages:
        text = page.text
        starts = sorted({0, *(o - page.offset for o in outline.offsets_in(page))})
        # A section that is only headings runs on into the next: the next one's start is dropped.
        kept = starts[:1] + [b for a, b in zip(starts, starts[1:]) if text[_last_heading_end(text, a, b):b].strip()]
        for start, end in zip(kept, kept[1:] + [len(text)]):
            section = Page(0, page.offset + start, text[start:end])
            body = _last_heading_end(text, start, end)
            path = outline.path_at(page.offset + body)
            for chunk in splitter.split_pages([section]):
                chunks.append(_replace(chunk, page_start=page.page_num, page_end=page.page_num, headings=path))
    return chunks


def _last_heading_end(text: str, start: int, end: int) -> int:
    """Offset where the run of heading (and blank) lines that opens ``text[start:end]`` ends."""
    pos = start
    while pos < end:
        line_end = text.find("\n", pos, end)
        line_end = end if line_end < 0 else line_end
        if text[pos:line_end].strip() and parse_atx_heading(text[pos:line_end].removesuffix("\r")) is None:
            break
        pos = line_end + 1
    return min(pos, end)


def split_markdown(pages: Sequence[Page], max_tokens: int, max_chars: int) -> list[Chunk]:
    """``MarkdownSectionSplitter``: header sections, refined to ``max_tokens`` tokens of prose, fenced code never
    cut (up to the embedding limit); heading path from the section's headers."""
    count = _count()
    splitter = MarkdownSectionSplitter(chunk_size=max_tokens, length_function=count,
                                       max_total_tokens=EMBEDDING_MAX_TOKENS)
    chunks = []
    for page in pages:
        for piece in splitter.split_text(page.text):
            if not piece.page_content.strip():
                continue
            chunks.append(Chunk(
                text=piece.page_content, char_start=page.offset + piece.start_index,
                char_end=page.offset + piece.end_index, page_start=page.page_num, page_end=page.page_num,
                token_count=count(piece.page_content), headings=tuple(str(v) for v in piece.metadata.values()),
            ))
    return chunks


def split_json(pages: Sequence[Page], max_tokens: int, max_chars: int) -> list[Chunk]:
    """Whole subtrees packed in document order (``chunking.splitters.json.spans``): every chunk is valid JSON
    holding the path from the root to its values, lists kept as lists, within ``max_tokens`` tokens unless a
    single value is bigger; its offsets are the span in the document text of the members or elements it holds,
    and the JSON Pointer of their common path is its heading. A value over the embedding cap is cut like text,
    each part keeping the value's span and pointer. A document that is not a non-empty JSON object or array goes
    through the sentence splitter.

    Raises:
        ValueError: the text is not JSON (``line L column C: message``, 1-based).
    """
    text = "".join(p.text for p in pages)
    offset = pages[0].offset if pages else 0
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"the json splitter needs a JSON document: line {error.lineno} column {error.colno}: "
                         f"{error.msg}") from None
    if not isinstance(data, (dict, list)) or not data:
        return split_sentences(pages, max_tokens, max_chars)
    chunks = []
    for piece in split_json_spans(text, max_tokens, _count()):
        start, end = offset + piece.char_start, offset + piece.char_end
        headings = (piece.pointer,) if piece.pointer else ()
        if piece.token_count > EMBEDDING_MAX_TOKENS:  # a single huge leaf: cut it like text, keeping its place
            for part in split_sentences([Page(0, 0, piece.text)], max_tokens, max_chars):
                chunks.append(_replace(part, char_start=start, char_end=end, headings=headings))
            continue
        chunks.append(Chunk(text=piece.text, char_start=start, char_end=end, token_count=piece.token_count,
                            headings=headings))
    return chunks


def split_csv(pages: Sequence[Page], max_tokens: int, max_chars: int) -> list[Chunk]:
    """Row groups, each chunk the header row then whole records (RFC 4180: a newline inside double quotes does
    not end a record), packed while the chunk text stays within ``max_tokens`` tokens: every row that fits in a
    chunk together with the header gets it. A row too big for that goes alone through the sentence splitter,
    at ``max_tokens`` less the header's tokens, and each of its pieces gets the header too; a header of more
    than half of ``max_tokens`` would leave pieces of a few tokens, so then the row is split at ``max_tokens``
    and its pieces have no header. Blank records are passed over (the first non-blank one is the header); a text
    of fewer than two is split by the sentence splitter. Own span = the rows (or the piece of a row); the
    repeated header is context, outside the span. Rules: docs/splitters.md#format-defaults."""
    text = "".join(p.text for p in pages)
    records = [(s, e) for s, e in _csv_records(text) if text[s:e].strip()]
    if len(records) < 2:
        return split_sentences(pages, max_tokens, max_chars)
    count = _count()
    (hs, he), rows = records[0], records[1:]
    prefix = text[hs:he].strip() + "\n"
    header_tokens = count(prefix)
    chunks: list[Chunk] = []
    group: list[int] = []  # [start, end] of the rows packed so far
    used = 0  # tokens of prefix + those rows, each with its line end (the chunk drops the last one's)

    def flush() -> None:
        if group:
            start, end = group
            body = text[start:end].rstrip()
            chunk_text = prefix + body
            chunks.append(Chunk(text=chunk_text, char_start=start, char_end=start + len(body),
                                token_count=count(chunk_text)))
            group.clear()

    for start, end in rows:
        # Tokens add up at line ends (cl100k_base never merges a newline with the next line's first character),
        # so a chunk's count is the sum of its parts' (blank lines between two rows count with the second, a
        # token too many at most where two line ends merge).
        if group and used + count(text[group[1]:end].rstrip()) <= max_tokens:
            used += count(text[group[1]:end])
            group[1] = end
            continue
        flush()
        if header_tokens + count(text[start:end].rstrip()) <= max_tokens:
            group[:] = [start, end]
            used = header_tokens + count(text[start:end])
            continue
        row = Page(0, start, text[start:end].rstrip())
        if 2 * header_tokens <= max_tokens:
            for piece in split_sentences([row], max_tokens - header_tokens, max_chars):
                chunks.append(_replace(piece, text=prefix + piece.text, token_count=count(prefix + piece.text)))
        else:
            chunks.extend(split_sentences([row], max_tokens, max_chars))
    flush()
    return chunks


def _csv_records(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each CSV record (RFC 4180: a newline inside double quotes does not end a record)."""
    records, start, quoted = [], 0, False
    for match in re.finditer(r'"|\n', text):
        if match.group() == '"':
            quoted = not quoted
        elif not quoted:
            records.append((start, match.end()))
            start = match.end()
    if start < len(text):
        records.append((start, len(text)))
    return records


def split_code(language: str) -> Callable[[Sequence[Page], int, int], list[Chunk]]:
    """``RecursiveCharacterTextSplitter.from_language(language)`` measured in tokens (chunk_size = max_tokens,
    no overlap); chunks are exact source slices."""

    def split(pages: Sequence[Page], max_tokens: int, max_chars: int) -> list[Chunk]:
        count = _count()
        splitter = RecursiveCharacterTextSplitter.from_language(
            language, chunk_size=max_tokens, chunk_overlap=0, length_function=count)
        chunks = []
        for page in pages:
            for piece, start in splitter.split_text_with_offsets(page.text):
                if piece.strip():
                    chunks.append(Chunk(text=piece, char_start=page.offset + start,
                                        char_end=page.offset + start + len(piece), page_start=page.page_num,
                                        page_end=page.page_num, token_count=count(piece)))
        return chunks

    return split


def _replace(chunk: Chunk, **changes) -> Chunk:
    import dataclasses

    return dataclasses.replace(chunk, **changes)


@dataclass(frozen=True)
class DocumentSplitter:
    """A configured splitter for one format: ``split(pages)`` returns the chunks; ``fingerprint`` identifies the
    splitter, its settings and this code's splitting rules (it goes into every document version, so a change of
    splitter or settings re-indexes)."""

    name: str
    fingerprint: str
    split: Callable[[Sequence[Page]], list[Chunk]]
    #: The same chunks as ``split``, yielded as the pages come (an iterator of pages is read once), holding one
    #: page's chunks at a time: stage 1 uses it for long documents. ``None`` for splitters that need every page.
    stream: Callable[[Iterable[Page]], Iterator[Chunk]] | None = None


def splitter_for(source: str, settings: Settings) -> DocumentSplitter:
    """The splitter for *source* under *settings* (``max_tokens`` tokens, ``max_chars`` characters), named as
    ``SPLITTERS`` names it, with ``+headings`` when the chunks of a format without headings of its own get the
    heading paths of Document Intelligence's headings (``chunking.parsers.selection.has_headings``).

    Raises:
        ValueError: an override names no known splitter.
    """
    name = splitter_name(source, settings.splitters)
    if is_strategy(name):
        default = default_splitter(extension_of(source))
        strategy, split_pages = strategy_splitter(name, source, settings, base=_format_splitter, default=default)
        config = {"splitter": name, "max_tokens": settings.max_tokens, "max_chars": settings.max_chars,
                  "rules": _RULES_VERSION, "strategy": strategy}
    else:
        config, split_pages = _format_splitter(name, settings, where=extension_of(source))
    if reader := parser_fingerprint(source, settings):  # another parser reads the same bytes differently
        config = {**config, "parser": reader}
    if reads_pictures(source, settings) and (vision := figures_fingerprint(settings)):  # figures described
        config = {**config, "figures": vision}
    if has_headings(source, settings) and extension_of(source) not in HEADING_EXTENSIONS:
        # Document Intelligence writes headings as "#" lines in formats whose local text has none (PDF, images).
        # The heading outline needs the pages before each chunk: not the plain (streamable) family any more.
        config = {**config, "headings": "outline"}
        name, split_pages = f"{name}+headings", _with_heading_paths(split_pages)
    fingerprint = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:16]
    return DocumentSplitter(name, fingerprint, split_pages, _stream(name, settings) if name == "sentence" else None)


def check_splitters(settings: Settings) -> None:
    """Build the splitter of every extension ``SPLITTERS`` names (``settings.splitters``), so that a name no
    splitter has (``.md=markdwon``, ``.py=code:pyton``) is found before any document is read, rather than failing
    every document of that extension.

    Raises:
        ValueError: the reason of the first extension, in sorted order, whose splitter cannot be made
            (``unknown splitter 'markdwon' for .md; known: …``).
    """
    for ext in sorted(settings.splitters):
        splitter_for(f"check{ext}", settings)


def _stream(name: str, settings: Settings) -> Callable[[Iterable[Page]], Iterator[Chunk]]:
    """The streaming form of ``split_sentences`` (the splitter yields each chunk once it is complete)."""
    def stream(pages: Iterable[Page]) -> Iterator[Chunk]:
        return SentenceTextSplitter(max_tokens=settings.max_tokens, max_chars=settings.max_chars,
                                    **settings.figures.sentence_settings()).split_pages(pages)

    return stream


def _with_heading_paths(split: Callable[[Sequence[Page]], list[Chunk]]) -> Callable[[Sequence[Page]], list[Chunk]]:
    """*split* whose chunks without a heading path of their own get the path of the ``#`` headings in force at
    their start (``chunking.documents.records.HeadingOutline``), as the records of Markdown, HTML and DOCX do."""
    def split_with_paths(pages: Sequence[Page]) -> list[Chunk]:
        pages = list(pages)
        outline = HeadingOutline(pages)
        return [c if c.headings else _replace(c, headings=outline.path_at(c.char_start)) for c in split(pages)]

    return split_with_paths


def _format_splitter(name: str, settings: Settings,
                     where: str = "") -> tuple[dict, Callable[[Sequence[Page]], list[Chunk]]]:
    """``(config, split)`` of the format splitter *name* at ``settings.max_tokens``/``max_chars``.

    Raises:
        ValueError: *name* is no known splitter.
    """
    if name.startswith("code:"):
        language = name.split(":", 1)[1]
        if language not in {member.value for member in Language}:  # said now, not when the first file is split
            raise ValueError(f"unknown language {language!r} in splitter {name!r}{' for ' + where if where else ''}"
                             f"; known: {', '.join(member.value for member in Language)}")
        split = split_code(language)
    elif name in _FAMILIES:
        split = _FAMILIES[name]
    else:
        raise ValueError(f"unknown splitter {name!r}{' for ' + where if where else ''}; known: "
                         f"{', '.join(SPLITTER_NAMES)}")
    config = {"splitter": name, "max_tokens": settings.max_tokens, "max_chars": settings.max_chars,
              "rules": _RULES_VERSION}
    if name == "json":  # chunks keep lists and carry source offsets since rules 2: re-split stored JSON
        config["json_rules"] = 2
    if name == "csv":  # since rules 2 the header is on every row that fits with it, packed to the exact cap
        config["csv_rules"] = 2
    if name in ("sentence", "html"):
        extra = settings.figures.sentence_settings()
        config["sentence"] = SentenceSplitterConfig(max_tokens=settings.max_tokens, max_chars=settings.max_chars,
                                                    **extra).fingerprint()
        return config, lambda pages: split(pages, settings.max_tokens, settings.max_chars, **extra)
    return config, lambda pages: split(pages, settings.max_tokens, settings.max_chars)


_FAMILIES: dict[str, Callable[[Sequence[Page], int, int], list[Chunk]]] = {
    "sentence": split_sentences, "markdown": split_markdown, "html": split_html_sections, "json": split_json,
    "csv": split_csv,
}  # fmt: skip

#: Bump when a splitter's output changes for the same settings, so stored versions are re-split.
_RULES_VERSION = 1
