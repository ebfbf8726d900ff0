"""How a search hit is printed (``chunking.app.cli.hits``): the passage with Markdown emphasis left out, so each
query word is marked once, whether the text made it bold, italic or nothing."""

from __future__ import annotations

import sys

import pytest

from chunking.app.cli.hits import plain_emphasis, print_hit


def _printed(capsys, text: str, query: str, **options) -> str:
    capsys.readouterr()
    print_hit(1, "notes.md#page=1", (), text, query, score=0.5, **options)
    out = capsys.readouterr().out
    assert out.startswith("1. notes.md#page=1  score 0.5000\n   ") and out.endswith("\n\n")
    return out.split("\n")[1].removeprefix("   ")


@pytest.mark.parametrize(("text", "passage"), [
    ("The **printer** is jammed.", "The **printer** is jammed."),  # bold: one pair of marks, not two
    ("The __printer__ is jammed.", "The **printer** is jammed."),
    ("The *printer* is jammed.", "The **printer** is jammed."),  # italic
    ("The _printer_ is jammed.", "The **printer** is jammed."),  # "_printer_" is one \w+ word: it was not marked
    ("The ***printer*** is jammed.", "The **printer** is jammed."),
    ("Printer first, then the printer", "**Printer** first, then the **printer**"),  # start and end of the text
    ("**Printer** first, then the *printer*.", "**Printer** first, then the **printer**."),
    ("printer, printer and **printer**", "**printer**, **printer** and **printer**"),  # a repeated word
    ("A **bold claim** about a printer", "A bold claim about a **printer**"),  # emphasis that does not match
    ("Set `max_printer_count` for the printer_queue", "Set `max_printer_count` for the printer_queue"),
])
def test_each_query_word_is_marked_once(capsys, text, passage):
    assert _printed(capsys, text, "printer") == passage


def test_emphasis_over_several_words_and_lines(capsys):
    text = "Turn the **printer\noff** first.\n\nThen _restart the printer_ and wait."
    assert _printed(capsys, text, "printer restart") == (
        "Turn the **printer** off first. Then **restart** the **printer** and wait.")


def test_on_a_terminal_the_marks_are_bold_and_the_text_has_no_asterisks(capsys, monkeypatch):
    capsys.readouterr()
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    print_hit(2, "a.md#page=3", ("Setup", "Printer"), "Check the **printer** cable.", "printer", score=0.25,
              lexical=0.5, vector=None)
    assert capsys.readouterr().out == (
        "2. a.md#page=3  relevance 0.25 (keywords 0.50, vector -)  [Setup > Printer]\n"
        "   Check the \x1b[1mprinter\x1b[0m cable.\n\n")


def test_plain_emphasis_keeps_code_spans_arithmetic_and_snake_case():
    assert plain_emphasis("a **b** __c__ *d* _e_ `f_g_` ``h **i**``") == "a b c d e `f_g_` ``h **i**``"
    assert plain_emphasis("5 * 3 * 2, 2 ** 8, a*b*c, __init__, max_tokens_cap") == (
        "5 * 3 * 2, 2 ** 8, a*b*c, init, max_tokens_cap")
    assert plain_emphasis("* item *one*") == "* item one"
    assert plain_emphasis("**bold _and italic_ too**") == "bold and italic too"


def test_program_code_keeps_its_asterisks_and_underscores(capsys):
    capsys.readouterr()
    print_hit(1, "app.py", (), "def __init__(self, *args, **kwargs):  # init", "init", score=0.5)
    assert capsys.readouterr().out.split("\n")[1] == "   def __init__(self, *args, **kwargs): # **init**"
    print_hit(1, "guide.rst", (), "Run *init* first.", "init", score=0.5)
    assert capsys.readouterr().out.split("\n")[1] == "   Run **init** first."


def test_the_figure_images_a_chunk_holds_follow_its_passage(capsys):
    capsys.readouterr()
    print_hit(1, "r.pdf#page=2", (), "The chart of output.", "chart", score=0.5,
              images=("https://a/figures/d/v/1.png", "https://a/figures/d/v/2.png"))
    assert capsys.readouterr().out == (
        "1. r.pdf#page=2  score 0.5000\n   The **chart** of output.\n"
        "   image: https://a/figures/d/v/1.png\n   image: https://a/figures/d/v/2.png\n\n")
