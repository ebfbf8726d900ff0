"""The files around the deployment: .funcignore keeps the package to what the app runs, and the GitHub Actions
workflow runs the README's test command."""

from __future__ import annotations

import yaml

from tests.infra.bicep import ROOT


def _funcignore() -> set[str]:
    lines = (ROOT / ".funcignore").read_text().splitlines()
    return {line.strip() for line in lines if line.strip() and not line.startswith("#")}


def test_funcignore_leaves_out_everything_the_app_does_not_run() -> None:
    ignored = _funcignore()
    for entry in (".venv/", "node_modules/", "tests/", "samples/", ".chunking/", "benchmarks/", "docs/", "infra/",
                  ".git/", ".github/", "local.settings.json", "package.json", "package-lock.json", "__pycache__/"):
        assert entry in ignored, f".funcignore does not exclude {entry}"


def test_funcignore_keeps_what_the_app_runs() -> None:
    ignored = {entry.rstrip("/") for entry in _funcignore()}
    for kept in ("function_app.py", "host.json", "requirements.txt", "chunking"):
        assert (ROOT / kept).exists() and kept not in ignored
    # tiktoken's BPE file ships inside the package; a pattern like *.tiktoken would break token counting.
    assert not any(entry.endswith(".tiktoken") or entry.startswith("chunking") for entry in ignored)


def test_ci_workflow_runs_the_readme_test_command() -> None:
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text())
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` key as True
    assert "push" in triggers
    steps = workflow["jobs"]["test"]["steps"]
    uses = {step.get("uses", "").split("@")[0]: step for step in steps}
    assert uses["actions/setup-python"]["with"]["python-version"] == "3.11"
    assert "actions/setup-node" in uses
    assert [step["run"] for step in steps if "run" in step] == ["make test"]
    assert "make test" in (ROOT / "README.md").read_text()


def test_host_json_uses_the_extension_bundle_flex_consumption_needs() -> None:
    import json

    host = json.loads((ROOT / "host.json").read_text())
    # Bundle 4.x carries the storage extension 5.x: the EventGrid blob trigger source and identity connections.
    assert host["extensionBundle"] == {"id": "Microsoft.Azure.Functions.ExtensionBundle", "version": "[4.0.0, 5.0.0)"}
