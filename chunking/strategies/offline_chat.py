"""``OfflineChatClient``: a deterministic, rule-based stand-in for a chat model, so the model-based strategies run
with no account and no network (the embedded default, and the tests). It is **not a language model**: it reads
the task and the framed input of the prompts in ``prompts.py`` and applies fixed rules.

* ``propositions``: the passage's sentences (docs/splitters.md#sentence-end) cut after every ``;``, whitespace folded,
  wordless ones (dot leaders) left out; one over the token cap is cut at ``:``/``,`` clause breaks, then between
  words; over ``max_propositions``, the shortest neighbouring pair is joined. No pronoun is resolved and nothing
  is paraphrased.
* ``boundaries``: a new chunk starts at every unit after an empty line (a paragraph start) and at every
  heading-like unit (docs/splitters.md#heading-like-line).
* ``route``: ``markdown`` if the excerpt has ≥ 2 Markdown heading lines and it is allowed, else ``sentence`` if
  allowed, else the first allowed name.
* ``summary``: the document's first sentences, up to the token cap.
* ``situate``: "Part of: <first sentence of the summary> Section: <headings>. About: <three most frequent words>."

The answers have the JSON shapes the prompts ask for, so they pass the strategies' validation.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from typing import Any, Callable, Mapping, Sequence

from chunking.chat import ChatError, Message
from chunking.splitters.sentence.boundaries import Boundaries, is_heading_like
from chunking.splitters.sentence.config import SentenceSplitterConfig
from chunking.strategies.prompts import read_section, task_of
from chunking.strategies.units import sentence_spans
from chunking.tokens import token_counter

__all__ = ["OfflineChatClient"]

_UNIT_LINE = re.compile(r"^\[(\d+)\] (.*)$")
_NUMBER_AFTER = {
    "max_propositions": re.compile(r"At most (\d+) propositions"),
    "max_proposition_tokens": re.compile(r"each at most (\d+) tokens"),
    "max_summary_tokens": re.compile(r"summary of at most\s+(\d+) tokens"),
}
_CHOICES = re.compile(r"from this list: (.*)\.\n")
_MD_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+\S", re.MULTILINE)
_SEMICOLON = re.compile(r"(?<=;)\s+")
_CLAUSE_BREAK = re.compile(r"(?<=[;:,])\s+")
_WORD = re.compile(r"\w{4,}")
_WORDS = re.compile(r"[^\W_]")
_SPACES = re.compile(r"\s+")
# Words too common to say what a chunk is about (English; other languages simply keep theirs).
_STOP = frozenset("that this with from have were been their there which when what will would into also than then "
                  "they them these those such more most some other only your about after before each".split())


class OfflineChatClient:
    """Rule-based answers to the strategy prompts (module docstring); deterministic, no network.

    Attributes:
        name: ``"offline-chat-v1"`` (part of cache keys and document versions). requests: ``complete`` calls.
    """

    VERSION = "offline-chat-v1"

    def __init__(self, token_counter_: Callable[[str], int] | None = None) -> None:
        self.name = self.VERSION
        self.requests = 0
        self._lock = threading.Lock()  # run_chat_tasks calls from several threads
        self._count = token_counter_ or token_counter("cl100k_base")
        self._bounds = Boundaries(SentenceSplitterConfig())
        self._tasks: dict[str, Callable[[str, str], str]] = {
            "propositions": self._propositions, "boundaries": self._boundaries, "route": self._route,
            "summary": self._summary, "situate": self._situate,
        }  # fmt: skip

    def complete(self, messages: Sequence[Message], *, temperature: float = 0.0, max_tokens: int = 1024,
                 response_format: Mapping[str, Any] | None = None) -> str:
        """Answer a strategy prompt. Raises ``ChatError`` for a prompt of no known task."""
        with self._lock:
            self.requests += 1
        system = next((m["content"] for m in messages if m.get("role") == "system"), "")
        user = "\n".join(m["content"] for m in messages if m.get("role") == "user")
        handler = self._tasks.get(task_of(system))
        if handler is None:
            raise ChatError(f"{self.name} answers only the chunking prompts; got task {task_of(system)!r}")
        return handler(system, user)

    # -- tasks -----------------------------------------------------------------------------------------------

    def _propositions(self, system: str, user: str) -> str:
        passage = read_section("passage", user) or ""
        cap = _number(system, "max_proposition_tokens", 100)
        out: list[str] = []
        for sentence in self._sentences(passage):
            for clause in _SEMICOLON.split(sentence):  # clauses joined by ";" are statements of their own
                if _WORDS.search(clause):  # dot leaders and stray symbols state nothing
                    out.extend(self._fit(clause, cap))
        limit = _number(system, "max_propositions", 30)
        while len(out) > limit:  # join the neighbours whose union is shortest, while within the cap
            sizes = [(self._count(f"{a} {b}"), i) for i, (a, b) in enumerate(zip(out, out[1:]))]
            size, i = min(sizes)
            if size > cap:
                break  # cannot comply: the answer is invalid and the strategy falls back
            out[i : i + 2] = [f"{out[i]} {out[i + 1]}"]
        return json.dumps({"propositions": out}, ensure_ascii=False)

    def _boundaries(self, system: str, user: str) -> str:
        breaks = []
        blank_before = False
        for line in (read_section("units", user) or "").split("\n"):
            match = _UNIT_LINE.match(line)
            if match is None:
                blank_before = blank_before or not line.strip()
                continue
            i = int(match.group(1))
            if i > 0 and (blank_before or is_heading_like(match.group(2))):
                breaks.append(i)
            blank_before = False
        return json.dumps({"breaks": breaks})

    def _route(self, system: str, user: str) -> str:
        match = _CHOICES.search(system)
        choices = [c.strip() for c in match.group(1).split(",")] if match else ["sentence"]
        excerpt = read_section("document", user) or ""
        if len(_MD_HEADING.findall(excerpt)) >= 2 and "markdown" in choices:
            return json.dumps({"strategy": "markdown"})
        return json.dumps({"strategy": "sentence" if "sentence" in choices else choices[0]})

    def _summary(self, system: str, user: str) -> str:
        cap = _number(system, "max_summary_tokens", 100)
        out: list[str] = []
        for sentence in self._sentences(read_section("document", user) or ""):
            if self._count(" ".join([*out, sentence])) > cap:
                break
            out.append(sentence)
        return " ".join(out) or self._fit(" ".join((read_section("document", user) or "").split()), cap)[0]

    def _situate(self, system: str, user: str) -> str:
        summary = self._sentences(read_section("summary", user) or "")
        headings = " › ".join(filter(None, (read_section("headings", user) or "").split("\n")))
        words = Counter(w for w in _WORD.findall((read_section("chunk", user) or "").lower()) if w not in _STOP)
        top = [w for w, _ in sorted(words.items(), key=lambda item: (-item[1], item[0]))[:3]]
        parts = [f"Part of: {summary[0]}" if summary else "", f"Section: {headings}." if headings else "",
                 f"About: {', '.join(top)}." if top else ""]  # fmt: skip
        return " ".join(p for p in parts if p) or "Part of the document."

    # -- helpers ---------------------------------------------------------------------------------------------

    def _sentences(self, text: str) -> list[str]:
        spans = sentence_spans(text, 0, len(text), self._bounds)
        return [folded for a, b in spans if (folded := _SPACES.sub(" ", text[a:b]).strip())]

    def _fit(self, sentence: str, cap: int) -> list[str]:
        """*sentence* as pieces of ≤ *cap* tokens: whole, else at clause breaks, else between words."""
        if self._count(sentence) <= cap:
            return [sentence]
        out: list[str] = []
        for piece in _CLAUSE_BREAK.split(sentence):
            if out and self._count(f"{out[-1]} {piece}") <= cap:
                out[-1] = f"{out[-1]} {piece}"
            elif self._count(piece) <= cap:
                out.append(piece)
            else:
                out.extend(self._words(piece, cap))
        return out

    def _words(self, text: str, cap: int) -> list[str]:
        out: list[str] = []
        for word in text.split(" "):
            if out and self._count(f"{out[-1]} {word}") <= cap:
                out[-1] = f"{out[-1]} {word}"
            else:
                out.append(word)  # a single word over the cap stays whole (validation then rejects the answer)
        return out


def _number(system: str, name: str, default: int) -> int:
    match = _NUMBER_AFTER[name].search(system)
    return int(match.group(1)) if match else default
