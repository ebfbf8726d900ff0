"""``chunking eval --generate N``: draft a question set from the chunks of an index, for users who have none.

Chunks are taken evenly over the collection (by source, then position), skipping those with fewer than 8 words.
For each, the **answer sentence** is the chunk's longest sentence of 8 to 60 words, without markup (tags,
brackets, braces), that occurs verbatim in its document (the passage of the drafted question). Then:

* with a chat model (``CHAT_MODEL``): the model is given the chunk and asked for JSON
  ``{"question": ..., "answer": <a sentence copied from the chunk>}``; its answer sentence replaces ours when it
  is in the document, and a reply that is not such JSON falls back to the rule below;
* offline (the rule-based client): the question is the sentence's content words (stop words dropped, at most
  ten, in order) followed by ``?``: a keyword query, not a paraphrase.

Every drafted question carries ``note: "drafted by <model>; check by hand"``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Callable, Mapping, Sequence

from chunking.embeddings.stopwords import is_stop_word
from chunking.evaluation.judge import _normalised
from chunking.evaluation.questions import Question, dump_questions
from chunking.evaluation.runner import _settings_for
from chunking.ids import doc_id
from chunking.index.local import LocalIndex
from chunking.model import ChunkRecord
from chunking.parsers import parse_document
from chunking.pipeline.ingest import LOCAL_CONTAINER, ingest_files
from chunking.services import make_chat_client, make_embedder, make_ledger

__all__ = ["draft_question_file", "draft_questions"]

_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|\n+")
_WORD = re.compile(r"\w+")
_SPACE = re.compile(r"\s+")
_MARKUP = re.compile(r"<[^>]*>|[{}\[\]]")  # table cells, JSON and code say little as a question
_PROMPT = ("Write one question that a user of these documents might ask and that the passage below answers. "
           "Use the passage's language. Reply with JSON only: {\"question\": \"...\", \"answer\": \"<one sentence "
           "copied exactly from the passage>\"}.\n\nPassage:\n")


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def _answer_sentence(record: ChunkRecord, in_document: Callable[[str], bool]) -> str:
    candidates = [s for s in _sentences(record.content)
                  if 8 <= len(_WORD.findall(s)) <= 60 and not _MARKUP.search(s) and in_document(s)]
    return max(candidates, key=lambda s: (len(_WORD.findall(s)), -record.content.find(s)), default="")


def _rule_question(sentence: str) -> str:
    words = [w for w in _WORD.findall(sentence) if not is_stop_word(w.lower())]
    return " ".join(words[:10]) + "?"


def _model_question(chat, record: ChunkRecord, in_document: Callable[[str], bool]) -> tuple[str, str] | None:
    try:
        answer = chat.complete([{"role": "user", "content": _PROMPT + record.content}], temperature=0.0,
                               max_tokens=300, response_format={"type": "json_object"})
        data = json.loads(answer)
    except (ValueError, RuntimeError):
        return None
    if not isinstance(data, dict):
        return None
    question, sentence = data.get("question"), data.get("answer")
    if not isinstance(question, str) or not question.strip():
        return None
    sentence = sentence.strip() if isinstance(sentence, str) else ""
    return question.strip(), sentence if sentence and in_document(sentence) else ""


def draft_questions(records: Sequence[ChunkRecord], count: int, *, in_document: Callable[[str, str], bool],
                    chat=None, lang_of: Callable[[str], str] = lambda source: "") -> list[Question]:
    """Up to *count* drafted questions from *records* (module docstring).

    Args:
        in_document: ``(source, text) -> bool``, whether *text* occurs in the document (case and white space
            aside), so every passage drafted can be judged.
        chat: a ``ChatClient``, or ``None`` for the rule-based drafts.
        lang_of: the language tag of a source.
    """
    usable = sorted((r for r in records if len(_WORD.findall(r.content)) >= 8), key=lambda r: (r.source, r.ordinal))
    if not usable or count < 1:
        return []
    step = len(usable) / min(count, len(usable))
    picked = [usable[int(i * step)] for i in range(min(count, len(usable)))]
    made = chat.name if chat is not None else "rules"
    out = []
    for record in picked:
        sentence = _answer_sentence(record, lambda s: in_document(record.source, s))
        drafted = _model_question(chat, record, lambda s: in_document(record.source, s)) if chat else None
        if drafted is not None:
            question, sentence = drafted[0], drafted[1] or sentence
        elif sentence:
            question = _rule_question(sentence)
        else:
            continue
        page = () if sentence else tuple(range(record.page_start + 1, record.page_end + 2))
        out.append(Question(question, record.source, page, sentence, lang_of(record.source),
                            f"drafted by {made}; check by hand"))
    return out


def draft_question_file(files: Sequence[tuple[Path, str]], count: int, strategy, *, settings, workdir: Path,
                        out: Path, env: Mapping[str, str] | None = None) -> int:
    """Ingest *files* with *strategy* under *workdir*, draft *count* questions (``CHAT_MODEL`` when configured)
    and write them to *out* as JSON lines; returns how many were written. The strategy's overrides are read on
    top of *env* (default ``os.environ``), as ``chunking.evaluation.runner.evaluate`` reads them."""
    run_settings = _settings_for(strategy, settings, workdir, sorted({p.suffix.lower() for p, _ in files}),
                                 dict(os.environ if env is None else env))
    embedder = make_embedder(run_settings)
    texts: dict[str, str] = {}
    with LocalIndex(run_settings.local_index_path, embedder.dimensions) as index:
        ingest_files(files, settings=run_settings, embedder=embedder, index=index, ledger=make_ledger(run_settings),
                     cleanup="none")
        records = [r for _, source in files for r in index.records_of(doc_id(LOCAL_CONTAINER, source))]
    for path, source in files:
        pages = parse_document(path.read_bytes(), source=source, max_bytes=settings.max_document_bytes)
        texts[source] = _normalised("\n".join(p.text for p in pages))[0]

    def in_document(source: str, text: str) -> bool:
        return _SPACE.sub(" ", text.casefold()).strip() in texts.get(source, "")

    chat = None
    if settings.chat_backend != "offline":
        chat = make_chat_client(settings)
    questions = draft_questions(records, count, in_document=in_document, chat=chat)
    out.write_text(dump_questions(questions), encoding="utf-8")
    return len(questions)
