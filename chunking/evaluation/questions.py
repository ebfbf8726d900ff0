"""Question sets for ``chunking eval``: JSON lines, one question a line, with where its answer is.

A line is an object with ``question`` (text) and ``source`` (the document's file name, or a ``/``-separated
path suffix of its source name), plus at least one of ``page`` (1-based, as printed in ``sourcepage``; a number or
a list of acceptable pages) and ``passage`` (text copied from the document that holds the answer). Optional:
``lang`` (a language tag, reported per language) and ``note``. Blank lines and lines starting with ``#`` are
skipped. The format is described in docs/evaluation.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

__all__ = ["Question", "QuestionSetError", "dump_questions", "load_questions"]


class QuestionSetError(ValueError):
    """A question set line is malformed; the message names the file and line."""


@dataclass(frozen=True)
class Question:
    """One question and where its answer is.

    Attributes:
        question: the query text.
        source: file name or path suffix of the document holding the answer (``"amc-manual.en.pdf"``).
        pages: acceptable 1-based pages (empty: any page of *source*).
        passage: text of the document that holds the answer (``""``: any chunk on *pages*).
        lang: language tag (``""`` when not given).
        note: free text (how the answer was checked, or that the question was drafted by ``--generate``).
    """

    question: str
    source: str
    pages: tuple[int, ...] = ()
    passage: str = ""
    lang: str = ""
    note: str = ""

    def to_dict(self) -> dict:
        """The JSON object of this question, as ``load_questions`` reads it."""
        out: dict = {"question": self.question, "source": self.source}
        if self.pages:
            out["page"] = self.pages[0] if len(self.pages) == 1 else list(self.pages)
        for key in ("passage", "lang", "note"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        return out


def _pages(value: object, where: str) -> tuple[int, ...]:
    values = value if isinstance(value, list) else [value]
    if not values or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in values):
        raise QuestionSetError(f"{where}: \"page\" must be a page number ≥ 1 or a list of them, got {value!r}")
    return tuple(values)  # type: ignore[arg-type]


def parse_question(obj: object, where: str) -> Question:
    """One question from its JSON object; *where* (``file:line``) prefixes any error.

    Raises:
        QuestionSetError: not an object, a required field missing or empty, or a field of the wrong type.
    """
    if not isinstance(obj, dict):
        raise QuestionSetError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    for key in ("question", "source"):
        if not isinstance(obj.get(key), str) or not obj[key].strip():
            raise QuestionSetError(f"{where}: \"{key}\" must be a non-empty string")
    pages = _pages(obj["page"], where) if "page" in obj else ()
    passage = obj.get("passage", "")
    if not isinstance(passage, str):
        raise QuestionSetError(f"{where}: \"passage\" must be a string")
    if not pages and not passage.strip():
        raise QuestionSetError(f"{where}: give \"page\" or \"passage\" (where the answer is)")
    unknown = set(obj) - {"question", "source", "page", "passage", "lang", "note"}
    if unknown:
        raise QuestionSetError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
    return Question(obj["question"].strip(), obj["source"].strip(), pages, passage.strip(),
                    str(obj.get("lang", "")), str(obj.get("note", "")))


def load_questions(path: Path) -> list[Question]:
    """Every question of the JSON-lines file *path*, in file order.

    Raises:
        QuestionSetError: a line is not JSON or not a valid question (the message names ``path:line``), or the
            file holds no question.
        OSError: the file cannot be read.
    """
    questions = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"{path}:{number}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise QuestionSetError(f"{where}: not JSON ({exc.msg})") from None
        questions.append(parse_question(obj, where))
    if not questions:
        raise QuestionSetError(f"{path}: no questions")
    return questions


def dump_questions(questions: Iterable[Question]) -> str:
    """JSON lines for *questions* (non-ASCII kept), as ``load_questions`` reads them."""
    return "".join(json.dumps(q.to_dict(), ensure_ascii=False) + "\n" for q in questions)
