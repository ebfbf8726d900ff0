"""``chunking search --filter/--user/--groups`` as a user runs them: documents ingested with ``--metadata``, hits
narrowed by an OData filter and trimmed per user, the title printed, a bad filter a usage error naming what is
wrong, and ``chunking status`` naming the index schema."""

from __future__ import annotations

import json

import pytest

PAY = ("# Payroll policy\n\nSalaries are paid on the last working day of each month. Overtime is paid with the "
       "next salary.\n")
NOTE = "Canteen notes\n\nLunch is paid at the till; the canteen opens at noon and closes at two.\n"


@pytest.fixture
def ingested(cli, monkeypatch):
    monkeypatch.setenv("METADATA_FIELDS", "category,department:dept")
    monkeypatch.delenv("ACL_DEFAULT", raising=False)
    (cli.cwd / "policies").mkdir()
    (cli.cwd / "policies" / "pay.md").write_text(PAY, encoding="utf-8")
    (cli.cwd / "notes").mkdir()
    (cli.cwd / "notes" / "canteen.md").write_text(NOTE, encoding="utf-8")
    for folder, *metadata in (("policies", "category=policy", "department=HR", "acl_groups=hr,finance"),
                              ("notes", "category=note")):
        args = [item for m in metadata for item in ("--metadata", m)]
        run = cli("ingest", folder, *args)
        assert run.status == 0, run.err
    return cli


def sources(cli, *args: str) -> list[str]:
    run = cli("search", "paid", "--json", *args)
    assert run.status == 0, run.err
    return sorted(h["source"] for h in json.loads(run.out))


def test_filter_narrows_the_hits_and_the_title_is_printed(ingested):
    cli = ingested
    assert sources(cli) == ["notes/canteen.md", "policies/pay.md"]
    assert sources(cli, "--filter", "category eq 'policy'") == ["policies/pay.md"]
    assert sources(cli, "--filter", "dept eq 'HR' and language eq 'en'") == ["policies/pay.md"]
    assert sources(cli, "--filter", "not (category eq 'policy')") == ["notes/canteen.md"]
    assert sources(cli, "--filter", "search.in(category, 'note,memo')") == ["notes/canteen.md"]
    assert sources(cli, "--filter", "acl_groups/any(g: g eq 'finance')") == ["policies/pay.md"]
    assert sources(cli, "--filter", "size_bytes gt 100000") == []
    hits = json.loads(cli("search", "paid", "--json", "--filter", "category eq 'policy'").out)
    assert [h["title"] for h in hits] == ["Payroll policy"]
    text = cli("search", "salaries", "-k", "1").out
    assert text.startswith("1. policies/pay.md") and "“Payroll policy”" in text.splitlines()[0]
    # The file name when there is neither a property nor a heading.
    assert [h["title"] for h in json.loads(cli("search", "canteen", "--json", "-k", "1").out)] == ["canteen"]


def test_user_and_groups_trim_the_hits(ingested, monkeypatch):
    cli = ingested
    assert sources(cli, "--user", "bob") == ["notes/canteen.md"]  # no lists: public by default
    assert sources(cli, "--user", "bob", "--groups", "finance") == ["notes/canteen.md", "policies/pay.md"]
    assert sources(cli, "--groups", "hr", "--filter", "category eq 'policy'") == ["policies/pay.md"]
    monkeypatch.setenv("ACL_DEFAULT", "deny")
    assert sources(cli, "--user", "bob") == []
    assert sources(cli, "--groups", "hr") == ["policies/pay.md"]
    assert sources(cli) == ["notes/canteen.md", "policies/pay.md"]  # no --user/--groups: no trimming


def test_a_bad_filter_is_a_usage_error_that_says_why(ingested):
    cli = ingested
    for flt, reason in (
            ("category eq", "expected a value ('text', a number, true, false, null or a date-time), found the end "
                            "at character 11"),
            ("colour eq 'red'", "unknown or unfilterable field 'colour' (filterable: acl_groups, acl_users, "
                                "category, char_end, char_start, content_hash, content_type, dept, doc_id, "
                                "embedding_hash, has_vector, id, kind, language, last_modified, level, namespace, "
                                "ordinal, page_end, page_start, parent_id, size_bytes, source, storage_url, title, "
                                "token_count, version)")):
        assert cli("search", "paid", "--filter", flt) == (2, "", f"chunking search: filter: {reason}\n")
    assert cli("search", "paid", "--user", " ") == (2, "", "chunking search: security filter: a user or group id "
                                                          "is blank\n")
    # An empty --groups (a script's unset variable) trims to nothing rather than not at all.
    assert cli("search", "paid", "--groups", " , ") == (2, "", "chunking search: security filter: give a user, "
                                                               "groups, or both\n")
    assert sources(cli, "--user", "bob", "--groups", "") == ["notes/canteen.md"]

def test_ingest_says_when_only_metadata_changed(ingested):
    run = ingested("ingest", "notes", "--metadata", "category=memo")
    assert run.status == 0, run.err
    assert "skipped, fields updated" in run.out
    assert run.out.splitlines()[-1] == ("new metadata or access lists: the fields of 1 chunk of 1 unchanged document "
                                        "updated in place, nothing embedded")
    assert sources(ingested, "--filter", "category eq 'memo'") == ["notes/canteen.md"]
    again = ingested("ingest", "notes", "--metadata", "category=memo")
    assert "fields updated" not in again.out and "0 embedding tokens in 0 requests" in again.out


def test_status_names_the_schema(ingested):
    status = ingested("status")
    assert status.status == 0, status.err
    assert "schema 2 (current)" in status.out


def test_the_readme_metadata_example_does_what_it_says(cli, monkeypatch):
    # The commands of docs/search.md#filters-and-access-control, and what it says of their hits (not the scores).
    from tests.app.cli.conftest import ROOT

    monkeypatch.setenv("METADATA_FIELDS", "category")
    monkeypatch.delenv("ACL_DEFAULT", raising=False)
    (cli.cwd / "samples").mkdir()
    for name in ("pyenv-README.md", "amc-manual.en.pdf", "aptitude-ch02s05s05.ja.html"):
        (cli.cwd / "samples" / name).write_bytes((ROOT / "samples" / name).read_bytes())
    assert cli("ingest", "samples/pyenv-README.md", "--metadata", "category=tools", "--metadata",
               "acl_groups=developers").status == 0
    assert cli("ingest", "samples/amc-manual.en.pdf", "samples/aptitude-ch02s05s05.ja.html", "--metadata",
               "category=manual").status == 0
    filtered = json.loads(cli("search", "install", "-k", "3", "--json", "--filter",
                              "category eq 'tools' and language eq 'en'").out)
    assert [(h["source"], h["title"]) for h in filtered] == [
        ("samples/pyenv-README.md", "Simple Python Version Management: pyenv")] * 3
    text = cli("search", "install", "-k", "3", "--filter", "category eq 'tools' and language eq 'en'").out
    assert text.startswith("1. samples/pyenv-README.md  relevance ")
    assert text.splitlines()[0].endswith("  “Simple Python Version Management: pyenv”")
    trimmed = json.loads(cli("search", "install", "-k", "3", "--json", "--user", "alice", "--groups", "staff").out)
    assert len(trimmed) == 3 and "samples/pyenv-README.md" not in {h["source"] for h in trimmed}
    assert {h["title"] for h in trimmed} <= {"Auto Multiple Choice", "Configuration file reference"}
    status = cli("status").out.splitlines()[-1]
    assert status.startswith("index: local .chunking/index.sqlite3, schema 2 (current), metadata fields category, ")
