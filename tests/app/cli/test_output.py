"""``chunking.app.cli.output``: tables line up on a terminal when a cell holds CJK text (two columns a
character), and clipped cells keep within their columns."""

from __future__ import annotations

from chunking.app.cli.output import clip, columns, printable, table


def test_columns_counts_wide_characters_twice_and_combining_marks_not_at_all():
    assert [columns(t) for t in ("abc", "設定", "第 2 章", "ｱ", "e\u0301", "")] == [3, 4, 7, 1, 1, 0]


def test_clip_keeps_within_the_columns_without_cutting_a_wide_character_in_two():
    assert clip("設定ファイル", 5) == "設定"
    assert clip("ab設定", 4) == "ab設"
    assert clip("abcdef", 4) == "abcd"
    assert clip("設定", 10) == "設定"


def test_table_pads_cells_to_the_columns_their_text_takes(capsys):
    table(("#", "headings", "text"), [(0, "設定ファイル", "x"), (12, "Options", "y")])
    assert capsys.readouterr().out == (
        " #  headings      text\n"
        "--  ------------  ----\n"
        " 0  設定ファイル  x\n"
        "12  Options       y\n")


def test_printable_escapes_control_characters_and_keeps_spaces_and_letters():
    assert printable("new\nline\tand\x1b[31m red café 設定") == "new\\nline\\tand\\x1b[31m red café 設定"
