"""``chunking eval``'s work: ingest the documents once per strategy into an index of its own, ask every question,
and score the rankings (docs/evaluation.md).

A strategy is written as words separated by spaces: an optional splitter first, then any settings as
``NAME=VALUE``. The splitter is ``default`` (each format's default, ``SPLITTERS`` as set), a splitter or strategy
name for every file (``semantic``, ``sentence_window``, ``markdown+enrich``), or a ``SPLITTERS`` value
(``.pdf=semantic,.md=markdown``). Examples: ``default``, ``semantic``, ``"sentence SPLIT_MAX_TOKENS=250"``.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

from chunking.documents.splitter import check_splitters
from chunking.evaluation.judge import AnswerKey, answer_key, matches_source
from chunking.evaluation.metrics import QuestionScore, Summary, score_question, summarise
from chunking.evaluation.questions import Question
from chunking.ids import doc_id
from chunking.index.local import LocalIndex
from chunking.parsers import parse_document
from chunking.pipeline.ingest import LOCAL_CONTAINER, ingest_files
from chunking.redact import register_settings
from chunking.retrieval import search
from chunking.services import fusion_options, make_embedder, make_ledger, strategy_clients
from chunking.settings import Settings, SettingsError

__all__ = ["Strategy", "StrategyResult", "evaluate", "parse_strategy"]

_SETTING = re.compile(r"^[A-Z][A-Z0-9_]*=")
#: Hits looked at per question: nDCG@10 needs ten.
DEPTH = 10


@dataclass(frozen=True)
class Strategy:
    """One way to chunk: ``label`` (as written), ``splitter`` (``"default"``, a name, or a ``SPLITTERS`` value) and
    setting overrides ``env`` (variable → value)."""

    label: str
    splitter: str = "default"
    env: Mapping[str, str] = field(default_factory=dict)


def parse_strategy(spec: str) -> Strategy:
    """A ``Strategy`` from its written form (module docstring).

    Raises:
        ValueError: empty, or more than one splitter word.
    """
    words = spec.split()
    if not words:
        raise ValueError("empty strategy")
    env = {w.split("=", 1)[0]: w.split("=", 1)[1] for w in words if _SETTING.match(w)}
    names = [w for w in words if not _SETTING.match(w)]
    if len(names) > 1:
        raise ValueError(f"strategy {spec!r}: one splitter at most, then NAME=VALUE settings")
    return Strategy(" ".join(words), names[0] if names else "default", env)


@dataclass
class StrategyResult:
    """One strategy's outcome: per ranking (``"hybrid"``, ``"bm25"`` …) its summary and per-question scores, plus
    what ingesting cost: ``embedding_tokens`` = cl100k_base tokens sent to the embedder in all, of which
    ``splitting_tokens`` while splitting (``semantic`` and ``llm`` embed sentence windows to find their cuts)
    and the rest for the chunks' own vectors."""

    strategy: Strategy
    summaries: dict[str, Summary] = field(default_factory=dict)
    scores: dict[str, list[QuestionScore]] = field(default_factory=dict)
    chunks: int = 0
    embedding_tokens: int = 0
    splitting_tokens: int = 0
    embedder: str = ""
    failed: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return {
            "strategy": self.strategy.label, "embedder": self.embedder, "chunks": self.chunks,
            "embedding_tokens": self.embedding_tokens, "embedding_tokens_splitting": self.splitting_tokens,
            "embedding_tokens_chunks": self.embedding_tokens - self.splitting_tokens, "failed_documents": self.failed,
            "seconds": round(self.seconds, 2),
            "rankings": {name: s.to_dict() for name, s in self.summaries.items()},
            "questions": {name: [{"question": q.question, "rank": q.rank, "ndcg@10": round(q.ndcg10, 4)}
                                 for q in qs] for name, qs in self.scores.items()},
        }  # fmt: skip


class _LookedUp(dict):
    """An environment that records the names read from it (``Settings.from_env`` reads each with ``get``)."""

    def __init__(self, values: Mapping[str, str]) -> None:
        super().__init__(values)
        self.names: set[str] = set()

    def get(self, name, default=None):
        self.names.add(name)
        return super().get(name, default)


def _register_each(overrides: Mapping[str, str], env: Mapping[str, str]) -> None:
    """Register the secrets of each override read alone on top of *env* (``register_settings``), skipping those
    that are malformed: what can be registered when the overrides together are refused."""
    for name, value in overrides.items():
        try:
            register_settings(Settings.from_env({**env, name: value}))
        except SettingsError:
            continue


