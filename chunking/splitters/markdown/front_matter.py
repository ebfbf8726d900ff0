"""Render chunk metadata as YAML front matter (``---\\n`` YAML ``---\\n``), with PyYAML's ``safe_dump``."""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["dump_yaml", "render_front_matter"]


def dump_yaml(data: Any) -> str:
    """YAML text of *data*: ``yaml.safe_dump(data, allow_unicode=True, sort_keys=False)`` (block style).

    Raises:
        TypeError: a value that is not a string, number, boolean, ``None``, list, tuple or dict.
    """
    try:
        return yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    except yaml.representer.RepresenterError as exc:
        raise TypeError(f"cannot render {exc.args[-1]!r} as YAML front matter") from None


def render_front_matter(metadata: dict[str, Any]) -> str:
    """``"---\\n" + YAML + "---\\n"`` for non-empty *metadata*, else ``""``."""
    if not metadata:
        return ""
    return "---\n" + dump_yaml(metadata) + "---\n"
