"""docs/: the settings reference lists exactly what the code reads, and every link to docs/ resolves."""

from __future__ import annotations

import re
from pathlib import Path

from chunking.settings import BINDING_DEFAULTS, Settings

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


class RecordingEnv(dict):
    """An empty environment that remembers every name looked up in it."""

    def __init__(self) -> None:
        super().__init__()
        self.read: set[str] = set()

    def get(self, key, default=None):
        self.read.add(key)
        return super().get(key, default)

    def __getitem__(self, key):
        self.read.add(key)
        return super().__getitem__(key)

    def __contains__(self, key):
        self.read.add(key)
        return super().__contains__(key)


def documented_settings() -> set[str]:
    """Names in the first column of the tables of docs/settings.md (a cell may name several: `A`, `B`)."""
    names = set()
    for line in (DOCS / "settings.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("| `"):
            names.update(re.findall(r"`([A-Za-z0-9_]+)`", line.split("|")[1]))
    return names


def slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    result = set()
    in_fence = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_fence = not in_fence
        elif not in_fence and (m := re.match(r"#{1,6} (.+)", line)):
            base = slug(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            result.add(base if n == 0 else f"{base}-{n}")
    return result


def test_every_setting_read_is_documented_and_every_documented_one_is_read():
    env = RecordingEnv()
    Settings.from_env(env)
    read = env.read | set(BINDING_DEFAULTS)  # function_app reads every binding setting when it is indexed

    assert read - documented_settings() == set(), "read by chunking.settings but missing from docs/settings.md"
    assert documented_settings() - read == set(), "listed in docs/settings.md but not read by chunking.settings"


def test_slugs_follow_github():
    assert slug("Step 4: oversize span") == "step-4-oversize-span"
    assert slug("Departures from azure-search-openai-demo") == "departures-from-azure-search-openai-demo"
    assert slug("Small-to-big and sentence window") == "small-to-big-and-sentence-window"


def _links() -> list[tuple[Path, str, str]]:
    """(file, target file, anchor) of every docs link in docs/*.md (relative) and in the code (docs/x.md#y)."""
    found = []
    for path in sorted(DOCS.glob("*.md")):
        for target, anchor in re.findall(r"\]\(([\w\-]*\.md)?(?:#([\w\-]+))?\)", path.read_text(encoding="utf-8")):
            found.append((path, target or path.name, anchor))
    code = [*ROOT.glob("chunking/**/*.py"), *ROOT.glob("tests/**/*.py"), *ROOT.glob("benchmarks/*.py"),
            ROOT / "function_app.py", ROOT / "README.md"]
    for path in code:
        if path.name == "test_docs.py":
            continue
        text = path.read_text(encoding="utf-8")
        for target, anchor in re.findall(r"(?<![\w/])docs/([a-z][a-z\-]*\.md)(?:#([\w\-]+))?", text):
            found.append((path, target, anchor))
    return found


def test_every_link_to_docs_resolves():
    broken = []
    for path, target, anchor in _links():
        page = DOCS / target
        if not page.is_file() or (anchor and anchor not in anchors(page)):
            broken.append(f"{path.relative_to(ROOT)}: docs/{target}{'#' + anchor if anchor else ''}")
    assert broken == []
    assert len(_links()) > 20  # the docs cross-reference each other; a regex that finds nothing would pass


# What comments must not point at: files outside the repository, or issue numbers (the docs/ pages say why).
_OUTSIDE = re.compile(r"shared/(spec|reference)|\bissue #?\d|(?<!docs/)\b(splitter-family|strategies|sentence-splitter|"
                      r"pipeline)\.md\b")


def test_code_points_to_docs_not_outside_the_repository():
    files = [*ROOT.glob("chunking/**/*.py"), *ROOT.glob("tests/**/*.py"), *ROOT.glob("benchmarks/*.py"),
             ROOT / "function_app.py"]
    found = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}" for path in files if path.name != "test_docs.py"
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if _OUTSIDE.search(line)]

    assert found == []
    assert _OUTSIDE.search("see shared/spec/pipeline.md §4") and _OUTSIDE.search("(issue #4)")
    assert not _OUTSIDE.search("docs/splitters.md#semantic")
