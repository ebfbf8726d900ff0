"""The runnable examples in the strategies' docstrings stay true."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize("module", ["semantic", "hierarchical"])
def test_docstring_examples(module):
    result = doctest.testmod(importlib.import_module(f"chunking.strategies.{module}"))
    assert result.attempted > 0 and result.failed == 0
