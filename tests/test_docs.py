"""docs/: the settings reference lists exactly what the code reads, with the code's defaults (and so does deploy.md's
short table); the metrics, status routes and completion event the docs describe are the code's; every link to docs/
resolves."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path

import pytest

from chunking.settings import BINDING_DEFAULTS, Settings, SettingsError

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


SETTINGS_PACKAGE = ROOT / "chunking" / "settings"
#: The readers of chunking/settings/values.py (and binding_setting): their argument after the mapping is a name.
_READERS = {"str_value", "int_value", "bool_value", "parsed_value", "https_url", "binding_setting"}


def settings_read_in_source() -> set[str]:
    """Names the modules of chunking/settings/ read, found in the source: the literal name given to a reader of
    ``values.py`` or to ``env.get``. Finds what ``from_env`` reads only on some branch (e.g. with
    ``EMBEDDING_BACKEND=local``), which a run with an empty environment does not reach."""
    names = set()
    for path in sorted(SETTINGS_PACKAGE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func, args = node.func, node.args
            if isinstance(func, ast.Name) and func.id in _READERS:
                arg = args[0] if func.id == "binding_setting" else (args[1] if len(args) > 1 else None)
            elif isinstance(func, ast.Attribute) and func.attr == "get" and isinstance(func.value, ast.Name) \
                    and func.value.id == "env":
                arg = args[0] if args else None
            else:
                continue
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                names.add(arg.value)
    return names


def settings_read_when_run() -> set[str]:
    """Names ``Settings.from_env`` looks up in an empty environment and in environments that take its other
    branches (keyless storage, the local model). Finds the names the code builds (``AzureWebJobsStorage__…``)."""
    read: set[str] = set()
    for values in ({}, {"AzureWebJobsStorage__accountName": "account"},
                   {"EMBEDDING_BACKEND": "local", "EMBEDDING_MODEL": "no-such-model-anywhere"}):
        env = RecordingEnv()
        env.update(values)
        try:
            Settings.from_env(env)
        except SettingsError:
            pass  # the made-up model is refused after its lookups
        read |= env.read
    return read


def test_every_setting_read_is_documented_and_every_documented_one_is_read():
    # function_app reads every binding setting when it is indexed
    read = settings_read_in_source() | settings_read_when_run() | set(BINDING_DEFAULTS)

    assert read - documented_settings() == set(), "read by chunking.settings but missing from docs/settings.md"
    assert documented_settings() - read == set(), "listed in docs/settings.md but not read by chunking.settings"


def test_the_source_scan_finds_branch_only_reads():
    # read only with EMBEDDING_BACKEND=local: a run with an empty environment misses them, the scan must not
    assert {"HF_HUB_CACHE", "HF_HOME", "PARSERS", "SPLITTERS", "DOCUMENTS_CONTAINER"} <= settings_read_in_source()
    assert "HF_HUB_CACHE" not in _recorded_with({})
    assert "AzureWebJobsStorage__tableServiceUri" in settings_read_when_run()


def _recorded_with(values: dict) -> set[str]:
    env = RecordingEnv()
    env.update(values)
    Settings.from_env(env)
    return env.read


def code_defaults(monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    """The default each setting gets from the code when unset: ``Settings.from_env({})`` with every reader of
    ``values.py`` wrapped, in every module of chunking/settings/, to record (name, default), then again with the
    OpenAI embedder. A name read with different defaults (a default that depends on another setting) maps to
    ``None``: not checked."""
    seen: dict[str, object] = {}

    def recording(reader):
        signature = inspect.signature(reader)

        def wrapper(env, name, *args, **kwargs):
            bound = signature.bind(env, name, *args, **kwargs)
            bound.apply_defaults()
            default = bound.arguments["default"]
            seen[name] = default if seen.get(name, default) == default else None
            return reader(env, name, *args, **kwargs)
        return wrapper

    for path in sorted(SETTINGS_PACKAGE.glob("*.py")):
        if path.stem == "values":  # the readers themselves (bool_value calls str_value inside)
            continue
        module = importlib.import_module("chunking.settings" + ("" if path.stem == "__init__" else f".{path.stem}"))
        for reader in ("str_value", "int_value", "bool_value", "parsed_value"):
            if hasattr(module, reader):
                monkeypatch.setattr(module, reader, recording(getattr(module, reader)))
    Settings.from_env({})
    Settings.from_env({"OPENAI_API_KEY": "a key"})  # another embedder: its defaults (dimensions) differ, unchecked
    return {**BINDING_DEFAULTS, **seen}  # function_app reads the binding settings Settings does not


def _shown(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ",".join(str(v) for v in value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def documented_defaults(text: str) -> dict[str, str]:
    """Name -> documented default, from the table rows of *text* whose default cell is one literal per name (`a`,
    or `a`, `b` for a row of two names), optionally followed by a remark in brackets; other cells (a default that
    depends on another setting, or words) are not read."""
    found = {}
    for line in text.splitlines():
        if not line.startswith("| `"):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        names = re.findall(r"`([A-Za-z0-9_]+)`", cells[0])
        literal = re.fullmatch(r"((?:`[^`]+`(?:, )?)+)(?: \([^)]*\))?", cells[-1])
        values = re.findall(r"`([^`]+)`", literal.group(1)) if literal else []
        if len(values) == len(names):
            found.update(zip(names, values))
    return found


def section(page: Path, heading: str) -> str:
    """The text of *page* under the ``## heading`` up to the next heading of that level."""
    text = page.read_text(encoding="utf-8")
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def test_the_short_table_of_deploy_md_names_every_setting():
    names = set()
    for line in section(DOCS / "deploy.md", "Pointing it at Azure").splitlines():
        if line.startswith("| `"):
            names.update(re.findall(r"`([A-Za-z0-9_]+)`", line.split("|")[1]))

    # FUNCTIONS_WORKER_RUNTIME is the Functions host's, for func start; the code does not read it
    assert names == documented_settings() | {"FUNCTIONS_WORKER_RUNTIME"}


