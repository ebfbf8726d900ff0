"""Figure descriptions put into a document's pages after parsing and before splitting
(docs/parsers.md#figure-descriptions).

The parser (in the parse child) keeps the pictures that pass the skip rules and marks each one's place:
``<p data-generated="ocr" data-picture="<sha256>">OCR text</p>`` (``chunking.parsers.pictures.KEPT_PICTURE``).
Here, page by page, the describer (``chunking.services.figure_describer``) describes them, and each mark becomes

    <p data-generated="vision">the description</p><p data-generated="ocr">OCR text</p>

(either part left out when empty; a figure with nothing left keeps its caption or goes away). A page's text
changes length, so the pages after it move by the same number of characters: offsets stay those of the text the
splitter sees. A figure that is not described (budget, throttling, a refusal) keeps its caption and OCR text and
the document one ledger note (``VisionOutcome.note``); nothing here fails a document.
"""

from __future__ import annotations

import dataclasses
import html
import re
from collections.abc import Iterable, Iterator

from chunking.chat.vision import FigureDescriber, VisionOutcome
from chunking.model import Page
from chunking.parsers import ReadContext
from chunking.parsers.pictures import GENERATED_MARK, KEPT_PICTURE

__all__ = ["VISION_MARK", "describe_pages", "vision_counts"]

#: The attribute marking a description a vision model wrote.
VISION_MARK = 'data-generated="vision"'
_EMPTY_FIGURE = re.compile(r"(?:\n\n)?<figure></figure>")
_DESCRIBED = re.compile(r"vision: (\d+) figures? described by")
_NOT_DESCRIBED = re.compile(r"vision: [^;]*?(?:; )?not described: ((?:\d+ [^,;]+(?:, )?)+)")
_COUNT = re.compile(r"(\d+) ([^,;]+)")


def describe_pages(pages: Iterable[Page], *, context: ReadContext, describer: FigureDescriber,
                   outcome: VisionOutcome | None = None) -> Iterator[Page]:
    """*pages* with their kept pictures described by *describer* (the pictures' bytes from ``context.images``,
    forgotten once described), offsets moved by what the text before gained or lost. When the pages are
    done, the outcome's note (``figures: 2 described by …``) is added to ``context.notes``."""
    outcome = outcome if outcome is not None else VisionOutcome()
    delta = 0
    expired = context.deadline.expired if context.deadline is not None else None
    for page in pages:
        digests = KEPT_PICTURE.findall(page.text)
        if not digests and not delta:
            yield page
            continue
        text = page.text
        if digests:
            images = {digest: context.images.pop(digest) for digest, _ in digests if digest in context.images}
            describer.describe(images, expired=expired, outcome=outcome)
            text = _EMPTY_FIGURE.sub("", KEPT_PICTURE.sub(lambda m: _paragraphs(m, outcome.descriptions), text))
        moved = dataclasses.replace(page, offset=page.offset + delta, text=text)
        delta += len(text) - len(page.text)
        yield moved
    note = outcome.note(describer.name)
    if note:
        context.note(note)


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
