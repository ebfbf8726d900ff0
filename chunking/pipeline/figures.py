"""Figures after parsing and before splitting: descriptions put into their ``<figure>`` blocks
(docs/parsers.md#figure-descriptions), and figure images stored with the chunks that hold them pointing to them
(docs/parsers.md#figure-images).

The parser (in the parse child) keeps the pictures that pass the skip rules and marks each one's place:
``<p data-generated="ocr" data-picture="<sha256>">OCR text</p>`` (``chunking.parsers.pictures.KEPT_PICTURE``), or
for a picture that is a whole page (an image file) ``PAGE_PICTURE`` at the page's start. Here, page by page, the
describer (``chunking.services.figure_describer``) describes them, and each mark becomes

    <p data-generated="vision">the description</p><p data-generated="ocr">OCR text</p>

(either part left out when empty; a figure with nothing left keeps its caption or goes away). With a figure store
(``chunking.services.make_figure_store``) each kept picture (a PNG) is stored under its version, and its place in
the document is recorded as a ``FigureSpan``: the span of its ``<figure>`` block (of the page, for a whole-page
picture; a point where a figure left no text). ``attach_images`` gives each record the URLs of the spans its own
text overlaps. A page's text changes length, so the pages after it move by the same number of characters:
offsets stay those of the text the splitter sees. A figure that is not described (budget, throttling, a refusal)
keeps its caption and OCR text and the document one ledger note (``VisionOutcome.note``); nothing here fails a
document but a store that cannot be written (a ``StorageError``: transient, the upload is tried again).
"""

from __future__ import annotations

import dataclasses
import html
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from chunking.chat.vision import FigureDescriber, VisionOutcome
from chunking.model import ChunkRecord, Page
from chunking.parsers import ReadContext
from chunking.parsers.pictures import GENERATED_MARK, KEPT_PICTURE, PAGE_PICTURE
from chunking.storage.figures import FigureStore

__all__ = ["VISION_MARK", "FigureSpan", "FiguresThrottled", "attach_images", "describe_pages", "figure_pages",
           "vision_counts"]

#: The attribute marking a description a vision model wrote.
VISION_MARK = 'data-generated="vision"'
# Where a stored picture's mark was, while the page's text is rewritten: a number between a NUL and two private-use
# characters, a sequence no document's text is expected to hold; removed before the page goes on.
_REF = "\x00\ue000{}\ue001\x00"
_REFS = re.compile("\x00\ue000(\\d+)\ue001\x00")
_EMPTY_FIGURE = re.compile("(?:\n\n)?<figure>((?:\x00\ue000\\d+\ue001\x00)*)</figure>")
_OPEN, _CLOSE = "<figure", "</figure>"
_DESCRIBED = re.compile(r"vision: (\d+) figures? described by")
_NOT_DESCRIBED = re.compile(r"vision: [^;]*?(?:; )?not described: ((?:\d+ [^,;]+(?:, )?)+)")
_COUNT = re.compile(r"(\d+) ([^,;]+)")


class FiguresThrottled(RuntimeError):
    """The vision model throttled and the document's stage 1 is to run again later rather than index its figures
    undescribed (``figure_pages``' *defer*). ``retry_after_s``: the wait the service asked for, None if unsaid."""

    def __init__(self, retry_after_s: float | None) -> None:
        super().__init__(f"figure descriptions throttled (retry after {retry_after_s} s)")
        self.retry_after_s = retry_after_s


@dataclass(frozen=True)
class FigureSpan:
    """A stored figure image's place in the document text: ``[start, end)`` in document offsets (its
    ``<figure>`` block, or its page), ``start == end`` where the figure left no text; and its URL."""

    start: int
    end: int
    url: str


def describe_pages(pages: Iterable[Page], *, context: ReadContext, describer: FigureDescriber,
                   outcome: VisionOutcome | None = None) -> Iterator[Page]:
    """``figure_pages`` with a describer and no store: *pages* with their kept pictures described."""
    return figure_pages(pages, context=context, describer=describer, outcome=outcome)


