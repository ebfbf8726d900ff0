"""``python -m chunking search --parents`` / ``--window`` after ingesting with a small-to-big strategy."""

from __future__ import annotations

import json

import pytest

from chunking.app.cli import main
from chunking.services import reset_strategy_clients

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


def test_window_and_parents_on_an_index_without_parents_say_so_and_print_plain_hits(run, capsys):
    run("ingest", "menu.md")  # the default splitter: top-level chunks, no parents
    plain = run("search", "espresso pressed", "-k", "2")
    assert plain.startswith("1. menu.md  relevance 0.")
    for flags, notice in (
        (["--window", "1"], "note: --window 1 not applied: the chunks found have no parent chunk (the index was not "
                            "built with sentence_window); plain hits follow\n"),
        (["--parents"], "note: --parents not applied: the chunks found have no parent chunk (the index was not "
                        "built with hierarchical, small_to_big or propositions); plain hits follow\n"),
    ):
        capsys.readouterr()
        assert main(["search", "espresso pressed", "-k", "2", *flags]) == 0
        assert capsys.readouterr() == (plain, notice)
    as_json = json.loads(run("search", "espresso pressed", "-k", "2", "--json"))
    assert json.loads(run("search", "espresso pressed", "-k", "2", "--json", "--window", "1")) == as_json


def test_parent_scores_are_the_child_search_scores(run, monkeypatch):
    monkeypatch.setenv("SPLITTERS", ".md=small_to_big")
    run("ingest", "menu.md")
    children = json.loads(run("search", "tea grows espresso", "-k", "20", "--json"))
    (parent, *_) = json.loads(run("search", "tea grows espresso", "--parents", "-k", "1", "--json"))
    best = next(c for c in children if c["id"] == parent["children"][0]["id"])
    assert parent["score"] == parent["children"][0]["score"] == best["score"]
