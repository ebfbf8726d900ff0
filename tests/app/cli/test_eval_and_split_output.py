"""What a newcomer meets first in ``chunking eval`` and ``chunking split``: a strategy setting that does nothing
is refused rather than reported under its label, and the tables say which chunks are parents and which are
children."""

from __future__ import annotations

DOC = "Cats purr when they are content. Cats nap in the sun. Cargo builds Rust code and fetches crates.\n"
QUESTION = '{"question": "Which tool fetches crates?", "source": "pets.txt", "passage": "fetches crates"}\n'


def _eval_files(cli) -> None:
    (cli.cwd / "pets.txt").write_text(DOC, encoding="utf-8")
    (cli.cwd / "q.jsonl").write_text(QUESTION, encoding="utf-8")


def test_eval_refuses_a_strategy_setting_that_no_setting_reads(cli):
    _eval_files(cli)
    # A typo (SPLIT_MAX_TOKEN) used to run the default sizes and print their figures as "sentence SPLIT_MAX_TOKEN=250".
    assert cli("eval", "pets.txt", "--questions", "q.jsonl", "--strategy", "sentence SPLIT_MAX_TOKEN=250") == (
        2, "", "chunking eval: strategy 'sentence SPLIT_MAX_TOKEN=250': SPLIT_MAX_TOKEN: no such setting "
               "(docs/settings.md lists them)\n")
    assert not (cli.cwd / ".chunking").exists()


def test_eval_takes_the_settings_it_reads(cli):
    _eval_files(cli)
    run = cli("eval", "pets.txt", "--questions", "q.jsonl", "--ranking", "bm25",
              "--strategy", "semantic SPLIT_MAX_TOKENS=250 SEMANTIC_MIN_TOKENS=1 SEMANTIC_BREAKPOINT_TYPE=gradient")
    assert run.status == 0, run.err
    assert run.out.splitlines()[0] == "1 question over 1 document (offline-lexical-v2/256)"
    row = run.out.splitlines()[4].split()
    assert row[:8] == ["semantic", "SPLIT_MAX_TOKENS=250", "SEMANTIC_MIN_TOKENS=1", "SEMANTIC_BREAKPOINT_TYPE=gradient",
                       "bm25", "1.00", "1.00", "1.00"]


def test_split_shows_the_level_of_parent_and_child_chunks(cli):
    (cli.cwd / "h.md").write_text("# Cats\n\nCats purr when they are content. Cats nap in the sun.\n", encoding="utf-8")
    # The three levels of a one-sentence-group document cover the same span: without the level they read as
    # one chunk printed three times.
    text = "# Cats Cats purr when they are content. Cats nap in the sun."
    assert cli("split", "h.md", "--splitter", "hierarchical") == (0, (
        "#  page  chars  tokens  len  kind  level  headings  text\n"
        "-  ----  -----  ------  ---  ----  -----  --------  " + "-" * 60 + "\n"
        f"0     1   0-61      18   61  text      0  Cats      {text}\n"
        f"1     1   0-61      18   61  text      1  Cats      {text}\n"
        f"2     1   0-61      18   61  text      2  Cats      {text}\n"
        "\n3 chunks from 1 page of h.md\n"), "")


def test_split_of_a_single_level_splitter_has_no_level_column(cli):
    (cli.cwd / "h.md").write_text("# Cats\n\nCats purr when they are content. Cats nap in the sun.\n", encoding="utf-8")
    run = cli("split", "h.md")
    assert (run.status, run.out.splitlines()[0].split()) == (0, ["#", "page", "chars", "tokens", "len", "kind",
                                                                 "headings", "text"])


