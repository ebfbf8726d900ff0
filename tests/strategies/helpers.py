"""Test doubles for the strategies: a topic embedder with known distances, a scripted chat client, invariants."""

from __future__ import annotations

import re
from typing import Callable, Sequence

from chunking.model import Chunk, Page


class TopicEmbedder:
    """Embeds a text as the normalised counts of the topic words it contains: one dimension per topic, so the
    cosine between two texts is computable by hand. A text with no topic word gets the last dimension."""

    def __init__(self, topics: Sequence[str], fail: BaseException | None = None) -> None:
        self.topics = [t.lower() for t in topics]
        self.dimensions = len(self.topics) + 1
        self.name = f"topic/{'-'.join(self.topics)}"
        self.requests = 0
        self.tokens = 0
        self.inputs: list[str] = []
        self.fail = fail

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if self.fail is not None:
            raise self.fail
        self.requests += 1
        self.inputs.extend(texts)
        out = []
        for text in texts:
            words = re.findall(r"\w+", text.lower())
            v = [float(sum(1 for w in words if w == t)) for t in self.topics] + [0.0]
            if not any(v):
                v[-1] = 1.0
            norm = sum(x * x for x in v) ** 0.5
            out.append([x / norm for x in v])
        return out


class ScriptedChat:
    """A ``ChatClient`` answering with ``script(messages) -> str`` (or raising what it returns if an exception)."""

    def __init__(self, script: Callable[[list[dict]], str | BaseException], name: str = "scripted-v1") -> None:
        self.script = script
        self.name = name
        self.requests = 0
        self.calls: list[list[dict]] = []

    def complete(self, messages, *, temperature=0.0, max_tokens=1024, response_format=None) -> str:
        self.requests += 1
        self.calls.append(list(messages))
        answer = self.script(list(messages))
        if isinstance(answer, BaseException):
            raise answer
        return answer


def user_text(messages: list[dict]) -> str:
    return "\n".join(m["content"] for m in messages if m["role"] == "user")


def doc_text(pages: Sequence[Page]) -> str:
    """The document text with page gaps filled by spaces (so offsets index it)."""
    out = ""
    for p in pages:
        out += " " * (p.offset - len(out)) + p.text
    return out


def squash(text: str) -> str:
    return "".join(text.split())


def assert_covers(chunks: Sequence[Chunk], pages: Sequence[Page]) -> None:
    """Every non-whitespace character of the pages lies in the own span of some verbatim chunk."""
    text = doc_text(pages)
    covered = bytearray(len(text))
    for c in chunks:
        if c.kind != "proposition":
            covered[c.char_start : c.char_end] = b"\x01" * (c.char_end - c.char_start)
    missing = [i for i, ch in enumerate(text) if not ch.isspace() and not covered[i]]
    assert not missing, f"uncovered characters at {missing[:10]}: {text[missing[0]:missing[0] + 30]!r}"


def assert_verbatim(chunks: Sequence[Chunk], pages: Sequence[Page]) -> None:
    """A text/figure chunk's own text (look-ahead aside), whitespace aside, is the document between its offsets."""
    text = doc_text(pages)
    for c in chunks:
        if c.kind in ("text", "figure"):
            assert squash(c.own_text) == squash(text[c.char_start : c.char_end]), (c.char_start, c.text[:40])


def assert_ordered(chunks: Sequence[Chunk]) -> None:
    """Spans advance: starts strictly increase, ends never go back (hard-cut pieces may overlap a little)."""
    assert all(a.char_start < b.char_start and a.char_end <= b.char_end for a, b in zip(chunks, chunks[1:]))
