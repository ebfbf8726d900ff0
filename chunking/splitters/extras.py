"""Optional libraries of the splitters, imported on first use with an error that names the extra to install."""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = ["import_extra"]


def import_extra(module: str, extra: str, package: str) -> Any:
    """Import *module*, or raise an :class:`ImportError` naming the extra (and the package) that installs it.

    Example: ``import_extra("nltk", "nltk", "nltk")`` without NLTK raises ``ImportError("nltk is not installed:
    install it with `pip install chunking[nltk]` (or `pip install nltk`)")``.
    """
    try:
        return import_module(module)
    except ImportError as error:
        raise ImportError(
            f"{package} is not installed: install it with `pip install chunking[{extra}]` "
            f"(or `pip install {package}`)"
        ) from error
