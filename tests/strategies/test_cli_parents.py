"""``python -m chunking search --parents`` / ``--window`` after ingesting with a small-to-big strategy."""

from __future__ import annotations

import json

import pytest

from chunking.cli import main
from chunking.strategies.clients import reset_strategy_clients

TEXT = "\n\n".join([
    "# Tea\nGreen tea leaves are steamed. Black tea leaves are oxidised. Tea grows on misty hills.",
    "# Coffee\nCoffee beans are roasted. Espresso is pressed coffee. Coffee grows in the tropics.",
    "# Water\nWater boils at one hundred degrees. Rain fills the rivers.",
])


@pytest.fixture
def run(tmp_path, monkeypatch, capsys):
    for key in ("AZURE_OPENAI_ENDPOINT", "AZURE_SEARCH_ENDPOINT", "OPENAI_API_KEY", "OPENAI_BASE_URL",
                "AzureWebJobsStorage"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SMALL_TO_BIG_TOKENS", "200,10")
    (tmp_path / "menu.md").write_text(TEXT, encoding="utf-8")
    reset_strategy_clients()

    def call(*args: str):
        capsys.readouterr()
        assert main(list(args)) == 0
        return capsys.readouterr().out

    yield call
    reset_strategy_clients()


def test_parents_of_child_hits(run, monkeypatch):
    monkeypatch.setenv("SPLITTERS", ".md=small_to_big")
    run("ingest", "menu.md")
    hits = json.loads(run("search", "espresso pressed", "--parents", "-k", "2", "--json"))
    assert hits[0]["content"] == TEXT.split("\n\n")[1]  # the whole Coffee section
    assert hits[0]["level"] == 0 and hits[0]["headings"] == ["Coffee"]
    assert any(TEXT[c["char_start"] : c["char_end"]] == "Espresso is pressed coffee." for c in hits[0]["children"])
    assert len(hits) <= 2 and len({h["id"] for h in hits}) == len(hits)
    printed = run("search", "espresso pressed", "--parents", "-k", "1")
    assert printed.startswith("1. menu.md  score ") and "level 0" in printed
    assert "**Espresso** is **pressed**" in printed  # the query's words marked


def test_sentence_window(run, monkeypatch):
    monkeypatch.setenv("SPLITTERS", ".md=sentence_window")
    run("ingest", "menu.md")
    (hit, *_) = json.loads(run("search", "misty hills", "--window", "1", "-k", "1", "--json"))
    assert hit["content"] == "Black tea leaves are oxidised. Tea grows on misty hills."
    assert hit["level"] == 1
