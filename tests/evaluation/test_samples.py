"""The shipped question set on samples/ with the offline embedder: the retrieval targets, the search output, and
``chunking eval`` end to end on a small set."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chunking.evaluation.questions import load_questions
from chunking.evaluation.runner import evaluate, parse_strategy
from chunking.pipeline.ingest import collect_files
from chunking.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = ROOT / "samples" / "eval" / "questions.jsonl"


@pytest.fixture(scope="module")
def eval_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("eval")


@pytest.fixture(scope="module")
def default_result(eval_dir):
    files, _, _ = collect_files([ROOT / "samples"], cwd=ROOT, exclude=["SOURCES.md", "eval/*"])
    results = evaluate(files, load_questions(QUESTIONS), [parse_strategy("default")], settings=Settings.from_env({}),
                       workdir=eval_dir, rankings=("hybrid", "bm25", "vector"), env={})
    return results[0]


def test_question_set_is_large_and_in_each_samples_language():
    questions = load_questions(QUESTIONS)
    assert len(questions) >= 40
    by_source = {q.source for q in questions}
    assert by_source == {p.name for p in (ROOT / "samples").iterdir() if p.suffix and p.name != "SOURCES.md"}
    assert {q.lang for q in questions} == {"en", "es", "ja"}


def test_default_settings_meet_the_targets_and_never_fall_below_bm25(default_result):
    hybrid, bm25 = default_result.summaries["hybrid"], default_result.summaries["bm25"]
    assert hybrid.questions == len(load_questions(QUESTIONS))
    assert hybrid.hit3 >= 0.8 and hybrid.mrr >= 0.65
    assert hybrid.hit3 >= bm25.hit3 and hybrid.mrr >= bm25.mrr and hybrid.ndcg10 >= bm25.ndcg10
    assert default_result.embedder == "offline-lexical-v2/256" and default_result.failed == []
    assert default_result.embedding_tokens > 100_000


def test_exact_fact_questions_rank_their_chunk_first(default_result):
    ranks = {s.question: s.rank for s in default_result.scores["hybrid"]}
    for question in ("When was Debian bookworm released?", "What is the alpha-3 code of Japan?",
                     "¿Cómo apago el sistema en el modo monousuario?", "aptitude のユーザ設定ファイルはどこにありますか？"):
        assert ranks[question] == 1, question


def test_made_up_words_get_no_hits_though_hashed_vectors_collide(default_result, eval_dir):
    from chunking.embeddings import OfflineLexicalEmbedder
    from chunking.index.local import LocalIndex
    from chunking.retrieval import query_vector, search
    from chunking.services import fusion_options

    embedder, settings = OfflineLexicalEmbedder(256), Settings.from_env({})
    with LocalIndex(eval_dir / "1" / "index.sqlite3", 256, fusion_options(settings)) as index:
        words = ("xyzzy", "plugh", "asdfghjkl", "zzqxv")
        raw = [index.search(w, query_vector(embedder, index, w), k=5) for w in words]
        # Collisions alone lift chunks over the 0.15 floor (vector-only, no keyword part) ...
        assert any(hits and hits[0].lexical is None and hits[0].vector >= 0.15 for hits in raw)
        # ... and the search drops them: no hits, in any ranking.
        for word in words:
            for ranking in ("hybrid", "vector"):
                assert search(word, index=index, embedder=embedder, ranking=ranking) == [], (word, ranking)
    # Vectors alone keep what they find through shared words (MRR 0.553 when measured; 0.518 with collisions).
    assert default_result.summaries["vector"].mrr >= 0.5


def run_cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AZURE_", "OPENAI_", "EMBEDDING_", "SEARCH_"))}
    return subprocess.run([sys.executable, "-m", "chunking", *args], cwd=cwd, capture_output=True, text=True,
                          env={**env, "CHUNKING_STATE_DIR": str(cwd / ".state"), "PYTHONPATH": str(ROOT)},
                          timeout=300)  # PYTHONPATH: this checkout's package, whichever one is installed


def test_search_prints_relevance_parts_and_the_marked_passage_or_says_no_hits(tmp_path: Path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "releases.csv").write_bytes((ROOT / "samples" / "debian-releases.csv").read_bytes())
    (docs / "pyenv.md").write_bytes((ROOT / "samples" / "pyenv-README.md").read_bytes())
    assert run_cli(["ingest", "docs"], tmp_path).returncode == 0
    out = run_cli(["search", "when was bookworm released", "-k", "2"], tmp_path).stdout
    first = out.splitlines()[0]
    assert first.startswith("1. docs/releases.csv  relevance 0.") and "(keywords 0." in first and "vector 0." in first
    assert "12,**Bookworm**,**bookworm**,2021-08-14,2023-06-10" in out  # the matching row, its words marked
    hits = json.loads(run_cli(["search", "bookworm", "--json", "-k", "1"], tmp_path).stdout)
    assert 0 < hits[0]["score"] <= 1 and hits[0]["lexical"] is not None and hits[0]["vector"] is not None
    none = run_cli(["search", "zzqx qqxv", "-k", "3"], tmp_path)
    assert none.returncode == 0 and none.stdout.startswith("no hits: no chunk contains a word of the query")
    assert run_cli(["search", "zzqx qqxv", "--json"], tmp_path).stdout.strip() == "[]"


def test_eval_command_table_and_json(tmp_path: Path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "pyenv-README.md").write_bytes((ROOT / "samples" / "pyenv-README.md").read_bytes())
    questions = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines()
                 if '"pyenv-README.md"' in line]
    (docs / "q.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions), encoding="utf-8")
    table = run_cli(["eval", "docs", "--questions", "docs/q.jsonl", "--strategy", "default",
                     "--strategy", "markdown SPLIT_MAX_TOKENS=200"], tmp_path)
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert lines[0] == f"{len(questions)} questions over 1 document (offline-lexical-v2/256)"
    assert lines[2].split() == ["strategy", "ranking", "hit@1", "hit@3", "hit@5", "MRR", "nDCG@10", "chunks",
                                "emb", "tokens"]
    assert [line.split()[:2] for line in lines[4:6]] == [["default", "hybrid"], ["default", "bm25"]]
    data = json.loads(run_cli(["eval", "docs", "--questions", "docs/q.jsonl", "--json", "--ranking", "hybrid"],
                              tmp_path).stdout)
    result = data["results"][0]
    assert data["questions"] == len(questions) and set(result["rankings"]) == {"hybrid"}
    assert result["rankings"]["hybrid"]["hit@5"] == 1.0 and result["embedding_tokens"] > 0
    assert not (tmp_path / ".state").exists()  # the strategies' indexes live in a temporary folder
    bad = run_cli(["eval", "docs", "--questions", "docs/missing.jsonl"], tmp_path)
    assert bad.returncode == 2 and "missing.jsonl" in bad.stderr


def test_drafting_questions_reads_a_strategy_on_top_of_the_environment(tmp_path: Path, monkeypatch):
    # As evaluate does: SPLIT_MAX_CHARS from the environment stays, the strategy's SPLIT_MAX_TOKENS is added.
    from chunking.evaluation import generate

    seen = []

    def stop(settings):
        seen.append((settings.max_tokens, settings.max_chars))
        raise RuntimeError("enough")

    monkeypatch.setenv("SPLIT_MAX_CHARS", "700")
    monkeypatch.setattr(generate, "make_embedder", stop)
    (tmp_path / "a.md").write_text("# A\n\nText.\n")
    with pytest.raises(RuntimeError):
        generate.draft_question_file([(tmp_path / "a.md", "a.md")], 1,
                                     parse_strategy("sentence SPLIT_MAX_TOKENS=250"), settings=Settings.from_env({}),
                                     workdir=tmp_path / "w", out=tmp_path / "q.jsonl")
    assert seen == [(250, 700)]