@pytest.mark.parametrize("text", [(DOCS / "settings.md").read_text(encoding="utf-8"),
                                  section(DOCS / "deploy.md", "Pointing it at Azure")],
                         ids=["settings.md", "deploy.md#pointing-it-at-azure"])
def test_every_documented_default_is_the_codes(monkeypatch: pytest.MonkeyPatch, text: str):
    defaults = code_defaults(monkeypatch)
    documented = documented_defaults(text)
    wrong = {name: (shown, _shown(defaults[name])) for name, shown in documented.items()
             if defaults.get(name) is not None and _shown(defaults[name]) != shown}

    assert wrong == {}, "documented default, code's default"
    assert len(documented) > 60 and len(set(documented) & set(defaults)) > 60  # a parser that reads nothing passes
    assert _shown((2000, 500, 128)) == "2000,500,128" and _shown(4.0) == "4" and _shown(True) == "true"


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


def test_the_metrics_table_of_operations_md_is_the_instruments_of_the_code():
    from chunking.telemetry import INSTRUMENTS

    rows = re.findall(r"^\| `(chunking\.[a-z_.]+)` \| (\w+) \| `([^`]+)` \|", section(DOCS / "operations.md", "Telemetry"),
                      re.MULTILINE)

    assert {name: (kind, unit) for name, kind, unit in rows} == {
        name: (kind, unit) for name, (kind, unit, _) in INSTRUMENTS.items()}


def test_the_status_api_table_of_operations_md_has_the_routes_of_function_app():
    routes = set(re.findall(r'@app\.route\(route="([^"]+)", methods=\["GET"\]', (ROOT / "function_app.py").read_text()))
    documented = set(re.findall(r"^\| `GET /api/([a-z/]+)[?`]", section(DOCS / "operations.md", "The status API"),
                                re.MULTILINE))

    assert documented == routes and len(routes) == 3


def test_the_event_of_events_md_has_the_fields_and_types_of_the_code():
    import json

    from chunking.ledger import LedgerEntry
    from chunking.messages.events import EVENT_TYPES, completion_event

    text = (DOCS / "events.md").read_text(encoding="utf-8")
    example = json.loads(re.search(r"```json\n(.*?)```", text, re.DOTALL).group(1))
    entry = LedgerEntry("d1", "a.pdf", container="documents", event=json.dumps(
        {"id": "0" * 32, "version": "v1", "status": "indexed", "at": "2026-05-04T10:21:07+00:00"}))
    made = completion_event(entry)

    assert list(example) == list(made) and list(example["data"]) == list(made["data"])
    assert set(re.findall(r"`(Chunking\.Document\.\w+)`", text)) == set(EVENT_TYPES.values())
