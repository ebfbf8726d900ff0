"""What `--help` says of split, eval and ingest --metadata, and what `status` prints, in the order the help gives."""

from __future__ import annotations

import re

import pytest


@pytest.fixture
def narrow(monkeypatch):
    """argparse wraps help to $COLUMNS: 80, a terminal's usual width."""
    monkeypatch.setenv("COLUMNS", "80")


def _option_help(text: str, option: str) -> str:
    """The help of *option* in a --help *text*, its wrapped lines joined with single spaces."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"  {option}"))
    first = lines[start].strip()[len(option):].strip()
    rest = []
    for line in lines[start + 1:]:
        if not line.startswith(" " * 20) or not line.strip():
            break
        rest.append(line.strip())
    return " ".join(([first] if first else []) + rest)


def test_split_help_says_tables_over_the_cap_are_split_by_rows(cli, narrow):
    run = cli("split", "--help")
    assert run.status == 0
    assert _option_help(run.out, "--max-tokens N") == (
        "token cap of a chunk (default 500: SPLIT_MAX_TOKENS). In PDF, DOCX, HTML and text a table over it is "
        "split by rows, its header repeated in each part (SPLIT_MAX_TABLE_TOKENS sets another limit); an image "
        "figure stays whole up to SPLIT_MAX_FIGURE_TOKENS (8191) and fenced code in Markdown up to 8191")
    assert _option_help(run.out, "FILE") == (
        "the document to split (any format ingest reads: PDF, DOCX, HTML, Markdown, ...)")
    assert "stay whole up to 8191" not in run.out


def test_split_help_names_every_splitter_and_strategy_of_the_format_table(cli, narrow):
    # a strategy added to chunking/formats.py appears here without editing the help (docs/contributing.md)
    from chunking.formats import FAMILY_NAMES, STRATEGY_NAMES

    run = cli("split", "--help")
    assert _option_help(run.out, "--splitter NAME") == (
        f"auto (the format's default); {', '.join(FAMILY_NAMES)}, code:<language> (e.g. code:python); or a "
        f"strategy: {', '.join(STRATEGY_NAMES)}, and any of these with +enrich (auto+enrich: the format's default, "
        f"enriched)")
    assert "semantic, hierarchical, small_to_big, sentence_window, propositions, llm, router," in \
        _option_help(run.out, "--splitter NAME")


def test_eval_help_reads_in_80_columns(cli, narrow):
    run = cli("eval", "--help")
    assert run.status == 0
    assert max(len(line) for line in run.out.splitlines()) <= 80
    description = run.out.split("\n\n")[1]
    assert description == (
        "Ingest the documents once per strategy into a separate local index, ask every\n"
        "question of the question set, and report hit@1/3/5, MRR and nDCG@10 per\n"
        "strategy and ranking, with the embedding tokens each strategy spent. Exits 2\n"
        "on bad usage or a question whose answer is not in the documents.")
    assert run.out.split("\n\n")[2] == (
        "emb tokens: cl100k_base tokens sent to the embedder, the chunks' vectors plus\n"
        "what a strategy embeds while splitting (semantic's sentence windows, about\n"
        "three times the text); --json gives both parts.")
    assert run.out.split("\n\n")[3] == (  # the table's figures, for a newcomer who has not read the docs
        "hit@k: the share of questions with a relevant chunk among the first k hits;\n"
        "MRR: the mean of 1/rank of the first relevant hit (0 when none is in the first\n"
        "10); nDCG@10: the first 10 hits scored against the best order of the relevant\n"
        "chunks, 1 when they lead (docs/evaluation.md#metrics).")
    assert '  {"question": "...", "source": "manual.pdf", "page": 12}\n' in run.out


def test_ingest_help_says_metadata_is_for_this_run_only(cli, narrow):
    run = cli("ingest", "--help")
    assert _option_help(run.out, "--metadata NAME=VALUE").endswith(
        "--metadata acl_groups=hr,finance. It applies to this run only: a later ingest of the same files without "
        "it clears those fields and access lists (as uploading a blob again without its metadata would); repeat "
        "it to keep them")


def _one_failed(cli):
    (cli.cwd / "notes").mkdir()
    (cli.cwd / "notes" / "a.md").write_text("Hello world. Some text.\n")
    (cli.cwd / "notes" / "b.pdf").write_bytes(b"not a pdf")
    assert cli("ingest", "notes").status == 1


def test_status_ends_with_the_index_line_after_the_failed_documents(cli):
    _one_failed(cli)
    run = cli("status")
    assert run.status == 1  # the ledger holds a failed document
    out = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", "2026-12-01T00:00:00+00:00", run.out)
    assert out == (
        "1 indexed, 0 queued, 0 sending, 1 failed, 0 deleted\n"
        "\n"
        "failed source  reason                                                since\n"
        "-------------  ----------------------------------------------------  -------------------------\n"
        "notes/b.pdf    not a valid PDF: not a PDF, or damaged beyond repair  2026-12-01T00:00:00+00:00\n"
        "\n"
        "index: local .chunking/index.sqlite3, schema 2 (current), 1 records\n")
    help_text = " ".join(cli("status", "--help").out.split())
    assert "then, on the last line, the index's schema version" in help_text
    assert "then the counts (without storage: of the local ledger, as status counts them)" in help_text
    assert help_text.endswith("exit as status would then (1 if the ledger holds a failed document), or 1 once "
                              "--timeout passed --interval S --watch: seconds between polls (default 2) --timeout S "
                              "--watch: give up after S seconds (default 900)")


def test_status_watch_without_storage_counts_what_status_counts(cli):
    _one_failed(cli)
    run = cli("status", "--watch", "--timeout", "0")
    # The exit status `status` gives for the same ledger (before, 0: b.pdf had failed before the first poll).
    assert (run.status, run.out.splitlines()[-1]) == (1, "nothing in progress: 1 indexed, 1 failed")
    assert cli("status").out.startswith("1 indexed, 0 queued, 0 sending, 1 failed, 0 deleted\n")
    assert cli("status").status == cli("status", "--json").status == 1
