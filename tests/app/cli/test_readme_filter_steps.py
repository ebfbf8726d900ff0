"""docs/search.md#filters-and-access-control, run as a reader runs it: after `make demo`'s ingest of samples/, its
commands print what the page shows, and a later ingest without --metadata clears the access list, as the page
says."""

from __future__ import annotations

import shutil

from tests.app.cli.conftest import ROOT

_DEMO_INGEST = ("ingest", "samples/", "--exclude", "SOURCES.md", "--exclude", "eval/*")


def _readme_block_after(marker: str) -> list[str]:
    """The lines of the first fenced block of docs/search.md after the paragraph holding *marker*."""
    text = (ROOT / "docs" / "search.md").read_text(encoding="utf-8")
    rest = text[text.index(marker):]
    start = rest.index("```\n") + 4
    return rest[start:rest.index("```", start)].splitlines()


def _hit_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line[:1].isdigit()]


def test_the_readme_filter_steps_after_make_demo_print_what_it_shows(cli, monkeypatch):
    shutil.copytree(ROOT / "samples", cli.cwd / "samples")
    monkeypatch.delenv("ACL_DEFAULT", raising=False)
    assert cli(*_DEMO_INGEST).status == 0
    monkeypatch.setenv("METADATA_FIELDS", "category")
    assert cli("ingest", "samples/pyenv-README.md", "--metadata", "category=tools", "--metadata",
               "acl_groups=developers").status == 0
    assert cli("ingest", "samples/amc-manual.en.pdf", "samples/aptitude-ch02s05s05.ja.html", "--metadata",
               "category=manual").status == 0
    filtered = cli("search", "install", "-k", "3", "--filter", "category eq 'tools' and language eq 'en'").out
    assert _hit_lines(filtered)[0] == _readme_block_after("The filtered search prints")[0]
    assert {line.split()[1] for line in _hit_lines(filtered)} == {"samples/pyenv-README.md"}
    trimmed = cli("search", "install", "-k", "3", "--user", "alice", "--groups", "staff").out
    assert _hit_lines(trimmed) == _readme_block_after("The trimmed one (alice, group `staff`)")
    status = cli("status").out.splitlines()
    assert status[0] == "6 indexed, 0 queued, 0 sending, 0 failed, 0 deleted"  # the README and five without lists
    assert status[-1] == "index: local .chunking/index.sqlite3, schema 2 (current), metadata fields category, " \
                         "495 records"
    assert f"`{status[-1]}`" in " ".join((ROOT / "docs" / "search.md").read_text(encoding="utf-8").split())

    # --metadata applies to its run only: the quick start's ingest again clears the README's access list.
    again = cli(*_DEMO_INGEST)
    assert again.status == 0
    assert again.out.splitlines()[-1] == ("new metadata or access lists: the fields of 327 chunks of 3 unchanged "
                                          "documents updated in place, nothing embedded")
    trimmed = cli("search", "install", "-k", "3", "--user", "alice", "--groups", "staff").out
    assert {line.split()[1] for line in _hit_lines(trimmed)} == {"samples/pyenv-README.md"}
