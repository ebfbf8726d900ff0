"""The example command lines of the README and the docs pages are real: they parse, and every path they name exists
in the repository."""

from __future__ import annotations

import shlex
from pathlib import Path

from chunking.app.cli.app import build_parser

ROOT = Path(__file__).resolve().parents[3]


#: Where example command lines are: the README's try-it block and the pages the longer examples moved to.
PAGES = ("README.md", "docs/operations.md", "docs/search.md", "docs/deploy.md")


def readme_commands(page: str = "README.md") -> list[list[str]]:
    lines = (ROOT / page).read_text(encoding="utf-8").splitlines()
    return [shlex.split(line.split("#", 1)[0].split(".venv/bin/chunking", 1)[1])
            for line in lines if line.startswith(".venv/bin/chunking ")]


def test_readme_example_lines_parse_and_name_files_that_exist():
    in_readme = {c[0] for c in readme_commands() if c and not c[0].startswith("-")}
    assert in_readme >= {"ingest", "search", "split", "status"}
    commands = [command for page in PAGES for command in readme_commands(page)]
    assert {c[0] for c in commands if c and not c[0].startswith("-")} >= {
        "ingest", "search", "split", "status", "eval", "reconcile", "reprocess", "upload"}
    parser = build_parser()
    for command in commands:
        if command == ["--help"]:
            continue
        args = parser.parse_args(command)
        paths = getattr(args, "paths", None) or ([args.file] if hasattr(args, "file") else [])
        for path in paths:
            assert (ROOT / path).exists(), f"an example names {path}, which is not in the repository"