def figure_pages(pages: Iterable[Page], *, context: ReadContext, describer: FigureDescriber | None = None,
                 store: FigureStore | None = None, doc_id: str = "", version: str = "",
                 spans: list[FigureSpan] | None = None, outcome: VisionOutcome | None = None,
                 defer: Callable[[], bool] | None = None) -> Iterator[Page]:
    """*pages* with their kept pictures described by *describer* (the pictures' bytes from ``context.images``,
    forgotten once used) and stored in *store* under *doc_id* and *version* (each one's ``FigureSpan`` appended
    to *spans*), every mark removed, offsets moved by what the text before gained or lost. When the pages are
    done, the describer's note (``vision: 2 figures described by …``) is added to ``context.notes``.

    *defer*: asked when the model throttles; True raises ``FiguresThrottled`` instead of going on with the
    figures undescribed (stage 1 then runs again after the service's wait: docs/parsers.md#figure-descriptions).

    Raises:
        StorageError: *store* could not be written.
        FiguresThrottled: the model throttled and *defer* said so.
    """
    outcome = outcome if outcome is not None else VisionOutcome()
    spans = spans if spans is not None else []
    delta = 0
    expired = context.deadline.expired if context.deadline is not None else None
    for page in pages:
        digests = KEPT_PICTURE.findall(page.text)
        wholes = PAGE_PICTURE.findall(page.text)
        if not digests and not wholes and not delta:
            yield page
            continue
        text = page.text
        urls: dict[str, str] = {}
        if digests:
            images = {digest: context.images.pop(digest) for digest, _ in digests if digest in context.images}
            if describer is not None:
                describer.describe(images, expired=expired, outcome=outcome)
                if outcome.stopped == "throttled" and defer is not None and defer():
                    raise FiguresThrottled(outcome.retry_after_s)
            if store is not None:
                urls = {digest: store.put(doc_id, version, png) for digest, png in images.items()}
        page_urls = [store.put(doc_id, version, context.images.pop(digest))
                     for digest in wholes if store is not None and digest in context.images]
        for digest in wholes:
            context.images.pop(digest, None)
        text, places = _rewrite(text, outcome.descriptions, urls)
        moved = dataclasses.replace(page, offset=page.offset + delta, text=text)
        spans.extend(FigureSpan(moved.offset + start, moved.offset + end, url) for start, end, url in places)
        spans.extend(FigureSpan(moved.offset, moved.offset + len(text), url) for url in page_urls)
        delta += len(text) - len(page.text)
        yield moved
    note = outcome.note(describer.name) if describer is not None else ""
    if note:
        context.note(note)


def _rewrite(text: str, descriptions: dict[str, str], urls: dict[str, str]) -> tuple[str, list[tuple[int, int, str]]]:
    """*text* with its marks replaced (``_paragraphs``; ``PAGE_PICTURE`` removed) and empty figures removed;
    and ``(start, end, url)`` in the new text for each picture of *urls*: its enclosing ``<figure>`` block, or
    the point where its figure was removed."""
    stored: list[str] = []

    def replace(match: re.Match) -> str:
        body = _paragraphs(match, descriptions)
        url = urls.get(match.group(1))
        if url is None:
            return body
        stored.append(url)
        return _REF.format(len(stored) - 1) + body

    text = PAGE_PICTURE.sub("", KEPT_PICTURE.sub(replace, text))
    text = _EMPTY_FIGURE.sub(lambda m: m.group(1), text)
    if not stored:
        return text, []
    parts, points, last, removed = [], [], 0, 0
    for match in _REFS.finditer(text):
        parts.append(text[last:match.start()])
        points.append((match.start() - removed, stored[int(match.group(1))]))
        removed += len(match.group(0))
        last = match.end()
    parts.append(text[last:])
    clean = "".join(parts)
    places = []
    for point, url in points:
        start = clean.rfind(_OPEN, 0, point)
        end = clean.find(_CLOSE, point)
        if start < 0 or end < 0 or clean.rfind(_CLOSE, 0, point) > start:  # its figure was removed: a point
            places.append((point, point, url))
        else:
            places.append((start, end + len(_CLOSE), url))
    return clean, places


def attach_images(records: Sequence[ChunkRecord], spans: Sequence[FigureSpan]) -> list[ChunkRecord]:
    """*records* with ``image_urls``: the URLs of the *spans* each record's own span ``[char_start, char_end)``
    overlaps (a point span: that it holds), in document order, each once. Example: a figure at ``[40, 90)`` goes
    to a record of ``[0, 50)`` and one of ``[50, 120)``, not to one of ``[90, 200)``."""
    if not spans:
        return list(records)
    ordered = sorted(spans, key=lambda s: (s.start, s.end))
    out = []
    for record in records:
        urls = [span.url for span in ordered if _holds(record, span)]
        out.append(dataclasses.replace(record, image_urls=tuple(dict.fromkeys(urls))) if urls else record)
    return out


def _holds(record: ChunkRecord, span: FigureSpan) -> bool:
    if span.end > span.start:
        return record.char_start < span.end and span.start < record.char_end
    return record.char_start <= span.start < record.char_end


def _paragraphs(match: re.Match, descriptions: dict[str, str]) -> str:
    description = descriptions.get(match.group(1), "")
    parts = [f"<p {VISION_MARK}>{html.escape(description, quote=False)}</p>"] if description else []
    if match.group(2).strip():
        parts.append(f"<p {GENERATED_MARK}>{match.group(2)}</p>")
    return "".join(parts)


def vision_counts(notes: list[str] | str) -> dict:
    """What a document's notes (a list, or the ledger's note: the notes joined with ``"; "``) say the describer
    did: ``{"figures_described": 2, "figures_not_described": {"throttled": 1}}`` (``0`` and ``{}`` when they say
    nothing), read back from ``VisionOutcome.note``."""
    text = notes if isinstance(notes, str) else "; ".join(notes)
    left: dict[str, int] = {}
    for group in _NOT_DESCRIBED.findall(text):
        for number, reason in _COUNT.findall(group):
            left[reason.strip()] = left.get(reason.strip(), 0) + int(number)
    return {"figures_described": sum(int(n) for n in _DESCRIBED.findall(text)), "figures_not_described": left}
