"""``chunking eval``'s embedding tokens: what a strategy embeds while splitting (semantic's sentence windows)
counts with what its chunks' vectors cost."""

from __future__ import annotations

from pathlib import Path

from chunking.evaluation.questions import Question
from chunking.evaluation.runner import evaluate, parse_strategy
from chunking.services import reset_strategy_clients
from chunking.settings import Settings
from chunking.tokens import token_counter

SENTENCES = ["Cats purr when they are content.", "Cats nap in the sun all afternoon.",
             "A cat grooms its fur with its tongue.", "Rust compiles code ahead of time.",
             "The Rust compiler checks every borrow.", "Cargo builds Rust code and fetches crates."]
TEXT = " ".join(SENTENCES) + "\n"


def test_semantic_windows_count_as_embedding_tokens(tmp_path: Path):
    doc = tmp_path / "pets.txt"
    doc.write_text(TEXT, encoding="utf-8")
    question = Question("Which tool fetches crates?", "pets.txt", passage="fetches crates")
    reset_strategy_clients()
    try:
        default, semantic = evaluate([(doc, "pets.txt")], [question], [parse_strategy("sentence"),
                                     parse_strategy("semantic SEMANTIC_MIN_TOKENS=1")],
                                     settings=Settings.from_env({}), workdir=tmp_path / "eval", rankings=("bm25",),
                                     env={})
    finally:
        reset_strategy_clients()
    count = token_counter("cl100k_base")
    assert (default.chunks, default.embedding_tokens, default.splitting_tokens) == (1, count(TEXT.strip()), 0)
    # Semantic: one window per sentence (itself and a neighbour on each side), each sent once ...
    windows = [" ".join(SENTENCES[max(0, i - 1) : i + 2]) for i in range(len(SENTENCES))]
    assert semantic.splitting_tokens == sum(map(count, windows)) == 137
    # ... and the chunks it made, embedded in stage 2.
    chunk_tokens = semantic.embedding_tokens - semantic.splitting_tokens
    assert (semantic.chunks, chunk_tokens) == (2, count(" ".join(SENTENCES[:3])) + count(" ".join(SENTENCES[3:])))
    as_dict = semantic.to_dict()
    assert (as_dict["embedding_tokens"], as_dict["embedding_tokens_splitting"], as_dict["embedding_tokens_chunks"]) \
        == (semantic.embedding_tokens, 137, chunk_tokens)
