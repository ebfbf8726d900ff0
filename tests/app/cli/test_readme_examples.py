"""The README's example command lines are real: they parse, and every path they name exists in the repository."""

from __future__ import annotations

import shlex
from pathlib import Path

from chunking.app.cli.app import build_parser

ROOT = Path(__file__).resolve().parents[3]


def readme_commands() -> list[list[str]]:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    return [shlex.split(line.split("#", 1)[0].split(".venv/bin/chunking", 1)[1])
            for line in lines if line.startswith(".venv/bin/chunking ")]


def test_readme_example_lines_parse_and_name_files_that_exist():
    commands = readme_commands()
    assert {c[0] for c in commands if c and not c[0].startswith("-")} >= {"ingest", "search", "split", "status"}
    parser = build_parser()
    for command in commands:
        if command == ["--help"]:
            continue
        args = parser.parse_args(command)
        paths = getattr(args, "paths", None) or ([args.file] if hasattr(args, "file") else [])
        for path in paths:
            assert (ROOT / path).exists(), f"README example names {path}, which is not in the repository"
