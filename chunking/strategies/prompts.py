"""The prompts of the model-based strategies, versioned: a prompt's version enters every cache key and the
document version, so editing a prompt means bumping its version (and re-ingests what it affects).

Every system prompt starts with ``Task: <name>.``, and every variable input sits between ``<tag>`` lines; the
offline client (``offline.py``) reads both back, so the same requests drive the real and the offline model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

__all__ = ["PROMPTS", "Prompt", "render_units", "section", "task_of"]


@dataclass(frozen=True)
class Prompt:
    """A system prompt template (``str.format`` fields) and its version."""

    task: str
    version: str
    system: str

    def messages(self, user: str, **fields: object) -> tuple[dict[str, str], ...]:
        return ({"role": "system", "content": self.system.format(**fields)}, {"role": "user", "content": user})


_PROPOSITIONS = """Task: propositions.
Rewrite the passage between <passage> and </passage> into propositions: short, atomic, self-contained factual
statements that together say everything the passage states.
- One fact per proposition. Split compound sentences; repeat the subject instead of using pronouns or "it".
- Add the context a reader needs to understand the statement alone (the name of the thing, not "the above").
- Use only information in the passage; never add facts. Keep the passage's language and its terms.
- At most {max_propositions} propositions, each at most {max_proposition_tokens} tokens.
Answer with JSON only: {{"propositions": ["...", "..."]}}"""

_BOUNDARIES = """Task: boundaries.
Between <units> and </units> is part of a document as numbered units (sentences or figures), each as "[i] text";
an empty line separates paragraphs. Choose where new chunks begin, so that each chunk is about one topic and
reads well on its own when retrieved. Aim for chunks of {min_chunk_tokens} to {max_chunk_tokens} tokens; keep
headings with the text they introduce.
Answer with JSON only: {{"breaks": [i, ...]}}, the numbers of the units that start a new chunk, strictly
increasing. Do not rewrite any text."""

_ROUTE = """Task: route.
Between <document> and </document> is the beginning of a document. Choose the chunking strategy that suits it
best from this list: {choices}.
Answer with JSON only: {{"strategy": "<one name from the list>"}}"""

_SUMMARY = """Task: summary.
Between <document> and </document> is the beginning of a document. Write a summary of at most
{max_summary_tokens} tokens: what the document is, its subject and its main parts. Use the document's language.
Answer with the summary only."""

_SITUATE = """Task: situate.
Between <summary> and </summary> is a summary of a document; between <chunk> and </chunk> is one chunk of it,
with its heading path in <headings>. Write one or two sentences (at most {max_context_tokens} tokens) that
situate the chunk within the document, to improve search retrieval of the chunk. Use the document's language.
Answer with the sentences only."""

PROMPTS: dict[str, Prompt] = {
    "propositions": Prompt("propositions", "propositions-v1", _PROPOSITIONS),
    "boundaries": Prompt("boundaries", "boundaries-v1", _BOUNDARIES),
    "route": Prompt("route", "route-v1", _ROUTE),
    "summary": Prompt("summary", "summary-v1", _SUMMARY),
    "situate": Prompt("situate", "situate-v1", _SITUATE),
}

_TASK = re.compile(r"^Task: (\w+)\.")
_SPACES = re.compile(r"\s+")


def section(tag: str, text: str) -> str:
    """``<tag>\\ntext\\n</tag>``: the framing every variable input gets."""
    return f"<{tag}>\n{text}\n</{tag}>"


def read_section(tag: str, text: str) -> str | None:
    """The text framed by ``<tag>`` lines in *text* (inverse of ``section``), or ``None``."""
    start, end = text.find(f"<{tag}>\n"), text.rfind(f"\n</{tag}>")
    if start < 0 or end < start:
        return None
    return text[start + len(tag) + 3 : end]


def task_of(system: str) -> str:
    """The task name of a system prompt (``"propositions"`` …), or ``""``."""
    match = _TASK.match(system)
    return match.group(1) if match else ""


def render_units(texts: Sequence[str], paragraph_starts: Sequence[bool]) -> str:
    """Units as the boundaries prompt shows them: ``[i] text`` per line (whitespace runs folded to one space),
    an empty line before a unit that starts a paragraph (except the first).

    Example: ``render_units(["A.", "B.", "C."], [True, False, True])`` → ``"[0] A.\\n[1] B.\\n\\n[2] C."``.
    """
    lines = []
    for i, (text, starts) in enumerate(zip(texts, paragraph_starts)):
        if starts and i:
            lines.append("")
        lines.append(f"[{i}] {_SPACES.sub(' ', text).strip()}")
    return "\n".join(lines)
