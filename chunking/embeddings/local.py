"""``EMBEDDING_BACKEND=local``: a sentence-transformers model run in-process on the CPU, loaded from local files
only, for machines with no Azure account or no network (docs/search.md#a-local-embedding-model).

The model is never downloaded: ``HF_HUB_OFFLINE`` and ``TRANSFORMERS_OFFLINE`` are set to ``1`` before the
libraries are imported, and the model is opened with ``local_files_only=True`` from the folder that
``chunking.settings.local_model`` resolved. Needs the extra ``chunking[local-embeddings]`` (sentence-transformers,
and torch, CPU build).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Sequence

__all__ = ["LocalModelEmbedder", "MissingExtra"]

# One loaded model per folder and process: loading costs seconds, and every embedder on it gives the same vectors.
_MODELS: dict[str, Any] = {}
_LOCK = threading.Lock()


class MissingExtra(ImportError):
    """sentence-transformers is not installed; the message says which extra to install."""


def _load(folder: Path, device: str) -> Any:
    key = f"{folder}|{device}"
    with _LOCK:
        if key not in _MODELS:
            # Written, not read: no hub call, whatever a library version does by default.
            os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # the CLI draws its own progress
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:
                raise MissingExtra("EMBEDDING_BACKEND=local needs sentence-transformers: "
                                   "pip install 'chunking[local-embeddings]'") from exc
            try:
                from transformers.utils import logging as transformers_logging

                transformers_logging.disable_progress_bar()
                transformers_logging.set_verbosity_error()
            except ImportError:  # another transformers layout: its bars stay, nothing else changes
                pass
            _MODELS[key] = SentenceTransformer(str(folder), device=device, local_files_only=True)
        return _MODELS[key]


def _label(folder: Path) -> str:
    # A model shipped inside a package sits in <package>/model: the package names it.
    return folder.parent.name if folder.name in ("model", "models") else folder.name


class LocalModelEmbedder:
    """Embeddings from a local sentence-transformers model, L2-normalised (so cosine = dot product).

    Texts longer than the model's ``max_seq_length`` (256 word pieces for all-MiniLM-L6-v2) are truncated by the
    model: only their beginning counts. Deterministic for a given model, torch build and machine.

    Args:
        folder: the model's folder (``chunking.settings.local_model.resolve_model_folder``).
        device: torch device, ``"cpu"`` by default.
        batch_size: texts per forward pass.

    Attributes:
        name: ``"local/<model>/<dimensions>"``; dimensions: the model's vector length; requests: ``embed`` calls;
            tokens: word pieces the model read (after truncation; nothing is billed).

    Raises:
        MissingExtra: sentence-transformers is not installed.
        OSError: the folder does not hold a loadable model.
    """

    def __init__(self, folder: Path | str, *, device: str = "cpu", batch_size: int = 32) -> None:
        self.folder = Path(folder)
        self._model = _load(self.folder, device)
        size = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        self.dimensions = int(size())
        self.name = f"local/{_label(self.folder)}/{self.dimensions}"
        self.max_seq_length = int(self._model.max_seq_length)
        self.batch_size = batch_size
        self.requests = 0
        self.tokens = 0

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector of ``dimensions`` floats per text, in input order, each of L2 norm 1 (an empty text too:
        the model embeds its special tokens)."""
        texts = list(texts)
        if not texts:
            return []
        vectors = self._model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                     convert_to_numpy=True, show_progress_bar=False)
        lengths = self._model.tokenizer(texts, truncation=True, max_length=self.max_seq_length)["input_ids"]
        self.tokens += sum(len(ids) for ids in lengths)
        self.requests += 1
        return vectors.astype(float).tolist()