def test_split_auto_enrich_is_the_format_s_splitter_enriched(cli):
    # The help offers "any of these with +enrich" after "auto"; auto+enrich was refused as an unknown splitter.
    (cli.cwd / "h.md").write_text("# Cats\n\nCats purr when they are content. Cats nap in the sun.\n", encoding="utf-8")
    auto = cli("split", "h.md", "--splitter", "auto+enrich", "--format", "jsonl")
    named = cli("split", "h.md", "--splitter", "markdown+enrich", "--format", "jsonl")
    plain = cli("split", "h.md", "--format", "jsonl")
    assert (auto.status, auto.err) == (0, "")
    assert auto.out == named.out != plain.out  # same records and version; enriching changes the version


def test_eval_progress_counts_in_the_singular(cli):
    _eval_files(cli)
    run = cli("eval", "pets.txt", "--questions", "q.jsonl", "--ranking", "bm25")
    assert (run.status, run.err) == (0, "default: ingesting 1 document\ndefault: asking 1 question\n")


def test_eval_refuses_a_keep_file_and_a_missing_folder_for_drafts_before_any_work(cli):
    _eval_files(cli)
    # Before: "[Errno 20] Not a directory: 'pets.txt/1'" after the first strategy had started, and
    # "[Errno 2] No such file or directory: 'drafts/q.jsonl'" after the documents were ingested to draft from.
    assert cli("eval", "pets.txt", "--questions", "q.jsonl", "--keep", "pets.txt") == (
        2, "", "chunking eval: pets.txt: is a file; --keep names a folder to build the indexes under\n")
    assert cli("eval", "pets.txt", "--questions", "drafts/q.jsonl", "--generate", "2") == (
        2, "", "chunking eval: drafts/q.jsonl: no such folder to write the drafted question set in\n")
    assert not (cli.cwd / ".chunking").exists()


def test_split_refuses_an_empty_splitter_name(cli):
    # It split with the format's default, as if the option had not been given (SPLITTERS refuses '.md=').
    (cli.cwd / "h.md").write_text("# Cats\n\nCats purr.\n", encoding="utf-8")
    assert cli("split", "h.md", "--splitter", "") == (
        2, "", "chunking split: --splitter: empty name; auto is the format's default\n")


def test_eval_masks_a_key_given_in_a_strategy_s_settings(cli, monkeypatch):
    # The label is the strategy as written: a key in it was printed in the progress lines, the table and --json.
    _eval_files(cli)
    monkeypatch.delenv("DOCUMENT_INTELLIGENCE_ENDPOINT", raising=False)
    key = "0123456789abcdef0123456789abcdef"
    strategy = f"sentence DOCUMENT_INTELLIGENCE_API_KEY={key}"
    run = cli("eval", "pets.txt", "--questions", "q.jsonl", "--ranking", "bm25", "--strategy", strategy)
    assert run.status == 0, run.err
    assert run.err == ("sentence DOCUMENT_INTELLIGENCE_API_KEY=***: ingesting 1 document\n"
                       "sentence DOCUMENT_INTELLIGENCE_API_KEY=***: asking 1 question\n")
    assert run.out.splitlines()[4].split()[:3] == ["sentence", "DOCUMENT_INTELLIGENCE_API_KEY=***", "bm25"]
    as_json = cli("eval", "pets.txt", "--questions", "q.jsonl", "--ranking", "bm25", "--strategy", strategy, "--json")
    assert key not in as_json.out + as_json.err and "DOCUMENT_INTELLIGENCE_API_KEY=***" in as_json.out


def test_eval_masks_a_key_beside_a_malformed_value_in_the_refusal(cli, monkeypatch):
    _eval_files(cli)
    monkeypatch.delenv("DOCUMENT_INTELLIGENCE_ENDPOINT", raising=False)
    strategy = "sentence DOCUMENT_INTELLIGENCE_API_KEY=fedcba9876543210fedcba9876543210 SPLIT_MAX_TOKENS=abc"
    assert cli("eval", "pets.txt", "--questions", "q.jsonl", "--strategy", strategy) == (
        2, "", "chunking eval: strategy 'sentence DOCUMENT_INTELLIGENCE_API_KEY=*** SPLIT_MAX_TOKENS=abc': "
               "SPLIT_MAX_TOKENS must be an integer, got 'abc'\n")
