"""The saved prediction for a new op on the reference stack, taken before the op existed.

``fixtures/new_op_instancenormalization.json`` is ``stackmap scenario new-op
InstanceNormalization --like layernorm --json`` at the commit it names (``saved_at``), when no
layer had the op. Once a change adds InstanceNormalization end to end (down to a KMD kernel:
a decomposition into existing ops in the adapter is another kind of change), the comparison runs
against everything since that commit (files whose changed lines spell the op, definitions
added whose names spell it) and must reach recall 0.9 at precision 0.7.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from mapper.scenarios.newop_eval import compare_prediction

REPO = Path(__file__).resolve().parents[3]
SAVED = Path(__file__).parent / "fixtures" / "new_op_instancenormalization.json"


def _mentions(rev: str) -> list[str]:
    proc = subprocess.run(
        ["git", "-C", str(REPO), "grep", "-il", "instancenorm", rev, "--", "stack", "contracts"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return proc.stdout.split()


def test_prediction_was_saved_before_the_op_existed() -> None:
    saved = json.loads(SAVED.read_text(encoding="utf-8"))
    assert (saved["op"], saved["like"]) == ("InstanceNormalization", "layernorm")
    assert _mentions(saved["saved_at"]) == []
    assert {plan["layer"] for plan in saved["layers"]} == {
        "adapter",
        "compiler",
        "runtime",
        "umd",
        "kmd",
    }
    for plan in saved["layers"]:
        for point in plan["points"]:
            assert point["path"] and point["line"] and point["why"], point


def test_prediction_against_the_real_change() -> None:
    saved = json.loads(SAVED.read_text(encoding="utf-8"))
    mentions = _mentions("HEAD")
    if not mentions:
        pytest.skip("InstanceNormalization has not been added yet; the comparison runs once it is")
    if not any(path.startswith("HEAD:stack/kmd/") for path in mentions):
        pytest.skip(
            "InstanceNormalization exists only as a decomposition above the KMD "
            f"({', '.join(p.removeprefix('HEAD:') for p in mentions)}); the comparison needs "
            "the op added end to end"
        )
    result = compare_prediction(saved, REPO, f"{saved['saved_at']}..HEAD")
    assert result["files"]["recall"] >= 0.9 and result["files"]["precision"] >= 0.7, result
    assert result["symbols"]["recall"] >= 0.9 and result["symbols"]["precision"] >= 0.7, result
