"""The CI workflow, its .github copy and the pre-commit hook definitions say what ci/README says."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).parents[3]


def _workflow() -> dict[Any, Any]:
    return yaml.safe_load((ROOT / "ci" / "weekly-scan.yml").read_text(encoding="utf-8"))


def test_workflow_triggers_and_steps() -> None:
    flow = _workflow()
    triggers = flow.get("on", flow.get(True))  # YAML 1.1 reads a bare `on` as True
    assert {"schedule", "workflow_dispatch", "pull_request"} <= set(triggers)
    assert triggers["schedule"][0]["cron"].split()[4] == "1"  # weekly, on Mondays
    steps = flow["jobs"]["scan"]["steps"]
    runs = "\n".join(s.get("run", "") for s in steps)
    uses = [s.get("uses", "") for s in steps]
    assert any(u.startswith("actions/setup-python") for u in uses)
    assert any(u.startswith("github/codeql-action/upload-sarif") for u in uses)
    for command in ("make install", "stackmap ingest .", "--format sarif -o check.sarif"):
        assert command in runs
    assert "--format markdown" in runs and "GITHUB_STEP_SUMMARY" in runs
    assert flow["permissions"]["security-events"] == "write"


def test_github_copy_is_identical() -> None:
    ci = (ROOT / "ci" / "weekly-scan.yml").read_bytes()
    assert (ROOT / ".github" / "workflows" / "weekly-scan.yml").read_bytes() == ci


def test_pre_commit_hook_is_local_and_runs_the_check() -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    hook = next(h for h in hooks if h["id"] == "stackmap-check")
    assert hook["language"] == "system" and hook["entry"].startswith("stackmap check")
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    assert all(repo["repo"] == "local" for repo in config["repos"])
    local = [h["id"] for repo in config["repos"] for h in repo["hooks"]]
    assert "stackmap-check" in local


def test_pull_request_impact_workflow() -> None:
    flow = yaml.safe_load((ROOT / "ci" / "pr-impact.yml").read_text(encoding="utf-8"))
    assert set(flow.get("on", flow.get(True))) == {"pull_request"}
    steps = flow["jobs"]["impact"]["steps"]
    runs = "\n".join(s.get("run", "") for s in steps)
    assert "stackmap ingest . --no-embed" in runs
    assert '--diff "${base}..HEAD" --format markdown' in runs
    assert "--fail-on-unmatched-breaking" in runs and "GITHUB_STEP_SUMMARY" in runs
    checkout = next(s for s in steps if s.get("uses", "").startswith("actions/checkout"))
    assert checkout["with"]["fetch-depth"] == 0
    copy = ROOT / ".github" / "workflows" / "pr-impact.yml"
    assert copy.read_bytes() == (ROOT / "ci" / "pr-impact.yml").read_bytes()
