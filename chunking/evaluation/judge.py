"""Which indexed records answer a question: the record must come from the question's source, lie on one of its
pages (when given), and overlap the passage (when given) in the document's text.

The passage is found in the parsed document with case and runs of white space ignored, so a passage copied from
a PDF viewer or a pretty-printed JSON file still matches; a record overlaps it when its span
``[char_start, char_end)`` shares a character with one occurrence. Spans are used rather than the record's text,
so records whose text is not a copy of the document (propositions, re-serialised JSON) are judged by the span they
were made from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from chunking.evaluation.questions import Question
from chunking.model import ChunkRecord, Page

__all__ = ["AnswerKey", "answer_key", "matches_source"]

_SPACE = re.compile(r"\s+")


def _normalised(text: str) -> tuple[str, list[int]]:
    """*text* case-folded with each white-space run as one space, and the original offset of each character."""
    out: list[str] = []
    offsets: list[int] = []
    for match in re.finditer(r"\s+|\S", text):
        piece = match.group()
        folded = " " if piece.isspace() else piece.casefold()
        out.append(folded)
        offsets.extend([match.start()] * len(folded))
    return "".join(out), offsets


def matches_source(question_source: str, record_source: str) -> bool:
    """Whether a question's ``source`` names *record_source*: equal, or a ``/``-separated suffix of it."""
    return record_source == question_source or record_source.endswith("/" + question_source.lstrip("/"))


@dataclass(frozen=True)
class AnswerKey:
    """Where one question's answer is in one document: the accepted 0-based pages (empty: any) and the passage's
    occurrences as ``(start, end)`` document offsets (empty and ``passage`` unset: anywhere on the pages)."""

    source: str
    pages: frozenset[int]
    spans: tuple[tuple[int, int], ...]
    by_passage: bool

    def relevant(self, record: ChunkRecord) -> bool:
        """Whether *record* holds (part of) the answer."""
        if record.source != self.source:
            return False
        if self.pages and not any(record.page_start <= p <= record.page_end for p in self.pages):
            return False
        if self.by_passage:
            return any(record.char_start < end and start < record.char_end for start, end in self.spans)
        return True


def answer_key(question: Question, source: str, pages: Sequence[Page]) -> AnswerKey:
    """The answer key of *question* in the document *source* parsed into *pages*.

    Raises:
        ValueError: the passage does not occur in the document (on the given pages, when given); the message
            quotes it, so a wrong question set is found before any score is reported.
    """
    wanted = frozenset(p - 1 for p in question.pages)
    spans: list[tuple[int, int]] = []
    if question.passage:
        needle = _SPACE.sub(" ", question.passage.casefold()).strip()
        for page in pages:
            if wanted and page.page_num not in wanted:
                continue
            hay, offsets = _normalised(page.text)
            start = hay.find(needle)
            while start >= 0:
                end = offsets[start + len(needle) - 1] + 1
                spans.append((page.offset + offsets[start], page.offset + end))
                start = hay.find(needle, start + 1)
        if not spans:
            where = f" on page {', '.join(map(str, question.pages))}" if question.pages else ""
            raise ValueError(f"passage {question.passage[:80]!r} not found in {source}{where}")
    return AnswerKey(source, wanted, tuple(spans), bool(question.passage))
