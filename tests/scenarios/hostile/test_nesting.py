"""Input depth never drives unbounded recursion: deep JSON, HTML and Markdown lists end with a reason naming
MAX_NESTING_DEPTH, within the memory bound; input just inside the limit is indexed."""

from __future__ import annotations

import pytest

from tests.scenarios.hostile.measure import PEAK_RSS_BOUND_MB, stage_one

DEPTH = "nested more than 100 levels deep (MAX_NESTING_DEPTH)"


def _json(depth: int) -> bytes:
    return b'{"a": ' * depth + b"1" + b"}" * depth


def _html(depth: int) -> bytes:
    return b"<html><body>" + b"<div>" * depth + b"deep text" + b"</div>" * depth + b"</body></html>"


def _html_lists(depth: int) -> bytes:
    return b"<ul><li>item" * depth + b"</li></ul>" * depth


def _markdown_list(depth: int) -> bytes:
    return "".join("  " * level + f"- item {level}\n" for level in range(depth)).encode()


def _quotes(depth: int) -> bytes:
    return b"> " * depth + b"quoted\n"


@pytest.mark.parametrize(
    ("name", "data", "reason"),
    [
        ("deep-900.json", b"[" * 900 + b"]" * 900, f"JSON {DEPTH}"),
        ("deep-objects-900.json", _json(900), f"JSON {DEPTH}"),
        ("deep-100k.json", b"[" * 100_000, f"JSON {DEPTH}"),
        ("deep-5000.html", _html(5000), f"HTML elements {DEPTH}"),
        ("deep-lists-3000.html", _html_lists(3000), f"HTML elements {DEPTH}"),
        ("deep-list-3000.md", _markdown_list(3000), f"Markdown lists or block quotes {DEPTH}"),
        ("deep-quotes-5000.md", _quotes(5000), f"Markdown lists or block quotes {DEPTH}"),
    ],
    ids=lambda value: value if isinstance(value, str) and len(value) < 40 else "",  # the name, not megabytes
)
def test_too_deep_input_is_refused_with_the_setting_named(tmp_path, name, data, reason):
    path = tmp_path / name
    path.write_bytes(data)

    measured = stage_one(path, tmp_path / "state")

    assert (measured.outcome, measured.status, measured.reason) == ("failed", "failed", reason)
    assert measured.peak_rss_mb < PEAK_RSS_BOUND_MB


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("deep-100.json", _json(100)),
        ("deep-95.html", _html(95)),  # <html><body> and lxml's added elements are levels too
        ("deep-list-100.md", _markdown_list(100)),
    ],
    ids=lambda value: value if isinstance(value, str) and len(value) < 40 else "",
)
def test_input_at_the_depth_limit_is_indexed(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)

    measured = stage_one(path, tmp_path / "state")

    assert (measured.outcome, measured.status, measured.reason) == ("added", "queued", "")
    assert measured.chunks >= 1


def test_a_lower_limit_is_the_one_named(tmp_path):
    path = tmp_path / "deep-30.json"
    path.write_bytes(_json(30))

    measured = stage_one(path, tmp_path / "state", env={"MAX_NESTING_DEPTH": "20"})

    assert measured.reason == "JSON nested more than 20 levels deep (MAX_NESTING_DEPTH)"