def _settings_for(strategy: Strategy, base: Settings, state_dir: Path, extensions: Sequence[str],
                  env: Mapping[str, str]) -> Settings:
    """The settings of *strategy*: its overrides read on top of *env*, its index and ledger local under *state_dir*.

    Raises:
        SettingsError: an override's value is malformed, or no setting of its name is read (``SPLIT_MAX_TOKEN=250``
            would change nothing).
    """
    settings = base
    if strategy.env:
        looked_up = _LookedUp({**env, **strategy.env})
        try:
            settings = Settings.from_env(looked_up)
        except SettingsError:
            _register_each(strategy.env, env)  # the error names the label: a key beside the bad value stays masked
            raise
        register_settings(settings)  # its keys are masked wherever the label (the settings as written) is printed
        unread = sorted(set(strategy.env) - looked_up.names)
        if unread:
            raise SettingsError(f"{', '.join(unread)}: no such setting (docs/settings.md lists them)")
    settings = settings.replace(state_dir=state_dir, index_backend="local", ledger_backend="local")
    if strategy.splitter == "default":
        return settings
    if "=" in strategy.splitter:
        splitters = Settings.from_env({"SPLITTERS": strategy.splitter}).splitters
    else:
        splitters = {ext: strategy.splitter for ext in extensions}
    return settings.replace(splitters={**settings.splitters, **splitters})


def _answer_keys(questions: Sequence[Question], files: Sequence[tuple[Path, str]],
                 settings: Settings) -> list[list[AnswerKey]]:
    """Per question, its answer key in each document it names (parsed once each)."""
    parsed: dict[str, list] = {}
    keys = []
    for q in questions:
        named = [(path, source) for path, source in files if matches_source(q.source, source)]
        if not named:
            raise ValueError(f"question {q.question[:60]!r}: no document named {q.source!r} among the inputs")
        found = []
        for path, source in named:
            if source not in parsed:
                parsed[source] = list(parse_document(path.read_bytes(), source=source,
                                                     max_bytes=settings.max_document_bytes))
            found.append(answer_key(q, source, parsed[source]))
        keys.append(found)
    return keys


def evaluate(files: Sequence[tuple[Path, str]], questions: Sequence[Question], strategies: Sequence[Strategy], *,
             settings: Settings, workdir: Path, rankings: Sequence[str] = ("hybrid", "bm25"),
             env: Mapping[str, str] | None = None,
             progress: Callable[[str], None] = lambda message: None) -> list[StrategyResult]:
    """Ingest *files* with each strategy into ``workdir/<n>``, ask *questions*, and score each ranking.

    Args:
        files: ``(path, source name)`` pairs, as ``chunking.pipeline.ingest.collect_files`` gives them.
        settings: the base settings (embedder, caps); each strategy's overrides are read on top of *env*
            (default ``os.environ``), and its index and ledger are local files under *workdir*.
        rankings: ``chunking.retrieval.RANKINGS`` to score on every strategy's index.

    Returns:
        one result per strategy, in order.

    Raises:
        ValueError: a question names no input document or its passage is not in it; a bad strategy setting.
    """
    env = dict(os.environ if env is None else env)
    keys = _answer_keys(questions, files, settings)
    extensions = sorted({path.suffix.lower() for path, _ in files if path.suffix})
    results = []
    for n, strategy in enumerate(strategies, 1):
        started = time.perf_counter()
        try:
            run_settings = _settings_for(strategy, settings, workdir / str(n), extensions, env)
            check_splitters(run_settings)  # a strategy name no splitter has, before any document is ingested
        except (SettingsError, ValueError) as exc:
            raise ValueError(f"strategy {strategy.label!r}: {exc}") from None
        embedder = make_embedder(run_settings)
        index = LocalIndex(run_settings.local_index_path, embedder.dimensions, fusion_options(run_settings),
                           languages=run_settings.index_design.languages)  # SEARCH_LANGUAGES, as make_index
        # The embedder the strategies split with (semantic windows): shared per settings, counting what it sends.
        splitting = strategy_clients(run_settings).embedder
        sent_before = splitting.sent_tokens
        progress(f"{strategy.label}: ingesting {len(files)} document{'' if len(files) == 1 else 's'}")
        with index:
            summary = ingest_files(files, settings=run_settings, embedder=embedder, index=index,
                                   ledger=make_ledger(run_settings), cleanup="none")
            split_tokens = splitting.sent_tokens - sent_before
            result = StrategyResult(strategy, embedder=embedder.name, splitting_tokens=split_tokens,
                                    embedding_tokens=split_tokens + sum(r.embedding_tokens for r in summary.rows),
                                    chunks=index.count(),
                                    failed=[f"{r.source}: {r.error}" for r in summary.rows if r.outcome == "failed"])
            relevant = [[_count_relevant(index, key) for key in qkeys] for qkeys in keys]
            progress(f"{strategy.label}: asking {len(questions)} question{'' if len(questions) == 1 else 's'}")
            for ranking in rankings:
                scores = []
                for q, qkeys, counts in zip(questions, keys, relevant):
                    hits = search(q.question, index=index, embedder=embedder, k=DEPTH, ranking=ranking)
                    relevance = [any(key.relevant(h.record) for key in qkeys) for h in hits]
                    scores.append(score_question(q.question, q.lang, relevance, sum(counts)))
                result.scores[ranking] = scores
                result.summaries[ranking] = summarise(scores)
        result.seconds = time.perf_counter() - started
        results.append(result)
    return results


def _count_relevant(index, key: AnswerKey) -> int:
    return sum(1 for record in index.records_of(doc_id(LOCAL_CONTAINER, key.source)) if key.relevant(record))
