"""The real documents the tests read, all inside the repository.

Six of them are the demo's ``samples/``; the two large ones only the tests need live in ``tests/data/``.
Provenance and licence of each file: ``samples/SOURCES.md`` and ``tests/data/SOURCES.md``.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = (ROOT / "samples", ROOT / "tests" / "data")
NAMES = (
    "amc-manual.en.pdf",
    "amc-manual.ja.pdf",
    "aptitude-ch02s05s05.ja.html",
    "debian-reference-ch01.es.docx",
    "debian-reference-ch02.zh-cn.html",
    "debian-releases.csv",
    "iso_3166-1.json",
    "pyenv-README.md",
)


def document_path(name: str) -> Path:
    """Path of the test document *name*; FileNotFoundError (a failure, never a skip) when it is missing."""
    for folder in FOLDERS:
        path = folder / name
        if path.is_file():
            return path
    raise FileNotFoundError(f"test document {name} is in neither {' nor '.join(str(f) for f in FOLDERS)}")


def document_paths() -> list[Path]:
    """Every test document, sorted by file name."""
    return [document_path(name) for name in NAMES]
