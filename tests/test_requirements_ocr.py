"""The extra ``ocr`` is declared twice, for ``pip install 'chunking[ocr]'`` (pyproject.toml) and for a requirements
install (requirements-ocr.txt, which requirements-dev.txt includes so that a fresh clone tests OCR): the same pins."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _requirements(path: Path) -> list[str]:
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return [line for line in lines if line and not line.startswith("-r")]


def test_the_ocr_extra_and_requirements_ocr_pin_the_same_packages():
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["ocr"]
    assert _requirements(ROOT / "requirements-ocr.txt") == extra == ["rapidocr>=3.10,<4", "onnxruntime>=1.20,<2"]


def test_the_dev_requirements_install_the_ocr_extra():
    lines = [line.split("#", 1)[0].strip() for line in (ROOT / "requirements-dev.txt").read_text().splitlines()]
    assert "-r requirements-ocr.txt" in lines
